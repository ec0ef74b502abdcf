"""Element-size views of a layout: ``upcast``, ``downcast`` and ``recast_layout`` (CuTe C++).

>>> from tensorlayout.cute.layout import Layout
>>> str(recast_layout(Layout.parse("(32,4):(1,32)"), 8, 32))
'(8,4):(1,8)'
"""

from __future__ import annotations

from math import gcd
from typing import Any

from tensorlayout.core.intmath import ceil_div
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.layout import Layout, _mk, as_layout
from tensorlayout.errors import AlgebraError

__all__ = ["downcast", "recast_layout", "upcast"]


class _Pair(tuple):  # a (shape, stride) leaf result, told apart from a nested mode
    __slots__ = ()


def _first(t: Any) -> Any:
    return t[0] if isinstance(t, _Pair) else tuple(_first(x) for x in t)


def _second(t: Any) -> Any:
    return t[1] if isinstance(t, _Pair) else tuple(_second(x) for x in t)


def _map_leaves(layout: Layout, n: int, what: str, f: Any) -> Layout:
    """``layout`` with each leaf ``(s, d)`` as ``f(s, d)``, once ``n`` is a positive ``what`` factor."""
    layout = as_layout(layout)
    if not it.is_int(n) or n <= 0:
        raise AlgebraError(f"{what} factor must be a positive int, got {it.describe(n)}")
    pairs = it.zip_leaves(layout.shape, layout.stride, lambda s, d: _Pair(f(s, d)))
    return _mk(_first(pairs), _second(pairs))


def upcast(layout: Layout, n: int) -> Layout:
    """View ``n`` elements as one: stride-1 modes shrink by ``n``, larger strides divide by ``n``.

    >>> str(upcast(Layout.parse("(8,4):(1,8)"), 2))
    '(4,4):(1,4)'
    """
    def leaf(s: int, d: int) -> tuple[int, int]:
        if d == 0:
            return s, 0
        return ceil_div(s, ceil_div(n, abs(d))), it.signum(d) * ceil_div(abs(d), n)
    return _map_leaves(layout, n, "upcast", leaf)


def downcast(layout: Layout, n: int) -> Layout:
    """View one element as ``n``: stride-±1 modes grow by ``n``, other strides scale by ``n``.

    >>> str(downcast(Layout.parse("(8,4):(1,8)"), 4))
    '(32,4):(1,32)'
    """
    return _map_leaves(layout, n, "downcast", lambda s, d: (s * n, d) if abs(d) == 1 else (s, d * n))


def recast_layout(layout: Layout, old_bits: int, new_bits: int) -> Layout:
    """Re-express a layout of ``old_bits`` elements in ``new_bits`` elements.

    >>> str(recast_layout(Layout.parse("(8,4):(1,8)"), 6, 4))
    '(12,4):(1,12)'
    """
    layout = as_layout(layout)
    if not (it.is_int(old_bits) and it.is_int(new_bits)) or old_bits <= 0 or new_bits <= 0:
        raise AlgebraError("recast_layout needs positive bit widths")
    g = gcd(new_bits, old_bits)
    num, den = new_bits // g, old_bits // g
    out = layout
    if num != 1:
        out = upcast(out, num)
    if den != 1:
        out = downcast(out, den)
    return out
