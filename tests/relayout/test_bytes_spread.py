"""One row of bytes into or out of groups of 2 or 4 bytes (``_kernel_bytes_spread.h``: a ragged
(4,1) sub-tile's last row): the gather in 32-group rounds with one more ending at the last group
that lies whole in the task's source bytes, the scatter merged into whole vectors of groups
where the gaps are the call's own (padded, one thread), else byte by byte. Raw tasks of one
and of several rows at counts around the rounds and odd offsets, against numpy's strided
assignment, every byte of the destination (the groups' other bytes and the guards around
them kept); and layouts with one-row remainders through the public calls."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tests.relayout._reference import check_layout, extent, kernel_or_skip

GUARD = 0xAB
COUNTS = [31, 32, 33, 47, 64, 95, 125, 128, 1000]


@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("group", [2, 4])
@pytest.mark.parametrize("gather", [True, False])
@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("padded", [True, False])
def test_raw_rows_of_bytes_into_and_out_of_groups(n: int, group: int, gather: bool, rows: int,
                                                  padded: bool) -> None:
    kernel = kernel_or_skip()
    off = n % 7
    wide, narrow = (n + 5) * group, n + 3  # the rows' strides in groups and in bytes
    shape = (rows, n)
    ds, ss = ((narrow, 1), (wide, group)) if gather else ((wide, group), (narrow, 1))
    rng = np.random.default_rng(n * 8 + group + gather * 2 + rows)
    src = rng.integers(0, 256, off + extent(shape, ss)).astype(np.uint8)  # (ends at the box)
    dst = rng.integers(0, 256, off + 1 + extent(shape, ds) + 40).astype(np.uint8)
    dst[:off + 1] = GUARD
    dst[off + 1 + extent(shape, ds):] = GUARD
    want = dst.copy()
    as_strided(want[off + 1:], shape, ds)[...] = as_strided(src[off:], shape, ss)
    kernel.copy(dst, src, [(off + 1, off, shape, ds, ss)], False, 1, padded)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("text", ["pred[37,3,5,893]{3,0,2,1:T(8,128)(4,1)}",
                                  "u8[61,7,130]{2,0,1:T(8,128)(4,1)}", "s8[5,333,9]{1,2,0:T(4,128)(4,1)}"])
@pytest.mark.parametrize("threads", [1, 3])
def test_one_row_remainders_through_the_public_calls(text: str, threads: int) -> None:
    kernel_or_skip()
    check_layout(text, threads)
