"""The fused byte transposes of (4,1) sub-tile quads (``_kernel_bytes.h``): 4 rows of bytes per
group against the other side's rows, both ways, against a brute-force reference: layouts
through the public calls, and hand-made tasks through the raw entry point at any offset, with
any number of groups and rows (past whole blocks: the overlapping last block), rows sharing
L1 sets or not, streamed or not, and nothing outside the box written."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tests.relayout._reference import check_layout, check_raw_task, extent, kernel_or_skip

LAYOUTS = ["pred[1024,16,128]{0,1,2:T(8,128)(4,1)}", "pred[100,49,83]{1,0,2:T(8,128)(4,1)}",
           "u8[33,12,70]{0,1,2:T(8,128)(4,1)}", "s8[130,9,40]{1,0,2:T(8,128)(4,1)}",
           "u8[7,20,33]{0,1,2:T(8,128)(4,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_quad_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)



def _case(rng: np.random.Generator, to: bool, far: bool, big: bool) -> tuple:
    """A quad transpose: to the quads (dst[a][g][b] = src[g][b][a]) or from them, ng groups and
    na rows a (any counts above the fused loops' least), rows a a multiple of 4 KiB apart or not."""
    ng = int(rng.integers(8, 300)) if not big else 300
    na = int(rng.integers(32, 200)) if not big else 1000
    row = ng * 4 + int(rng.integers(0, 40))  # the quads' side: rows a of ng quads
    row = -(-row // 4096) * 4096 if far else row
    sg_or_dg = 4 * na + int(rng.integers(0, 40))  # the other side: groups of 4 rows of na bytes
    sb_or_db = na + int(rng.integers(0, 9))
    sg_or_dg = max(sg_or_dg, 4 * sb_or_db)
    if to:  # axes (g, a, b)
        return (ng, na, 4), (4, row, 1), (sg_or_dg, 1, sb_or_db)
    return (ng, 4, na), (sg_or_dg, sb_or_db, 1), (4, 1, row)  # axes (g, b, a)


@pytest.mark.parametrize("to", [True, False])
@pytest.mark.parametrize("far", [False, True])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_raw_quad_transposes_match_the_reference(to: bool, far: bool, stream: bool, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 8 + 4 * to + 2 * far + stream)
    shape, ds, ss = _case(rng, to, far, big=seed == 3)
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 64).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, stream, 0xAB)


@pytest.mark.parametrize("ng, na", [(4, 32), (5, 33), (8, 16), (9, 17), (3, 40), (40, 31), (7, 15)])
@pytest.mark.parametrize("to", [True, False])
def test_raw_quad_transposes_at_the_least_sizes(ng: int, na: int, to: bool) -> None:
    # the fused loops' least counts (4 groups and 32 rows to the quads, 8 and 16 from them), one
    # past them, and just below them (the strips then)
    kernel = kernel_or_skip()
    shape, ds, ss = ((ng, na, 4), (4, ng * 4 + 4, 1), (4 * na, 1, na)) if to \
        else ((ng, 4, na), (4 * na, na, 1), (4, 1, ng * 4 + 4))
    rng = np.random.default_rng(ng * 100 + na)
    src = rng.integers(0, 256, extent(shape, ss) + 3).astype(np.uint8)
    dst = np.full(extent(shape, ds) + 5, 0xAB, np.uint8)
    want = dst.copy()
    as_strided(want[2:], shape, ds)[...] = as_strided(src[3:], shape, ss)
    kernel.copy(dst, src, [(2, 3, shape, ds, ss)], False)
    assert np.array_equal(dst, want)
