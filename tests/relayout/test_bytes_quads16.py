"""quads_to (``_kernel_bytes.h``) on source rows of 16 to 31 bytes (a round is 16 rows a of 8
groups, a lane's 4 groups each): hand-made tasks through the raw entry point at the least
counts of groups and rows, one past them and across the stage's blocks, at odd offsets and
strides, every byte of the destination and its guards against numpy's strided assignment;
and a layout whose source rows are 16 bytes through the public calls."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import check_layout, check_raw_task, extent, kernel_or_skip


@pytest.mark.parametrize("ng", [8, 9, 15, 130, 257])
@pytest.mark.parametrize("na", [16, 17, 23, 31, 33, 47])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_quads_to_on_short_source_rows(ng: int, na: int, stream: bool) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(ng * 64 + na * 2 + stream)
    sb = na + int(rng.integers(0, 5))
    da, sg = ng * 4 + int(rng.integers(0, 9)), 4 * sb + int(rng.integers(0, 7))
    shape, ds, ss = (ng, na, 4), (4, da, 1), (sg, 1, sb)
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 64).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, stream, 0xAB)


@pytest.mark.parametrize("text", ["pred[64,40,16]{0,1,2:T(4,128)(4,1)}", "u8[37,21,19]{0,1,2:T(8,128)(4,1)}"])
@pytest.mark.parametrize("threads", [1, 3])
def test_short_source_rows_through_the_public_calls(text: str, threads: int) -> None:
    kernel_or_skip()
    check_layout(text, threads)
