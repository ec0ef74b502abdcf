"""The kernel's (2,1) pair transposes in 8 x 8 tiles of units (_kernel_pairs_wide.h) and the
streamed weave into unit rows that run on over G (pairs_lines_to, _kernel_words_pairs.h)
against brute-force references: layouts through the public calls (1 and 3 threads), and
hand-made tasks through the raw entry point in both directions: runs of 8 to 256 items, any
number of rows (past a multiple of 8 and of 4), rows and unit rows any distance apart (4 KiB
multiples among them), at odd 2-byte starts, streamed or not, nothing outside the box written,
and the source read only inside its bytes (between unreadable pages)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import check_layout, check_page_edges, check_raw_task, extent, kernel_or_skip

LAYOUTS = ["bf16[40,6,24]{0,1,2:T(4,128)(2,1)}", "f16[133,10,16]{0,1,2:T(8,128)(2,1)}",
           "s16[3,70,9,8]{1,2,0,3:T(8,128)(2,1)}", "u16[2,131,5,40]{1,2,0,3:T(8,128)(2,1)}",
           "bf16[100,6,64]{0,1,2:T(4,128)(2,1)}"]

Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_wide_pair_transposes_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads, guarded=True)


def _box(rng: np.random.Generator) -> Box:
    """(shape, rows side strides, units side strides) of an (o, a, j, k) box of 2-byte items: rows
    a hold [j][k] (k contiguous, nk a multiple of 8), the units side [a][j] (j contiguous, a 4
    bytes apart), each k its own row of units."""
    nk = 8 * int(rng.integers(1, 33))
    no, na = int(rng.integers(1, 3)), int(rng.integers(1, 90))
    ra = 4 * nk + 2 * int(rng.integers(0, 9)) + (4096 if rng.integers(0, 2) else 0)
    uk = 4 * na + 2 * int(rng.integers(0, 40)) + (4096 * int(rng.integers(1, 3)) if rng.integers(0, 2) else 0)
    rows, units = (ra * na, ra, 2 * nk, 2), (uk * nk, 4, 2, uk)
    return (no, na, 2, nk), rows, units


def _lines_box(rng: np.random.Generator) -> Box:
    """(shape, rows side strides, units side strides) of an (o, g, a, j, k) box whose rows run on
    over G in pieces of 4*nk bytes and whose unit rows of each k run on over G (4*na bytes a g):
    the streamed weave's blocks of all rows x a few g."""
    nk = int(rng.choice([4, 8, 12, 16, 24]))
    piece = 4 * nk
    na = int(rng.integers(4, 8192 // piece + 1))
    ng = int(rng.integers(1, 3 * (8192 // (na * piece)) + 3))
    ra = piece * ng + 2 * int(rng.integers(0, 5))
    uk = 4 * na * ng + 2 * int(rng.integers(0, 9))
    no = int(rng.integers(1, 3))
    rows, units = (ra * na, piece, ra, 2 * nk, 2), (uk * nk, 4 * na, 4, 2, uk)
    return (no, ng, na, 2, nk), rows, units


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("to_units", [True, False])
def test_raw_wide_pair_transposes(seed: int, to_units: bool) -> None:
    # dst = src of 2-byte items over the box, at odd 2-byte starts; the bytes around it keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    shape, rows, units = _box(rng)
    ds, ss = (units, rows) if to_units else (rows, units)
    d_off, s_off = 2 * int(rng.integers(0, 40)) + 2, 2 * int(rng.integers(0, 40)) + 2
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, bool(seed % 2), 0xABCD)


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("to_units", [True, False])
def test_raw_streamed_pair_lines(seed: int, to_units: bool) -> None:
    # the same over a G axis, streamed (the weave's two stages) or not, at any 2-byte start
    kernel = kernel_or_skip()
    rng = np.random.default_rng(100 + seed)
    shape, rows, units = _lines_box(rng)
    ds, ss = (units, rows) if to_units else (rows, units)
    d_off, s_off = 2 * int(rng.integers(0, 40)), 2 * int(rng.integers(0, 40))
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, seed % 4 != 3, 0xABCD)


def test_wide_pairs_read_only_their_bytes() -> None:
    # each kind of box with its source between unreadable pages, streamed and not
    kernel_or_skip()
    rng = np.random.default_rng(7)
    tasks, streams = [], []
    for i in range(12):
        shape, rows, units = _box(rng) if i % 2 else _lines_box(rng)
        ds, ss = (units, rows) if i % 4 < 2 else (rows, units)
        tasks.append((shape, ds, ss, 2 * int(rng.integers(0, 8)), 2 * int(rng.integers(0, 8))))
        streams.append(i % 3 != 2)
    check_page_edges(tasks, item=2, stream=streams)
