"""Bank-conflict counts: the worked examples of gpu_layouts.md (b), brute force, and Triton's
``bank_conflicts`` vectors (Triton 3.9, ``cute_tv_triton_banks.json``) through :func:`span_conflicts`."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from tensorlayout.cute import ComposedLayout, Layout, Swizzle
from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu import (
    copy_atom,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_mma,
    mma_atom,
    universal_copy,
    vector_access,
)
from tensorlayout.gpu.banks import bank_conflicts, span_conflicts, triton_bank_conflicts
from tensorlayout.gpu.tv import TVLayout
from tests.conftest import DATA

ROW_MAJOR = Layout.parse("(32,32):(32,1)")
XOR_ROWS = ComposedLayout(Swizzle(5, 0, 5), 0, ROW_MAJOR)  # (r, c) at r*32 + (c ^ r)
LANE_ROWS = TVLayout.parse("(32,4):(1,32)", (32, 32))  # lane t: row t, columns 0..3 (fp32)


def test_worked_example_1_unswizzled() -> None:
    report = bank_conflicts(ROW_MAJOR, 32, LANE_ROWS)
    assert (report.vector_bytes, report.lanes_per_phase, report.ideal) == (16, 8, 4)
    assert [p.wavefronts for p in report.phases] == [8, 8, 8, 8]  # 7 excess per phase
    assert report.phases[0].collisions[0][0] == 0 and len(report.phases[0].collisions) == 4
    assert triton_bank_conflicts(ROW_MAJOR, 32, LANE_ROWS) == 7


def test_worked_example_2_triton_and_hardware_disagree() -> None:
    """Triton counts 0; the hardware model counts lanes 0-3 (and 4-7) sharing banks: 4-way."""
    assert triton_bank_conflicts(XOR_ROWS, 32, LANE_ROWS) == 0
    report = bank_conflicts(XOR_ROWS, 32, LANE_ROWS)
    assert report.phases[0].wavefronts == 4 and report.max_way == 4


def _brute(offsets: np.ndarray, bits: int, lanes_per_phase: int) -> int:
    """Wavefronts from first principles: per phase, per bank, distinct words."""
    total = 0
    for start in range(0, len(offsets), lanes_per_phase):
        banks: dict[int, set[int]] = {}
        for row in offsets[start:start + lanes_per_phase]:
            for w in {int(o) * bits // 32 for o in row}:
                banks.setdefault(w % 32, set()).add(w)
        total += max(len(ws) for ws in banks.values())
    return total


@pytest.mark.parametrize("sw", [(0, 0, 3), (1, 3, 3), (2, 3, 3), (3, 3, 3), (3, 4, 3), (2, 4, 3)])
@pytest.mark.parametrize("rows,cols", [(8, 64), (16, 64), (32, 8)])
def test_row_and_column_vectors_match_brute_force(sw: tuple[int, int, int], rows: int, cols: int) -> None:
    smem = ComposedLayout(Swizzle(*sw), 0, Layout((rows, cols), (cols, 1)))
    for thr in (Layout((4, 8), (8, 1)), Layout((32, 1), (1, 0)), Layout((8, 4), (1, 8))):
        tc = make_tiled_copy(universal_copy(128), 16, thr, Layout((1, 8), (0, 1)))
        tv = tc.tv_s()
        if tv.tile[0] > rows or tv.tile[1] > cols:
            continue
        report = bank_conflicts(smem, 16, tv)
        offs = np.array([[smem(*tv.coord(t, v)) for v in range(8)] for t in range(32)])
        assert report.wavefronts == _brute(offs, 16, 8)


def test_bad_accesses_are_typed_errors() -> None:
    with pytest.raises(TensorLayoutError, match="contiguous"):
        bank_conflicts(Layout.parse("(32,32):(1,32)"), 32, LANE_ROWS)
    with pytest.raises(TensorLayoutError, match=r"element_bits must be a power of two from 1 to 128, got 24"):
        bank_conflicts(ROW_MAJOR, 24, LANE_ROWS)
    with pytest.raises(TensorLayoutError,
        match=r"a shared-memory tile for a bank report is rank 2 \(M, N\),"):
        bank_conflicts(Layout.parse("(32,32,2):(32,1,1024)"), 32, LANE_ROWS)
    with pytest.raises(TensorLayoutError, match=r"Triton's bank count needs a power-of-two bijective shared"):
        triton_bank_conflicts(Layout.parse("(32,32):(33,1)"), 32, LANE_ROWS)


# -- Triton's own vectors: vec, segment and lane bases derived from the recorded linear layouts


def _flat(v: list[int], sizes: list[int]) -> int:
    out, shift = 0, 0
    for x, s in zip(v, sizes):
        out |= x << shift
        shift += s.bit_length() - 1
    return out


def _vector(offsets: dict[str, list[int]], bits: int) -> int:
    """Triton's ``largestVectorisation``: the largest ``v <= 128/bits`` such that (registers
    permuted) registers hit offsets ``1, 2, …, v/2`` and every other basis leaves the low
    ``log2 v`` offset bits zero (so the tile divides the layout on the left)."""
    v = 128 // bits
    while v > 1:
        low = {1 << i for i in range(v.bit_length() - 1)}
        others = [o for dim, os in offsets.items() for o in os if not (dim == "register" and o in low)]
        if low <= set(offsets["register"]) and all(o % v == 0 for o in others):
            return v
        v //= 2
    return 1


def _triton_inputs(case: dict[str, Any]) -> tuple[list[int], list[int], int]:
    sizes = [s for _n, s in case["smem_ll"]["out_dims"]]
    dims = dict((n, b) for n, b in case["reg_ll"]["in_dims"])
    smem = [_flat(b, sizes) for b in dict((n, b) for n, b in case["smem_ll"]["in_dims"])["offset"]]
    table = np.zeros(1 << len(smem), dtype=np.int64)
    for j, b in enumerate(smem):
        table[1 << j:2 << j] = table[:1 << j] ^ b
    inverse = np.argsort(table)  # tensor (flattened) -> offset
    offsets = {d: [int(inverse[_flat(b, sizes)]) for b in bases if d != "register" or any(b)]
               for d, bases in dims.items()}
    bits = case["bitwidth"]
    vec = _vector(offsets, bits)
    bank = min(1024 // (vec * bits), len(table) // vec)
    start = (vec.bit_length() - 1) + (bank.bit_length() - 1)
    return smem[start:], [_flat(b, sizes) for b in dims["lane"]], vec * bits


CASES = [c for c in json.loads((DATA / "cute_tv_triton_banks.json").read_text())["bank_conflicts"]
         if "bank_conflicts" in c]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['shape']}-{c['bitwidth']}-{c['bank_conflicts']}")
def test_triton_bank_conflict_vectors(case: dict[str, Any]) -> None:
    segment, lanes, vec_bits = _triton_inputs(case)
    assert span_conflicts(segment, lanes, vec_bits) == case["bank_conflicts"]


def test_vector_access_rows_and_columns() -> None:
    smem = Layout.parse("(64,64):(64,1)")  # fp16 rows of 128 bytes
    rows = vector_access((64, 64), 16, 128, "row")
    assert bank_conflicts(smem, 16, rows).conflicts == 0  # each phase reads one whole row
    cols = vector_access((64, 64), 16, 128, "column")
    assert bank_conflicts(smem, 16, cols).max_way == 8  # 8 rows, same 16 bytes of banks
    swizzled = ComposedLayout(Swizzle(3, 3, 3), 0, smem)
    assert bank_conflicts(swizzled, 16, cols).conflicts == 0  # what Sw<3,3,3> is for


def test_ldmatrix_access_over_swizzled_tile() -> None:
    """ldmatrix.x4 feeding SM80 A: lanes 0-15 give rows 0-15 at k=0, lanes 16-31 at k=8."""
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"))
    ldsm = make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, tm).tv_s()
    assert [ldsm.coord(t, 0) for t in (0, 1, 15, 16)] == [(0, 0), (1, 0), (15, 0), (0, 8)]
    plain = Layout.parse("(16,64):(64,1)")
    assert bank_conflicts(plain, 16, ldsm).max_way == 8
    assert bank_conflicts(ComposedLayout(Swizzle(3, 3, 3), 0, plain), 16, ldsm).conflicts == 0
