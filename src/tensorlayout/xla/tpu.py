"""TPU tiling formats: the layout the TPU compiler proposes for an array.

Rules (the seed's "examples of tiling formats", refined against what libtpu chose for
every row of ``array_sizes.tsv``):

* tile rows by element width, for second-minor size ``s``: 32/64-bit ``(1|2|4|8,128)``
  for ``s`` ≤ 1/2/4/else; 16-bit ``(2|4|8,128)(2,1)`` for ``s`` ≤ 2/4/else; 8-bit and
  pred ``(4|8,128)(4,1)`` for ``s`` ≤ 4/else, or ``(32,128)(4,1)`` when 32 divides ``s``;
  4-bit ``(8,128)(8,1)E(4)``, or ``(64,128)(8,1)E(4)`` when 64 divides ``s``;
* rank 1: one tile of ``128·(32/bits)`` elements (at least), grown to a power of two up
  to 1024, re-tiled to ``(128)`` and packed like the 2-D tile; scalars: ``T(128·32/bits)``;
* the minor and second-minor dims are the pair whose padded array is smallest (ties
  keep XLA's default order); the other dims stay in default (descending) order.

>>> str(default_layout("bf16", (8, 1, 1280, 16384)))
'{3,2,1,0:T(8,128)(2,1)}'
>>> str(default_layout("f32", (256, 1))), str(default_layout("s8", (1000,)))
('{0,1:T(1,128)}', '{0:T(1024)(128)(4,1)}')
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import Layout, Tile
from tensorlayout.xla.types import PrimitiveType, element_type

__all__ = ["default_layout", "default_shape", "packing", "tile_rows"]

LANES = 128


def _bits(t: PrimitiveType) -> int:
    if not t.is_array:
        raise LayoutError(f"expected an array element type, but got {t.name}")
    return 8 if t.kind == "pred" else min(t.bit_width, 32)


def packing(t: str | PrimitiveType) -> int:
    """How many elements share one 32-bit word: 1 (32/64-bit), 2 (16), 4 (8, pred), 8 (4-bit)."""
    return 32 // _bits(element_type(t))


def tile_rows(t: str | PrimitiveType, second_minor: int) -> int:
    """Rows of the first 2-D tile for a second-minor dim of size ``second_minor``.

    >>> tile_rows("f32", 3), tile_rows("bf16", 1), tile_rows("s8", 160), tile_rows("s8", 16)
    (4, 2, 32, 8)
    """
    p = packing(t)
    if p == 8:  # 4-bit: native (64,128) tiles when they add no padding
        return 64 if second_minor and second_minor % 64 == 0 else 8
    for rows in (1, 2, 4):
        if rows >= p and second_minor <= rows:
            return rows
    if p == 4 and second_minor and second_minor % 32 == 0:
        return 32  # 8-bit: native (32,128) tiles when they add no padding
    return 8


def _sub_tiles(p: int) -> tuple[Tile, ...]:
    return (Tile((p, 1)),) if p > 1 else ()


def _rank1_tile(p: int, n: int) -> int:
    size = LANES * p
    while size < n and size < 1024:
        size *= 2
    return max(size, LANES * p) if p < 8 else 1024


def default_layout(t: str | PrimitiveType, dims: Sequence[int]) -> Layout:
    """The TPU layout proposed for an array of element type ``t`` and ``dims``."""
    et = element_type(t)
    p = packing(et)
    e_bits = 4 if et.is_sub_byte else 0
    rank = len(dims)
    if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in dims):
        raise LayoutError(f"expected non-negative integer dims, but got {tuple(dims)}")
    if rank == 0:
        return Layout((), (Tile((LANES * p,)),), element_size_in_bits=e_bits)
    if rank == 1:
        size = _rank1_tile(p, dims[0])
        tiles = (Tile((size,)),) + ((Tile((LANES,)),) + _sub_tiles(p) if p > 1 else ())
        return Layout((0,), tiles, element_size_in_bits=e_bits)
    default = list(range(rank - 1, -1, -1))
    best: tuple[int, int, int] | None = None
    best_pair = (default[0], default[1])
    for ai, a in enumerate(default):
        for bi, b in enumerate(default):
            if a == b:
                continue
            rows = tile_rows(et, dims[b])
            cost = -(-dims[a] // LANES) * LANES * (-(-dims[b] // rows) * rows)
            for d in default:
                if d not in (a, b):
                    cost *= dims[d]
            key = (cost, ai, bi)
            if best is None or key < best:
                best, best_pair = key, (a, b)
    a, b = best_pair
    m2m = (a, b) + tuple(d for d in default if d not in (a, b))
    rows = tile_rows(et, dims[b])
    tiles = (Tile((rows, LANES)),) + _sub_tiles(p)
    return Layout(m2m, tiles, element_size_in_bits=e_bits)


def default_shape(t: str | PrimitiveType, dims: Sequence[int]):  # -> Shape
    """An array shape with :func:`default_layout` attached."""
    from tensorlayout.xla.shape import Shape

    return Shape.array(element_type(t), tuple(dims), default_layout(t, dims))
