"""The kernel's masked copy (``_kernel_masked.h``): a buffer copied whole with boxes of words
written ``(word & keep) | fill`` as the copy goes, every byte against numpy's copy then the
boxes applied to it (random disjoint boxes of 1- to 8-byte words at odd offsets, cut into units
at every depth, guard bytes around the output); and the one-pass relayouts of a layout onto
itself that take it, against the definition whatever the source's padding holds."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import PhysicalTarget, relayout
from tensorlayout.relayout._onepass import KernelBox, Refill, unit_axes
from tests.relayout._reference import kernel_or_skip, reference_buffer

GUARD = 11  # bytes on each side of the output, which the copy must not touch
GROUP = 16  # bytes of a group, which the boxes' words share out


def _boxes(rng: np.random.Generator, groups: int, inner: int, gap: int) -> list[KernelBox]:
    """Boxes over ``groups`` x ``inner`` groups of ``GROUP`` bytes (rows ``gap`` groups apart),
    each writing its own bytes of every group: a run of plain bytes, or bytes of a word."""
    boxes = []
    pos = int(rng.integers(0, 3))
    while pos < GROUP:
        run = int(rng.integers(1, 5))
        word = int(rng.choice([1, 2, 4, 8]))
        at = pos - pos % word
        run = min(run, at + word - pos, GROUP - pos)
        if rng.integers(3):
            shape: tuple[int, ...] = (groups, inner)
            strides: tuple[int, ...] = (gap * GROUP, GROUP)
            keep = sum(0xFF << (8 * k) for k in range(word) if not pos <= at + k < pos + run)
            fill = int.from_bytes(rng.bytes(8), "little") & ~keep & ((1 << (8 * word)) - 1)
            if keep == 0 and rng.integers(2) and word == 1:  # a plain run of bytes: an inner axis
                shape, strides = (groups, inner, run), (gap * GROUP, GROUP, 1)
                fill = int(rng.integers(0, 256))
            outer = int(rng.integers(0, len(shape)))
            boxes.append((at, shape, strides, outer, word, keep, fill))
        pos += run
    return [(off + 5 * GROUP, shape, strides, outer, word, keep, fill)
            for off, shape, strides, outer, word, keep, fill in boxes]


def _applied(src: np.ndarray, boxes: list[KernelBox]) -> np.ndarray:
    want = src.copy()
    for off, shape, strides, _, word, keep, fill in boxes:
        dtype = np.dtype(f"<u{word}")
        view = np.ndarray(shape, dtype, want, off, strides)
        view[...] = (view & np.array(keep, dtype)) | np.array(fill, dtype)
    return want


def test_masked_copy_writes_each_box_over_the_copy() -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(7)
    for _ in range(400):
        groups, inner, gap = int(rng.integers(1, 9)), int(rng.integers(1, 40)), int(rng.integers(1, 3))
        gap = max(gap * inner, inner)
        nbytes = (6 + groups * gap) * GROUP + int(rng.integers(0, 40))
        boxes = _boxes(rng, groups, inner, gap)
        src = np.frombuffer(rng.bytes(nbytes), np.uint8)
        start = int(rng.integers(0, 4))  # (out at any alignment)
        store = np.full(nbytes + 2 * GUARD + 4, 0xA7, np.uint8)
        out = store[GUARD + start:GUARD + start + nbytes]
        kernel.masked_copy(out, src, boxes)
        assert np.array_equal(out, _applied(src, boxes)), boxes
        assert (store[:GUARD + start] == 0xA7).all() and (store[GUARD + start + nbytes:] == 0xA7).all()


def test_masked_copy_rejects_boxes_outside_the_buffer() -> None:
    kernel = kernel_or_skip()
    a, b = np.zeros(64, np.uint8), np.zeros(64, np.uint8)
    with pytest.raises(IndexError, match="leaves the arrays"):
        kernel.masked_copy(b, a, [(60, (2,), (4,), 0, 4, 0, 0)])
    with pytest.raises(ValueError, match="differ in length"):
        kernel.masked_copy(b[:63], a, [])
    with pytest.raises(ValueError, match="outer < ndim"):
        kernel.masked_copy(b, a, [(0, (2,), (4,), 1, 4, 0, 0)])


def test_units_span_at_most_a_few_kib() -> None:
    assert unit_axes((64, 4, 512), (8192, 1024, 1), 1) == 1  # 4 rows of 512: one unit a step
    assert unit_axes((64, 8, 1024), (65536, 8192, 1), 1) == 2  # 8 KiB: a unit a row
    assert unit_axes((3, 9000), (36000, 4), 4) == 1  # the last axis inner, however long


def _source(t: PhysicalTarget, data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``data`` under ``t`` in a buffer whose padding holds random bytes."""
    buf = np.frombuffer(rng.bytes(t.physical_elements * data.itemsize), data.dtype).copy()
    buf[t.offsets] = data.reshape(-1)
    return buf


