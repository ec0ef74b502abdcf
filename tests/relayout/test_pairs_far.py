"""The kernel's split-pairs transposes from 4-byte unit rows (_kernel_pairs_split.h) where a block
reads 8 unit rows at a time, each along all of its units (split_rows_from): unit rows a multiple of
4 KiB apart into rows of t items a multiple of a line apart (blocks of SPLIT_FAR_T t), and short
rows of t (blocks of 64 units or more). Against the definition through the public calls (1 and 3
threads, every engine mode) and hand-made raw tasks: ragged t (past 8, past a block) and a (past
4, past 16, past a block), an axis R of unit rows, starts off the lines, stored and streamed, the
bytes around the box kept; and tasks whose source lies between pages that may not be read."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import check_layout, check_page_edges, check_raw_task, extent, kernel_or_skip

#: unit rows (t) 4 KiB and 8 KiB apart into logical rows of 256 and 96 items; short rows of 16 t
LAYOUTS = ["s16[2,2,80,256]{2,0,1,3:T(8,128)(2,1)}", "u16[3,2,130,96]{2,0,1,3:T(8,128)(2,1)}",
           "bf16[16,300,16]{1,0,2:T(8,128)(2,1)}", "f16[8,2,70,40]{2,0,1,3:T(8,128)(2,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_far_pair_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)


Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _box(rng: np.random.Generator, far: bool) -> Box:
    """(shape, rows side strides, units side strides) of an (r, a, t, j) box from 4-byte units [a][j]
    (a row of them per r, the rows of one t together) into rows (r, a, j) of t 2-byte items: far,
    t steps of 4 or 8 KiB and rows a multiple of 64 bytes apart (t past SPLIT_FAR_T); else short
    rows of 8 to 64 t (blocks of 64 units or more) anywhere."""
    nt = int(rng.integers(33, 300)) if far else int(rng.integers(8, 64))
    na, nr = int(rng.integers(4, 200)), int(rng.integers(1, 3))
    line = 64 if far else 2
    row = -(-2 * nt // line) * line + line * int(rng.integers(0, 3))
    rows = {"t": 2, "a": row * 2, "j": row}
    rows["r"] = rows["a"] * na + line * int(rng.integers(0, 2))
    units = {"j": 2, "a": 4, "r": 4 * na + (8 if rng.random() < 0.3 else 0)}
    units["t"] = 4096 * int(rng.integers(1, 3)) if far else units["r"] * nr + 2 * int(rng.integers(0, 4))
    if units["t"] < units["r"] * nr:  # (the unit rows of one t inside its step)
        units["t"] = -(-units["r"] * nr // 4096) * 4096
    names = ["r", "a", "t", "j"]
    shape = {"r": nr, "a": na, "t": nt, "j": 2}
    return (tuple(shape[k] for k in names), tuple(rows[k] for k in names), tuple(units[k] for k in names))


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("far", [True, False])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_pairs_from_unit_rows(seed: int, far: bool, stream: bool) -> None:
    # dst = src of 2-byte items over the box, from even starts on or off a line; the bytes around it kept
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 4 + 2 * far + stream)
    shape, rows, units = _box(rng, far)
    d_off = 64 * int(rng.integers(0, 3)) + (2 * int(rng.integers(1, 32)) if seed % 3 == 0 else 0)
    s_off = 2 * int(rng.integers(0, 40))
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, units) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, rows, units, d_off, s_off, stream, 0xABCD)


def test_raw_pairs_from_unit_rows_between_unreadable_pages() -> None:
    # the source is exactly the box's bytes (s_off before it), between pages that may not be read
    kernel_or_skip()
    tasks = []
    for seed in range(8):
        rng = np.random.default_rng(2000 + seed)
        shape, rows, units = _box(rng, far=seed % 2 == 0)
        tasks.append((shape, rows, units, 64 * int(rng.integers(0, 2)), 2 * int(rng.integers(0, 8))))
    check_page_edges(tasks, item=2, stream=[bool(seed % 4 < 2) for seed in range(8)])
