"""The strips of 4- and 8-byte transposes whose source rows run on over g, their whole tiles
streamed out a line of each destination row at a time, blocks narrower than a tile in tiles
across g (_kernel_words_lines.h), against numpy's strided assignment: raw tasks (streamed, and
in cache over 4 MiB of destination), any number of g, of rows past whole tiles and of items
past whole lines, destinations on and off their lines, nothing outside the box written; source
bytes between unreadable pages; and layouts through the public calls on 1 and default threads."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import check_page_edges, extent, kernel_or_skip, reference_buffer

UNSIGNED = {4: np.uint32, 8: np.uint64}


def _task(rng: np.random.Generator, it: int, big: bool) -> tuple[tuple[int, ...], tuple[int, ...],
                                                                     tuple[int, ...], int, int]:
    """(shape, ds, ss, d_off, s_off) of dst[g, a, b] = src[b, g*na + a]: the source rows (sb apart)
    run on over g; destination rows da apart and g dg apart on lines (the strips' streamed
    stores), d on a line, 16 bytes past one, or an item past one. ``big``: 4 MiB of destination
    or more (the strips in cache)."""
    v = 8 if it == 4 else 4
    na = v * int(rng.integers(1, 5)) + (0 if rng.random() < 0.7 else int(rng.integers(1, v)))
    ng = int(rng.integers(1, 14))
    nb = int(rng.integers(4 * 64 // it, 6 * 64 // it)) + int(rng.integers(0, 64 // it))
    if big:
        nb = -(-(4 << 20) // (it * ng * na)) + int(rng.integers(0, 64 // it))
    da = -(-nb * it // 64) * 64 + 64 * int(rng.integers(0, 2))
    dg = da * na + 64 * int(rng.integers(0, 2))
    sb = ng * na * it + it * int(rng.integers(0, 5))
    d_off = int(rng.choice([0, 16, it, 64 - it]))
    s_off = it * int(rng.integers(0, 4))
    return (ng, na, nb), (dg, da, it), (na * it, it, sb), d_off, s_off


def _run(kernel: object, rng: np.random.Generator, it: int, shape: tuple[int, ...], ds: tuple[int, ...],
         ss: tuple[int, ...], d_off: int, s_off: int, stream: bool) -> None:
    """The raw task into a destination of sentinel items (on a 64-byte line plus d_off) against
    numpy's strided assignment: the box moved, every byte around it kept."""
    t = UNSIGNED[it]
    src = rng.integers(0, 1 << 31, (s_off + extent(shape, ss) + 64) // it).astype(t)
    n = (d_off + extent(shape, ds) + 64) // it + 16
    raw = np.full(n + 64 // it, 0xAB, t)
    lead = (-raw.ctypes.data % 64) // it  # the destination array starts on a line
    dst = raw[lead:lead + n]
    want = dst.copy()
    as_strided(want[d_off // it:], shape, ds)[...] = as_strided(src[s_off // it:], shape, ss)
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], stream)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want), (shape, ds, ss, d_off, s_off, stream)


@pytest.mark.parametrize("it", [4, 8])
@pytest.mark.parametrize("seed", range(10))
def test_raw_streamed_strips(it: int, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(1000 * it + seed)
    _run(kernel, rng, it, *_task(rng, it, False), True)


@pytest.mark.parametrize("it", [4, 8])
@pytest.mark.parametrize("seed", range(3))
def test_raw_strips_in_cache(it: int, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(2000 * it + seed)
    _run(kernel, rng, it, *_task(rng, it, True), False)


Task = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int]  # shape, ds, ss, d_off, s_off


def _narrow_task(rng: np.random.Generator) -> Task:
    """_task's of 4-byte items in blocks narrower than a tile (na = 1, 2 or 4 a g: the tiles go
    across g), any number of g (whole tiles of g*na or not)."""
    na, ng = int(rng.choice([1, 2, 4])), int(rng.integers(1, 40))
    nb = int(rng.integers(16, 100))
    da = -(-nb * 4 // 64) * 64 + 64 * int(rng.integers(0, 2))
    dg = da * na + 64 * int(rng.integers(0, 2))
    sb = ng * na * 4 + 4 * int(rng.integers(0, 5))
    d_off, s_off = int(rng.choice([0, 16, 4])), 4 * int(rng.integers(0, 4))
    return (ng, na, nb), (dg, da, 4), (na * 4, 4, sb), d_off, s_off


@pytest.mark.parametrize("seed", range(12))
def test_raw_streamed_narrow_strips(seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(4000 + seed)
    _run(kernel, rng, 4, *_narrow_task(rng), True)


@pytest.mark.parametrize("it", [4, 8])
def test_strips_read_only_their_source(it: int) -> None:
    # streamed strips whose source ends (and begins) at a page that may not be read
    kernel_or_skip()
    rng = np.random.default_rng(3000 + it)
    tasks = []
    for _ in range(4):
        shape, ds, ss, d_off, s_off = _task(rng, it, False)
        tasks.append((shape, ds, ss, d_off, s_off))
    if it == 4:
        tasks += [_narrow_task(rng) for _ in range(3)]
    check_page_edges(tasks, item=it, stream=True)


LAYOUTS = ["f32[2395,91]{0,1:T(8,128)}", "u32[1157,219]{0,1:T(8,128)}", "s64[683,180]{0,1:T(8,128)}",
           "s64[1638,128]{0,1:T(4,128)}", "f32[16,128,8,16]{0,1,3,2:T(4,128)}",
           "f64[64,128,16,4]{1,0,3,2:T(2,128)}", "f32[200,600]{0,1:T(2,128)}", "u32[300,257]{0,1:T(4,128)}",
           "f32[64,64,16]{1,0,2:T(1,128)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_strip_layouts_match_the_reference(monkeypatch: pytest.MonkeyPatch, text: str,
                                           threads: int | None) -> None:
    # streamed from the first byte (the strips), on one thread and on the default threads
    kernel_or_skip()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    t = as_target(text)
    rng = np.random.default_rng(len(text))
    width = t.element_bits // 8
    data = rng.integers(0, 256, (*t.logical_shape, width), np.uint8).view(f"<u{width}")[..., 0]
    want = reference_buffer(data, text, 0)
    assert np.array_equal(to_physical(data, t, threads=threads).view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(want, t, threads=threads).view(np.uint8), data.view(np.uint8))