@pytest.mark.parametrize("text", [
    "u8[1000,33]{0,1:T(8,128)(4,1)}",  # 1 row of a quad, a quad row and lanes of padding
    "pred[3,7,1100]{2,1,0:T(4,128)(4,1)}",  # 3 rows of 4
    "bf16[1000,33]{0,1:T(8,128)(2,1)}",  # 1 row of 2
    "f32[37,1000]{1,0:T(8,128)}",
    "u16[7,7]{1,0:T(2,4)}",  # a padding box of one item
    "s8[17,620,3]{1,2,0:T(4,128)(4,1)}",  # 27% padding, data runs of 3 bytes (masked_pass)
])
@pytest.mark.parametrize("pad", [0, 5, 0.5])
def test_relayout_to_itself_writes_the_pad_whatever_the_source_padding(text: str, pad: float) -> None:
    kernel_or_skip()
    t = PhysicalTarget.from_xla(text)
    dtype = np.dtype({8: np.uint8, 16: np.float16, 32: np.float32}[t.element_bits])
    if dtype.kind != "f" and pad != int(pad):
        pytest.skip("a fractional pad of an integer type")
    rng = np.random.default_rng(len(text))
    data = np.frombuffer(rng.bytes(t.size * dtype.itemsize), dtype).reshape(t.logical_shape)
    buf = _source(t, data, rng)
    prepared = engine.prepare_direct(t, t, buf, np.empty_like(buf))
    assert prepared.how == "all" and prepared.refill.kernel_boxes(pad, dtype, buf.nbytes)  # (masked)
    want = reference_buffer(data, text, pad)
    nbytes = buf.nbytes
    for threads in (1, 1, None):  # (the second call: the remembered small call in C)
        store = np.full(nbytes + 2 * GUARD + dtype.itemsize, 0x3C, np.uint8)
        out = store[GUARD + 1:GUARD + 1 + nbytes] if dtype.itemsize == 1 else \
            store[GUARD + dtype.itemsize - GUARD % dtype.itemsize:][:nbytes]
        got = relayout(buf, t, t, pad_value=pad, out=out.view(dtype), threads=threads)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (text, pad, threads)
        begin = out.__array_interface__["data"][0] - store.__array_interface__["data"][0]
        assert (store[:begin] == 0x3C).all() and (store[begin + nbytes:] == 0x3C).all()


def test_refill_boxes_become_kernel_boxes_of_their_words() -> None:
    r = Refill.of([(1, (4, 3), (4, 1)), (16, (8,), (1,))], 1)
    assert r.kernel_boxes(0xFF, np.dtype(np.uint8), 24) == [
        (16, (8,), (1,), 0, 1, 0, 0xFF), (0, (4,), (4,), 0, 4, 0xFF, 0xFFFFFF00)]


def test_a_copy_cut_in_many_short_pieces_is_not_masked() -> None:
    t = PhysicalTarget.from_xla("f16[1001,1016]{1,0:T(2,128)(2,1)}")  # 32 bytes of padding every 4 KiB
    buf = np.zeros(t.physical_elements, np.float16)
    prepared = engine.prepare_direct(t, t, buf, np.empty_like(buf))
    assert prepared.how == "all" and prepared.refill.kernel_boxes(0, buf.dtype, buf.nbytes) is None
    u = PhysicalTarget.from_xla("u8[5641,33]{0,1:T(8,128)(4,1)}")  # its units side by side: few pieces
    raw = np.zeros(u.physical_elements, np.uint8)
    assert engine.prepare_direct(u, u, raw, raw.copy()).refill.kernel_boxes(0, raw.dtype, raw.nbytes)


def test_much_padding_is_one_masked_pass_only_where_the_data_runs_are_short() -> None:
    for text, whole in (("s8[17,620,3]{1,2,0:T(4,128)(4,1)}", True),  # 3 bytes of 4: masked
                        ("pred[31,157,105]{1,0,2:T(8,128)(4,1)}", False),  # runs of 628 bytes
                        ("s8[17,620,1]{1,2,0:T(4,128)(4,1)}", False)):  # 1 of 4: mostly padding
        t = PhysicalTarget.from_xla(text)
        buf = np.zeros(t.physical_elements, np.uint8)
        assert (engine.prepare_direct(t, t, buf, buf.copy()).how == "all") == whole, text


def test_a_shared_size_copy_to_itself_takes_the_masked_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    # a copy that may be shared among threads (THREAD_MIN_BYTES, lowered here) still runs as one
    # masked copy on one thread: shared, the copy and the refill after it measured slower
    kernel_or_skip()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1 << 10)
    calls: list[int] = []
    real = engine._kernel.masked_copy  # type: ignore[union-attr]
    monkeypatch.setattr(engine._kernel, "masked_copy", lambda *a: calls.append(1) or real(*a))
    text = "s8[37,620,3]{1,2,0:T(4,128)(4,1)}"
    t = PhysicalTarget.from_xla(text)
    rng = np.random.default_rng(7)
    data = rng.integers(-100, 100, t.logical_shape, dtype=np.int8)
    buf = _source(t, data, rng)
    got = relayout(buf, t, t, pad_value=3, threads=2)
    assert calls and np.array_equal(got.view(np.uint8), reference_buffer(data, text, 3).view(np.uint8))
