"""Boxes of bytes whose contiguous axes are a few bytes on both sides, through an L1 stage
(``_kernel_bytes_stage.h``): layouts through the public calls against the brute-force
reference, and hand-made boxes through the raw entry point, both ways, at odd offsets, with
ragged blocks (rows a and the x-region past whole stages), gaps between the rows, axes
outside the blocks and quads of 2, 3, 4 and 8 items, every byte of the destination checked
(guard bytes around it written by nothing)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tests.relayout._reference import check_layout, check_raw_task, extent, kernel_or_skip

LAYOUTS = ["pred[64,512,8,2]{0,2,3,1:T(4,128)(4,1)}", "pred[37,61,5,3]{0,2,3,1:T(4,128)(4,1)}",
           "u8[130,40,4,3]{0,2,3,1:T(8,128)(4,1)}", "s8[70,33,2,5]{0,3,2,1:T(4,128)(4,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_staged_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)



def _nested(extents: list[int], order: list[int], start: int) -> dict[int, int]:
    """Strides of the axes ``order`` (innermost first) nesting contiguously from ``start``."""
    strides, at = {}, start
    for k in order:
        strides[k] = at
        at *= extents[k]
    return strides


def _case(rng: np.random.Generator, quad: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A box of axes (u, t, mid, big, a, outer) as (shape, R strides, T strides): R moves u
    (``quad`` items) contiguously, then a; T moves t (2-5 items) contiguously, then u, mid and
    big in some order (its x-region), then rows a a gap apart, then the outer axis."""
    u, t, mid, big, a, outer = range(6)
    ext = [quad, int(rng.integers(2, 6)), int(rng.integers(1, 5)), int(rng.integers(8, 70)),
           int(rng.integers(16, 150)), int(rng.integers(1, 4))]
    inner = [u, mid, big]
    rng.shuffle(inner)
    ts = _nested(ext, [t, *inner], 1)
    region = int(np.prod([ext[k] for k in (u, t, mid, big)]))
    ts[a] = region + int(rng.integers(0, 40))
    ts[outer] = ts[a] * ext[a] + int(rng.integers(0, 9))
    rest = [t, mid, big]
    rng.shuffle(rest)
    rs = {u: 1, a: quad}
    rs.update(_nested(ext, rest, quad * ext[a] + int(rng.integers(0, 5))))
    rs[outer] = extent(tuple(ext[:5]), tuple(rs[k] for k in range(5))) + int(rng.integers(0, 9))
    return tuple(ext), tuple(rs[k] for k in range(6)), tuple(ts[k] for k in range(6))


@pytest.mark.parametrize("quad", [2, 3, 4, 8])
@pytest.mark.parametrize("to", [True, False])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_raw_staged_boxes_match_the_definition(quad: int, to: bool, stream: bool, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 100 + quad * 4 + 2 * to + stream)
    shape, rs, ts = _case(rng, quad)
    ds, ss = (rs, ts) if to else (ts, rs)  # to: the quads in the destination
    perm = rng.permutation(len(shape))  # the task's axis order does not matter to the path
    shape, ds, ss = (tuple(int(v[k]) for k in perm) for v in (shape, ds, ss))
    d_off, s_off = int(rng.integers(0, 64)) | 1, int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 64).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, stream, 0xAB)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_raw_staged_box_in_pieces(threads: int) -> None:
    # the box cut along its outer axis into tasks that run on the kernel's threads
    kernel = kernel_or_skip()
    rng = np.random.default_rng(7)
    shape, ds, ss = _case(rng, 4)
    src = rng.integers(0, 256, extent(shape, ss) + 3).astype(np.uint8)
    dst = np.full(extent(shape, ds) + 5, 0xAB, np.uint8)
    want = dst.copy()
    as_strided(want[2:], shape, ds)[...] = as_strided(src[3:], shape, ss)
    k = 4  # the big axis, split in two
    half = shape[k] // 2
    tasks = []
    for lo, n in ((0, half), (half, shape[k] - half)):
        sub = tuple(n if i == k else e for i, e in enumerate(shape))
        tasks.append((2 + lo * ds[k], 3 + lo * ss[k], sub, ds, ss))
    kernel.copy(dst, src, tasks, False, threads)
    assert np.array_equal(dst, want)
