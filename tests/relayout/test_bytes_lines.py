"""(4,1) quads of bytes from a transposed tiling's tile rows into logical rows whole lines apart,
in a streamed copy: a line of each row a at a time through a stage, out past the cache
(``qrows_from_lines`` in ``_kernel_bytes_rows.h``). Raw streamed 4-byte-item tasks in the
kernel's order against numpy's strided assignment: rows of 16 quads or more (ragged: the
partial lines at either end), the destination at every quad of a line and off the quads (the
stored path), few and many rows a (past a stage of them), every byte around the box kept, the
source between pages that may not be read; and a streamed public call against its data."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import check_page_edges, extent, kernel_or_skip

Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _task(rng: np.random.Generator) -> Box:
    """A from_physical box in the kernel's order (outer, g, a, b) as (shape, ds, ss) in bytes of
    4-byte quads: rows a of K = ng*nb >= 16 quads, a multiple of 64 bytes apart; quad rows
    (g, b) along a on the physical side."""
    ng, nb = int(rng.integers(1, 70)), int(rng.choice([1, 2, 3, 8]))
    while not 16 <= ng * nb <= 512:  # (from 64 by lines: QROWS_LINES_K; fewer stored as before)
        ng, nb = int(rng.integers(1, 70)), int(rng.choice([1, 2, 3, 8]))
    few, many, past = int(rng.integers(8, 40)), int(rng.integers(240, 600)), 256 + int(rng.integers(1, 16))
    na = int(rng.choice([few, many, past]))
    outer = int(rng.integers(1, 3))  # (rows a: past a stage of 256, a few past it: the last block back)
    row = -(-4 * ng * nb // 64) * 64 + 64 * int(rng.integers(0, 2))
    pb = 4 * na + 4 * int(rng.integers(0, 3))
    pg = pb * nb + int(rng.integers(0, 9))
    lo, po = row * na, max(pg * ng, pb * nb) + int(rng.integers(0, 5))
    return (outer, ng, na, nb), (lo, 4 * nb, row, 4), (po, pg, 4, pb)


def _run(kernel: object, src: np.ndarray, box: Box, quad: int, s_off: int, off: int = 0) -> None:
    """The box streamed into a destination whose rows start at quad ``quad`` of a line (``off``
    more bytes: off the quads), guard bytes around it, against numpy's assignment."""
    shape, ds, ss = box
    dst = np.full(128 + extent(shape, ds) + 3 + 64, 0xAB, np.uint8)
    d_off = (-dst.ctypes.data) % 64 + 4 * quad + off
    want = dst.copy()
    quads = np.dtype((np.void, 4))
    as_strided(want[d_off:d_off + 4].view(quads), shape, ds)[...] = as_strided(
        src[s_off:s_off + 4].view(quads), shape, ss)
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss, False, 4)], True)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want), (shape, ds, ss, quad, off)


@pytest.mark.parametrize("seed", range(16))
def test_streamed_quad_rows_by_lines_match_the_definition(seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    box = _task(rng)
    s_off = int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(box[0], box[2]) + 3).astype(np.uint8)
    for quad in (0, 1, 7, 15) if seed % 2 else (3, 12):  # the rows' first quad in its line
        _run(kernel, src, box, quad, s_off)
    _run(kernel, src, box, int(rng.integers(0, 16)), s_off, off=2)  # off the quads: stored


def test_streamed_quad_rows_by_lines_read_only_their_bytes() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(7)
    tasks = []
    for i in range(4):
        shape, ds, ss = _task(rng)
        tasks.append((shape, ds, ss, 4 * i, int(rng.integers(0, 9))))
    check_page_edges(tasks, item=4, wide=4, stream=True)


@pytest.mark.parametrize("text", ["u8[4,8,1024,512]{2,3,0,1:T(32,128)(4,1)}",
                                  "s8[4,4100,1024]{1,2,0:T(8,128)(4,1)}"])
@pytest.mark.parametrize("threads", [1, None])
def test_streamed_from_physical_gives_the_data_back(text: str, threads: int | None) -> None:
    t = as_target(text)
    data = np.random.default_rng(3).integers(0, 256, t.logical_shape).astype(np.uint8)
    assert data.nbytes >= 1 << 24  # (streamed: _copy.STREAM_MIN_BYTES)
    buf = to_physical(data, t)
    out = np.full_like(data, 0xAB)
    from_physical(buf, t, out=out, threads=threads)
    assert np.array_equal(out, data)
