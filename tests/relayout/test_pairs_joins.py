"""2-byte layouts' one-call to_physical tasks joined where one goes on from another along an axis
(a box of whole (2,1) tiles and its ragged last tile column in one pass:
``_kernel_path.joined_tasks``, now for 2-byte items too); the 2-byte pair weaves' last round of
16 overlapping the one before it
(``_kernel_loops.h``: rows of n pairs, n not a multiple of 16); and streamed transposes in big
blocks whose destination rows go whole (``_kernel_big.h``'s BIG_WHOLE: rows a little past
BIG_COLS bytes). Every byte against the definition or numpy's strided assignment, guard bytes
behind, 1 and default threads; the joined tasks as raw tasks between unreadable pages."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import tensorlayout.relayout._kernel_path as kp
from tensorlayout.relayout import as_target
from tensorlayout.relayout._copy import _extended, copy_plan
from tests.relayout._reference import check_layout, check_page_edges, extent, kernel_or_skip

LAYOUTS = ["f16[4445,207]{1,0:T(2,128)(2,1)}", "bf16[61,301]{1,0:T(2,128)(2,1)}",
           "s16[37,5,150]{2,1,0:T(4,128)(2,1)}", "u16[242,305]{0,1:T(2,128)(2,1)}",
           "f16[33,131]{0,1:T(8,128)(2,1)}", "bf16[9,7,259]{2,0,1:T(2,128)(2,1)}"]


def _tasks(text: str, to: bool, pieces: int) -> list:
    t = as_target(text)
    data, buf = np.zeros(t.logical_shape, np.uint16), np.zeros(t.physical_elements, np.uint16)
    return kp.kernel_tasks(copy_plan(t), t, _extended(data, t), buf, to, pieces)


def _plain(text: str, to: bool, pieces: int) -> list:
    t = as_target(text)
    data, buf = np.zeros(t.logical_shape, np.uint16), np.zeros(t.physical_elements, np.uint16)
    lg = _extended(data, t)
    return kp.pair_tasks([kp.box_views(b, lg, buf) for b in copy_plan(t).data], lg, buf, to, pieces)


def test_a_ragged_tile_column_of_pairs_joins_its_box() -> None:
    joined, plain = _tasks(LAYOUTS[0], True, 1), _plain(LAYOUTS[0], True, 1)
    assert len(joined) < len(plain)
    assert any(207 in task[2] for task in joined)  # (128 + 79 pairs of each row in one task)
    assert _tasks(LAYOUTS[0], True, 4) == _plain(LAYOUTS[0], True, 4)  # (pieces for threads stay apart)
    assert _tasks(LAYOUTS[0], False, 1) == _plain(LAYOUTS[0], False, 1)  # (from_physical: apart)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_joined_pair_layouts_through_the_public_calls(text: str, threads: int | None) -> None:
    kernel_or_skip()
    check_layout(text, threads, guarded=True)


@pytest.mark.parametrize("to", [True, False])
def test_joined_pair_tasks_read_no_byte_outside(to: bool) -> None:
    kernel_or_skip()
    tasks: dict[int, list] = {}
    for text in LAYOUTS[:4]:
        for _, _, shape, ds, ss, *rest in _tasks(text, to, 1):
            if all(s > 0 for s in ds + ss):
                tasks.setdefault(rest[1] if len(rest) > 1 else 0, []).append((shape, ds, ss, 2, 0))
    for wide, some in tasks.items():
        check_page_edges(some, item=wide or 2, wide=wide)


@pytest.mark.parametrize("stream", [False, True])
def test_pair_weaves_of_every_row_length(stream: bool) -> None:
    """Rows of n pairs woven from two rows (sb items apart) and back, n from 1 to 70 and a few
    past, the woven side at a start 2 bytes off a 4-byte boundary too; every item around the
    box kept."""
    kernel = kernel_or_skip()
    rng = np.random.default_rng(5)
    for n in [*range(1, 71), 127, 128, 129, 207, 255] if not stream else [3, 16, 17, 31, 33, 79, 207]:
        rows = 3 if not stream else (7 << 20) // (4 * n) + 1  # (streamed: a span past 6 MiB)
        for off in (0, 1):
            sb = n + int(rng.integers(0, 3))
            rows_side = rng.integers(0, 1 << 16, 2 * rows * sb + 9).astype(np.uint16)
            units = rng.integers(0, 1 << 16, off + 2 * rows * n + 9).astype(np.uint16)
            shape, us, rs = (rows, n, 2), (4 * n, 4, 2), (4 * sb, 2, 2 * sb)
            for to in (True, False):
                dst, src = (units, rows_side) if to else (rows_side, units)
                d_off, ds, ss = (2 * off, us, rs) if to else (0, rs, us)
                s_off = 0 if to else 2 * off
                want = dst.copy()
                as_strided(want[d_off // 2:], shape, ds)[...] = as_strided(src[s_off // 2:], shape, ss)
                kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], stream, 1)
                assert np.array_equal(dst, want), (n, off, stream, to)


Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # shape, dst strides, src strides


def _whole_rows_case(seed: int) -> tuple[Box, int]:
    """(shape, dst strides, src strides), bytes, and the item: a streamed transpose (a, b) of
    2-byte items or pairs (a (2,1) tile's) from source rows 64 KiB or more apart (big blocks)
    into destination rows off their lines of more than BIG_COLS (2048) bytes, at most 4096
    and 1024 items."""
    rng = np.random.default_rng(seed)
    it = int(rng.choice([2, 4]))
    nb = int(rng.integers(513, 1025))  # (past the 512 rows of a block)
    na = int(rng.choice([8, 17, 70, 131]))
    sb = 65536 + int(rng.integers(0, 3)) * 2
    da = nb * it + int(rng.integers(1, 3)) * 2  # (rows off their lines: the whole rows' rule)
    da += 2 if da % 64 == 0 else 0
    return ((na, nb), (da, it), (it, sb)), it


@pytest.mark.parametrize("seed", range(8))
def test_big_blocks_of_whole_destination_rows(seed: int) -> None:
    kernel = kernel_or_skip()
    (shape, ds, ss), it = _whole_rows_case(seed)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 1 << 16, (extent(shape, ss) + it) // 2 + 3).astype(np.uint16)
    dst = rng.integers(0, 1 << 16, (extent(shape, ds) + it) // 2 + 5).astype(np.uint16)
    want = dst.copy()
    moved = np.dtype((np.void, it))
    w, v = want.view(np.uint8), src.view(np.uint8)
    as_strided(w[2:2 + it].view(moved), shape, ds)[...] = as_strided(v[2:2 + it].view(moved), shape, ss)
    kernel.copy(dst, src, [(2, 2, shape, ds, ss, False, it if it > 2 else 0)], True, 1)
    assert np.array_equal(dst, want)


def test_big_blocks_of_whole_rows_read_no_byte_outside() -> None:
    kernel_or_skip()
    for seed in (0, 1, 2, 3):
        (shape, ds, ss), it = _whole_rows_case(seed)
        check_page_edges([(shape, ds, ss, 2, 0)], item=it, wide=it if it > 2 else 0, stream=True)
