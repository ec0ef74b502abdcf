"""Tuple shapes and ``ShapeIndex`` paths with XLA's names (``ShapeUtil``).

A shape index is a tuple of element numbers, one per tuple level: ``()`` is the shape itself,
``(1, 0)`` is element 0 of element 1. Subshapes are visited in pre-order, as XLA does.

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("(f32[2], (s8[], u4[3]))")
>>> str(get_subshape(s, (1, 1))), get_leaf_count(s), subshape_count(s)
('u4[3]{0}', 3, 5)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import Shape

__all__ = [
    "ShapeIndex",
    "for_each_subshape",
    "get_leaf_count",
    "get_subshape",
    "get_tuple_element_shape",
    "index_is_valid",
    "is_empty_tuple",
    "is_leaf_index",
    "is_nested_tuple",
    "shape_index_to_string",
    "slice_tuple",
    "subshape_count",
    "try_get_subshape",
    "tuple_element_count",
]

#: A path into nested tuples: one element number per level.
ShapeIndex = tuple[int, ...]


def shape_index_to_string(index: Sequence[int]) -> str:
    """``ShapeIndex::ToString``: ``{1,0}``."""
    return "{" + ",".join(map(str, index)) + "}"


def is_nested_tuple(shape: Shape) -> bool:
    """``IsNestedTuple``: a tuple with a tuple among its elements."""
    return shape.is_tuple and any(s.is_tuple for s in shape.tuple_shapes)


def is_empty_tuple(shape: Shape) -> bool:
    """``IsEmptyTuple``: the tuple ``()``."""
    return shape.is_tuple and not shape.tuple_shapes


def tuple_element_count(shape: Shape) -> int:
    """``TupleElementCount``: the number of top-level elements (0 for non-tuples)."""
    return len(shape.tuple_shapes) if shape.is_tuple else 0


def try_get_subshape(shape: Shape, index: Sequence[int]) -> Shape | None:
    """``TryGetSubshape``: the subshape at ``index``, or None if the index is not valid."""
    sub = shape
    for i in index:
        if not sub.is_tuple or not 0 <= i < len(sub.tuple_shapes):
            return None
        sub = sub.tuple_shapes[i]
    return sub


def get_tuple_element_shape(shape: Shape, index: int) -> Shape:
    """``GetTupleElementShape``: element ``index`` of a tuple (a LayoutError if there is none)."""
    return get_subshape(shape, (index,))


def index_is_valid(shape: Shape, index: Sequence[int]) -> bool:
    """``IndexIsValid``: every step of ``index`` names an element of a tuple."""
    return try_get_subshape(shape, index) is not None


def get_subshape(shape: Shape, index: Sequence[int]) -> Shape:
    """``GetSubshape``: the subshape at ``index``; an invalid index is a LayoutError."""
    sub = try_get_subshape(shape, index)
    if sub is None:
        raise LayoutError(f"Shape index {shape_index_to_string(index)} not a valid subshape "
                          f"index for tuple with shape {shape}")
    return sub


def is_leaf_index(shape: Shape, index: Sequence[int]) -> bool:
    """``IsLeafIndex``: the subshape at ``index`` is not a tuple."""
    return not get_subshape(shape, index).is_tuple


def get_leaf_count(shape: Shape) -> int:
    """``GetLeafCount``: non-tuple subshapes; a non-tuple counts 1, ``()`` counts 0."""
    if not shape.is_tuple:
        return 1
    return sum(get_leaf_count(s) if s.is_tuple else 1 for s in shape.tuple_shapes)


def for_each_subshape(shape: Shape, fn: Callable[[Shape, ShapeIndex], object],
                      index: ShapeIndex = ()) -> None:
    """``ForEachSubshape``: call ``fn(subshape, index)`` for every subshape, in pre-order.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> seen = []
    >>> for_each_subshape(parse_shape("(f32[2], ())"), lambda s, i: seen.append(i))
    >>> seen
    [(), (0,), (1,)]
    """
    fn(shape, index)
    if shape.is_tuple:
        for i, sub in enumerate(shape.tuple_shapes):
            for_each_subshape(sub, fn, (*index, i))


def subshape_count(shape: Shape) -> int:
    """``SubshapeCount``: the subshapes ``for_each_subshape`` visits (the shape included)."""
    if not shape.is_tuple:
        return 1
    return 1 + sum(subshape_count(s) for s in shape.tuple_shapes)


def slice_tuple(shape: Shape, start: int, limit: int) -> Shape:
    """``SliceTuple``: the tuple of elements ``start`` to ``limit - 1``.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> str(slice_tuple(parse_shape("(f32[2], s8[], u4[3])"), 1, 3))
    '(s8[], u4[3]{0})'
    """
    if not shape.is_tuple:
        raise LayoutError(f"slice_tuple needs a tuple shape, but got {shape}")
    n = len(shape.tuple_shapes)
    if not (0 <= start <= n and 0 <= limit <= n):
        raise LayoutError(f"tuple slice [{start}, {limit}) out of range for {n} elements")
    return Shape.tuple_of(*shape.tuple_shapes[start:limit])
