"""Pallas TPU block shapes: legal as is, legal with padding (and the VMEM it takes), or illegal.

The legality rules are those the Pallas TPU lowering checks (``_check_block_mappings`` in
``jax/_src/pallas/mosaic/lowering.py``, jax 0.10.2), named here:

* ``lanes``: the last block dim equals the array's last dim or is a multiple of 128;
* ``sublanes``: the second-minor block dim equals the array's or is a multiple of 8;
* ``vector``: a rank-1 block equals the array dim, is a multiple of 1024 (8 sublanes of 128
  lanes), or is a power of two of at least ``128·(32/bits)`` elements;
* ``rank``: a block has at least one dim. A squeezed dim (``None``) counts as size 1.

The VMEM bytes are an estimate: the block laid out in Mosaic's native VMEM tiles, ``(8·p,
128)`` for ``p`` elements per 32-bit word (``(8,128)`` f32, ``(16,128)`` bf16, ``(32,128)``
int8, ``(64,128)`` int4: the second-minor tile grows as elements narrow); a rank-1 block in
tiles of ``128·p``. A legal block whose last two dims are not multiples of that tile is
"legal with padding".

>>> check_block_spec((8, 100), (64, 256), "float32").verdict
'illegal'
>>> r = check_block_spec((8, 128), (64, 256), "bfloat16")
>>> r.verdict, r.block_bytes, r.vmem_bytes
('legal with padding', 2048, 4096)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.core.intmath import prod, round_up
from tensorlayout.errors import LayoutError
from tensorlayout.xla.tpu import canonical_generation, packing
from tensorlayout.xla.types import element_type

__all__ = ["BlockCheck", "BlockRule", "check_block_spec", "nearest_legal_blocks"]

LANES = 128
SUBLANES = 8


@dataclass(frozen=True, slots=True)
class BlockRule:
    """One broken rule: its name, the block dim (counted from 0) and what the rule says."""

    rule: str
    dimension: int | None
    message: str


@dataclass(frozen=True, slots=True)
class BlockCheck:
    """The verdict for one block shape over one array (``legal``, ``legal with padding`` or
    ``illegal``), the rules it breaks, its logical and VMEM bytes and the nearest legal blocks."""

    block_shape: tuple[int | None, ...]
    array_shape: tuple[int, ...]
    dtype: str
    verdict: str
    broken: tuple[BlockRule, ...]
    block_bytes: int
    vmem_bytes: int
    vmem_tile: tuple[int, ...]
    nearest: tuple[tuple[int, ...], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"block_shape": list(self.block_shape), "array_shape": list(self.array_shape),
                "dtype": self.dtype, "verdict": self.verdict,
                "broken": [{"rule": b.rule, "dimension": b.dimension, "message": b.message}
                           for b in self.broken],
                "block_bytes": self.block_bytes, "vmem_bytes": self.vmem_bytes,
                "vmem_tile": list(self.vmem_tile), "nearest": [list(n) for n in self.nearest]}


def _sizes(block: Sequence[int | None]) -> tuple[int, ...]:
    return tuple(1 if b is None else b for b in block)


def _bits(dtype: str) -> int:
    t = element_type(dtype)
    return 32 // packing(t)


def _broken(block: tuple[int, ...], array: tuple[int, ...], bits: int) -> list[BlockRule]:
    """The lowering's rules that ``block`` (squeezed dims as 1) breaks over ``array``."""
    rank = len(block)
    if rank < 1:
        return [BlockRule("rank", None, "blocks of rank >= 1 only")]
    last = rank - 1
    if rank == 1:
        b, a, least = block[0], array[0], LANES * (32 // bits)
        if b == a or b % (SUBLANES * LANES) == 0 or (b >= least and b & (b - 1) == 0):
            return []
        return [BlockRule("vector", 0, f"a rank-1 block must equal the array dim ({a}), be a "
                          f"multiple of {SUBLANES * LANES}, or a power of two >= {least}")]
    out = []
    if not (block[last] == array[last] or block[last] % LANES == 0):
        out.append(BlockRule("lanes", last, f"the last block dim ({block[last]}) must be a multiple "
                             f"of {LANES} or equal the array's ({array[last]})"))
    if not (block[last - 1] == array[last - 1] or block[last - 1] % SUBLANES == 0):
        out.append(BlockRule("sublanes", last - 1, f"the second-minor block dim ({block[last - 1]}) "
                             f"must be a multiple of {SUBLANES} or equal the array's ({array[last - 1]})"))
    return out


def _vmem(block: tuple[int, ...], bits: int) -> tuple[int, tuple[int, ...]]:
    """Bytes of ``block`` in Mosaic's native VMEM tiles, and the tile."""
    p = 32 // bits
    if len(block) == 1:
        tile: tuple[int, ...] = (LANES * p,)
        return round_up(block[0], tile[0]) * bits // 8, tile
    tile = (SUBLANES * p, LANES)
    rows, cols = round_up(block[-2], tile[0]), round_up(block[-1], LANES)
    return prod(block[:-2]) * rows * cols * bits // 8, tile


def _choices(b: int, a: int, quantum: int) -> list[int]:
    below = b - b % quantum
    return sorted({c for c in (a, below, below + quantum, quantum) if 0 < c <= a})


def nearest_legal_blocks(block_shape: Sequence[int | None], array_shape: Sequence[int], dtype: Any,
                         limit: int = 3) -> tuple[tuple[int, ...], ...]:
    """Legal blocks that change only the last two dims (or the only one), closest first,
    those without VMEM padding before those with.

    >>> nearest_legal_blocks((8, 100), (64, 256), "float32")
    ((8, 128), (16, 128), (8, 256))
    """
    block, array = _sizes(block_shape), tuple(array_shape)
    bits = _bits(_dtype_name(dtype))
    if len(block) == 1:
        options = [[c for c in _choices(block[0], array[0], SUBLANES * LANES)]
                   + [1 << k for k in range(block[0].bit_length() - 1, block[0].bit_length() + 1)]]
    else:
        options = [_choices(block[-2], array[-2], SUBLANES), _choices(block[-1], array[-1], LANES)]
    found = []
    for tail in itertools.product(*options):
        cand = block[:len(block) - len(tail)] + tuple(tail)
        if cand != block and not _broken(cand, array, bits):
            vmem, _ = _vmem(cand, bits)
            logical = prod(cand) * bits // 8
            distance = sum(abs(x - y) / max(y, 1) for x, y in zip(cand, block))
            found.append((vmem > logical, distance, cand))
    return tuple(c for _, _, c in sorted(set(found)))[:limit]


def _dtype_name(dtype: Any) -> str:
    name = str(getattr(dtype, "name", dtype))
    aliases = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int8": "s8", "uint8": "u8",
               "int16": "s16", "uint16": "u16", "int32": "s32", "uint32": "u32", "int4": "s4",
               "uint4": "u4", "bool": "pred", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2"}
    return aliases.get(name, name)


def check_block_spec(block_shape: Sequence[int | None], array_shape: Sequence[int], dtype: Any, *,
                     tpu: str | None = None) -> BlockCheck:
    """The verdict of the Pallas TPU lowering's block-shape rules for ``block_shape`` over an
    array of ``array_shape`` and ``dtype`` (a numpy/JAX dtype or XLA name), with the block's
    VMEM bytes and the nearest legal blocks. ``tpu`` names the generation (v5e, v6e: the
    rules are the same)."""
    canonical_generation(tpu)
    array = tuple(int(a) for a in array_shape)
    if len(block_shape) != len(array) or any(b is not None and (not isinstance(b, int) or b < 1)
                                             for b in block_shape) or any(a < 1 for a in array):
        raise LayoutError(f"expected a block shape of positive ints or None per array dim, but got "
                          f"block {tuple(block_shape)} for array {array}")
    name = _dtype_name(dtype)
    bits = _bits(name)
    block = _sizes(block_shape)
    broken = tuple(_broken(block, array, bits))
    logical = prod(block) * bits // 8
    vmem, tile = _vmem(block, bits) if block else (0, ())
    verdict = "illegal" if broken else "legal with padding" if vmem > logical else "legal"
    nearest = nearest_legal_blocks(block_shape, array, name) if broken or vmem > logical else ()
    return BlockCheck(tuple(block_shape), array, name, verdict, broken, logical, vmem, tile, nearest)
