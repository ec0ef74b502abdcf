"""Random Gluon layouts (as JSON-style dicts) for the differential tests; seeded, small shapes."""

from __future__ import annotations

import random
from typing import Any


def _pow2(rng: random.Random, lo: int, hi: int) -> int:
    return 1 << rng.randint(lo, hi)


def split(rng: random.Random, bits: int, rank: int) -> list[int]:
    """``2**bits`` split over ``rank`` dims as powers of two."""
    out = [1] * rank
    for _ in range(bits):
        out[rng.randrange(rank)] *= 2
    return out


def perm(rng: random.Random, rank: int) -> list[int]:
    order = list(range(rank))
    rng.shuffle(order)
    return order


def _shape(rng: random.Random, rank: int, lo: int = 0, hi: int = 7) -> list[int]:
    return [_pow2(rng, lo, hi) for _ in range(rank)]


def _cga(rng: random.Random, rank: int) -> list[list[int]]:
    """A few CTA bases: each doubles one dim's CTA count, or broadcasts (all zero)."""
    counts = [1] * rank
    bases = []
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        vec = [0] * rank
        if rng.random() < 0.85:
            d = rng.randrange(rank)
            vec[d] = counts[d]
            counts[d] *= 2
        bases.append(vec)
    return bases


def blocked(rng: random.Random) -> tuple[dict[str, Any], list[int]]:
    rank = rng.randint(1, 3)
    layout = {"kind": "BlockedLayout", "size_per_thread": [_pow2(rng, 0, 2) for _ in range(rank)],
              "threads_per_warp": split(rng, 5, rank), "warps_per_cta": split(rng, rng.randint(0, 3), rank),
              "order": perm(rng, rank), "cga_layout": _cga(rng, rank) if rng.random() < 0.3 else []}
    return layout, _shape(rng, rank)


def _mma_parent(rng: random.Random, version: int | None = None) -> dict[str, Any]:
    version = version or rng.choice([2, 3])
    if version == 2:
        rank = rng.choice([2, 2, 2, 3])
        instr = [16, 8] if rank == 2 else [1, 16, 8]
        wpc = split(rng, rng.randint(0, 3), rank)
    else:
        instr = [16, _pow2(rng, 3, 8), 16]
        wpc = [4 * _pow2(rng, 0, 1), _pow2(rng, 0, 1)]
    rank = len(wpc)
    return {"kind": "NVMMADistributedLayout", "version": [version, 0], "warps_per_cta": wpc,
            "instr_shape": instr, "cga_layout": _cga(rng, rank) if rng.random() < 0.3 else []}


def nvidia_mma(rng: random.Random) -> tuple[dict[str, Any], list[int]]:
    layout = _mma_parent(rng)
    rank = len(layout["warps_per_cta"])
    return layout, ([_pow2(rng, 0, 2)] if rank == 3 else []) + _shape(rng, 2, 3, 8)


def dot_operand(rng: random.Random) -> tuple[dict[str, Any], list[int]]:
    parent = _mma_parent(rng)
    op = 0 if parent["version"][0] == 3 else rng.randint(0, 1)
    layout = {"kind": "DotOperandLayout", "operand_index": op, "parent": parent,
              "k_width": _pow2(rng, 0, 3)}
    rank = len(parent["warps_per_cta"])
    return layout, ([_pow2(rng, 0, 2)] if rank == 3 else []) + _shape(rng, 2, 3, 8)


def swizzled_shared(rng: random.Random) -> tuple[dict[str, Any], list[int]]:
    rank = rng.randint(1, 3)
    layout = {"kind": "SwizzledSharedLayout", "vec": _pow2(rng, 0, 4), "per_phase": _pow2(rng, 0, 3),
              "max_phase": _pow2(rng, 0, 4), "order": perm(rng, rank),
              "cga_layout": _cga(rng, rank) if rng.random() < 0.3 else []}
    shape = _shape(rng, rank)
    if shape == [1] * rank:  # Gluon's wrapper refuses an empty offset list
        shape[0] = 2
    return layout, shape


def nvmma_shared(rng: random.Random) -> tuple[dict[str, Any], list[int]]:
    rank = rng.choice([2, 2, 2, 3])
    swz = rng.choice([0, 32, 64, 128])
    bits = rng.choice([8, 16, 32])
    fp4 = swz == 128 and bits == 8 and rng.random() < 0.3
    layout = {"kind": "NVMMASharedLayout", "swizzle_byte_width": swz, "element_bitwidth": bits, "rank": rank,
              "transposed": rank == 2 and rng.random() < 0.4, "fp4_padded": fp4,
              "cga_layout": _cga(rng, rank) if rng.random() < 0.3 else []}
    shape = _shape(rng, rank, 1, 8)
    if rng.random() < 0.8:  # mostly shapes that hold the swizzle atom (smaller ones abort Triton)
        col = 0 if layout["transposed"] else rank - 1
        atom = max(1, 8 * swz // bits // (2 if fp4 else 1))
        shape[col] = max(shape[col], atom)
        shape[1 if layout["transposed"] else 0] = max(shape[1 if layout["transposed"] else 0], 8)
    return layout, shape


FAMILIES = {"blocked": blocked, "nvidia_mma": nvidia_mma, "dot_operand": dot_operand,
            "swizzled_shared": swizzled_shared, "nvmma_shared": nvmma_shared}


def linear_layout(rng: random.Random, in_pool: list[str], out_pool: list[str]) -> dict[str, Any]:
    """Random from_bases arguments over ordered subsets of the name pools (sizes given)."""
    ins = sorted(rng.sample(range(len(in_pool)), rng.randint(1, 3)))
    outs = sorted(rng.sample(range(len(out_pool)), rng.randint(1, 3)))
    sizes = [_pow2(rng, 0, 3) for _ in outs]
    bases = [[in_pool[i], [[rng.randrange(s) for s in sizes] for _ in range(rng.randint(0, 4))]] for i in ins]
    return {"bases": bases, "out_dim_names": [out_pool[i] for i in outs], "out_dim_sizes": sizes}


def bank_case(rng: random.Random) -> dict[str, Any]:
    """A register layout, a shared layout and an element width over one rank-2 shape."""
    bits = rng.choice([8, 16, 32, 64])
    shape = [_pow2(rng, 3, 7), _pow2(rng, 3, 7)]
    if rng.random() < 0.8:
        spt = [_pow2(rng, 0, 3) for _ in range(2)]
        tpw = split(rng, 5, 2)
        reg: dict[str, Any] = {"kind": "BlockedLayout", "size_per_thread": spt, "threads_per_warp": tpw,
                               "warps_per_cta": split(rng, rng.randint(0, 2), 2), "order": perm(rng, 2),
                               "cga_layout": []}
    else:
        reg = _mma_parent(rng, 2)
        reg["warps_per_cta"] = split(rng, rng.randint(0, 2), 2)
        reg["instr_shape"] = [16, 8]
    if rng.random() < 0.7:
        shared: dict[str, Any] = {"kind": "SwizzledSharedLayout", "vec": _pow2(rng, 0, 3),
                                  "per_phase": _pow2(rng, 0, 2), "max_phase": _pow2(rng, 0, 3),
                                  "order": perm(rng, 2), "cga_layout": []}
    else:
        shared = {"kind": "NVMMASharedLayout", "swizzle_byte_width": rng.choice([0, 32, 64, 128]),
                  "element_bitwidth": bits, "rank": 2, "transposed": rng.random() < 0.3, "fp4_padded": False,
                  "cga_layout": []}
    return {"reg": reg, "shared": shared, "shape": shape, "bits": bits}
