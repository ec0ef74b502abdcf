"""The offset function of a core layout as an indexing map (logical index → element offset).

Each digit ``stride · ((x // block) mod extent)`` becomes the same expression over ``d_k``;
the top digit of a dim needs no ``mod`` (its value never wraps), a ``*`` merge is the
row-major sum of its parts. Swizzled layouts have no affine form.

>>> from tensorlayout.core.layout import CoreLayout, Digit
>>> digits = (Digit(0, 2, 2, 12), Digit(1, 2, 3, 4), Digit(0, 1, 2, 2), Digit(1, 1, 2, 1))
>>> lay = CoreLayout((4, 6), digits, 24)
>>> print(layout_map(lay))
(d0, d1) -> ((d0 mod 2) * 2 + (d0 / 2) * 12 + (d1 / 2) * 4 + d1 mod 2), domain: d0 in [0, 3], d1 in [0, 5]
"""

from __future__ import annotations

from tensorlayout.core.intmath import INT64_MAX, ceil_div
from tensorlayout.core.layout import CoreLayout, Digit, Source, source_extent
from tensorlayout.errors import UnsupportedError
from tensorlayout.indexing.expr import Expr, const, var
from tensorlayout.indexing.map import IndexingMap

__all__ = ["layout_map", "offset_expr"]


def offset_expr(layout: CoreLayout) -> Expr:
    """The offset of ``layout`` as an expression over ``d0 … d(rank-1)`` (unsimplified)."""
    if layout.post is not None:
        raise UnsupportedError(f"{layout.name or 'the layout'} is swizzled: an XOR has no "
                               "indexing-map form")
    too_big = [v for d in layout.digits for v in (d.stride, d.block, d.extent) if abs(v) > INT64_MAX]
    if too_big or any(n > INT64_MAX for n in layout.shape) or abs(layout.base) > INT64_MAX:
        raise UnsupportedError(f"{layout.name or 'the layout'} has a size or stride beyond int64 "
                               f"({too_big[0] if too_big else 'an extent'}); indexing maps compute in int64")
    out = const(layout.base)
    for d in layout.digits:
        if d.extent > 1 and d.stride:
            out = out + _digit_expr(d, layout.shape) * d.stride
    return out


def _digit_expr(d: Digit, shape: tuple[int, ...]) -> Expr:
    e = _source_expr(d.source, shape)
    if d.block > 1:
        e = e // d.block
    if ceil_div(source_extent(d.source, shape), d.block) > d.extent:
        e = e % d.extent
    return e


def _source_expr(source: Source, shape: tuple[int, ...]) -> Expr:
    if isinstance(source, int):
        return var(source) if source >= 0 else const(0)
    out = const(0)
    for part in source.parts:
        out = out * part.extent + _digit_expr(part, shape)
    return out


def layout_map(layout: CoreLayout, *, simplify: bool = True) -> IndexingMap:
    """``(d0, …) -> (offset)`` over the logical domain, simplified unless ``simplify=False``."""
    m = IndexingMap([offset_expr(layout)], [(0, n - 1) for n in layout.shape])
    return m.simplify() if simplify else m
