"""XLA shapes lowered into the layout core: the tiling walk, written once.

Tiling is pad → reshape → transpose, applied once per tile (``docs/tiled_layout.md``): the
physical dims (major to minor) are padded to tile multiples, each tiled dim ``d`` splits into
``(ceil(d/t), t)``, and the tile parts move to the minor end. A later tile re-tiles the dims
the previous one produced (missing major dims count as size 1); a ``*`` tile dim merges its
dim into the next more minor one first. Each dim of the result is one
:class:`~tensorlayout.core.layout.Digit`; memory order is row-major over them, so the digit
strides are the row-major strides of their extents.

>>> lay = lower_shape("f32[3,5]{1,0:T(2,2)}")
>>> [(d.source, d.block, d.extent, d.stride) for d in lay.digits]
[(0, 2, 2, 12), (1, 2, 3, 4), (0, 1, 2, 2), (1, 1, 2, 1)]
>>> lay.offset((2, 3)), lay.size
(17, 24)
"""

from __future__ import annotations

from functools import lru_cache

from tensorlayout.core.intmath import prod, round_up, row_major_strides
from tensorlayout.core.layout import CoreLayout, Digit, Merge, split_digit
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.xla.layout import COMBINE_DIMENSION, Tile
from tensorlayout.xla.shape import Shape, as_shape, takes_shape
from tensorlayout.xla.validate import problems

__all__ = ["allocated_elements", "checked_array", "lower_shape", "tiled_digits", "tiled_shape"]


def checked_array(shape: Shape) -> Shape:
    """``shape`` after checking it is a valid, static array shape with a layout.

    >>> checked_array(as_shape("f32[3]")).to_string(True)
    'f32[3]{0}'
    """
    if not isinstance(shape, Shape) or not shape.is_array:
        raise LayoutError(f"expected an array shape, but got {shape}")
    if shape.layout is None:
        raise LayoutError(f"shape {shape.to_string()} does not have a layout")
    if shape.is_dynamic:
        raise LayoutError(f"shape {shape} has dynamic dimensions; offsets need static sizes")
    found = problems(shape)
    if found:
        raise LayoutError(f"{shape}: {found[0]}")
    return shape


def lower_shape(shape: Shape | str) -> CoreLayout:
    """The :class:`~tensorlayout.core.layout.CoreLayout` of an XLA array shape with a layout.

    ``size`` counts the tiled buffer's slots, rounded up to ``L(n)`` tail padding when tiled.

    >>> lower_shape("bf16[16,256]{1,0:T(8,128)(2,1)}").size
    4096
    """
    return _lower(as_shape(shape))


@lru_cache(maxsize=1024)
def _lower(shape: Shape) -> CoreLayout:
    checked_array(shape)
    layout = shape.layout
    assert layout is not None
    digits = tiled_digits(shape)
    size = prod(d.extent for d in digits)
    if layout.tiles and layout.tail_padding_alignment_in_elements > 1:
        size = round_up(size, layout.tail_padding_alignment_in_elements)
    et = shape.element_type
    packed = layout.element_size_in_bits if et.is_sub_byte else 0
    if packed and packed != et.bits:
        raise UnsupportedError(f"{shape.to_string(True)}: E({packed}) for {et.name} "
                               f"({et.bits} bits) is not supported")
    tiles = [prod(t for t in tile.dims if t != COMBINE_DIMENSION) for tile in layout.tiles]
    return CoreLayout(
        shape=tuple(shape.dimensions), digits=digits, slots=size,
        element_bits=8 * et.byte_width, packed_bits=packed, signed=et.kind == "signed",
        tile_elements=tiles[0] if tiles else None,
        subtile_elements=tiles[-1] if len(tiles) > 1 and tiles[-1] > 1 else None,
        name=shape.to_string(True))


def tiled_digits(shape: Shape) -> tuple[Digit, ...]:
    """The dims of the tiled view as digits, major to minor, strides row-major over them.

    >>> [d.extent for d in tiled_digits(as_shape("bf16[16,256]{1,0:T(8,128)(2,1)}"))]
    [2, 2, 4, 128, 2, 1]
    """
    assert shape.layout is not None
    axes = [Digit(d, 1, shape.dimensions[d]) for d in shape.layout.major_to_minor]
    pseudo = 0
    for tile in shape.layout.tiles:
        while len(axes) < len(tile.dims):  # a long tile's missing major dims count as size 1
            pseudo += 1
            axes.insert(0, Digit(-pseudo, 1, 1))
        axes = _apply_tile(axes, tile, shape.dimensions)
    strides = row_major_strides([a.extent for a in axes])
    return tuple(Digit(a.source, a.block, a.extent, s) for a, s in zip(axes, strides, strict=True))


def _apply_tile(axes: list[Digit], tile: Tile, dims: tuple[int, ...]) -> list[Digit]:
    """One tiling step: merge ``*`` groups, split each tiled dim, move the in-tile parts minor."""
    head = axes[: len(axes) - len(tile.dims)]
    counts, inner, pending = [], [], []
    for k, (axis, t) in enumerate(zip(axes[len(head):], tile.dims, strict=True)):
        pending.append(axis)
        if t == COMBINE_DIMENSION:
            if k == len(tile.dims) - 1:
                raise LayoutError(f"tile {tile}: the most minor tile dim cannot be '*'")
            continue
        if t < 1:
            raise LayoutError(f"tile {tile} has a size {t} < 1")
        count, within = split_digit(_merged(pending), t, dims)
        counts.append(count)
        inner.append(within)
        pending = []
    return head + counts + inner


def _merged(group: list[Digit]) -> Digit:
    """A ``*`` group as one digit: row-major over its parts (a part of extent 1 is always 0)."""
    real = [a for a in group if a.extent != 1]
    if len(real) <= 1:
        return real[0] if real else group[-1]
    return Digit(Merge(tuple(real)), 1, prod(a.extent for a in real))


@takes_shape
def tiled_shape(shape: Shape) -> tuple[int, ...]:
    """Dims of the tiled (padded, split, transposed) view; row-major over it is memory order.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> tiled_shape(parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}"))
    (2, 2, 4, 128, 2, 1)
    """
    return tuple(d.extent for d in lower_shape(shape).digits)


@takes_shape
def allocated_elements(shape: Shape) -> int:
    """Element slots of the tiled buffer, padding included (product of ``tiled_shape``)."""
    return prod(tiled_shape(shape))
