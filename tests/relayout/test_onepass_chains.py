"""Transposes whose contiguous runs are each split over two axes (``_kernel_chains.h``): one-pass
relayouts between transposed tilings whose tiles cut both runs (f16 T(4,128)(2,1) rows against
T(8,128)(2,1) columns, u32 T(4,128) against T(2,128), ragged and odd shapes, 1 and 3 threads,
outs followed by guard bytes) against the definition, and raw random tasks of two chains (every
item width, swapped units, outer axes, ragged blocks past a stage, odd offsets, stored and
streamed, the bytes around the box kept; and with the source between pages that may not be read)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, relayout
from tensorlayout.relayout._direct import is_direct
from tests.relayout._reference import check_page_edges, extent, kernel_or_skip, reference_buffer

PAIRS = [("f16", "{1,0:T(4,128)(2,1)}", "{0,1:T(8,128)(2,1)}"),
         ("s16", "{0,1:T(4,128)(2,1)}", "{1,0:T(8,128)(2,1)}"),
         ("u32", "{1,0:T(4,128)}", "{0,1:T(2,128)}"),
         ("f32", "{0,1:T(2,128)}", "{1,0:T(4,128)}"),
         ("u32", "{1,0:T(2,128)}", "{0,1:T(4,128)}")]
TYPES = {"f16": np.uint16, "s16": np.uint16, "u32": np.uint32, "f32": np.uint32}


@pytest.mark.parametrize("etype, src, dst", PAIRS)
@pytest.mark.parametrize("shape", [(1024, 512), (300, 1061), (263, 517), (129, 2050)])
@pytest.mark.parametrize("threads", [1, 3])
def test_chained_relayouts_match_the_definition(etype: str, src: str, dst: str, shape: tuple[int, int],
                                                threads: int) -> None:
    s, d = f"{etype}[{shape[0]},{shape[1]}]{src}", f"{etype}[{shape[0]},{shape[1]}]{dst}"
    assert is_direct(as_target(s), as_target(d))
    dtype = TYPES[etype]
    data = np.random.default_rng(shape[0] * shape[1]).integers(0, 1 << 15, shape).astype(dtype)
    want = reference_buffer(data, d, 3)
    raw = np.full(want.nbytes + 64, 0xAB, np.uint8)
    out = raw[:want.nbytes].view(dtype)
    got = relayout(reference_buffer(data, s, 5), s, d, pad_value=3, threads=threads, out=out)
    assert np.array_equal(got, want)
    assert (raw[want.nbytes:] == 0xAB).all()


def _rows(rng: np.random.Generator, outer: int, inner: int, row: int, step: int) -> tuple[int, int, int]:
    """(stride of the outer index, of the inner one, span) of outer x inner rows of ``row`` bytes
    on the other side, apart by a random gap (of ``step`` or 8 bytes a unit), the outer or the
    inner index the finer."""
    pitch = row + int(rng.integers(0, 3)) * int(rng.choice([step, 8]))
    if rng.integers(0, 2):
        return inner * pitch, pitch, outer * inner * pitch
    return pitch, outer * pitch, outer * inner * pitch


def _chain_task(rng: np.random.Generator, it: int, big: bool, step: int = 1) -> tuple:
    """(shape, ds, ss): [outer,] jh, ih, il, jl; il (ih) the source's run, jl (jh) the
    destination's; the transpose of il x jl at most 32 bytes wide; ``big``: past one stage; the
    rows apart by multiples of ``step`` bytes."""
    wide, narrow = int(rng.integers(1, max(2, 64 // it))), int(rng.integers(1, 32 // it + 1))
    il, jl = (wide, narrow) if rng.integers(0, 2) else (narrow, wide)  # (one side a tile wide, or both)
    ih = int(rng.integers(-(-64 // (il * it)), 200 if big else 40))
    jh = int(rng.integers(-(-64 // (jl * it)), 200 if big else 40))
    ds_ih, ds_il, d_span = _rows(rng, ih, il, jh * jl * it, step)
    ss_jh, ss_jl, s_span = _rows(rng, jh, jl, ih * il * it, step)
    shape: tuple[int, ...] = (jh, ih, il, jl)
    ds: tuple[int, ...] = (jl * it, ds_ih, ds_il, it)
    ss: tuple[int, ...] = (ss_jh, il * it, it, ss_jl)
    if rng.integers(0, 2):
        n = int(rng.integers(2, 4))
        shape, ds, ss = (n, *shape), (d_span + it * int(rng.integers(0, 3)), *ds), (s_span, *ss)
    return shape, ds, ss


@pytest.mark.parametrize("it", [1, 2, 4, 8])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_chained_tasks_match_numpy(it: int, stream: bool) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(it * 10 + stream)
    dtype = np.dtype(f"u{it}")
    for k in range(12):
        shape, ds, ss = _chain_task(rng, it, big=k % 3 == 0)
        d_off, s_off = (int(x) * it for x in rng.integers(0, 3, 2))
        src = rng.integers(0, 1 << 8 * it - 1, -(-(s_off + extent(shape, ss) - 1 + it) // it),
                           dtype=np.uint64).astype(dtype)
        dst = np.full((d_off + extent(shape, ds) + it + 64) // it, 0xA5, dtype)
        want = dst.copy()
        as_strided(want[d_off // it:], shape, ds)[...] = as_strided(src[s_off // it:], shape, ss)
        kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], stream)
        assert np.array_equal(dst, want), (shape, ds, ss)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_chained_swapped_units(dtype: type, stream: bool) -> None:
    kernel = kernel_or_skip()
    e = np.dtype(dtype).itemsize
    u = 4 * e
    rng = np.random.default_rng(e * 10 + stream)
    for k in range(8):
        shape, ds, ss = _chain_task(rng, u, big=k % 2 == 0)
        src: np.ndarray = rng.integers(0, 250, -(-(extent(shape, ss) - 1 + u) // e)).astype(dtype)
        dst: np.ndarray = np.full((extent(shape, ds) + u + 64) // e, 77, dtype)
        want = dst.copy()
        sb, wb = src.view(np.uint8), want.view(np.uint8)
        moved = as_strided(sb, (*shape, 4, e), (*ss, e, 1))[..., [0, 2, 1, 3], :]
        as_strided(wb, (*shape, 4, e), (*ds, e, 1))[...] = moved
        kernel.copy(dst, src, [(0, 0, shape, ds, ss, True)], stream)
        assert np.array_equal(dst, want), (shape, ds, ss)


def test_chained_tasks_read_only_their_source_bytes() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(7)
    for it in (4, 8):
        tasks = [(*_chain_task(rng, it, big, it), it, 0) for big in (False, True)]
        check_page_edges(tasks, item=it, stream=[False, True])


@pytest.mark.parametrize("ih, jh", [(150, 25), (25, 150), (151, 151)])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_chained_ragged_blocks(ih: int, jh: int, stream: bool) -> None:
    # blocks cut along the longer chain, the last one ragged; on both sides the finer index the
    # outer one of its chain, so that a block running past its chain's end lands on other rows
    kernel = kernel_or_skip()
    il, jl, it = 2, 4, 4
    d_pitch, s_pitch = jh * jl * it + 8, ih * il * it + 4
    shape = (jh, ih, il, jl)
    ds, ss = (jl * it, d_pitch, ih * d_pitch, it), (s_pitch, il * it, it, jh * s_pitch)
    src = np.random.default_rng(ih * jh).integers(0, 1 << 31, jh * jl * s_pitch // it).astype(np.uint32)
    dst = np.full(ih * il * d_pitch // it + 16, 0xA5, np.uint32)
    want = dst.copy()
    as_strided(want, shape, ds)[...] = as_strided(src, shape, ss)
    kernel.copy(dst, src, [(0, 0, shape, ds, ss)], stream)
    assert np.array_equal(dst, want)
