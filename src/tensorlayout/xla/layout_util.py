"""Layout questions and rewrites on shapes with XLA's names (``LayoutUtil``).

(``make_layout``, ``move_dim_to_major`` and the other layout makers live in
:mod:`tensorlayout.xla.index_util`.)

>>> from tensorlayout.xla.shape import parse_shape
>>> is_monotonic_with_dim0_major(parse_shape("f32[2,3,4]").layout)
True
>>> str(get_with_default_layout(parse_shape("(f32[2,3]{0,1:T(2)}, token[])")))
'(f32[2,3]{1,0}, token[])'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace

from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import Layout
from tensorlayout.xla.shape import Shape

__all__ = [
    "are_dimensions_consecutive",
    "clear_tiles",
    "get_default_layout_for_shape",
    "get_with_default_layout",
    "has_layout",
    "is_monotonic_with_dim0_major",
    "is_monotonic_with_dim0_minor",
    "layouts_in_shapes_equal",
    "memory_space",
]


def _map_arrays(shape: Shape, fn: Callable[[Shape], Shape]) -> Shape:
    """``shape`` with ``fn`` applied to every array (tuples and buffers recurse)."""
    if shape.is_tuple or shape.is_buffer:
        return replace(shape, tuple_shapes=tuple(_map_arrays(s, fn) for s in shape.tuple_shapes))
    return fn(shape) if shape.is_array else shape


def get_default_layout_for_shape(shape: Shape) -> Layout:
    """``GetDefaultLayoutForShape``: ``{rank-1,...,0}`` for an array, ``{}`` for token/opaque."""
    if shape.is_token or shape.is_opaque:
        return Layout(())
    if not shape.is_array:
        raise LayoutError(f"get_default_layout_for_shape needs an array shape, but got {shape}")
    return Layout(tuple(range(shape.rank - 1, -1, -1)))


def get_with_default_layout(shape: Shape) -> Shape:
    """``GetWithDefaultLayout``: every array gets the default layout (tiles and all dropped)."""
    return _map_arrays(shape, lambda s: s.with_layout(get_default_layout_for_shape(s)))


def clear_tiles(shape: Shape) -> Shape:
    """``ClearTiles``: every layout in ``shape`` without its tiles.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> str(clear_tiles(parse_shape("f32[8,128]{1,0:T(8,128)S(1)}")))
    'f32[8,128]{1,0:S(1)}'
    """
    return _map_arrays(shape, lambda s: s if s.layout is None
                       else s.with_layout(s.layout.replace(tiles=())))


def is_monotonic_with_dim0_minor(layout: Layout) -> bool:
    """``IsMonotonicWithDim0Minor``: ``minor_to_major`` is ascending (``{0,1,2}``)."""
    m2m = layout.minor_to_major
    return all(a <= b for a, b in itertools.pairwise(m2m))


def is_monotonic_with_dim0_major(layout: Layout) -> bool:
    """``IsMonotonicWithDim0Major``: ``minor_to_major`` is descending (``{2,1,0}``)."""
    m2m = layout.minor_to_major
    return all(a >= b for a, b in itertools.pairwise(m2m))


def has_layout(shape: Shape) -> bool:
    """``HasLayout``: every array in ``shape`` has a layout (token and opaque need none)."""
    if shape.is_tuple or shape.is_buffer:
        return all(has_layout(s) for s in shape.tuple_shapes)
    return not shape.is_array or shape.layout is not None


def layouts_in_shapes_equal(a: Shape, b: Shape, **layout_options: bool) -> bool:
    """``LayoutsInShapesEqual``: same tuple tree and equal array layouts (options as ``Layout.equal``).

    Arrays of different rank are unequal; two arrays without layouts are equal; the layouts
    of other shapes are not compared.
    """
    if a.is_tuple:
        return b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes) and all(
            layouts_in_shapes_equal(x, y, **layout_options)
            for x, y in zip(a.tuple_shapes, b.tuple_shapes))
    if not a.is_array:
        return True
    if a.rank != b.rank:
        return False
    if a.layout is None or b.layout is None:
        return a.layout is None and b.layout is None
    return a.layout.equal(b.layout, **layout_options)


def are_dimensions_consecutive(layout: Layout, dims: Sequence[int]) -> bool:
    """``AreDimensionsConsecutive``: ``dims`` sit next to each other in ``minor_to_major``.

    >>> layout = Layout((2, 0, 1, 3))
    >>> are_dimensions_consecutive(layout, [0, 2]), are_dimensions_consecutive(layout, [2, 1])
    (True, False)
    """
    m2m = layout.minor_to_major
    if any(d not in m2m for d in dims):
        raise LayoutError(f"dimensions {list(dims)} are not all in the layout {layout}")
    positions = sorted(m2m.index(d) for d in dims)
    return all(b - a == 1 for a, b in itertools.pairwise(positions))


def memory_space(shape: Shape) -> int:
    """``LayoutUtil::MemorySpace``: the ``S(n)`` of the shape's layout; 0 (the default) without one.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> memory_space(parse_shape("f32[8]{0:S(1)}")), memory_space(Shape.array("f32", (8,), None))
    (1, 0)
    """
    return shape.layout.memory_space if shape.layout is not None else 0
