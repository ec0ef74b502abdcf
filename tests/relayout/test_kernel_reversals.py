"""The kernel's woven transposes whose long side's rows do not run on over the third axis (a
sub-tile's short rows against a full reversal of dims: pred[1024,16,128]{0,1,2:T(8,128)(4,1)}),
against a brute-force reference: layouts through the public calls, and hand-made tasks through
the raw entry point with strides of any size, any start, and nothing outside the box written."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tests.relayout._reference import kernel_or_skip, reference_buffer

LAYOUTS = ["pred[40,16,130]{0,1,2:T(8,128)(4,1)}", "u8[33,12,70]{0,1,2:T(8,128)(4,1)}",
           "s8[17,9,200]{1,0,2:T(8,128)(4,1)}", "u8[8,8,3,8,33]{1,3,4,2,0:T(8,128)(4,1)}",
           "bf16[37,6,50]{0,1,2:T(4,128)(2,1)}", "u16[20,10,9]{0,1,2:T(2,128)(2,1)}"]
DTYPES = {"pred": np.bool_, "u8": np.uint8, "s8": np.int8, "bf16": np.uint16, "u16": np.uint16}


def _data(text: str, seed: int) -> np.ndarray:
    t = as_target(text)
    dtype = DTYPES[text[:text.index("[")]]
    high = 2 if dtype == np.bool_ else 250
    return np.random.default_rng(seed).integers(0, high, t.logical_shape).astype(dtype)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_reversed_sub_tiles_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    data = _data(text, len(text))
    want = reference_buffer(data, text, 0)
    buf = to_physical(data, as_target(text), threads=threads)
    assert np.array_equal(buf.view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(want, as_target(text), threads=threads), data)


@pytest.mark.parametrize("pair", [("pred[40,16,130]{0,1,2:T(8,128)(4,1)}", "{2,1,0:T(8,128)(4,1)}"),
                                  ("u8[30,20,70]{1,0,2:T(8,128)(4,1)}", "{2,0,1:T(8,128)(4,1)}")])
def test_reversed_sub_tiles_relayout(engine_mode: str, pair: tuple[str, str]) -> None:
    src, dst = pair
    dst = src[:src.index("{")] + dst
    data = _data(src, 5)
    out = relayout(reference_buffer(data, src, 0), as_target(src), as_target(dst))
    assert np.array_equal(out.view(np.uint8), reference_buffer(data, dst, 0).view(np.uint8))


def _task_case(rng: np.random.Generator, item: int, m: int, to: bool) -> tuple:
    """A woven transpose (ng, na, nb) whose long side's rows are `gap` items past their end:
    to the m-item pieces (dst rows run on over g, the source's m rows of each g anywhere) or
    from them (the source's rows run on, the destination's m rows anywhere)."""
    ng, n = int(rng.integers(2, 40)), int(rng.integers(2, 300))
    gap, far = int(rng.integers(0, 9)), int(rng.integers(0, 3))
    if to:  # dst[a, g, b] (rows of ng*m items); src rows (g, b) of n items
        shape = (ng, n, m)
        sb = (n + gap) * item
        sg = m * sb + far * 4096
        ds = (m * item, (ng * m + gap) * item, item)
        ss = (sg, item, sb)
    else:  # src[a, g, b]; dst rows (g, b) of n items
        shape = (ng, m, n)
        db = (n + gap) * item
        ds = (m * db + far * 4096, db, item)
        ss = (m * item, item, (ng * m + gap) * item)
    return shape, ds, ss


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> int:
    return sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) + item


@pytest.mark.parametrize("item, m", [(1, 4), (1, 2), (1, 8), (2, 2), (2, 4)])
@pytest.mark.parametrize("to", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_raw_woven_transposes_with_rows_anywhere(item: int, m: int, to: bool, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 31 + item * 7 + m)
    shape, ds, ss = _task_case(rng, item, m, to)
    d_off, s_off = int(rng.integers(0, 64)) * item, int(rng.integers(0, 64)) * item
    dtype = {1: np.uint8, 2: np.uint16}[item]
    src = rng.integers(0, 1 << (8 * item), (s_off + _extent(shape, ss, item) + 64) // item).astype(dtype)
    dst = np.full((d_off + _extent(shape, ds, item) + 64) // item, 0xAB, dtype)
    want = dst.copy()
    as_strided(want[d_off // item:], shape, ds)[...] = as_strided(src[s_off // item:], shape, ss)
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], False)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("item", [2, 4])
@pytest.mark.parametrize("rows, cols", [(8, 4096), (17, 2048), (40, 1030)])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_far_rows_into_rows_sharing_sets(item: int, rows: int, cols: int, stream: bool) -> None:
    # dst[a, b] = src[b, a]: source rows 64 KiB or more apart, destination rows a multiple of
    # 4 KiB apart (streamed: in strips, not tile by tile), and source rows 2 KiB or more apart
    # through the cache (each block fetches its rows' next lines); nothing between rows written
    kernel = kernel_or_skip()
    dtype = {2: np.uint16, 4: np.uint32}[item]
    sb = -(-max(cols * item, 65536 if stream else 2048) // 64) * 64 + 64 * (rows % 3)
    da = -(-rows * item // 4096) * 4096
    src = np.random.default_rng(rows).integers(0, 1 << 16, sb // item * (rows - 1) + cols).astype(dtype)
    dst = np.full(da // item * cols, 0xAB, dtype)
    want = dst.copy()
    as_strided(want, (cols, rows), (da, item))[...] = as_strided(src, (cols, rows), (item, sb))
    kernel.copy(dst, src, [(0, 0, (cols, rows), (da, item), (item, sb))], stream)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("nb", [1, 2, 4])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("stream", [False, True])
def test_raw_narrow_transposes_into_destination_rows(nb: int, seed: int, stream: bool) -> None:
    # dst[a, g*nb + b] = src[g, b, a] of 4-byte items: the destination's rows take nb items per g
    # and run on over g (a (4,1) or (2,1) sub-tile's groups, or a T(4,128) tile's rows, read into
    # logical rows: two 8 x 8 tiles per step, a line of each row), rows 2 KiB apart or not,
    # any number of g (past whole pairs of tile groups) and of rows (past whole tiles)
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 3 + nb)
    ng, na = int(rng.integers(2, 70)), int(rng.integers(8, 90))
    da = 2048 * int(rng.integers(1, 3)) if seed % 2 else 4 * (ng * nb + int(rng.integers(0, 20)))
    sb = 4 * (na + int(rng.integers(0, 9)))
    sg = nb * sb + 64 * int(rng.integers(0, 3))
    shape, ds, ss = (ng, na, nb), (nb * 4, da, 4), (sg, 4, sb)
    src = rng.integers(0, 1 << 31, (_extent(shape, ss, 4) + 64) // 4).astype(np.uint32)
    dst = np.full((_extent(shape, ds, 4) + 64) // 4, 0xABABABAB, np.uint32)
    want = dst.copy()
    as_strided(want, shape, ds)[...] = as_strided(src, shape, ss)
    kernel.copy(dst, src, [(0, 0, shape, ds, ss)], stream)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("run, d_off", [(512, 0), (256, 8), (300, 3), (1024, 16)])
def test_raw_long_runs_into_a_large_destination(run: int, d_off: int) -> None:
    # runs of 256 bytes or more into 8 MiB or more (then streamed whatever the caller says), in
    # permuted order within each block, at any start; the gaps between runs keep their bytes
    kernel = kernel_or_skip()
    blocks, gap = (8 << 20) // (4 * run) + 3, 8
    shape = (blocks, 2, 2, run)
    ds = (4 * (run + gap), run + gap, 2 * (run + gap), 1)
    ss = (4 * run, 2 * run, run, 1)
    src = np.random.default_rng(run).integers(0, 256, 4 * run * blocks, dtype=np.uint8)
    dst = np.full(d_off + 4 * (run + gap) * blocks, 0xAB, np.uint8)
    want = dst.copy()
    as_strided(want[d_off:], shape, ds)[...] = as_strided(src, shape, ss)
    kernel.copy(dst, src, [(d_off, 0, shape, ds, ss)], False)
    assert np.array_equal(dst, want)
