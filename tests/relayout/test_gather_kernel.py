"""The C kernel's gathered copies (destination rows that run on over an outer axis in short
pieces, staged and written out in whole lines; ``gather`` in ``_kernel.c``), on random
hand-made tasks against numpy's strided assignment: every item width, piece length, row
count and destination alignment, the inner axes in any order, cached or streamed; and
through the layouts that take that path (transposing tiles, zN), 1 or N threads."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import tensorlayout.relayout._copy as engine
from tensorlayout.cute import tla
from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import kernel_or_skip as _kernel

ITEMS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}



def _case(seed: int, far: bool = False) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): dst[r1, r2, g*m + e] = src[some order of (g, r1, r2, e)], the
    task's axes (g, then r1, r2, e in a random order), dst starting anywhere in a line; `far`:
    rows a multiple of 2 KiB apart (copies in cache gathered where they transpose)."""
    rng = np.random.default_rng(seed)
    item = int(rng.choice(list(ITEMS)))
    dtype = ITEMS[item]
    m = int(rng.choice([1, 2, 3, 4, 8, 16, 24, 64]))
    ng, r1, r2 = int(rng.integers(1, 40)), int(rng.integers(1, 5)), int(rng.integers(1, 70))
    row = ng * m * item
    pitch = -(-(row + int(rng.integers(0, 200))) // 64) * 64  # rows 64-byte multiples apart
    if far:
        pitch = -(-pitch // 2048) * 2048
    lead = int(rng.integers(0, 64 // item)) * item
    raw = np.zeros(lead + pitch * r1 * r2 + 64, np.uint8)
    start = -raw.ctypes.data % 64 + lead
    dst = raw[start:start + pitch * r1 * r2].view(dtype)
    order = rng.permutation(4)  # the source's memory order of (g, r1, r2, e)
    dims = (ng, r1, r2, m)
    src = rng.integers(0, 1 << 30, size=[dims[k] for k in order]).astype(dtype)
    src_axes = {int(k): src.strides[i] for i, k in enumerate(order)}
    inner = list(rng.permutation([1, 2, 3]))
    axes = [0, *inner]
    d_st = {0: m * item, 1: pitch * r2, 2: pitch, 3: item}
    task = (0, 0, tuple(dims[k] for k in axes), tuple(d_st[k] for k in axes),
            tuple(src_axes[k] for k in axes))
    want = dst.copy()
    view = as_strided(want, task[2], task[3])
    view[...] = as_strided(src, task[2], task[4])
    return dst, src, task, want


@pytest.mark.parametrize("seed", range(120))
@pytest.mark.parametrize("stream", [False, True])
def test_raw_gathered_copies_match_numpy(seed: int, stream: bool) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed)
    kernel.copy(dst, src, [task], stream)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("seed", range(60))
def test_raw_copies_in_cache_of_rows_2k_apart_match_numpy(seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(1000 + seed, far=True)
    kernel.copy(dst, src, [task], False)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("stream, pitch", [(True, 512), (False, 2048)])  # large, or rows sharing sets
def test_raw_gathered_copy_leaves_other_bytes(stream: bool, pitch: int) -> None:
    # a destination row's bytes before and after its pieces are not the task's: kept
    kernel = _kernel()
    ng, m, rows = 9, 8, 70
    raw = np.full(pitch * rows // 4 + 16, 7, np.uint32)
    dst = raw[3:3 + pitch * rows // 4]
    src = np.arange(ng * rows * m, dtype=np.uint32).reshape(ng, m, rows)  # transposing
    task = (20, 0, (ng, rows, m), (m * 4, pitch, 4), (m * rows * 4, 4, rows * 4))
    kernel.copy(dst, src, [task], stream)  # type: ignore[attr-defined]
    want = np.full(pitch * rows // 4, 7, np.uint32)
    as_strided(want[5:], task[2], task[3])[...] = src.transpose(0, 2, 1)
    assert np.array_equal(dst, want)
    assert (raw[:3] == 7).all() and (raw[3 + pitch * rows // 4:] == 7).all()


@pytest.mark.parametrize("text", ["f32[300,1030]{0,1:T(8,128)}", "u8[77,520]{0,1:T(8,128)}",
                                  "bf16[20,9,700]{0,2,1:T(8,128)}", "f32[130,64,24]{0,2,1:T(8,128)}"])
def test_gathered_layouts_one_or_many_threads(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    target = as_target(text)
    dtype = {"f32": np.float32, "u8": np.uint8, "bf16": np.uint16}[text.split("[")[0]]
    data = np.random.default_rng(3).integers(0, 200, target.logical_shape).astype(dtype)
    buf = to_physical(data, target)
    outs = [from_physical(buf, target, threads=n) for n in (1, 2, 5)]
    for out in outs:
        assert np.array_equal(out, data)
    monkeypatch.setattr(engine, "USE_KERNEL", False)
    assert np.array_equal(from_physical(buf, target), data)


@pytest.mark.parametrize("rows, cols", [(16, 16), (48, 160), (4096 // 8, 272)])
@pytest.mark.parametrize("unaligned", [False, True])
def test_gathered_zn(rows: int, cols: int, unaligned: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    target = as_target(tla.make_format("zN", rows, cols, "f16"))
    data = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float16)
    buf = to_physical(data, target)
    out = np.empty((rows, cols), np.float16)
    if unaligned:  # starting mid-line (by one item)
        out = np.zeros(rows * cols + 1, np.float16)[1:].reshape(rows, cols)
    for threads in (1, 3):
        out[...] = 0
        assert np.array_equal(from_physical(buf, target, out=out, threads=threads), data)


def test_gathered_tasks_are_bounds_checked() -> None:
    kernel = _kernel()
    dst, src, task, _ = _case(5)
    for bad in [(task[0] + (1 << 20), *task[1:]), (task[0], task[1] + (1 << 20), *task[2:])]:
        with pytest.raises(IndexError, match=r"copy: a task leaves the"):
            kernel.copy(dst, src, [bad], True)  # type: ignore[attr-defined]
