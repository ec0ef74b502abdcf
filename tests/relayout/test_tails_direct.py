"""Tails in one-pass relayouts (``PreparedDirect.tailed``) and tailed steps that are one run
contiguous on both sides (``copy_run_tails`` in ``_kernel_tasks.h``): every byte of the
destination, padding included, against the brute-force buffer, through the public calls (the
first call, then the remembered one) into an ``out`` whose bytes are a non-zero sentinel
beforehand, so a pad byte the tails miss is caught; hand-made run tasks through the raw entry
point at random offsets with guard bytes around them; and tails that would leave the
destination refused."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, relayout, to_physical
from tensorlayout.relayout._tails import Tails
from tests.relayout._reference import kernel_or_skip, reference_buffer

SENTINEL = 0xAB

# (source, destination, numpy dtype, pad values): one-pass relayouts whose tasks are tailed
# (checked): runs of data then padding, ragged and not, 1-, 2- and 4-byte items
TAILED = [("bf16[64,4,4,4]{0,3,1,2:T(4,128)(2,1)}", "bf16[64,4,4,4]{0,3,1,2:T(4,128)(2,1)}", np.uint16,
           (0, 0x0101, 0x3F80)),
          ("s16[64,3,5,4]{0,3,1,2:T(4,128)(2,1)}", "s16[64,3,5,4]{0,3,1,2:T(4,128)(2,1)}", np.int16, (0, -1)),
          ("f64[4,64,48]{2,0,1:T(2,128)}", "f64[4,64,48]{2,0,1:T(2,128)}", np.float64, (0, -1, 1)),
          ("f32[4,64,128]{2,0,1:T(2,128)}", "f32[4,64,128]{2,0,1:T(8,128)}", np.float32, (0, 2))]


def _data(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(1, 100, shape).astype(dtype)


@pytest.mark.parametrize("src, dst, dtype, pads", TAILED)
@pytest.mark.parametrize("threads", [1, 3])
def test_tailed_one_pass_relayouts_match_the_reference(src: str, dst: str, dtype: type, pads: tuple,
                                                       threads: int) -> None:
    kernel_or_skip()
    s, d = as_target(src), as_target(dst)
    data = _data(s.logical_shape, dtype, len(src))
    buf = to_physical(data, s)
    out = np.empty(d.physical_elements, dtype)
    assert engine.prepare_direct(s, d, buf, out).tailed is not None
    for pad in pads:
        want = reference_buffer(data, dst, pad).view(np.uint8)
        for _ in range(3):  # the first call, then the remembered one, into the sentinel each time
            out.view(np.uint8)[...] = SENTINEL
            got = relayout(buf, s, d, pad, out=out, threads=threads)
            assert got is out and np.array_equal(out.view(np.uint8), want)
        assert np.array_equal(relayout(buf, s, d, pad, threads=threads).view(np.uint8), want)  # (new buffer)


@pytest.mark.parametrize("src, dst, dtype, pads", TAILED[:1])
def test_prepared_direct_run_with_tails_at_any_pad(src: str, dst: str, dtype: type, pads: tuple) -> None:
    # the Python path (PreparedDirect.run): pads of one repeated byte tailed, others filled first
    kernel_or_skip()
    s, d = as_target(src), as_target(dst)
    data = _data(s.logical_shape, dtype, 3)
    buf = to_physical(data, s)
    out = np.empty(d.physical_elements, dtype)
    copy = engine.prepare_direct(s, d, buf, out)
    for pad in (0, 0x0202, 0x3F80, 0, 0xFFFF):
        out.view(np.uint8)[...] = SENTINEL
        copy.run(buf, out, pad, 1)
        assert np.array_equal(out, reference_buffer(data, dst, pad))


def test_tails_per_pad_are_made_once_and_tell_signed_zeros_apart() -> None:
    t = Tails([(0, 0, (2, 4), (8, 4), (4, 4), False, 0, (4, 4, 0))])
    f32 = np.dtype(np.float32)
    assert t.for_pad(0, f32) is t.for_pad(0, f32) and t.for_pad(0, f32)[0][7] == (4, 4, 0)
    assert t.for_pad(-0.0, f32) is None  # (0x80 in one byte of four: not one byte repeated)
    assert t.for_pad(0.0, f32)[0][7] == (4, 4, 0)
    assert t.for_pad(-1, np.dtype(np.int32))[0][7] == (4, 4, 255)


def test_float_pads_through_a_tailed_to_physical() -> None:
    # -0.0 is not remembered with 0 (it fills differently): its padding is 0x80000000
    kernel_or_skip()
    text = "f32[6,100]{1,0:T(8,128)}"
    t = as_target(text)
    data = _data(t.logical_shape, np.float32, 1)
    out = np.empty(t.physical_elements, np.float32)
    for pad in (0, -0.0, 0.0, 0, -0.0):
        out.view(np.uint8)[...] = SENTINEL
        to_physical(data, t, pad, out=out)
        want = reference_buffer(data, text, 0).view(np.uint32).copy()
        if isinstance(pad, float) and np.signbit(pad):
            want[reference_buffer(np.ones_like(data), text, 0) == 0] = 0x80000000
        assert np.array_equal(out.view(np.uint32), want)


@pytest.mark.parametrize("item", [1, 2, 4, 8])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_raw_run_tails_match_the_reference(item: int, stream: bool, seed: int) -> None:
    """Each step one run contiguous on both sides, then its tail: at random offsets, with
    guard bytes before and after (a tail may start inside the run or past it)."""
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 31 + item)
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    n, run = int(rng.integers(1, 50)), int(rng.integers(1, 200))
    step = run * item + int(rng.integers(0, 400)) * item
    s_step = run * item + int(rng.integers(0, 64)) * item
    at, nbytes = int(rng.integers(0, step + 1)), int(rng.integers(0, step + 1))
    d_off, s_off = int(rng.integers(0, 64)) * item, int(rng.integers(0, 64)) * item
    src = rng.integers(0, 250, (s_off + n * s_step) // item + 16).astype(dtype)
    dlen = d_off + (n - 1) * step + max(run * item, at + nbytes) + 64
    dst = np.full(-(-dlen // item) * item, SENTINEL, np.uint8).view(dtype)
    byte = int(rng.integers(0, 256))
    task = (d_off, s_off, (n, run), (step, item), (s_step, item), False, 0, (at, nbytes, byte))
    want = dst.copy().view(np.uint8)
    srcb = src.view(np.uint8)
    for i in range(n):
        d0, s0 = d_off + i * step, s_off + i * s_step
        want[d0:d0 + run * item] = srcb[s0:s0 + run * item]
        want[d0 + at:d0 + at + nbytes] = byte
    kernel.copy(dst, src, [task], stream)
    assert np.array_equal(dst.view(np.uint8), want)


def test_raw_run_tails_stay_inside_the_destination() -> None:
    kernel = kernel_or_skip()
    src, dst = np.zeros(4096, np.uint8), np.full(1024, SENTINEL, np.uint8)
    base = (0, 0, (4, 64), (256, 1), (64, 1), False, 0)
    kernel.copy(dst, src, [(*base, (64, 192, 1))], False)  # the last tail ends at the last byte
    assert dst.reshape(4, 256)[:, 64:].min() == 1 and dst.reshape(4, 256)[:, :64].max() == 0
    for tail in [(64, 193, 1), (1024, 1, 0), (2**62, 2**62, 1)]:
        with pytest.raises(IndexError, match="tail leaves the destination"):
            kernel.copy(dst, src, [(*base, tail)], False)
