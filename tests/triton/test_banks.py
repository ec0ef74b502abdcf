"""Bank conflicts: Triton's count and the brute-force CUDA-model count, side by side."""

from __future__ import annotations

import random

import pytest

from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.triton import (
    BlockedLayout,
    SwizzledSharedLayout,
    bank_conflicts,
    hardware_bank_conflicts,
)
from tests.triton import _random
from tests.triton._cases import build

ROWS = BlockedLayout([1, 1], [32, 1], [1, 1], [1, 0]).to_linear_layout([32, 32])  # lane t owns row t


def test_unswizzled_rows_conflict_eightfold() -> None:
    """fp32 32x32, 16-byte vectors: each quarter-warp reads rows 0..7 at one column, 128 bytes
    apart, so all 8 lanes hit banks 0-3 in different words: 8 wavefronts, 7 excess."""
    smem = SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([32, 32])
    report = hardware_bank_conflicts(ROWS, smem, 32)
    assert (report.vector_bits, report.lanes_per_phase) == (128, 8)
    assert report.excess == bank_conflicts(ROWS, smem, 32) == 7


def test_xor_swizzle_removes_them() -> None:
    """With (r, c) stored at r*32 + (c ^ r), Triton vectorises 1 element (the lane bases are not
    4-aligned in offsets) and every lane lands in its own bank."""
    smem = SwizzledSharedLayout(1, 1, 32, [1, 0]).to_linear_layout([32, 32])
    report = hardware_bank_conflicts(ROWS, smem, 32)
    assert report.vector_bits == 32
    assert report.excess == bank_conflicts(ROWS, smem, 32) == 0


def test_sub_word_accesses_triton_undercounts() -> None:
    """8-bit elements, 2-byte vectors: lanes whose offsets differ in segment bits *and* bytes of
    one word share banks in different words; Triton's span test misses them (1 vs 3)."""
    reg = BlockedLayout([4, 1], [8, 4], [1, 1], [1, 0]).to_linear_layout([128, 64])
    smem = SwizzledSharedLayout(2, 1, 8, [0, 1]).to_linear_layout([128, 64])
    assert bank_conflicts(reg, smem, 8) == 1
    assert hardware_bank_conflicts(reg, smem, 8).excess == 3


def test_triton_never_counts_more_than_the_hardware_model() -> None:
    """Triton counts lanes that differ only in segment bits: those conflict on hardware too."""
    rng, checked, equal = random.Random(5), 0, 0
    while checked < 150:
        case = _random.bank_case(rng)
        try:
            reg = build(case["reg"]).to_linear_layout(case["shape"])
            smem = build(case["shared"]).to_linear_layout(case["shape"])
        except TensorLayoutError:
            continue
        triton = bank_conflicts(reg, smem, case["bits"])
        hardware = hardware_bank_conflicts(reg, smem, case["bits"])
        assert triton <= hardware.excess, case
        checked += 1
        equal += triton == hardware.excess
    assert equal > checked // 2


def test_bad_arguments() -> None:
    smem = SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([32, 32])
    with pytest.raises(LayoutError, match="bitwidth"):
        bank_conflicts(ROWS, smem, 12)
    with pytest.raises(LayoutError, match="different tensors"):
        hardware_bank_conflicts(ROWS, SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([32, 16]), 32)
    with pytest.raises(LayoutError, match="in dims"):
        bank_conflicts(smem, ROWS, 32)
