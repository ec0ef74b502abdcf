"""Tailed tasks (``_tails.py``, ``_kernel_fill.h``): a to_physical copy that writes the padding
behind each step of a task as it goes instead of filling the buffer first. Layouts through the
public calls (the first call, and the remembered small call after it, into an ``out`` full of
other bytes) against the brute-force buffer; hand-made tailed tasks through the raw entry point
at any offset, with guard bytes around them, against a step-by-step reference; and the checks
that keep every tail inside the destination."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, prepare, to_physical
from tests.relayout._reference import kernel_or_skip, reference_buffer

# (layout, numpy dtype, pad values): each is tailed (checked), ragged ones included
TAILED = [("u8[4,262144]{1,0:T(8,128)(4,1)}", np.uint8, (0, 200)),
          ("u8[4,300]{1,0:T(8,128)(4,1)}", np.uint8, (0, 7)),
          ("s8[4,1000]{1,0:T(8,128)(4,1)}", np.int8, (0, -3)),
          ("pred[4,77]{1,0:T(8,128)(4,1)}", np.bool_, (False, True)),
          ("u8[3,5,4,64]{3,2,1,0:T(8,128)(4,1)}", np.uint8, (0, 255)),
          ("bf16[2,512]{1,0:T(4,128)(2,1)}", np.uint16, (0, 0x3F80)),  # (not one byte: filled first)
          ("f32[3,256]{1,0:T(8,128)}", np.float32, (0.0, 1.5))]


def _data(text: str, dtype: type) -> np.ndarray:
    shape = as_target(text).logical_shape
    rng = np.random.default_rng(len(text))
    if dtype is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype is np.float32:
        return rng.standard_normal(shape).astype(np.float32)
    return rng.integers(-100 if dtype is np.int8 else 0, 100, shape).astype(dtype)


@pytest.mark.parametrize("text, dtype, pads", TAILED)
@pytest.mark.parametrize("threads", [1, 3])
def test_tailed_layouts_match_the_reference(text: str, dtype: type, pads: tuple, threads: int) -> None:
    kernel_or_skip()
    t = as_target(text)
    data = _data(text, dtype)
    assert prepare(t, data, to_physical(data, t), True).tailed is not None
    for pad in pads:
        want = reference_buffer(data, text, pad).view(np.uint8)
        out = np.empty(t.physical_elements, dtype)
        for _ in range(3):  # the first call, then the remembered one, into garbage each time
            out.view(np.uint8)[...] = 0xAB
            got = to_physical(data, t, pad, out=out, threads=threads)
            assert got is out and np.array_equal(out.view(np.uint8), want)


def test_tails_fill_an_array_of_other_strides() -> None:
    # a logical array of other strides than the prepared one's (a transposed view) plans anew
    kernel_or_skip()
    text = "u8[4,300]{1,0:T(8,128)(4,1)}"
    data = np.ascontiguousarray(_data(text, np.uint8).T).T
    assert np.array_equal(to_physical(data, as_target(text), 9), reference_buffer(data, text, 9))


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> int:
    return sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) + item


def _reference(dst: np.ndarray, src: np.ndarray, task: tuple, item: int) -> None:
    """The tailed task from its definition: each step's box, then its tail."""
    d_off, s_off, shape, ds, ss, _, _, (at, nbytes, byte) = task
    for i in range(shape[0]):
        d0, s0 = d_off + i * ds[0], s_off + i * ss[0]
        dv = as_strided(dst[d0 // item:], shape[1:], ds[1:])  # (offsets and steps: whole items)
        dv[...] = as_strided(src[s0 // item:], shape[1:], ss[1:])
        dst.view(np.uint8)[d0 + at:d0 + at + nbytes] = byte


# (inner shape, inner dst strides in items, inner src strides in items): a weave of 4 rows, a
# run, a transpose, a strided copy, a weave of 4-byte items, one item per step
INNER = [((128, 4), (4, 1), (1, 300)), ((100,), (1,), (1,)), ((16, 20), (1, 16), (20, 1)),
         ((5, 3), (7, 2), (3, 1)), ((40, 4), (4, 1), (1, 41)), ((), (), ())]


@pytest.mark.parametrize("inner", range(len(INNER)))
@pytest.mark.parametrize("item", [1, 4])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_raw_tailed_tasks_match_the_reference(inner: int, item: int, stream: bool, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 97 + inner * 5 + item)
    shape, dsi, ssi = INNER[inner]
    n = int(rng.integers(1, 40)) if seed < 2 else 5000 // item  # (the last: steps past 16 KiB)
    box = _extent(shape, tuple(x * item for x in dsi), item)
    step = box + int(rng.integers(0, 300)) * item
    at, nbytes = int(rng.integers(0, step)), int(rng.integers(0, 2 * step))
    d_off, s_off = int(rng.integers(0, 64)) * item, int(rng.integers(0, 64)) * item
    s_step = _extent(shape, tuple(x * item for x in ssi), item) + 8 * item
    ds, ss = (step, *(x * item for x in dsi)), (s_step, *(x * item for x in ssi))
    shape = (n, *shape)
    dtype = {1: np.uint8, 4: np.uint32}[item]
    src = rng.integers(0, 250, (s_off + _extent(shape, ss, item) + 64) // item).astype(dtype)
    dlen = d_off + max(_extent(shape, ds, item), (n - 1) * step + at + nbytes) + 64
    dst = np.full(-(-dlen // item), 0xAB, dtype)
    task = (d_off, s_off, shape, ds, ss, False, 0, (at, nbytes, int(rng.integers(0, 256))))
    want = dst.copy()
    _reference(want, src, task, item)
    kernel.copy(dst, src, [task], stream)
    assert np.array_equal(dst, want)


def test_raw_tails_stay_inside_the_destination() -> None:
    kernel = kernel_or_skip()
    src, dst = np.zeros(4096, np.uint8), np.zeros(1024, np.uint8)
    base = (0, 0, (4, 64), (256, 1), (64, 1), False, 0)
    kernel.copy(dst, src, [(*base, (64, 192, 1))], False)  # the last tail ends at the last byte
    assert dst.reshape(4, 256)[:, 64:].min() == 1
    for tail in [(64, 193, 1), (2**62, 2**62, 1), (2**63 - 1, 1, 0)]:
        with pytest.raises(IndexError, match="tail leaves the destination"):
            kernel.copy(dst, src, [(*base, tail)], False)
    for tail in [(-1, 4, 0), (0, -4, 0), (0, 4, 256), (0, 4, -1)]:
        with pytest.raises(ValueError, match="a tail is"):
            kernel.copy(dst, src, [(*base, tail)], False)
    with pytest.raises(ValueError, match="a tail is"):
        kernel.copy(dst, src, [(0, 0, (), (), (), False, 0, (0, 4, 0))], False)
    with pytest.raises(TypeError, match="tail"):
        kernel.copy(dst, src, [(*base, (0, 4))], False)


@pytest.mark.parametrize("text", ["f32[64,32,128]{0,2,1:T(8,128)}", "f32[256,64,512]{0,2,1:T(8,128)}"])
def test_transposes_are_not_stepped_along_their_source_runs(text: str) -> None:
    """A transposing task whose first axis is the source's contiguous one keeps its blocked
    transpose (stepped for tails, it went 12x slower): no tails, the buffer filled first."""
    kernel_or_skip()
    t = as_target(text)
    data = _data(text, np.float32)
    buf = to_physical(data, t)
    assert prepare(t, data, buf, True).tailed is None
    assert np.array_equal(buf.view(np.uint8), reference_buffer(data, text, 0).view(np.uint8))
