"""The kernel's transposes of split (2,1) pairs (_kernel_pairs_split.h) against the definition:
layouts whose tile rows of pairs are rows of the array far apart (through the public calls, 1
and 3 threads, every engine mode), and hand-made tasks through the raw entry point in both
directions: rows (a, j) along t anywhere on one side, 4-byte units [a][j] a row per t on the
other, with or without a next axis R of units and outer axes, ragged sizes (t past a multiple
of 8, a of 4, blocks past their lines), odd 2-byte starts, stored and streamed, the bytes
around the box kept; and tasks whose source lies between pages that may not be read."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target, relayout
from tests.relayout._reference import (
    check_layout,
    check_page_edges,
    check_raw_task,
    extent,
    kernel_or_skip,
    reference_buffer,
)

LAYOUTS = ["bf16[8,16,40,32]{1,0,3,2:T(8,128)(2,1)}", "bf16[13,37,103,7]{1,0,3,2:T(8,128)(2,1)}",
           "s16[6,9,40,50]{2,0,1,3:T(8,128)(2,1)}", "bf16[20,300,16]{1,0,2:T(8,128)(2,1)}",
           "f16[7,133,21]{1,0,2:T(4,128)(2,1)}", "u16[5,3,259,9]{1,0,3,2:T(2,128)(2,1)}"]


def _data(text: str, seed: int) -> np.ndarray:
    t = as_target(text)
    return np.random.default_rng(seed).integers(0, 1 << 16, t.logical_shape).astype(np.uint16)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_split_pair_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)


def test_split_pair_relayout(engine_mode: str) -> None:
    src, dst = "bf16[8,16,40,32]{1,0,3,2:T(8,128)(2,1)}", "bf16[8,16,40,32]{3,2,1,0:T(8,128)(2,1)}"
    data = _data(src, 3)
    out = relayout(reference_buffer(data, src, 0), as_target(src), as_target(dst))
    assert np.array_equal(out, reference_buffer(data, dst, 0))


Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _nest(rng: np.random.Generator, sizes: dict[str, int], first: int, order: list[str]) -> dict[str, int]:
    """Byte strides of axes nested in ``order`` (innermost first) from a run of ``first`` bytes,
    each a few 2-byte steps past the extent inside it (or none)."""
    strides, step = {}, first
    for name in order:
        step += 2 * int(rng.choice([0, 0, 1, 3]))
        strides[name] = step
        step *= sizes[name]
    return strides


def _box(rng: np.random.Generator, big: bool) -> Box:
    """(shape, rows side strides, units side strides) of an (o, r, a, t, j) box: rows (o, r, a, j)
    of t items anywhere on the rows side (their order random, gaps between), units [a][j] 4 bytes
    a unit with the r rows of units next (or a gap between) and t, o outside on the other."""
    nt = int(rng.integers(8, 1200 if big else 300))
    na, nr, no = int(rng.integers(4, 150)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    sizes = {"o": no, "r": nr, "a": na, "j": 2, "t": nt}
    order = ["o", "r", "a", "j"]
    rng.shuffle(order)
    rows = _nest(rng, sizes, 2 * nt + 2 * int(rng.choice([0, 0, 5, 32])), order)
    rows["t"] = 2
    units = {"j": 2, "a": 4}
    units["r"] = 4 * na + (2 * int(rng.integers(1, 9)) if rng.random() < 0.25 else 0)
    outer = ["t", "o"] if rng.random() < 0.7 else ["o", "t"]
    units |= _nest(rng, sizes, nr * units["r"], outer)
    names = ["o", "r", "a", "t", "j"]
    return (tuple(sizes[k] for k in names), tuple(rows[k] for k in names), tuple(units[k] for k in names))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("to_units", [True, False])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_split_pairs(seed: int, to_units: bool, stream: bool) -> None:
    # dst = src of 2-byte items over the box, at odd 2-byte starts; the bytes around it keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 4 + 2 * to_units + stream)
    shape, rows, units = _box(rng, big=seed % 3 == 0)
    ds, ss = (units, rows) if to_units else (rows, units)
    d_off, s_off = 2 * int(rng.integers(0, 40)) + 2, 2 * int(rng.integers(0, 40)) + 2
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, stream, 0xABCD)




@pytest.mark.parametrize("to_units", [True, False])
def test_raw_split_pairs_between_unreadable_pages(to_units: bool) -> None:
    # the source is exactly the box's bytes (s_off before it), between pages that may not be read
    kernel_or_skip()
    tasks = []
    for seed in range(8):
        rng = np.random.default_rng(1000 + seed * 2 + to_units)
        shape, rows, units = _box(rng, big=False)
        ds, ss = (units, rows) if to_units else (rows, units)
        s_off = 2 * int(rng.integers(0, 8))
        tasks.append((shape, ds, ss, 2 * int(rng.integers(0, 8)), s_off))
    check_page_edges(tasks, item=2, stream=[bool(seed % 2) for seed in range(8)])
