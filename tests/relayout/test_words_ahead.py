"""Three of the kernel's transposes of 4-byte items that read far source rows: the narrow
transposes into destination rows that run on over g in 1, 2 or 4 items (transpose_narrow's
narrow_dst_tiles, _kernel_strips.h), whose source g lie far apart (a column-major T(1,128),
T(2,128) or T(4,128) tiling's tile rows), the staged transposes into destination rows a
multiple of 4 KiB apart (tile_rect_staged, _kernel_tiles.h) whose rows span 4 MiB or more
(their lines streamed out), and the blocked transposes from source rows 2 KiB or more apart
(tile_rect: their lines fetched a few blocks ahead, not past the rows' ends: fetch_next_block,
_kernel_ahead.h). Hand-made tasks against numpy's strided assignment (rows off their lines
and off whole tiles, g past whole groups, the bytes around the task kept), the narrow and
blocked ones again with their source between unreadable pages, and layouts through the public
calls against the offsets' definition, into guarded outputs, on one thread and the default."""

from __future__ import annotations

import numpy as np
import pytest

from tests.relayout._reference import check_layout, check_page_edges, kernel_or_skip, random_box_task

IT = 4


def _narrow_task(seed: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, ds, ss) of ng transposes of na x nb items: the destination's rows nb = 1, 2 or 4
    items a g, run on over g (dg = nb items), da anywhere past a row; the source's g 2 KiB or
    more apart (sg), its nb rows sb apart inside a g."""
    rng = np.random.default_rng(seed)
    nb = int(rng.choice([1, 2, 4]))
    ng = int(rng.choice([2, 5, 8, 9, 16, 17, 33, int(rng.integers(2, 60))]))
    na = int(rng.choice([8, 16, 24, 31, 64, 127, 128, 129, int(rng.integers(8, 200))]))
    da = ng * nb * IT + IT * int(rng.integers(0, 40))  # rows off their lines, mostly
    sb = na * IT + IT * int(rng.integers(0, 3))
    sg = max(nb * sb, 2048) + 64 * int(rng.integers(0, 40)) + IT * int(rng.integers(0, 3))
    return (ng, na, nb), (nb * IT, da, IT), (sg, IT, sb)


@pytest.mark.parametrize("seed", range(60))
def test_narrow_transposes_from_far_g_match_strided_assignment(seed: int) -> None:
    kernel = kernel_or_skip()
    shape, ds, ss = _narrow_task(seed)
    dst, src, task, want = random_box_task(np.random.default_rng(seed), IT, shape, ds, ss)
    kernel.copy(dst, src, [task], False, 1)
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


def test_narrow_transposes_from_far_g_read_only_their_source() -> None:
    kernel_or_skip()
    tasks = []
    for seed in range(6):
        shape, ds, ss = _narrow_task(100 + seed)
        tasks.append((shape, ds, ss, 0, 0))
    check_page_edges(tasks, item=IT)


def _staged_task(seed: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, ds, ss) of ng transposes of na x nb items into destination rows 4 KiB or a
    multiple apart that run on over g (dg = nb items) and span 4 MiB or more (na * da); the
    source's g blocks of nb rows sb apart, one after another (sg = nb * sb)."""
    rng = np.random.default_rng(seed)
    nb = int(rng.choice([32, 40, 64, 100, 128]))
    ng = int(rng.choice([1, 2, 3, 8]))
    da = -(-(ng * nb * IT) // 4096) * 4096 * int(rng.choice([1, 1, 2]))
    na = -(-(4 << 20) // da) + int(rng.choice([0, 1, 7, 17]))
    sb = na * IT + IT * int(rng.integers(0, 3))
    return (ng, na, nb), (nb * IT, da, IT), (nb * sb, IT, sb)


@pytest.mark.parametrize("seed", range(12))
def test_staged_transposes_over_far_rows_match_strided_assignment(seed: int) -> None:
    kernel = kernel_or_skip()
    shape, ds, ss = _staged_task(seed)
    dst, src, task, want = random_box_task(np.random.default_rng(seed), IT, shape, ds, ss)
    kernel.copy(dst, src, [task], False, 1)
    assert np.array_equal(dst, want)


def _blocked_task(seed: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, ds, ss) of one transpose of na x nb items from source rows 2 KiB or more apart
    (sb), its rows na items long (around the blocks and the distance fetched ahead)."""
    rng = np.random.default_rng(seed)
    na = int(rng.choice([32, 47, 64, 129, 144, 150, 200, 300, int(rng.integers(32, 700))]))
    nb = int(rng.choice([32, 33, 40, 64, 70, int(rng.integers(32, 100))]))
    sb = max(na * IT, 2048) + IT * int(rng.integers(0, 200))
    da = nb * IT + IT * int(rng.integers(0, 5))
    return (na, nb), (da, IT), (IT, sb)


@pytest.mark.parametrize("seed", range(40))
def test_blocked_transposes_from_far_rows_match_strided_assignment(seed: int) -> None:
    kernel = kernel_or_skip()
    shape, ds, ss = _blocked_task(seed)
    dst, src, task, want = random_box_task(np.random.default_rng(seed), IT, shape, ds, ss)
    kernel.copy(dst, src, [task], False, 1)
    assert np.array_equal(dst, want)


def test_blocked_transposes_from_far_rows_read_only_their_source() -> None:
    kernel_or_skip()
    check_page_edges([(*_blocked_task(200 + seed), 0, 0) for seed in range(6)], item=IT)


@pytest.mark.parametrize("text", [
    "f32[700,53]{0,1:T(2,128)}", "s32[1000,37]{0,1:T(4,128)}", "u32[517,66]{0,1:T(1,128)}",
    "f32[64,256,32]{1,2,0:T(4,128)}", "f32[300,9,41]{0,2,1:T(2,128)}",
    "f32[8,32,128,40]{2,0,1,3:T(8,128)}", "s32[3,64,128,33]{2,0,1,3:T(8,128)}",
    "u32[118,2000]{0,1:T(2,128)}", "f32[2,5,94,925]{2,3,0,1:T(1,128)}", "f32[4,21,700]{1,0,2:T(1,128)}",
])
@pytest.mark.parametrize("threads", [1, None])
def test_layouts_match_the_offsets(text: str, threads: int | None) -> None:
    kernel_or_skip()
    check_layout(text, threads, guarded=True)
