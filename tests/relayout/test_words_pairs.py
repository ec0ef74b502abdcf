"""The kernel's transposes of (2,1) pairs against short rows (_kernel_words_pairs.h) against
brute-force references: layouts through the public calls (1 and 3 threads), and hand-made
tasks through the raw entry point in both directions: runs of 4 to 16 items, any number of
rows (past a multiple of 4), rows any distance apart (2 KiB multiples among them), the rows
running on over an outer axis (the staged path) or not, at odd 2-byte starts, and nothing
outside the box written."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target, relayout
from tests.relayout._reference import check_layout, check_raw_task, kernel_or_skip, reference_buffer

LAYOUTS = ["f16[6,13,36,4]{1,2,0,3:T(8,128)(2,1)}", "bf16[5,130,18,12]{1,2,0,3:T(8,128)(2,1)}",
           "bf16[3,131,17,16]{1,2,0,3:T(8,128)(2,1)}", "s16[2,70,9,8]{1,2,0,3:T(8,128)(2,1)}",
           "f16[4,257,30,4]{1,2,0,3:T(8,128)(2,1)}"]


def _data(text: str, seed: int) -> np.ndarray:
    t = as_target(text)
    return np.random.default_rng(seed).integers(0, 1 << 16, t.logical_shape).astype(np.uint16)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_pair_transposes_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)


def test_pair_transpose_relayout(engine_mode: str) -> None:
    src, dst = "f16[6,13,36,4]{1,2,0,3:T(8,128)(2,1)}", "f16[6,13,36,4]{3,2,1,0:T(8,128)(2,1)}"
    data = _data(src, 5)
    out = relayout(reference_buffer(data, src, 0), as_target(src), as_target(dst))
    assert np.array_equal(out, reference_buffer(data, dst, 0))


def _extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    return sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) + 2


def _box(rng: np.random.Generator, staged: bool) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, rows side strides, units side strides) of a (o, g, a, j, k) box of 2-byte items:
    rows a hold [j][k] (k contiguous), the units side [a][j] (j contiguous, a 4 bytes apart)."""
    nk = int(rng.choice([4, 8, 12, 16]))
    no, na = int(rng.integers(1, 3)), int(rng.integers(4, 300))
    ng = int(rng.integers(1, 40))
    piece = 4 * nk
    if staged and 64 % piece == 0:  # the rows run on over g (a tile's pairs of rows)
        ra = piece * ng + int(rng.choice([0, 2, 2048 - (piece * ng) % 2048]))
        rg = piece
    else:
        rg = 4 * nk + 2 * int(rng.integers(0, 3))
        ra = rg * ng + 2 * int(rng.integers(0, 5))
    uk = 4 * na + 2 * int(rng.integers(0, 40))
    ug = uk * nk + 2 * int(rng.integers(0, 8))
    rows = (ra * na, rg, ra, 2 * nk, 2)
    units = (ug * ng, ug, 4, 2, uk)
    return (no, ng, na, 2, nk), rows, units


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("to_units", [True, False])
def test_raw_pair_transposes(seed: int, to_units: bool) -> None:
    # dst = src of 2-byte items over the box, at odd 2-byte starts; the bytes around it keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    shape, rows, units = _box(rng, staged=seed % 2 == 0)
    ds, ss = (units, rows) if to_units else (rows, units)
    d_off, s_off = 2 * int(rng.integers(0, 40)) + 2, 2 * int(rng.integers(0, 40)) + 2
    src = rng.integers(0, 1 << 16, (s_off + _extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xABCD)


@pytest.mark.parametrize("seed", range(4))
def test_raw_streamed_pair_unweaves(seed: int) -> None:
    # dst[g, b, k] = src[g, k, b] of 2-byte pairs into two rows 16-byte multiples apart, over 6 MiB
    # or more of destination (the streamed unweave, _kernel_gather.h), at 2-byte starts and row
    # lengths past whole vectors; the bytes between and around the rows keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    n = int(rng.integers(128, 1100))
    db = -(-2 * n // 16) * 16 + 16 * int(rng.integers(0, 3))
    ng = (6 << 20) // (2 * db) + int(rng.integers(1, 40))
    shape, ds, ss = (ng, n, 2), (2 * db, 2, db), (4 * n + 2 * int(rng.integers(0, 4)), 4, 2)
    d_off, s_off = 2 * int(rng.integers(0, 32)), 2 * int(rng.integers(0, 32))
    src = rng.integers(0, 1 << 16, (s_off + _extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xABCD)
