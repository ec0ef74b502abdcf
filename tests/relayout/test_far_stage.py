"""Tasks staged through rows of a far side (_kernel_far.h) against the definition: layouts whose
short logical rows move with a far physical axis (public calls, 1 and 3 threads, guarded outs), and
raw random tasks (4 MiB of far rows and more, as the stage takes them) staging the source or the
destination (runs whole, or pieces of it over one or two axes), with outer axes outside the rows,
rows cut in chunks, ragged blocks, odd offsets, stored and streamed, the bytes around the box kept;
and tasks whose source lies between pages that may not be read."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import check_layout, check_page_edges, kernel_or_skip, random_box_task

LAYOUTS = ["s8[3001,151,11]{0,2,1:T(4,128)(4,1)}", "s8[4999,77,13]{0,2,1:T(4,128)(4,1)}",
           "pred[181,4099,6]{0,2,1:T(4,128)(4,1)}", "f16[2601,3,201,5]{1,0,3,2:T(8,128)(2,1)}",
           "u16[2601,201,5]{0,2,1:T(8,128)(2,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_far_layouts_match_the_reference(text: str, threads: int) -> None:
    check_layout(text, threads, guarded=True)


def _source_box(rng: np.random.Generator, it: int, chunked: bool, outer: bool) -> tuple:
    """(shape, ds, ss): g x a transposes of b rows far apart in the source (a few bytes of each
    row per g, their rows running on over g on neither side), into rows of b items; an outer axis
    of larger source stride first if ``outer``."""
    g = int(rng.integers(60, 140)) if chunked else int(rng.integers(3, 30))
    a = int(rng.integers(1, 4))
    sg = a * it + int(rng.integers(1, 3)) * it + (int(rng.integers(16, 40)) if chunked else 0)
    sb = g * sg + int(rng.integers(0, 200))
    b = (4 << 20) // sb + int(rng.integers(1, 300))
    da = b * it + int(rng.integers(1, 3)) * it  # (rows that do not run on: see far_runs_on)
    shape: tuple[int, ...] = (g, a, b)
    ds: tuple[int, ...] = (a * da, da, it)
    ss: tuple[int, ...] = (sg, it, sb)
    if outer:
        shape, ds, ss = (2, *shape), (g * a * da, *ds), (b * sb, *ss)
    return shape, ds, ss


def _dest_box(rng: np.random.Generator, it: int, pieces: int) -> tuple:
    """(shape, ds, ss): rows far apart in the destination written a few bytes a g, from source
    rows along b: each destination row one run (``pieces`` 0), or runs over one or two axes."""
    g, a = int(rng.integers(3, 40)), int(rng.integers(1, 4))
    sg = a * it + (int(rng.integers(1, 3)) * it if pieces else 0)
    h = 2 if pieces == 2 else 1
    hs = g * sg + it
    row = (h - 1) * hs + g * sg + int(rng.integers(0, 100))
    b = (4 << 20) // row + int(rng.integers(1, 200))
    sa = b * it + int(rng.integers(0, 2)) * it
    shape: tuple[int, ...] = (g, a, b)
    ds: tuple[int, ...] = (sg, it, row)
    ss: tuple[int, ...] = (a * sa, sa, it)
    if pieces == 2:
        shape, ds, ss = (h, *shape), (hs, *ds), (g * a * sa, *ss)
    return shape, ds, ss


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("it", [1, 2, 4, 8])
def test_far_source_tasks(seed: int, it: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 10 + it)
    shape, ds, ss = _source_box(rng, it, chunked=seed % 2 == 1, outer=seed >= 3)
    dst, src, task, want = random_box_task(rng, it, shape, ds, ss)
    kernel.copy(dst, src, [task], bool(seed % 3 == 0))
    assert np.array_equal(dst, want), (shape, ds, ss)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("it", [1, 2, 4])
def test_far_destination_tasks(seed: int, it: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 10 + it + 100)
    shape, ds, ss = _dest_box(rng, it, seed % 3)
    dst, src, task, want = random_box_task(rng, it, shape, ds, ss)
    kernel.copy(dst, src, [task], bool(seed % 2))
    assert np.array_equal(dst, want), (shape, ds, ss)


def test_far_tasks_read_only_their_source() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(7)
    tasks = []
    for box in (_source_box(rng, 4, False, False), _source_box(rng, 4, True, True), _dest_box(rng, 2, 1)):
        shape, ds, ss = box
        tasks.append((shape, ds, ss, 0, 0))
    check_page_edges(tasks[:2], item=4, wide=4)
    check_page_edges(tasks[2:], item=2, wide=2)
