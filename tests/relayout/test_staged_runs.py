"""The C kernel's staged short runs (16 to 48-byte runs whose destination is a block of rows
per step of the axis before them and whose source rows run on over it; ``staged runs`` in
``_kernel.c``), on random hand-made tasks against numpy's strided assignment: every item
width, run length, row and step count, outer axes, destination alignment, cached or
streamed; and through zN to its buffer, 1 or N threads, the numpy path identical."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import tensorlayout.relayout._copy as engine
from tensorlayout.cute import tla
from tensorlayout.relayout import as_target, to_physical
from tests.relayout._reference import kernel_or_skip as _kernel

ITEMS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}



def _case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray, int, int]:
    """(dst, src, task, want, lead, size): the task's axes (outer, j, rows, run) with dst
    blocks of rows * run bytes per j (j's blocks a random multiple of that apart) and src
    rows running on over j, dst starting ``lead`` bytes into a line of a larger array."""
    rng = np.random.default_rng(seed)
    item = int(rng.choice(list(ITEMS)))
    dtype = ITEMS[item]
    run = int(rng.choice([16, 32, 48]))
    n = run // item
    no, nj, rows = int(rng.integers(1, 4)), int(rng.integers(2, 20)), int(rng.integers(2, 60))
    block = rows * run
    dj = block * int(rng.integers(1, 3))
    do = dj * nj
    srow = nj * run + int(rng.integers(0, 4)) * item
    so = srow * rows + int(rng.integers(0, 3)) * item
    src = rng.integers(0, 1 << 30, size=(no * so + 64) // item).astype(dtype)
    if rng.integers(2):
        src.flags.writeable = False
    lead = int(rng.integers(0, 64 // item)) * item
    size = do * no
    raw = np.full(lead + size + 128, 7, np.uint8)
    start = -raw.ctypes.data % 64 + lead
    dst = raw[start:start + size].view(dtype)
    task = (0, int(rng.integers(0, 3)) * item, (no, nj, rows, n), (do, dj, run, item), (so, run, srow, item))
    want = dst.copy()
    as_strided(want, task[2], task[3])[...] = as_strided(src[task[1] // item:], task[2], task[4])
    return dst, src, task, want, start, size


@pytest.mark.parametrize("seed", range(150))
@pytest.mark.parametrize("stream", [False, True])
def test_raw_staged_runs_match_numpy(seed: int, stream: bool) -> None:
    kernel = _kernel()
    dst, src, task, want, start, size = _case(seed)
    before = dst.base.base.copy() if dst.base is not None and dst.base.base is not None else None
    kernel.copy(dst, src, [task], stream)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)
    if before is not None:  # the bytes around dst untouched
        raw = dst.base.base
        assert np.array_equal(raw[:start], before[:start])
        assert np.array_equal(raw[start + size:], before[start + size:])


def test_staged_runs_are_bounds_checked() -> None:
    kernel = _kernel()
    dst, src, task, _, _, _ = _case(7)
    longer = (task[0], task[1], (task[2][0], task[2][1] + 1, *task[2][2:]), task[3], task[4])
    for bad in [(task[0] + dst.nbytes, *task[1:]), (task[0], task[1] + src.nbytes, *task[2:]), longer]:
        with pytest.raises(IndexError, match=r"copy: a task leaves the"):
            kernel.copy(dst, src, [bad], True)  # type: ignore[attr-defined]
    (no, nj, rows, _), (do, dj, run, item) = task[2], task[3]
    end = (no - 1) * do + (nj - 1) * dj + rows * run  # the task's last destination byte, + 1
    with pytest.raises(IndexError,
        match=r"copy: a task leaves the destination array"):  # a destination one item too short for the task
        kernel.copy(dst[:end // item - 1], src, [task], True)  # type: ignore[attr-defined]


@pytest.mark.parametrize("rows, cols", [(16, 16), (48, 160), (64, 4096 + 48), (160, 272)])
@pytest.mark.parametrize("layout", ["c", "strided", "unaligned"])
def test_staged_zn_to_physical(rows: int, cols: int, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    target = as_target(tla.make_format("zN", rows, cols, "f16"))
    data = np.random.default_rng(rows + cols).standard_normal((rows, cols)).astype(np.float16)
    if layout == "strided":
        data = np.repeat(data, 2, axis=1)[:, ::2]
    elif layout == "unaligned":
        raw = np.zeros(rows * cols * 2 + 1, np.uint8)  # one byte into it: not item-aligned
        raw[1:] = data.view(np.uint8).ravel()
        data = raw[1:].view(np.float16).reshape(rows, cols)
    outs = [to_physical(data, target, threads=n) for n in (1, 2, 5)]
    monkeypatch.setattr(engine, "USE_KERNEL", False)
    want = to_physical(data, target)
    for out in outs:
        assert np.array_equal(out, want)
