"""Byte strides of an XLA array (``ShapeUtil::ByteStrides`` and kin): the byte step of each logical
dimension in a dense layout. :mod:`tensorlayout.xla.sizes` names them too.

>>> from tensorlayout.xla.shape import parse_shape
>>> byte_strides(parse_shape("f32[3,5]{0,1}")), byte_strides(parse_shape("s4[8]{0:E(4)}"))
((4, 12), None)
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import Shape, problems, takes_shape
from tensorlayout.xla.types import PrimitiveType

__all__ = ["byte_strides", "byte_strides_is_major_to_minor", "unpacked_byte_strides"]


@takes_shape
def unpacked_byte_strides(shape: Shape) -> tuple[int, ...]:
    """``UnpackedByteStrides``: byte stride of each logical dim (sub-byte counts as 1 byte).

    >>> from tensorlayout.xla.shape import parse_shape
    >>> unpacked_byte_strides(parse_shape("f32[3,5,7]"))
    (140, 28, 4)
    """
    if not shape.is_array:
        raise LayoutError(f"expected an array shape, but got {shape}")
    found = problems(shape)
    if found:
        raise LayoutError(f"{shape}: {found[0]}")
    assert shape.layout is not None
    strides = [0] * shape.rank
    stride = shape.element_type.byte_width
    for d in shape.layout.minor_to_major:
        strides[d] = stride
        stride *= shape.dimensions[d]
    return tuple(strides)


@takes_shape
def byte_strides(shape: Shape) -> tuple[int, ...] | None:
    """``ByteStrides``: as :func:`unpacked_byte_strides`, or None when ``E(n)`` is not whole bytes."""
    if shape.layout is not None and shape.layout.element_size_in_bits % 8:
        return None
    return unpacked_byte_strides(shape)


def byte_strides_is_major_to_minor(byte_strides: Sequence[int], dims: Sequence[int],
                                   element_type: PrimitiveType) -> bool:
    """``ByteStridesIsMajorToMinor``: dense row-major strides for ``dims``."""
    expected = element_type.byte_width
    for stride, dim in zip(reversed(byte_strides), reversed(dims), strict=False):
        if stride != expected:
            return False
        expected *= dim
    return True
