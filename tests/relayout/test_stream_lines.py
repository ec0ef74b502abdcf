"""Streamed runs with gaps between them (``stream_lines`` in ``_kernel_plan.h``): a streamed
call's rows of 64 bytes or more, each followed by bytes it does not write, store their whole
lines past the cache and their partial first and last lines through it. Every byte moved and
every byte of the gaps kept, at every alignment of the destination within a line; the one-pass
relayout that was 4.3x a copy with its partial lines streamed, against the brute-force buffer;
a call cut into pieces for threads, streamed as the whole call is."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from tensorlayout.relayout import as_target, relayout, to_physical
from tests.relayout._reference import check_page_edges, check_raw_task, kernel_or_skip, reference_buffer


@pytest.mark.parametrize("stream", [True, False])
def test_runs_with_gaps_every_alignment(stream: bool) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(5)
    src = rng.integers(0, 256, 1 << 16).astype(np.uint8)
    for d_off in range(0, 64, 3):
        run = int(rng.integers(64, 400))
        gap = int(rng.integers(1, 200))
        rows = int(rng.integers(2, 9))
        check_raw_task(kernel, src, (rows, run), (run + gap, 1), (run + int(rng.integers(0, 50)), 1),
                       d_off, int(rng.integers(0, 64)), stream, 0xAB)


def test_runs_with_gaps_page_edges() -> None:
    kernel_or_skip()
    check_page_edges([((5, 130), (200, 1), (130, 1), 16, 0), ((3, 64), (65, 1), (64, 1), 1, 3),
                      ((4, 127), (128, 1), (131, 1), 0, 5)], stream=True)


@pytest.mark.parametrize("threads", [1, None])
def test_onepass_runs_with_gaps(threads: int | None) -> None:
    """324-byte runs 512 bytes apart into a destination of 8 MiB or more: streamed by
    ``streams_runs`` (``_kernel_gather.h``), though the call is below the streaming size."""
    kernel_or_skip()
    src = as_target("f32[4,81,2100]{1,0,2:T(1,128)}")
    dst = as_target("f32[4,81,2100]{1,0,2:T(8,128)}")
    assert dst.physical_elements * 4 >= 8 << 20 > src.physical_elements * 4
    data = (np.arange(4 * 81 * 2100) % 1009).astype(np.float32).reshape(4, 81, 2100)
    out = np.full(dst.physical_elements, 7, np.float32)
    relayout(to_physical(data, src), src, dst, out=out, threads=threads)
    assert np.array_equal(out.view(np.uint8), reference_buffer(data, str(dst), 0).view(np.uint8))


@pytest.mark.parametrize("workers", [1, 2])
def test_pieces_stream_by_the_whole_call(workers: int) -> None:
    """A copy of 360-byte runs into 12 MiB cut into pieces of under 1 MiB, each starting inside a
    line: the pieces stream as the whole call would (``plan_t.dst_bytes``), two threads writing
    the two sides of the lines where pieces meet. Every byte moved, the gaps kept."""
    kernel = kernel_or_skip()
    run, gap, rows = 360, 64, (12 << 20) // 424
    src = (np.arange(rows * run) % 251).astype(np.uint8)
    dst = np.full(rows * (run + gap), 0xCD, np.uint8)
    want = dst.copy()
    want.reshape(rows, run + gap)[:, :run] = src.reshape(rows, run)
    cut = [0, *sorted(np.random.default_rng(9).choice(np.arange(1, rows), 23, replace=False).tolist()), rows]
    tasks = [(a * (run + gap), a * run, (b - a, run), (run + gap, 1), (run, 1)) for a, b in pairwise(cut)]
    kernel.copy(dst, src, tasks, False, workers)
    assert np.array_equal(dst, want)
