"""The C kernel's streamed transposes in big blocks whose rows on both sides run on over an axis
of their own (``big_plan`` in ``_kernel_big.h``): the x rows (the source's columns, the
destination's rows) over one axis, the y rows (the source's rows, the destination's columns,
which run on over it) over another, the other axes looped over. On random hand-made tasks
against numpy's strided assignment: 4- and 8-byte items, the source's columns contiguous across
their axis or in pieces (a T(2,128) tile's two rows of 512 bytes, the next tile 1 KiB on), the
destination's rows off their cache lines, sizes off the block and the tile, starts off the item
boundary, an outer axis or none; the bytes outside the task stay as they were, and no byte
outside the source is read. And through layouts whose streamed copies take those blocks, on
one thread and several, the padding included."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, relayout, to_physical
from tests.relayout._reference import check_page_edges, random_box_task, reference_buffer
from tests.relayout._reference import kernel_or_skip as _kernel

Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # shape, dst strides, src strides


def _box(rng: np.random.Generator, it: int, pieces: bool, outer: bool) -> Box:
    """A transpose (o?, xa, ya, a, b): a contiguous in the source, b in the destination; the
    destination's columns run on over ya (pieces of nb items), its rows over xa; the source's
    columns over xa too where not ``pieces`` (else in pieces of na items, each a tile's row of
    ``nb`` rows); o an outer axis where ``outer``."""
    na = int(rng.choice([8, 16, 33, 128, 130]))
    nb = int(rng.choice([1, 2, 3, 4, 8]))
    nxa, nya = int(rng.integers(2, 7)), int(rng.integers(2, 300))
    sb = na * it + int(rng.integers(0, 2)) * it  # the source's rows (a tile's) this far apart
    sx = nb * sb + int(rng.integers(0, 3)) * it if pieces else na * it  # the source's next columns
    sy = (nxa * sx if pieces else nb * sb) + int(rng.integers(0, 3)) * it  # the source's next rows
    da = nya * nb * it + int(rng.integers(0, 5)) * it  # the destination's rows: off their lines
    shape: tuple[int, ...] = (nxa, nya, na, nb)
    ds: tuple[int, ...] = (na * da, nb * it, da, it)
    ss: tuple[int, ...] = (sx, sy, it, sb)
    if outer:
        no = int(rng.integers(2, 4))
        shape, ds, ss = (no, *shape), (nxa * na * da, *ds), (nya * sy, *ss)
    return shape, ds, ss


def _case(seed: int, pieces: bool, outer: bool) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): a random such transpose at random byte offsets, the rest of both
    arrays random."""
    rng = np.random.default_rng(seed)
    it = int(rng.choice([4, 8]))
    shape, ds, ss = _box(rng, it, pieces, outer)
    return random_box_task(rng, it, shape, ds, ss)


@pytest.mark.parametrize("outer", [False, True])
@pytest.mark.parametrize("pieces", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_transposes_across_two_axes_match_strided_assignment(seed: int, pieces: bool, outer: bool) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed, pieces, outer)
    kernel.copy(dst, src, [task], True, 1)
    assert np.array_equal(dst, want)  # (the bytes outside the task too)
    cached = want.copy()  # not streamed: the loops as they were, the same bytes
    kernel.copy(cached, src, [task], False, 1)
    assert np.array_equal(cached, want)


@pytest.mark.parametrize("it", [4, 8])
def test_transposes_across_two_axes_read_only_their_source(it: int) -> None:
    _kernel()
    tasks = []
    for seed, pieces in ((1, True), (2, False), (3, True)):
        shape, ds, ss = _box(np.random.default_rng(seed), it, pieces, seed == 3)
        tasks.append((shape, ds, ss, 0, 0))
    check_page_edges(tasks, item=it, stream=True)


@pytest.mark.parametrize("threads", [1, 2])
def test_streamed_relayout_across_two_axes_matches_the_offsets(monkeypatch: pytest.MonkeyPatch,
                                                               threads: int) -> None:
    _kernel()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 0)
    src, dst = "s32[300,261]{0,1:T(2,128)}", "s32[300,261]{1,0:T(8,128)}"
    data = np.random.default_rng(7).integers(-999, 999, (300, 261)).astype(np.int32)
    got = relayout(reference_buffer(data, src, 3), as_target(src), as_target(dst), threads=threads)
    assert np.array_equal(got[: as_target(dst).physical_elements], to_physical(data, as_target(dst)))
