"""The weaves of rows of bytes that read ahead (``WEAVE_AHEAD_MIN`` in ``_kernel_nest.h``): tasks
of 4 MiB of source bytes or more, or streamed ones, prefetch the next steps' rows. A prefetch
moves no byte, so what can go wrong is the weave around it: raw weave tasks of that size (4 and
8 rows of bytes, ragged group counts, odd offsets, streamed and not) with guard bytes around
them and their source between pages that may not be read, and non-permuted (4,1) and 8-row
tilings of that size through the public calls at 1 and default threads, every byte against
the definition."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target
from tests.relayout._reference import (
    check_layout,
    check_page_edges,
    check_raw_task,
    extent,
    kernel_or_skip,
)

AHEAD = 4 << 20  # WEAVE_AHEAD_MIN


def _weave(rows: int, n: int, steps: int, off: int) -> tuple:
    """A weave task of `steps` steps, each `rows` rows of n bytes into n groups (source rows
    n + 3 apart, steps rows * (n + 3) apart), at least AHEAD source bytes."""
    row = n + 3
    shape, ds, ss = (steps, n, rows), (n * rows + 5, rows, 1), (rows * row, 1, row)
    assert extent(shape, ss) >= AHEAD
    return shape, ds, ss, 1 + off, off


CASES = [_weave(4, n, -(-AHEAD // (4 * (n + 3))) + extra, off)
         for n, extra, off in ((128, 0, 0), (125, 3, 5), (33, 1, 2), (1000, 0, 7))] \
    + [_weave(8, n, -(-AHEAD // (8 * (n + 3))) + 1, off) for n, off in ((64, 0), (97, 3))]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("stream", [False, True])
def test_raw_weaves_that_read_ahead(case: int, stream: bool) -> None:
    kernel = kernel_or_skip()
    shape, ds, ss, d_off, s_off = CASES[case]
    rng = np.random.default_rng(case)
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 17).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, stream, 0xAB)


@pytest.mark.parametrize("stream", [False, True])
def test_no_read_outside_the_source_bytes(stream: bool) -> None:
    kernel_or_skip()
    check_page_edges([CASES[1], CASES[3]], stream=stream)


LAYOUTS = ["pred[8,1024,520]{2,1,0:T(4,128)(4,1)}", "s8[4100,1030]{1,0:T(8,128)(4,1)}",
           "u8[1031,4600]{1,0:T(8,128)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_large_weaves_through_the_public_calls(text: str, threads: int | None) -> None:
    kernel_or_skip()
    t = as_target(text)
    assert t.size * t.element_bits // 8 >= AHEAD
    check_layout(text, threads, guarded=True)
