"""CuTe's ``coalesce`` and ``filter``: merge a layout's modes, keeping its function on
``[0, size)``.

>>> str(coalesce(Layout.parse("(2,(1,6)):(1,(6,2))")))
'12:1'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.int_tuple import IntTuple
from tensorlayout.cute.layout import Layout, _as_modes, _concat, _mk, _new, as_layout

__all__ = ["coalesce", "coalesce_lists", "filter", "filter_zeros", "layout_of_lists"]


def coalesce_lists(shape: Any, stride: Any) -> tuple[list[int], list[int]]:
    """The leaves of a congruent (shape, stride), nested tuples or flat sequences, merged left to
    right as two lists: size-1 modes dropped, ``d1 == s0*d0`` joined.

    >>> coalesce_lists((2, (1, 3)), (1, (5, 2))), coalesce_lists([4, 2], [2, 1])
    (([6], [1]), ([4, 2], [2, 1]))
    """
    if type(shape) is tuple or type(shape) is list:
        return _merge(shape, stride, [], [])
    return ([shape], [stride]) if shape != 1 else ([], [])


def _merge(shape: Sequence[Any], stride: Sequence[Any], shapes: list[int],
           strides: list[int]) -> tuple[list[int], list[int]]:
    """Merge the leaves of ``shape:stride`` onto the modes ``shapes:strides`` and return those
    (see :func:`coalesce_lists`); the first two levels inline, the stride that joins the last
    mode kept in a local (coalesce's hot path)."""
    nxt: Any = shapes[-1] * strides[-1] if shapes else None  # None joins nothing
    i = 0
    for s in shape:
        d = stride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            j = 0
            for s2 in s:
                d2 = d[j]
                j += 1  # noqa: SIM113 - enumerate() costs more than the loop
                if type(s2) is tuple:
                    _merge(s2, d2, shapes, strides)
                    nxt = shapes[-1] * strides[-1] if shapes else None
                elif s2 != 1:
                    if d2 == nxt:
                        shapes[-1] *= s2
                        nxt *= s2
                    else:
                        shapes.append(s2)
                        strides.append(d2)
                        nxt = s2 * d2
        elif s != 1:
            if d == nxt:
                shapes[-1] *= s
                nxt *= s
            else:
                shapes.append(s)
                strides.append(d)
                nxt = s * d
    return shapes, strides


def layout_of_lists(shapes: list[int], strides: list[int]) -> Layout:
    """A flat layout from parallel lists: ``1:0`` when empty, ``s:d`` for one mode."""
    n = len(shapes)
    if n > 1:  # the common case: _mk's body inline (one call less on every algebra result)
        obj = _new(Layout)
        obj._shape = tuple(shapes)
        obj._stride = tuple(strides)
        return obj
    return _mk(shapes[0], strides[0]) if n else _mk(1, 0)


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Merge modes while keeping the function on ``[0, size)``; by mode with a ``profile``.

    >>> L = Layout.parse("(2,(1,6)):(1,(6,2))")
    >>> str(coalesce(L)), str(coalesce(L, (1, 1)))
    ('12:1', '(2,6):(1,2)')
    """
    layout = layout if type(layout) is Layout else as_layout(layout)
    if profile is None or not isinstance(profile, tuple):  # None or an int: the whole layout
        shape: Any = layout._shape
        if type(shape) is not tuple:
            return _mk(shape, layout._stride) if shape != 1 else _mk(1, 0)
        stride: Any = layout._stride
        shapes, strides = _merge(shape, stride, [], [])
        return layout_of_lists(shapes, strides)
    if not it._valid(profile):
        raise it.not_int_tuple("coalesce", profile)
    modes = _as_modes(layout)
    out = [coalesce(m, profile[i]) if i < len(profile) else m for i, m in enumerate(modes)]
    return _concat(out)


def filter_zeros(layout: Layout) -> Layout:
    """Replace the extent of every stride-0 mode by 1."""
    layout = as_layout(layout)
    return _mk(it.zip_leaves(layout.shape, layout.stride, lambda s, d: 1 if d == 0 else s),
                  layout.stride)


def filter(layout: Layout) -> Layout:
    """Drop stride-0 and size-1 modes, then coalesce.

    >>> str(filter(Layout.parse("(2,1,3,4):(0,7,1,0)")))
    '3:1'
    """
    return coalesce(filter_zeros(layout))
