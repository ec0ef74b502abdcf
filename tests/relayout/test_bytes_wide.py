"""The AVX-512BW rounds out of (4,1) quads of bytes (``_kernel_bytes_wide.h``): quads_from_wide,
64 stage rows a of 4 groups at a time, and qrows_from_wide, 16 quad rows by 4 logical rows.
Hand-made tasks through the raw entry point (64 rows a or more, so that the first runs; groups
past whole rounds, the last one overlapping; 4 rows b of each group, or a ragged sub-tile's last
3; 16 quads a row or more for the second, with ragged quads and rows), rows a far apart or not,
odd offsets and strides, every byte of the destination and its guards against numpy's strided
assignment; the source between pages it may not touch; layouts through the public calls on
one thread and several. Where the CPU has AVX-512BW, the round is on (``_kernel.QUADS_AVX512``),
and the same checks run again in a child with ``TENSORLAYOUT_NO_AVX512`` set (the AVX2 rounds)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tests.relayout._reference import (
    check_layout,
    check_page_edges,
    check_raw_task,
    extent,
    kernel_or_skip,
    rerun_without_avx512,
)
from tests.relayout.test_bytes_quad_rows import run_quad_rows

LAYOUTS = ["pred[1024,16,128]{0,1,2:T(8,128)(4,1)}", "pred[100,490,83]{1,0,2:T(8,128)(4,1)}",
           "u8[70,13,65]{0,1,2:T(8,128)(4,1)}", "s8[9,130,200]{1,0,2:T(4,128)(4,1)}",
           "pred[3,525,23,106]{1,2,3,0:T(8,128)(4,1)}", "u8[37,129,64]{0,2,1:T(8,128)(4,1)}",
           "s8[2547,705]{0,1:T(8,128)(4,1)}", "pred[130,67]{0,1:T(4,128)(4,1)}",
           "u8[9,21,17]{0,2,1:T(8,128)(4,1)}"]


def _task(rng: np.random.Generator, ng: int, na: int, rows: int, far: bool) -> tuple:
    """Axes (g, b, a): dst[g][b][a] = src[a][g][b] of ng groups of `rows` bytes b, na rows a."""
    sa = ng * 4 + int(rng.integers(0, 40))  # the source rows a of ng quads
    sa = -(-sa // 4096) * 4096 if far else sa
    db = na + int(rng.integers(0, 9))
    dg = rows * db + int(rng.integers(0, 40))
    return (ng, rows, na), (dg, db, 1), (4, 1, sa)


@pytest.mark.parametrize("ng", [8, 9, 13, 64, 65, 130])
@pytest.mark.parametrize("na", [64, 65, 100, 128, 200])
@pytest.mark.parametrize("rows", [4, 3])
def test_raw_wide_rounds_match_the_reference(ng: int, na: int, rows: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(ng * 1000 + na * 2 + rows)
    shape, ds, ss = _task(rng, ng, na, rows, far=bool(rng.integers(0, 2)))
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + int(rng.integers(0, 2)) * 64).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xAB)


def test_raw_wide_rounds_read_only_their_source_bytes() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(7)
    tasks = []
    for ng, na, rows in ((8, 64, 4), (13, 70, 4), (65, 129, 4), (9, 64, 3), (67, 100, 3)):
        shape, ds, ss = _task(rng, ng, na, rows, far=False)
        tasks.append((shape, ds, ss, int(rng.integers(0, 64)), int(rng.integers(0, 64))))
    check_page_edges(tasks)


def _rows_task(rng: np.random.Generator, ng: int, nb: int, na: int) -> tuple:
    """A quad rows box from_physical in the kernel's order (outer, g, a, b), bytes of 4-byte
    quads: rows a of K = ng*nb quads (a gap after each) from quad rows (g, b) along a."""
    outer = int(rng.integers(1, 3))
    row = 4 * ng * nb + 4 * int(rng.integers(0, 3)) + int(rng.integers(0, 2)) * 4096
    pb = 4 * na + 4 * int(rng.integers(0, 3))
    pg = pb * nb + int(rng.integers(0, 9))
    lo, po = row * na + int(rng.integers(0, 5)), pg * ng + int(rng.integers(0, 5))
    return (outer, ng, na, nb), (lo, 4 * nb, row, 4), (po, pg, 4, pb)


@pytest.mark.parametrize("ng, nb", [(12, 1), (5, 3), (16, 1), (17, 1), (8, 2), (11, 3), (88, 2), (64, 8)])
@pytest.mark.parametrize("na", [8, 9, 63, 130])
@pytest.mark.parametrize("threads", [1, 2])
def test_raw_wide_quad_rows_match_the_reference(ng: int, nb: int, na: int, threads: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(ng * 4096 + nb * 512 + na * 2 + threads)
    shape, ds, ss = _rows_task(rng, ng, nb, na)
    d_off, s_off = int(rng.integers(0, 64)) | 1, int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 3).astype(np.uint8)
    run_quad_rows(kernel, src, shape, ds, ss, d_off, s_off, threads)


def test_raw_wide_quad_rows_read_only_their_bytes() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(11)
    tasks = [(*_rows_task(rng, ng, nb, na), 3, int(rng.integers(0, 9)))
             for ng, nb, na in ((16, 1, 8), (9, 2, 13), (88, 2, 64), (5, 8, 70))]
    check_page_edges(tasks, item=4, wide=4)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_wide_layouts_match_the_reference(text: str, threads: int | None) -> None:
    kernel_or_skip()
    check_layout(text, threads, guarded=True)


def _has_avx512bw() -> bool:
    try:
        return " avx512bw" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def test_the_round_is_on_where_the_cpu_has_it() -> None:
    kernel = kernel_or_skip()
    if os.environ.get("TENSORLAYOUT_NO_AVX512"):
        assert kernel.QUADS_AVX512 == 0
    elif not _has_avx512bw():
        pytest.skip("no AVX-512BW on this CPU")
    else:
        assert kernel.QUADS_AVX512 == 1


def test_the_avx2_rounds_match_the_reference_too() -> None:
    kernel_or_skip()
    rerun_without_avx512(__file__)
