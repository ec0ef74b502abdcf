"""Dimension rewrites and reshape analysis with XLA's names (``ShapeUtil``).

(``deduce_transpose_dimensions_for_bitcast`` lives with the bitcast checks in
:mod:`tensorlayout.xla.shape_util` and is re-exported here.)

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("f32[5,1,7,1]{3,0,2,1}")
>>> str(drop_degenerate_dimensions(s)), str(append_major_dimension(4, s))
('f32[5,7]{0,1}', 'f32[5,1,7,1,4]{3,0,2,1,4}')
>>> dimensions_unmodified_by_reshape(parse_shape("f32[2,3,4]"), parse_shape("f32[2,12]"))
[(0, 0)]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from tensorlayout.core.intmath import prod
from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import Shape
from tensorlayout.xla.shape_util import deduce_transpose_dimensions_for_bitcast, delete_dimensions

__all__ = [
    "ShapeEqualityDescriptor",
    "append_major_dimension",
    "common_factors",
    "deduce_transpose_dimensions_for_bitcast",
    "delete_dimension",
    "dimensions_unmodified_by_reshape",
    "drop_degenerate_dimensions",
    "filter_dimensions",
    "inserted_or_deleted_1_sized_dimensions",
    "reshape_leaves_dimensions_unmodified",
]


def _array(shape: Shape, what: str) -> Shape:
    if not shape.is_array:
        raise LayoutError(f"{what} needs an array shape, but got {shape}")
    return shape


def delete_dimension(dim_to_delete: int, shape: Shape) -> Shape:
    """``DeleteDimension``: drop one dimension; the layout renumbers and keeps its tiles."""
    _array(shape, "delete_dimension")
    if not 0 <= dim_to_delete < shape.rank:
        raise LayoutError(f"expected a dimension in [0, {shape.rank}), but got {dim_to_delete}")
    return delete_dimensions([dim_to_delete], shape)


def filter_dimensions(keep: Callable[[int], bool], shape: Shape) -> Shape:
    """``FilterDimensions``: keep the dimensions ``d`` for which ``keep(d)`` holds."""
    _array(shape, "filter_dimensions")
    return delete_dimensions([d for d in range(shape.rank) if not keep(d)], shape)


def drop_degenerate_dimensions(shape: Shape) -> Shape:
    """``DropDegenerateDimensions``: drop every dimension of size 1."""
    return filter_dimensions(lambda d: shape.dimensions[d] != 1, shape)


def append_major_dimension(bound: int, shape: Shape) -> Shape:
    """``AppendMajorDimension``: a new last dimension that is the most major in the layout.

    (``prepend_major_dimension`` adds the new dimension as dimension 0 instead.)
    """
    _array(shape, "append_major_dimension")
    layout = shape.layout
    if layout is not None:
        layout = layout.replace(minor_to_major=(*layout.minor_to_major, shape.rank))
    return Shape(shape.element_type, (*shape.dimensions, bound),
                 (*shape.dynamic_dimensions, False), layout)


def _equal_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def common_factors(a: Sequence[int], b: Sequence[int]) -> list[tuple[int, int]]:
    """XLA's ``CommonFactors``: the bounds ``(i, j)`` where ``prod(a[:i]) == prod(b[:j])``.

    Equal prefixes give one bound per dimension; if what follows them has a zero (or the
    products differ) the rest is one group, as in XLA.

    >>> common_factors([2, 6, 5], [12, 5])
    [(0, 0), (2, 1), (3, 2)]
    """
    if prod(a) != prod(b):
        raise LayoutError(f"common_factors needs equal products, but got {list(a)} and {list(b)}")
    if list(a) == list(b):
        return [(i, i) for i in range(len(a) + 1)]
    i = j = _equal_prefix(a, b)
    bounds = [(k, k) for k in range(i)]
    rest_a, rest_b = prod(a[i:]), prod(b[j:])
    if rest_a != rest_b:
        return [(0, 0), (len(a), len(b))]
    if rest_a == 0:
        return [*bounds, (i, j), (len(a), len(b))]
    return bounds + _factor_walk(a, b, i, j)


def _factor_walk(a: Sequence[int], b: Sequence[int], i: int, j: int) -> list[tuple[int, int]]:
    """The two-pointer walk of CommonFactors after the equal prefix (size-1 dims kept apart)."""
    out: list[tuple[int, int]] = []
    size_a = size_b = 1
    last = (i - 1, j - 1)
    while True:
        if size_a == size_b and (i > last[0] or j > last[1]):
            last = (i, j)
            out.append(last)
            continue
        more_a, more_b = i < len(a), j < len(b)
        if not (more_a or more_b):
            return out
        step_a = size_a < size_b or (more_a and (not more_b or (size_a == size_b and a[i] <= b[j])))
        step_b = size_b < size_a or (more_b and (not more_a or (size_a == size_b and b[j] <= a[i])))
        if step_a:
            size_a, i = size_a * a[i], i + 1
        if step_b:
            size_b, j = size_b * b[j], j + 1


def dimensions_unmodified_by_reshape(input_shape: Shape, output_shape: Shape) -> list[tuple[int, int]]:
    """``DimensionsUnmodifiedByReshape``: ``(input dim, output dim)`` pairs a reshape keeps."""
    _array(input_shape, "dimensions_unmodified_by_reshape")
    _array(output_shape, "dimensions_unmodified_by_reshape")
    factors = common_factors(input_shape.dimensions, output_shape.dimensions)
    return [(i, j) for (i, j), (i2, j2) in itertools.pairwise(factors) if i2 - i == 1 and j2 - j == 1]


def reshape_leaves_dimensions_unmodified(from_shape: Shape, to_shape: Shape,
                                         input_dim_indices: Sequence[int]) -> list[int] | None:
    """``ReshapeLeavesDimensionsUnmodified``: where the (sorted) input dims land, or None."""
    if list(input_dim_indices) != sorted(input_dim_indices):
        return None
    kept = dict(dimensions_unmodified_by_reshape(from_shape, to_shape))
    if any(d not in kept for d in input_dim_indices):
        return None
    return [kept[d] for d in input_dim_indices]


class ShapeEqualityDescriptor(tuple[list[int], list[int]]):
    """``ShapeEqualityDescriptor``: ``(deleted_dimensions, inserted_dimensions)``."""

    @property
    def deleted_dimensions(self) -> list[int]:
        """Input dimensions of size 1 the reshape removes."""
        return self[0]

    @property
    def inserted_dimensions(self) -> list[int]:
        """Output dimensions of size 1 the reshape adds."""
        return self[1]


def inserted_or_deleted_1_sized_dimensions(shape_pre: Shape,
                                           shape_post: Shape) -> ShapeEqualityDescriptor | None:
    """``InsertedOrDeleted1SizedDimensions``: the reshape only adds or drops size-1 dims?

    >>> from tensorlayout.xla.shape import parse_shape
    >>> d = inserted_or_deleted_1_sized_dimensions(parse_shape("f32[1,3,1]"), parse_shape("f32[3,1,1]"))
    >>> d.deleted_dimensions, d.inserted_dimensions
    ([0], [2])
    """
    kept = dimensions_unmodified_by_reshape(shape_pre, shape_post)
    ends = [(-1, -1), *kept, (shape_pre.rank, shape_post.rank)]
    deleted: list[int] = []
    inserted: list[int] = []
    for (i0, j0), (i1, j1) in itertools.pairwise(ends):
        gap_in, gap_out = range(i0 + 1, i1), range(j0 + 1, j1)
        if any(shape_pre.dimensions[d] > 1 for d in gap_in):
            return None
        if any(shape_post.dimensions[d] > 1 for d in gap_out):
            return None
        deleted += gap_in
        inserted += gap_out
    return ShapeEqualityDescriptor((deleted, inserted))
