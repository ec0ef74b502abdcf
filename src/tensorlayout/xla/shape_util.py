"""Shape rewrites and bitcast checks with XLA's names (``ShapeUtil``).

>>> from tensorlayout.xla.shape import parse_shape
>>> str(prepend_major_dimension(40, parse_shape("f32[10,20,30]{0,2,1}")))
'f32[40,10,20,30]{1,3,2,0}'
>>> reshape_is_bitcast(parse_shape("f32[3,4]{1,0}"), parse_shape("f32[6,2]{1,0}"))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import permutations

import numpy as np

from tensorlayout.core.intmath import row_major_index, row_major_strides
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.xla.index_util import multidimensional_index_to_linear_index
from tensorlayout.xla.layout import Layout
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape
from tensorlayout.xla.tiling import linear_indices
from tensorlayout.xla.types import PrimitiveType, element_type
from tensorlayout.xla.validate import validate_layout

__all__ = [
    "align_layouts",
    "append_minor_dimension",
    "change_element_type",
    "copy_layout_between_shapes",
    "deduce_transpose_dimensions_for_bitcast",
    "delete_dimensions",
    "device_shape_to_host_shape",
    "has_degenerate_dimensions",
    "insert_dimension_at_index",
    "insert_dimensions_at_index",
    "is_effectively_most_major_dimension",
    "is_reshape_or_transpose_bitcast",
    "last_dim_is_minor_most",
    "make_shape_with_descending_layout_and_same_physical_layout",
    "move_dim_to_major",
    "permute_dimensions_ignoring_layout",
    "prepend_major_dimension",
    "reorder_logical_dimensions",
    "reshape_is_bitcast",
    "same_dimensions",
    "transpose_is_bitcast",
]

#: Bitcast checks compare every element's offset; beyond this many elements they refuse.
MAX_BITCAST_ELEMENTS = 1 << 26


def _array(shape: Shape) -> Shape:
    if not shape.is_array:
        raise LayoutError(f"expected an array shape, but got {shape}")
    return shape


def _layout(shape: Shape) -> Layout:
    if shape.layout is None:
        raise LayoutError(f"shape {shape.to_string()} does not have a layout")
    return shape.layout


def move_dim_to_major(shape: Shape, dim: int) -> Shape:
    """``ShapeUtil::MoveDimToMajor`` (tuples element-wise)."""
    if shape.is_tuple:
        return replace(shape, tuple_shapes=tuple(move_dim_to_major(s, dim)
                                                 for s in shape.tuple_shapes))
    layout = _layout(shape)
    m2m = [d for d in layout.minor_to_major if d != dim] + [dim]
    return shape.with_layout(layout.replace(minor_to_major=tuple(m2m)))


def delete_dimensions(dims_to_delete: Sequence[int], shape: Shape) -> Shape:
    """``ShapeUtil::DeleteDimensions``: drop dims, renumbering the layout (tiles are kept, as XLA).

    >>> from tensorlayout.xla.shape import parse_shape
    >>> str(delete_dimensions([1], parse_shape("f32[4,1,8]{2,1,0:T(8)}")))
    'f32[4,8]{1,0:T(8)}'
    """
    drop = sorted({shape.dim_index(d) for d in dims_to_delete})
    keep = [d for d in range(shape.rank) if d not in drop]
    renumber = {d: i for i, d in enumerate(keep)}
    layout = shape.layout
    if layout is not None:
        layout = layout.replace(minor_to_major=tuple(renumber[d] for d in layout.minor_to_major
                                                     if d in renumber))
    return Shape(shape.element_type, tuple(shape.dimensions[d] for d in keep),
                 tuple(shape.dynamic_dimensions[d] for d in keep), layout)


def insert_dimensions_at_index(shape: Shape, index: int, sizes: Sequence[int]) -> Shape:
    """``ShapeUtil::InsertDimensionsAtIndex``: new dims go just major to the old dim ``index``.

    Inserting at ``index == rank`` makes the new dims the most minor; among themselves the
    new dims keep default (descending) order.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> str(insert_dimensions_at_index(parse_shape("f32[10,20,30]{0,2,1}"), 1, [40, 50]))
    'f32[10,40,50,20,30]{0,4,3,2,1}'
    """
    if not 0 <= index <= shape.rank:
        raise LayoutError(f"expected an insertion index in [0, {shape.rank}], but got {index}")
    n = len(sizes)
    dims = shape.dimensions[:index] + tuple(sizes) + shape.dimensions[index:]
    dyn = shape.dynamic_dimensions[:index] + (False,) * n + shape.dynamic_dimensions[index:]
    layout = shape.layout
    if layout is not None:
        old = [d + n if d >= index else d for d in layout.minor_to_major]
        new = list(range(index + n - 1, index - 1, -1))
        at = old.index(index + n) + 1 if index < shape.rank else 0
        layout = layout.replace(minor_to_major=tuple(old[:at] + new + old[at:]))
    return Shape(shape.element_type, dims, dyn, layout)


def insert_dimension_at_index(shape: Shape, index: int, size: int) -> Shape:
    """``ShapeUtil::InsertDimensionAtIndex``."""
    return insert_dimensions_at_index(shape, index, (size,))


def prepend_major_dimension(size: int, shape: Shape) -> Shape:
    """``ShapeUtil::PrependMajorDimension``."""
    dims = (size, *shape.dimensions)
    layout = shape.layout
    if layout is not None:
        layout = layout.replace(minor_to_major=tuple(d + 1 for d in layout.minor_to_major) + (0,))
    return Shape(shape.element_type, dims, (False, *shape.dynamic_dimensions), layout)


def append_minor_dimension(size: int, shape: Shape) -> Shape:
    """``ShapeUtil::AppendMinorDimension``: the new last dim is the most minor."""
    dims = (*shape.dimensions, size)
    layout = shape.layout
    if layout is not None:
        layout = layout.replace(minor_to_major=(shape.rank, *layout.minor_to_major))
    return Shape(shape.element_type, dims, (*shape.dynamic_dimensions, False), layout)


def permute_dimensions_ignoring_layout(permutation: Sequence[int], shape: Shape) -> Shape:
    """Output dim ``i`` is input dim ``permutation[i]``; the layout resets to default."""
    _check_perm(permutation, shape.rank)
    dims = tuple(shape.dimensions[p] for p in permutation)
    dyn = tuple(shape.dynamic_dimensions[p] for p in permutation)
    return Shape.array(shape.element_type, dims, dynamic_dimensions=dyn) if not any(
        d < 0 for d in dims) else Shape(shape.element_type, dims, dyn,
                                        Layout(tuple(range(len(dims) - 1, -1, -1))))


def reorder_logical_dimensions(shape: Shape, permutation: Sequence[int]) -> Shape:
    """``ShapeUtil::ReorderLogicalDimensions``: same physical layout, dims reordered."""
    _check_perm(permutation, shape.rank)
    dims = tuple(shape.dimensions[p] for p in permutation)
    dyn = tuple(shape.dynamic_dimensions[p] for p in permutation)
    layout = _layout(shape)
    inverse = {p: i for i, p in enumerate(permutation)}
    m2m = tuple(inverse[d] for d in layout.minor_to_major)
    return Shape(shape.element_type, dims, dyn, layout.replace(minor_to_major=m2m))


def _check_perm(permutation: Sequence[int], rank: int) -> None:
    if sorted(permutation) != list(range(rank)):
        raise LayoutError(f"expected a permutation of 0..{rank - 1}, but got {list(permutation)}")


def make_shape_with_descending_layout_and_same_physical_layout(shape: Shape) -> Shape:
    """Dims reordered major to minor so the default layout describes the same memory."""
    layout = _layout(shape)
    order = layout.major_to_minor
    return Shape(shape.element_type, tuple(shape.dimensions[d] for d in order),
                 tuple(shape.dynamic_dimensions[d] for d in order),
                 Layout(tuple(range(shape.rank - 1, -1, -1))))


def change_element_type(shape: Shape, new_type: str | PrimitiveType) -> Shape:
    """``ShapeUtil::ChangeElementType``: clears ``E(n)`` unless the new type is sub-byte."""
    t = element_type(new_type)
    layout = shape.layout
    if layout is not None and not t.is_sub_byte:
        layout = layout.replace(element_size_in_bits=0)
    return replace(shape, element_type=t, layout=layout)


def device_shape_to_host_shape(shape: Shape) -> Shape:
    """``ShapeUtil::DeviceShapeToHostShape``: drop tiles, S, P, E and M; L back to 1."""
    if shape.is_tuple:
        return replace(shape, tuple_shapes=tuple(device_shape_to_host_shape(s)
                                                 for s in shape.tuple_shapes))
    if shape.layout is None:
        return shape
    return shape.with_layout(Layout(shape.layout.minor_to_major))


def has_degenerate_dimensions(shape: Shape) -> bool:
    """``HasDegenerateDimensions``: some dimension has size 1."""
    return 1 in shape.dimensions


def last_dim_is_minor_most(shape: Shape) -> bool:
    layout = _layout(shape)
    return shape.rank > 0 and layout.minor_to_major[0] == shape.rank - 1


def is_effectively_most_major_dimension(shape: Shape, dim: int) -> bool:
    """True if every dim more major than ``dim`` in the layout has size 1 (False if ``dim`` is
    not in the layout, as XLA)."""
    layout = _layout(shape)
    for d in layout.major_to_minor:
        if d == dim:
            return True
        if shape.dimensions[d] != 1:
            return False
    return False


def same_dimensions(a: Shape, b: Shape) -> bool:
    """``ShapeUtil::SameDimensions``: equal dims; unbounded ``?`` dims match anything."""
    return a.rank == b.rank and all(x == y or UNBOUNDED_SIZE in (x, y)
                                    for x, y in zip(a.dimensions, b.dimensions, strict=False))


def _offsets(shape: Shape) -> np.ndarray:
    if shape.elements_in() > MAX_BITCAST_ELEMENTS:
        raise UnsupportedError(f"bitcast check of {shape} compares every element; "
                               f"more than {MAX_BITCAST_ELEMENTS} elements is refused")
    return linear_indices(shape)


def _same_type(a: Shape, b: Shape, ignore_element_type: bool) -> bool:
    return ignore_element_type or a.element_type == b.element_type


def _unit_indices_kept(src: Shape, dst: Shape) -> bool:
    """XLA's check that each input unit index (one coordinate 1, the rest 0) keeps its untiled
    offset: the unit index and the output index with the same row-major position."""
    for d in range(src.rank):
        if src.dimensions[d] <= 1:
            continue
        unit = [0] * src.rank
        unit[d] = 1
        row_major = row_major_index(unit, src.dimensions)
        out = [(row_major // s) % n for s, n in zip(row_major_strides(dst.dimensions), dst.dimensions)]
        if (multidimensional_index_to_linear_index(src, unit)
                != multidimensional_index_to_linear_index(dst, out)):
            return False
    return True


def reshape_is_bitcast(input_shape: Shape, output_shape: Shape, *,
                       ignore_element_type: bool = False, exact: bool = False) -> bool:
    """``ShapeUtil::ReshapeIsBitcast``: the reshape keeps every element's (untiled) offset.

    As XLA: different element counts give False, no elements give True, and the check runs on
    unit indices and ignores tiles. ``exact=True`` compares every element's offset with the
    tiles applied instead (at most ``MAX_BITCAST_ELEMENTS`` elements).

    >>> from tensorlayout.xla.shape import parse_shape
    >>> reshape_is_bitcast(parse_shape("f32[3,4]{0,1}"), parse_shape("f32[6,2]{1,0}"))
    False
    """
    _layout(_array(input_shape))
    _layout(_array(output_shape))
    if not _same_type(input_shape, output_shape, ignore_element_type):
        return False
    if input_shape.elements_in() != output_shape.elements_in():
        return False
    if exact:
        return bool(np.array_equal(_offsets(input_shape), _offsets(output_shape)))
    if input_shape.elements_in() == 0:
        return True
    return (_unit_indices_kept(input_shape, output_shape)
            and _unit_indices_kept(output_shape, input_shape))


def transpose_is_bitcast(input_shape: Shape, output_shape: Shape, dimensions: Sequence[int],
                         *, ignore_element_type: bool = False, exact: bool = False) -> bool:
    """``ShapeUtil::TransposeIsBitcast``: output dim i is input dim ``dimensions[i]``.

    XLA's rule compares the layouts only: ``input.minor_to_major[k] ==
    dimensions[output.minor_to_major[k]]`` for every k (dimension sizes are not looked at, so a
    size-1 dimension placed differently answers False). ``exact=True`` instead compares every
    element's offset, tiles included, and needs matching sizes.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> a, b = parse_shape("f32[1,4]{1,0}"), parse_shape("f32[4,1]{1,0}")
    >>> transpose_is_bitcast(a, b, [1, 0]), transpose_is_bitcast(a, b, [1, 0], exact=True)
    (False, True)
    """
    in_layout, out_layout = _layout(_array(input_shape)), _layout(_array(output_shape))
    _check_perm(dimensions, input_shape.rank)
    if not _same_type(input_shape, output_shape, ignore_element_type):
        return False
    if not exact:
        return (len(out_layout.minor_to_major) == len(dimensions) and
                tuple(dimensions[d] for d in out_layout.minor_to_major) == in_layout.minor_to_major)
    if tuple(input_shape.dimensions[d] for d in dimensions) != output_shape.dimensions:
        return False
    out = _offsets(output_shape).reshape(output_shape.dimensions)
    inverse = np.argsort(dimensions)
    return bool(np.array_equal(_offsets(input_shape), out.transpose(inverse).reshape(-1)))


def is_reshape_or_transpose_bitcast(a: Shape, b: Shape, *, ignore_element_type: bool = False,
                                    exact: bool = False) -> bool:
    """``ShapeUtil::IsReshapeOrTransposeBitcast``: some reshape or transpose from a to b is a bitcast.

    As XLA: equal shapes (types aside), then a bitcast reshape, then the one transpose the
    layouts imply (``DeduceTransposeDimensionsForBitcast``). ``exact=True`` uses the exact
    checks and tries every permutation (rank <= 6).
    """
    if not _same_type(a, b, ignore_element_type):
        return False
    if not exact:
        if a.equal(b, ignore_element_type=True):
            return True
        if reshape_is_bitcast(a, b, ignore_element_type=True):
            return True
        perm = deduce_transpose_dimensions_for_bitcast(a, b)
        return perm is not None and transpose_is_bitcast(b, a, perm, ignore_element_type=True)
    if a.elements_in() != b.elements_in():
        return False
    if reshape_is_bitcast(a, b, ignore_element_type=True, exact=True):
        return True
    if a.rank != b.rank or a.rank > 6:
        return False
    return any(transpose_is_bitcast(a, b, p, ignore_element_type=True, exact=True)
               for p in permutations(range(a.rank)))


def deduce_transpose_dimensions_for_bitcast(input_shape: Shape,
                                            output_shape: Shape) -> list[int] | None:
    """``DeduceTransposeDimensionsForBitcast``: the transpose that is a bitcast, if any.

    Output dim ``k`` is input dim ``perm[k]``, with ``perm`` composed from the two layouts;
    None when the ranks differ or the permuted sizes are not the output's.
    """
    if input_shape.rank != output_shape.rank:
        return None
    m_in, m_out = _layout(input_shape).minor_to_major, _layout(output_shape).minor_to_major
    position = {d: k for k, d in enumerate(m_out)}
    perm = [m_in[position[k]] for k in range(output_shape.rank)]
    if tuple(input_shape.dimensions[p] for p in perm) != output_shape.dimensions:
        return None
    return perm


def align_layouts(input_shape: Shape, output_shape: Shape) -> Shape | None:
    """``ShapeUtil::AlignLayouts``: a layout for ``output_shape`` making the reshape a bitcast.

    Searches the layouts of the output (untiled) for one with the same physical order; None
    if there is none. Size-1 dims are placed as XLA does, next to their neighbours.
    """
    _array(input_shape)
    layout = _layout(input_shape)
    if layout.tiles:
        raise UnsupportedError("align_layouts supports untiled layouts only")
    if input_shape.elements_in() != output_shape.elements_in():
        return None
    target = _offsets(input_shape)
    rank = output_shape.rank
    if rank > 8:
        raise UnsupportedError("align_layouts searches permutations; rank > 8 is refused")
    for perm in permutations(range(rank)):
        candidate = output_shape.with_layout(Layout(tuple(perm)))
        if np.array_equal(_offsets(candidate), target):
            return candidate
    return None


def copy_layout_between_shapes(src: Shape, dst: Shape) -> Shape:
    """``LayoutUtil::CopyLayoutBetweenShapes``: ``dst`` with ``src``'s layout (same rank)."""
    if src.rank != dst.rank:
        raise LayoutError(f"cannot copy the layout of {src} to {dst}: ranks differ")
    out = dst.with_layout(src.layout)
    validate_layout(out)
    return out
