"""The weaves of 3 and 4 rows of bytes into 4-byte groups (``_kernel_bytes_weave.h``, ``*_over``):
32 groups a round, then one more round ending at the last group (overlapping the round
before) in place of the scalar loop. Raw weave, unweave and partial (3-row) tasks at every
count around the rounds and odd offsets, guard bytes around the destination, against numpy's
strided assignment; the partial weave also keeps every fourth byte of its groups."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tests.relayout._reference import extent, kernel_or_skip

GUARD = 0xAB
COUNTS = [1, 31, 32, 33, 45, 63, 64, 65, 95, 125, 128, 157, 1000]


def _run(n: int, m: int, weave: bool, off: int, padded: bool) -> None:
    kernel = kernel_or_skip()
    row = n + 3 + off  # the rows' stride on the side of the rows
    shape, ds, ss = ((n, m), (4, 1), (1, row)) if weave else ((n, m), (1, row), (4, 1))
    rng = np.random.default_rng(n * 16 + m * 4 + weave * 2 + off)
    src = rng.integers(0, 256, off + extent(shape, ss) + 40).astype(np.uint8)
    dst = np.full(off + 1 + extent(shape, ds) + 40, GUARD, np.uint8)
    want = dst.copy()
    as_strided(want[off + 1:], shape, ds)[...] = as_strided(src[off:], shape, ss)
    kernel.copy(dst, src, [(off + 1, off, shape, ds, ss)], False, 1, padded)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("weave", [True, False])
@pytest.mark.parametrize("off", [0, 5])
def test_raw_weaves_of_4_byte_rows(n: int, weave: bool, off: int) -> None:
    _run(n, 4, weave, off, False)


@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("weave", [True, False])
@pytest.mark.parametrize("off", [0, 3])
def test_raw_partial_weaves_of_3_byte_rows(n: int, weave: bool, off: int) -> None:
    """(A weave of 3 rows into groups of 4 rewrites each fourth byte only where the gaps are
    the call's own: padded on one thread.)"""
    _run(n, 3, weave, off, True)
