"""quads_from3 (``_kernel_bytes.h``): a ragged (4,1) sub-tile's last 3 rows out of the quads of
bytes, transposed against the other side's rows in one pass (the groups' fourth bytes read, not
kept; the last group byte by byte where its fourth byte lies past the task's source bytes).
Hand-made tasks through the raw entry point at the least counts and past the stage's blocks,
odd offsets and strides, the source ending at the box or not, every byte of the destination
and its guards against numpy's strided assignment; and layouts with a 3-row remainder."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import check_layout, check_raw_task, extent, kernel_or_skip


@pytest.mark.parametrize("ng", [8, 9, 10, 70, 130])
@pytest.mark.parametrize("na", [15, 16, 17, 65, 106])
@pytest.mark.parametrize("tight", [True, False])
def test_raw_three_rows_out_of_quads(ng: int, na: int, tight: bool) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(ng * 256 + na * 2 + tight)
    sa = ng * 4 + int(rng.integers(0, 9))  # the source rows a of ng quads
    db = na + int(rng.integers(0, 5))
    dg = 3 * db + int(rng.integers(0, 11))
    shape, ds, ss = (ng, 3, na), (dg, db, 1), (4, 1, sa)
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + (0 if tight else 64)).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xAB)


@pytest.mark.parametrize("text", ["pred[3,525,23,106]{1,2,3,0:T(8,128)(4,1)}",
                                  "u8[40,19,35]{0,2,1:T(8,128)(4,1)}"])
@pytest.mark.parametrize("threads", [1, 3])
def test_three_row_remainders_through_the_public_calls(text: str, threads: int) -> None:
    kernel_or_skip()
    check_layout(text, threads)
