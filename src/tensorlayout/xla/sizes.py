"""Byte sizes: XLA ``ByteSizeOf`` (logical) and ``ArraySize`` (padded, tiled, packed).

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("f32[3,5]{1,0:T(2,2)}")
>>> byte_size(s), array_size(s), array_data_size(s), round(padding_overhead(s), 2)
(60, 96, 84, 1.6)
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from tensorlayout._lazy import lazy_modules, lazy_names
from tensorlayout.core.intmath import ceil_div, fits_int64, prod, round_up, show_int
from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape, takes_shape
from tensorlayout.xla.types import PrimitiveType

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
    from tensorlayout.xla.strides import (
        byte_strides,
        byte_strides_is_major_to_minor,
        unpacked_byte_strides,
    )

__all__ = [
    "array_data_size",
    "array_size",
    "byte_size",
    "byte_size_of_elements",
    "byte_size_of_primitive_type",
    "byte_size_of_tuple_index_table",
    "byte_strides",
    "byte_strides_is_major_to_minor",
    "max_elements_in_per_split",
    "max_split_size",
    "padding_overhead",
    "unpacked_byte_strides",
]

#: XLA's ``LayoutUtil::LinearIndex`` (only :func:`array_data_size` reads it), loaded on first use
_lazy = lazy_modules({"plan": "tensorlayout.xla.tiling_recipe"})
#: the byte strides (``ByteStrides`` and its kin) live in :mod:`tensorlayout.xla.strides`, loaded
#: on first use: the sizes `show` prints need none of them
__getattr__, __dir__ = lazy_names(__name__, {
    name: ("tensorlayout.xla.strides", name)
    for name in ("byte_strides", "byte_strides_is_major_to_minor", "unpacked_byte_strides")}, __all__)

POINTER_SIZE = 8


def _check_bounded(shape: Shape) -> None:
    if shape.is_array and any(d == UNBOUNDED_SIZE for d in shape.dimensions):
        raise LayoutError(f"{shape} has an unbounded dynamic dimension '?', which has no size; "
                          "give it a bound such as '<=128'")


def _bytes_for(count: int, shape: Shape) -> int:
    _check_bounded(shape)
    e = shape.layout.element_size_in_bits if shape.layout is not None else 0
    if e:
        return ceil_div(count * e, 8)
    return count * shape.element_type.byte_width


def byte_size_of_primitive_type(t: PrimitiveType) -> int:
    """``ByteSizeOfPrimitiveType``: bytes of one element (pred and sub-byte types: 1)."""
    return t.byte_width


@takes_shape
def byte_size_of_elements(shape: Shape) -> int:
    """``ByteSizeOfElements``: elements × byte width, or packed with ``E(n)``; ignores tiles."""
    return _bytes_for(shape.elements_in(), shape)


@takes_shape
def byte_size_of_tuple_index_table(shape: Shape, pointer_size: int = POINTER_SIZE) -> int:
    """``ByteSizeOfTupleIndexTable``: one pointer per top-level element of a tuple.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> byte_size_of_tuple_index_table(parse_shape("(f32[2], (s8[], u4[3]))"), 4)
    8
    """
    if not shape.is_tuple or pointer_size <= 0:
        raise LayoutError(f"byte_size_of_tuple_index_table needs a tuple shape and a pointer "
                          f"size > 0, but got {shape} and {pointer_size}")
    return pointer_size * len(shape.tuple_shapes)


@takes_shape
def byte_size(shape: Shape, pointer_size: int = POINTER_SIZE) -> int:
    """``ShapeUtil::ByteSizeOf``: tuple → pointer table, token → 0, opaque → a pointer.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> byte_size(parse_shape("(f32[10,20], c64[])"))
    16
    """
    kind = shape.kind
    if kind == "tuple":
        return byte_size_of_tuple_index_table(shape, pointer_size)
    if kind == "buffer":
        return byte_size_of_elements(shape.buffer_shape)
    if kind == "token":
        return 0
    if kind == "opaque":
        return pointer_size
    return byte_size_of_elements(shape)


@takes_shape
def max_split_size(shape: Shape, dim: int) -> int:
    """``MaxSplitSize``: the largest piece of logical ``dim`` under the layout's split config."""
    dim = shape.dim_index(dim)
    layout = shape.layout
    size = shape.dimensions[dim]
    if layout is None:
        return size
    for config in layout.split_configs:
        if 0 <= config.dimension < layout.rank and layout.major(config.dimension) == dim:
            points = (0, *config.split_indices, size)
            return max(b - a for a, b in itertools.pairwise(points))
    return size


@takes_shape
def max_elements_in_per_split(shape: Shape) -> int:
    """``MaxElementsInPerSplit``: product of :func:`max_split_size` over all dims."""
    return prod(max_split_size(shape, d) for d in range(shape.rank))


@takes_shape
def array_size(shape: Shape) -> int:
    """``ShapeUtil::ArraySize``: bytes allocated for a tiled array, padding included.

    Only the first tile pads (later tiles are assumed to add none, as in XLA); tail
    padding ``L(n)`` applies only when tiles exist; ``E(n)`` packs sub-byte elements.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> array_size(parse_shape("s4[9216,6144]{1,0:T(64,128)(8,1)E(4)}"))
    28311552
    """
    if not shape.is_array:
        if shape.is_buffer:
            return array_size(shape.buffer_shape)
        raise LayoutError(f"expected an array shape, but got {shape}")
    layout = shape.layout
    if layout is None or not layout.tiles:
        return byte_size_of_elements(shape)
    tile = layout.tiles[0].dims
    count = 1
    rank = shape.rank
    for k in range(max(len(tile), rank)):
        size = max_split_size(shape, layout.minor(k)) if k < rank else 1
        if k < len(tile):
            t = tile[len(tile) - 1 - k]
            if t > 0:
                size = round_up(size, t)
        count *= size
    alignment = layout.tail_padding_alignment_in_elements
    if alignment > 1:
        count = round_up(count, alignment)
    return _bytes_for(count, shape)


@takes_shape
def array_data_size(shape: Shape) -> int:
    """``ShapeUtil::ArrayDataSize``: bytes up to and including the last element."""
    if shape.elements_in() == 0:
        return 0
    last = tuple(d - 1 for d in shape.dimensions)
    return _bytes_for(_lazy("plan").layout_util_linear_index(shape, last) + 1, shape)


@takes_shape
def padding_overhead(shape: Shape) -> float:
    """Allocated bytes (:func:`array_size`) per useful byte (:func:`byte_size`); 1.0 = none.

    An allocation beyond int64 bytes (which XLA could not size) is a :class:`LayoutError`.
    """
    useful = byte_size_of_elements(shape)
    allocated = array_size(shape)
    if not fits_int64(allocated):
        raise LayoutError(f"{shape} would allocate {show_int(allocated)} bytes, more than int64 can count")
    return allocated / useful if useful else 1.0
