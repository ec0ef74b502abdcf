"""Tails behind the steps of a later axis (``(at, bytes, byte, axis)``: the axes before it loop
outside; ``_tails._step_axis``, ``copy_tail_axes`` in ``_kernel_tasks.h``): layouts through the
public calls into an ``out`` of sentinel bytes against the brute-force buffer, hand-made tasks
through the raw entry point at random offsets with guard bytes against a step-by-step
reference, the refusals, and the rule that keeps the source's contiguous axis inside a step."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, prepare, to_physical
from tensorlayout.relayout._tails import tailed
from tests.relayout._reference import kernel_or_skip, reference_buffer

SENTINEL = 0xAB

# (layout, numpy dtype, pads): to_physical copies tailed behind an inner axis (checked)
AXES = [("s32[16,64,64]{2,0,1:T(2,128)}", np.int32, (0, -1, 5)),
        ("s32[6,9,80]{2,0,1:T(2,128)}", np.int32, (0, 0x01010101)),
        ("f64[4,5,3,40]{3,0,1,2:T(2,128)}", np.float64, (0, -1)),
        ("u8[4,6,300]{2,0,1:T(2,512)}", np.uint8, (0, 9))]


def _data(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 100, shape).astype(dtype)


@pytest.mark.parametrize("text, dtype, pads", AXES)
@pytest.mark.parametrize("threads", [1, 3])
def test_tails_behind_an_inner_axis_match_the_reference(text: str, dtype: type, pads: tuple,
                                                        threads: int) -> None:
    kernel_or_skip()
    t = as_target(text)
    data = _data(t.logical_shape, dtype, len(text))
    out = np.empty(t.physical_elements, dtype)
    copy = prepare(t, data, out, True)
    assert copy.tailed is not None and any(len(task[7]) == 4 for task in copy.tailed.tasks)
    for pad in pads:
        want = reference_buffer(data, text, pad).view(np.uint8)
        for _ in range(3):  # the first call, then the remembered one, into the sentinel each time
            out.view(np.uint8)[...] = SENTINEL
            assert to_physical(data, t, pad, out=out, threads=threads) is out
            assert np.array_equal(out.view(np.uint8), want)


def test_the_source_run_stays_inside_the_steps_at_any_axis() -> None:
    # the transposing counterexample: its source's contiguous axis is the first, so no axis
    # of it is stepped (stepping axis 1 would leave it outside too)
    task = (0, 0, (64, 32, 128), (4096, 16384, 4), (4, 256, 8192), False, 0)
    assert tailed([task], 64 * 16384 * 4 // 2, 4) is None
    # the same steps with the source's run inside them are tailed behind axis 1
    ok = (0, 0, (4, 32, 128), (32768, 1024, 4), (16384, 512, 4), False, 0)
    assert tailed([ok], 4 * 32768, 4) == [(*ok, (512, 512, 0, 1))]


def _reference(dst: np.ndarray, src: np.ndarray, task: tuple, item: int) -> None:
    """The task from its definition: for each index of the axes up to the tail's, that step's
    box, then its tail."""
    d_off, s_off, shape, ds, ss, _, _, (at, nbytes, byte, axis) = task
    for idx in itertools.product(*(range(n) for n in shape[:axis + 1])):
        d0 = d_off + sum(i * st for i, st in zip(idx, ds, strict=False))
        s0 = s_off + sum(i * st for i, st in zip(idx, ss, strict=False))
        dv = as_strided(dst[d0 // item:], shape[axis + 1:], ds[axis + 1:])
        dv[...] = as_strided(src[s0 // item:], shape[axis + 1:], ss[axis + 1:])
        dst.view(np.uint8)[d0 + at:d0 + at + nbytes] = byte


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> int:
    return sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) + item


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("item", [1, 4])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_raw_tails_behind_an_inner_axis_match_the_reference(axis: int, item: int, stream: bool,
                                                            seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 13 + axis * 5 + item)
    inner = [((int(rng.integers(1, 90)),), (1,), (1,)),  # a run
             ((16, 4), (4, 1), (1, 20))][seed % 2]  # a weave of 4 rows
    shape_i, dsi, ssi = inner
    box = _extent(shape_i, tuple(x * item for x in dsi), item)
    step = box + int(rng.integers(0, 200)) * item
    at, nbytes = int(rng.integers(0, step)), int(rng.integers(0, step + 1))
    outer = [int(rng.integers(1, 6)) for _ in range(axis + 1)]
    ds_o = [step]
    for n in reversed(outer[1:]):  # the outer axes step over whole runs of the next one's steps
        ds_o.insert(0, ds_o[0] * n + int(rng.integers(0, 3)) * item * (seed == 2))
    s_box = _extent(shape_i, tuple(x * item for x in ssi), item) + 8 * item
    ss_o = [s_box * int(np.prod(outer[k + 1:])) for k in range(axis + 1)]
    shape = (*outer, *shape_i)
    ds, ss = (*ds_o, *(x * item for x in dsi)), (*ss_o, *(x * item for x in ssi))
    d_off, s_off = int(rng.integers(0, 64)) * item, int(rng.integers(0, 64)) * item
    dtype = {1: np.uint8, 4: np.uint32}[item]
    src = rng.integers(0, 250, (s_off + _extent(shape, ss, item)) // item + 16).astype(dtype)
    last = d_off + sum((n - 1) * st for n, st in zip(outer, ds_o, strict=True))
    dlen = max(d_off + _extent(shape, ds, item), last + at + nbytes) + 64
    dst = np.full(-(-dlen // item) * item, SENTINEL, np.uint8).view(dtype)
    task = (d_off, s_off, shape, ds, ss, False, 0, (at, nbytes, int(rng.integers(0, 256)), axis))
    want = dst.copy()
    _reference(want, src, task, item)
    kernel.copy(dst, src, [task], stream)
    assert np.array_equal(dst.view(np.uint8), want.view(np.uint8))


def test_raw_tails_behind_an_inner_axis_stay_inside_the_destination() -> None:
    kernel = kernel_or_skip()
    src, dst = np.zeros(4096, np.uint8), np.full(2048, SENTINEL, np.uint8)
    base = (0, 0, (2, 4, 64), (1024, 256, 1), (256, 64, 1), False, 0)
    kernel.copy(dst, src, [(*base, (64, 192, 1, 1))], False)  # the last tail ends at the last byte
    assert dst.reshape(8, 256)[:, 64:].min() == 1 and dst.reshape(8, 256)[:, :64].max() == 0
    for tail in [(64, 193, 1, 1), (64, 961, 1, 0), (2**62, 1, 0, 1)]:
        with pytest.raises(IndexError, match="tail leaves the destination"):
            kernel.copy(dst, src, [(*base, tail)], False)
    for tail in [(0, 4, 0, 3), (0, 4, 0, -1)]:
        with pytest.raises(ValueError, match="a tail is"):
            kernel.copy(dst, src, [(*base, tail)], False)
