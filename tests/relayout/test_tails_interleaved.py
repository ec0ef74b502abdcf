"""Tails of tasks whose steps interleave (``_tails._interleaved``: a tile row's full tiles in one
task, its ragged last tile in another, each step followed by the next task's): every byte,
padding included, against the brute-force buffer, through the public calls into an ``out`` of
sentinel bytes (the first call, the remembered one, at 1 and 3 threads, and shared among
threads), and the layouts left to the fill (little padding, steps that do not tile)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, prepare, relayout, to_physical
from tensorlayout.relayout._tails import _in_order, _interleaved
from tests.relayout._reference import kernel_or_skip, reference_buffer

SENTINEL = 0xAB

# (source, destination or None: to_physical, numpy dtype, pads): interleaved tails (checked)
CASES = [("f32[5,200]{1,0:T(2,128)}", None, np.float32, (0, -1)),
         ("f32[5,7,200]{2,1,0:T(2,128)}", None, np.int32, (0, 0x05050505)),
         ("f32[5,7,200]{2,1,0:T(2,128)}", "f32[5,7,200]{2,1,0:T(4,128)}", np.uint32, (0, 3)),
         ("f64[5,3,100]{2,0,1:T(2,128)}", "f64[5,3,100]{2,1,0:T(2,128)}", np.int64, (0, -1)),
         ("f64[9,3,40]{2,1,0:T(2,128)}", "f64[9,3,40]{2,0,1:T(2,128)}", np.uint64, (0, 1))]


def _tasks(src: str, dst: str | None, dtype: type) -> tuple[list, int]:
    s = as_target(src)
    if dst is None:
        out = np.empty(s.physical_elements, dtype)
        copy = prepare(s, np.empty(s.logical_shape, dtype), out, True)
        return copy.tasks, out.nbytes
    d = as_target(dst)
    out = np.empty(d.physical_elements, dtype)
    return engine.prepare_direct(s, d, np.empty(s.physical_elements, dtype), out).tasks, out.nbytes


@pytest.mark.parametrize("src, dst, dtype, pads", CASES)
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("shared", [False, True])
def test_interleaved_tails_match_the_reference(monkeypatch: pytest.MonkeyPatch, src: str, dst: str | None,
                                               dtype: type, pads: tuple, threads: int, shared: bool) -> None:
    kernel_or_skip()
    if shared:  # (copies from 1 KiB on shared among threads: _shared_tails)
        monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1024)
    tasks, nbytes = _tasks(src, dst, dtype)
    item = np.dtype(dtype).itemsize
    assert _in_order(tasks, nbytes, item) is None and _interleaved(tasks, nbytes, item) is not None
    s = as_target(src)
    data = np.random.default_rng(len(src)).integers(1, 100, s.logical_shape).astype(dtype)
    text = src if dst is None else dst
    out = np.empty(as_target(text).physical_elements, dtype)
    buf = to_physical(data, s)
    for pad in pads:
        want = reference_buffer(data, text, pad).view(np.uint8)
        for _ in range(3):  # the first call, then the remembered one, into the sentinel each time
            out.view(np.uint8)[...] = SENTINEL
            if dst is None:
                got = to_physical(data, s, pad, out=out, threads=threads)
            else:
                got = relayout(buf, s, as_target(dst), pad, out=out, threads=threads)
            assert got is out and np.array_equal(out.view(np.uint8), want)


def test_little_padding_is_filled_first() -> None:
    # 1% padding: the tails would save little and cost a loop per step
    kernel_or_skip()
    tasks, nbytes = _tasks("u32[2157,219]{0,1:T(8,128)}", "u32[2157,219]{0,1:T(2,128)}", np.uint32)
    assert _interleaved(tasks, nbytes, 4) is None


def test_steps_that_overlap_or_leave_gaps_are_not_tailed() -> None:
    full = (0, 0, (4, 512), (1024, 1), (812, 1), False, 0)
    rest = (512, 512, (4, 300), (1024, 1), (812, 1), False, 0)
    assert [t[7] for t in _interleaved([full, rest], 4096, 1) or []] == [(0, 0, 0), (300, 212, 0)]
    assert _interleaved([full, (500, 512, (4, 300), (1024, 1), (812, 1), False, 0)], 4096, 1) is None
    assert _interleaved([full, rest], 4095, 1) is None  # (the last tail would leave the buffer)
    odd = (512, 512, (4, 300), (1000, 1), (812, 1), False, 0)  # unequal gaps behind its steps
    assert _interleaved([full, odd], 4096, 1) is None
    assert _interleaved([rest], 4096, 1) is None  # (nothing at byte 0)
