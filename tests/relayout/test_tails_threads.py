"""Tails on copies too large for one kernel call (``_copy._shared_tails``): each thread's
pieces write the padding behind their steps, no fill first. The thresholds are lowered so that
small layouts take that path (checked: the path ran); every byte, padding included, against the
brute-force buffer, into an ``out`` of sentinel bytes, at 1 and 3 threads; streamed copies
tail only behind their tasks' first axes; pad values of more than one byte fill first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, relayout, to_physical
from tests.relayout._reference import kernel_or_skip, reference_buffer

SENTINEL = 0xAB

# (source, destination or None: to_physical, numpy dtype, pads): tailed layouts, one-pass ones too
CASES = [("u8[4,3000]{1,0:T(8,128)(4,1)}", None, np.uint8, (0, 7)),
         ("s32[16,64,64]{2,0,1:T(2,128)}", None, np.int32, (0, -1)),
         ("f64[4,6,40]{2,0,1:T(2,128)}", None, np.float64, (0,)),
         ("bf16[64,4,4,4]{0,3,1,2:T(4,128)(2,1)}", "bf16[64,4,4,4]{0,3,1,2:T(4,128)(2,1)}", np.uint16,
          (0, 0x0101)),
         ("f32[4,64,128]{2,0,1:T(2,128)}", "f32[4,64,128]{2,0,1:T(8,128)}", np.float32, (0,))]


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Copies from 1 KiB on shared among threads; the results of ``_shared_tails``, in turn."""
    kernel_or_skip()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1024)
    monkeypatch.setattr(engine, "ONE_THREAD_SMALL_BYTES", 1024)  # (threads=1 too: not one small call)
    ran: list[bool] = []
    real: Callable[..., bool] = engine._shared_tails

    def spy(*args: Any) -> bool:
        ran.append(real(*args))
        return ran[-1]
    monkeypatch.setattr(engine, "_shared_tails", spy)
    return ran


def _call(src: str, dst: str | None, dtype: type) -> tuple[Callable[..., np.ndarray], np.ndarray, str]:
    s = as_target(src)
    data = np.random.default_rng(len(src)).integers(1, 100, s.logical_shape).astype(dtype)
    if dst is None:
        return (lambda pad, out, threads: to_physical(data, s, pad, out=out, threads=threads)), data, src
    d, buf = as_target(dst), to_physical(data, s)
    return (lambda pad, out, threads: relayout(buf, s, d, pad, out=out, threads=threads)), data, dst


@pytest.mark.parametrize("src, dst, dtype, pads", CASES)
@pytest.mark.parametrize("threads", [1, 3])
def test_shared_copies_write_their_tails(shared: list[bool], src: str, dst: str | None, dtype: type,
                                         pads: tuple, threads: int) -> None:
    call, data, text = _call(src, dst, dtype)
    out = np.empty(as_target(text).physical_elements, dtype)
    for pad in pads:
        want = reference_buffer(data, text, pad).view(np.uint8)
        for _ in range(2):
            out.view(np.uint8)[...] = SENTINEL
            shared.clear()
            assert call(pad, out, threads) is out
            assert shared == [True]  # (the tailed path ran, and wrote it all)
            assert np.array_equal(out.view(np.uint8), want)


@pytest.mark.parametrize("case, tailed", [(0, True), (3, True), (1, False), (2, False)])
def test_streamed_copies_tail_only_behind_first_axes(shared: list[bool], monkeypatch: pytest.MonkeyPatch,
                                                     case: int, tailed: bool) -> None:
    """Streamed (past the caches): tails behind each step of a task's first axis are written as
    the copy goes (u8[4,3000]: a weave's tile rows; bf16 to itself: runs); tails behind a later
    axis (the transposes of s32[16,64,64] and f64[4,6,40]) fill first (``first_axis_tails``)."""
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1024)
    src, dst, dtype, _ = CASES[case]
    call, data, text = _call(src, dst, dtype)
    out = np.empty(as_target(text).physical_elements, dtype)
    for threads in (1, 3):
        out.view(np.uint8)[...] = SENTINEL
        shared.clear()
        call(0, out, threads)
        assert shared == [tailed]
        assert np.array_equal(out.view(np.uint8), reference_buffer(data, text, 0).view(np.uint8))


def test_wide_pads_and_streamed_tails_off_fill_first(shared: list[bool],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    call, data, text = _call(*CASES[3][:3])
    out = np.empty(as_target(text).physical_elements, np.uint16)
    for pad, stream in ((0x3F80, False), (0, True)):
        monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1024 if stream else 1 << 24)
        monkeypatch.setattr(engine, "STREAMED_TAILS", not stream)
        out.view(np.uint8)[...] = SENTINEL
        shared.clear()
        call(pad, out, 3)
        assert shared == [False]
        assert np.array_equal(out.view(np.uint8), reference_buffer(data, text, pad).view(np.uint8))


def test_switched_off_they_fill_first(shared: list[bool], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "SHARED_TAILS", False)
    call, data, text = _call(*CASES[1][:3])
    out = np.full(as_target(text).physical_elements, -7, np.int32)
    call(5, out, 3)
    assert shared == [False] and np.array_equal(out, reference_buffer(data, text, 5))
