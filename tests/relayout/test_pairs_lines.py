"""The staged transposes of (2,1) pairs against short rows (``pairs_box``, _kernel_words_pairs.h)
whose blocks start at line boundaries: the rows side's rows a multiple of a line apart, the
box starting at every 2-byte offset into a line (so that the first block of G, or of A, is
cut short to reach one, where it can, or not), streamed and not, against numpy's strided
assignment (nothing outside the box written), and with the source between unreadable pages."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import PageTask, check_page_edges, check_raw_task, extent, kernel_or_skip

Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _box(rng: np.random.Generator) -> Box:
    """(shape, rows side strides, units side strides) of an (o, g, a, j, k) box of 2-byte items
    whose rows (a line multiple apart) run on over g: row a holds [g][j][k] (k contiguous, g a
    piece of 4 * nk bytes on); the units side [g][a][j] (j contiguous, a 4 bytes apart, g a line
    multiple on, or not), each k a row of units uk apart."""
    nk = int(rng.choice([4, 8, 16, 32, 64]))
    piece = 4 * nk
    no, na = int(rng.integers(1, 3)), int(rng.integers(4, 200))
    ng = int(rng.integers(1, 3 * 256 // piece + 3))
    ra = -(-piece * ng // 64) * 64 + 64 * int(rng.integers(0, 3))
    ug = -(-4 * na // 64) * 64 + (2 * int(rng.integers(0, 3)) if rng.random() < 0.3 else 0)
    uk = ug * ng + 64 * int(rng.integers(0, 2))
    rows = (ra * na, piece, ra, 2 * nk, 2)
    units = (uk * nk, ug, 4, 2, uk)
    return (no, ng, na, 2, nk), rows, units


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("to_units", [True, False])
def test_raw_line_blocks(seed: int, to_units: bool) -> None:
    # dst = src of 2-byte items over the box, from and to every 2-byte offset into a line, streamed
    # or not; the bytes around it keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    shape, rows, units = _box(rng)
    ds, ss = (units, rows) if to_units else (rows, units)
    base = 64 - 16  # (numpy's arrays start 16 bytes past a line here: offsets reach every 2 bytes of one)
    d_off, s_off = 2 * int(rng.integers(0, 64)) + base, 2 * int(rng.integers(0, 64)) + base
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, bool(seed % 2), 0xABCD)


def test_raw_line_blocks_between_unreadable_pages() -> None:
    # the same boxes with the source's bytes between pages that may not be read
    kernel_or_skip()
    tasks: list[PageTask] = []
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        shape, rows, units = _box(rng)
        ds, ss = (units, rows) if seed % 2 else (rows, units)
        tasks.append((shape, ds, ss, 2 * int(rng.integers(0, 32)), 2 * int(rng.integers(0, 32))))
    check_page_edges(tasks, item=2, stream=[bool(seed % 3) for seed in range(12)])


@pytest.mark.parametrize("seed", range(4))
def test_raw_streamed_pair_weaves(seed: int) -> None:
    # dst[g, k, b] = src[g, b, k] of 2-byte items: two rows woven into pairs, over 6 MiB or more of
    # destination (stored non-temporally from its first line: _kernel_loops.h), at 2-byte starts
    # (pairs off a 4-byte boundary among them) and row lengths past whole vectors; the bytes
    # between and around the tile rows keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    n = int(rng.integers(16, 1100))
    db = 4 * n + 2 * int(rng.integers(0, 40))
    ng = (6 << 20) // db + int(rng.integers(1, 40))
    sb = 2 * n + 2 * int(rng.integers(0, 4))
    shape, ds, ss = (ng, n, 2), (db, 4, 2), (2 * sb, 2, sb)
    d_off, s_off = 2 * int(rng.integers(0, 32)), 2 * int(rng.integers(0, 32))
    src = rng.integers(0, 1 << 16, (s_off + extent(shape, ss) + 64) // 2).astype(np.uint16)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xABCD)
