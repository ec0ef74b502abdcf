"""The kernel's transposes of short dense runs holding both items of (2,1) pairs
(_kernel_pairs_short.h) against the definition: layouts whose tile columns are the array's
major dim and whose short minor dims hold the tile rows (through the public calls, 1 and 3
threads, every engine mode), and hand-made tasks through the raw entry point in both
directions: rows (a) far apart, each a run of 2 to 256 items nested densely (the pair axis J
anywhere in the nest), units [a][j] a run of units per pair position, rows past a multiple of
8, outer axes, odd 2-byte starts, stored and streamed, the bytes around the box kept."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import check_raw_task, extent, kernel_or_skip, reference_buffer

LAYOUTS = ["s16[19,7,13,3]{0,2,3,1:T(8,128)(2,1)}", "bf16[37,5,6,5]{0,2,3,1:T(8,128)(2,1)}",
           "f16[300,4,8,2]{0,2,3,1:T(4,128)(2,1)}", "u16[130,3,4]{0,1,2:T(2,128)(2,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_short_pair_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    t = as_target(text)
    data = np.random.default_rng(len(text)).integers(0, 1 << 16, t.logical_shape).astype(np.uint16)
    want = reference_buffer(data, text, 0)
    assert np.array_equal(to_physical(data, t, threads=threads), want)
    assert np.array_equal(from_physical(want, t, threads=threads), data)


def _box(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, rows side strides, units side strides) of an (o, a, p, q, j) box: rows a (and o)
    far apart, each a dense run of p x q x j items nested in a random order; units [a][j] 4
    bytes a unit, p and q (and o) anywhere past them on the other side."""
    na, no = int(rng.integers(8, 70)), int(rng.integers(1, 3))
    ep, eq = int(rng.integers(1, 9)), int(rng.integers(1, 6))
    sizes = {"o": no, "a": na, "p": ep, "q": eq, "j": 2}
    order = ["p", "q", "j"]
    rng.shuffle(order)
    rows, step = {}, 2
    for k in order:
        rows[k] = step
        step *= sizes[k]
    rows["a"] = step + 2 * int(rng.choice([0, 1, 7, 100]))
    rows["o"] = rows["a"] * na + 2 * int(rng.integers(0, 5))
    units = {"j": 2, "a": 4, "p": 4 * na + 2 * int(rng.integers(0, 9))}
    units["q"] = units["p"] * ep + 2 * int(rng.integers(0, 9))
    units["o"] = units["q"] * eq + 2 * int(rng.integers(0, 9))
    names = ["o", "a", "p", "q", "j"]
    return tuple(sizes[k] for k in names), tuple(rows[k] for k in names), tuple(units[k] for k in names)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("to_units", [True, False])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_short_pairs(seed: int, to_units: bool, stream: bool) -> None:
    # dst = src of 2-byte items over the box, at odd 2-byte starts; the bytes around it keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 4 + 2 * to_units + stream)
    shape, rows, units = _box(rng)
    ds, ss = (units, rows) if to_units else (rows, units)
    d_off, s_off = 2 * int(rng.integers(0, 40)) + 2, 2 * int(rng.integers(0, 40)) + 2
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, stream, 0xABCD)


def test_raw_short_pairs_of_the_longest_runs() -> None:
    # runs of 256 items (the most the kernel takes) and of 258 (left to the general loops)
    kernel = kernel_or_skip()
    rng = np.random.default_rng(7)
    for ep in (128, 129):
        shape, rows = (19, ep, 2), (2 * 2 * ep + 6, 2, 2 * ep)
        units = (4, 4 * 19 + 8, 2)
        for ds, ss in ((units, rows), (rows, units)):
            src = rng.integers(0, 1 << 16, (extent(shape, ss) + 66) // 2).astype(np.uint16)
            check_raw_task(kernel, src, shape, ds, ss, 2, 0, False, 0xABCD)
