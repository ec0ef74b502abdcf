"""Streamed transposes of 4- and 8-byte items (and in cache, 4-byte ones, from 4 MiB) whose
destination rows are not a whole number of cache lines apart, in strips kept two lines deep per
row (``_kernel_words_shifted.h``): each row writes its own whole lines. On random raw tasks
against numpy's strided assignment (rows one after another or running on over a third axis g,
every row's offset in its line, partial first and last lines, passes of rows past the
stage's), the bytes around the box kept; with their source between unreadable pages; and
through ragged layouts read back into logical arrays, one thread and default threads."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine

from ._reference import (
    check_layout,
    check_page_edges,
    check_raw_task,
    extent,
    kernel_or_skip,
)

_TYPES = {4: np.uint32, 8: np.uint64}
Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # shape, dst strides, src strides


def _box(rng: np.random.Generator, it: int, across: bool) -> Box:
    """A transpose (g, a, b) whose source rows (b) run on over g (``across``) or whose g is 1,
    the destination rows (a, and g) a multiple of the item but not of a line apart."""
    ng = int(rng.choice([2, 3, 7])) if across else 1
    na = int(rng.choice([1, 3, 8, 9, 37, 130, 257, 600]))
    nb = 1024 // it + int(rng.choice([0, 1, 7, 17, 100, 301]))  # rows of 1 KiB or more (SHIFT_MIN_ROW)
    da = nb * it + int(rng.choice([1, 3, 5, 9])) * it  # never a multiple of 64 (odd items past)
    dg = na * da + int(rng.choice([0, 1, 2])) * it
    sb = ng * na * it + int(rng.integers(0, 4)) * it
    return (ng, na, nb), (dg, da, it), (na * it, it, sb)


@pytest.mark.parametrize("it", [4, 8])
@pytest.mark.parametrize("across", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_shifted_strips_match_strided_assignment(it: int, across: bool, seed: int) -> None:
    """Random streamed tasks, d a few items off a line, the rows 1 KiB or more (past whole
    strips by 0 to 301 items): every byte moved, the guards kept."""
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 10 + it + across)
    shape, ds, ss = _box(rng, it, across)
    d_off, s_off = int(rng.integers(0, 16)) * it, int(rng.integers(0, 3)) * it
    src = rng.integers(0, 1 << 30, (s_off + extent(shape, ss) * 1) // it + 8).astype(_TYPES[it])
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, True, 7)


@pytest.mark.parametrize("it", [4, 8])
def test_shifted_strips_in_several_passes(it: int) -> None:
    """More destination rows than a pass holds (4096; in sub-passes of 256), a ragged last
    pass, the rows running on over g, every row's offset in its line taken."""
    kernel = kernel_or_skip()
    ng, na, nb = 3, 1501, 1024 // it + 5
    da = nb * it + it
    shape, ds, ss = (ng, na, nb), (na * da + 2 * it, da, it), (na * it, it, ng * na * it + it)
    src = np.random.default_rng(it).integers(0, 1 << 30, extent(shape, ss) // it + 8).astype(_TYPES[it])
    check_raw_task(kernel, src, shape, ds, ss, 3 * it, 0, True, 5)


@pytest.mark.parametrize("run_on", [False, True])
def test_shifted_strips_in_cache(run_on: bool) -> None:
    """Not streamed, 4-byte items into 4 MiB or more of destination rows off their lines (in
    cache from STRIPS_NT_MIN_BYTES): the source rows running on over g, or g by g."""
    kernel = kernel_or_skip()
    ng, na, nb, it = 3, 300, 1201, 4
    da = nb * it + it
    sg = na * it if run_on else na * it + 64
    shape, ds, ss = (ng, na, nb), (na * da + 2 * it, da, it), (sg, it, ng * sg + it)
    src = np.random.default_rng(run_on).integers(0, 1 << 30, extent(shape, ss) // it + 8).astype(np.uint32)
    check_raw_task(kernel, src, shape, ds, ss, 5 * it, 0, False, 3)




def test_shifted_strips_read_only_their_source() -> None:
    """Tasks whose source is exactly their bytes, between pages that may not be read (the
    last strip's source rows end at the page; short last strips, and whole ones)."""
    kernel_or_skip()
    for it, (ng, na, nb) in [(4, (1, 130, 263)), (8, (3, 9, 131)), (8, (1, 600, 128)), (4, (2, 41, 300))]:
        da = nb * it + 3 * it
        shape, ds, ss = (ng, na, nb), (na * da + it, da, it), (na * it, it, ng * na * it)
        check_page_edges([(shape, ds, ss, 2 * it, 0)], item=it, stream=True)


@pytest.mark.parametrize("text", ["s64[301,1003]{0,1:T(1,128)}", "f32[517,1999]{0,1:T(1,128)}",
                                  "u32[5,77,931]{1,2,0:T(1,128)}", "f64[3,130,515]{0,2,1:T(1,128)}",
                                  "f32[1100,1001]{0,1:T(1,128)}"])
@pytest.mark.parametrize("threads", [1, None])
def test_ragged_layouts_read_back_streamed(monkeypatch: pytest.MonkeyPatch, text: str,
                                           threads: int | None) -> None:
    """from_physical of layouts whose logical rows are ragged (not whole lines), every copy
    streamed, against the data; to_physical against XLA's linear indices."""
    kernel_or_skip()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    check_layout(text, threads)


@pytest.mark.parametrize("text", ["u32[263,4,1917]{0,1,2:T(1,128)}", "f32[1100,1001]{0,1:T(1,128)}"])
def test_ragged_layouts_read_back_in_cache(text: str) -> None:
    """The same in cache (4 MiB of destination or more, one thread: not streamed)."""
    kernel_or_skip()
    check_layout(text, 1)

