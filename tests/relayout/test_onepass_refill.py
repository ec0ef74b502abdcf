"""The padding a one-pass relayout refills after copying over it (``_onepass``): boxes of a few
bytes of every sub-tile group refilled as words by a mask, byte for byte against the plain
fill of the same boxes and against the definition (random source padding, which must not
survive; pad values of one and of several distinct bytes; ``out=`` inside guarded memory)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import PhysicalTarget, relayout
from tensorlayout.relayout._onepass import Refill, masked

GUARD = 13  # bytes on each side of an out= buffer, which no call may touch


def _plain(buf: np.ndarray, boxes: list[tuple[int, tuple[int, ...], tuple[int, ...]]], pad: object) -> None:
    for off, shape, strides in boxes:
        np.ndarray(shape, buf.dtype, buf, off, strides)[...] = pad


@pytest.mark.parametrize(("dtype", "pad"), [(np.uint8, 0), (np.uint8, 7), (np.uint16, 0x1234),
                                            (np.float32, 1.5), (np.uint64, 3)])
def test_masked_words_write_what_a_plain_fill_writes(dtype: type, pad: object) -> None:
    rng = np.random.default_rng(5)
    item = np.dtype(dtype).itemsize
    hit = 0
    for _ in range(300):  # random boxes of a few items in every group of 2-8 bytes
        group = item * int(rng.choice([1, 2, 4, 8]))
        run = int(rng.integers(1, max(2, group // item + 1))) * item
        at = int(rng.integers(0, group // item)) * item
        inner = ((run // item,), (item,)) if rng.integers(2) else ((), ())
        if not inner[0] and run != item:
            run = item
        outer = [(int(rng.integers(1, 9)), group), (int(rng.integers(1, 4)), group * 16)]
        shape = tuple(n for n, _ in reversed(outer)) + inner[0]
        strides = tuple(s for _, s in reversed(outer)) + inner[1]
        nbytes = group * 16 * 4 + 2 * group
        box = (group + at, shape, strides)
        raw = rng.integers(0, 256, nbytes, dtype=np.uint8)
        got, want = raw.copy().view(dtype), raw.copy().view(dtype)
        m = masked(box, item, nbytes)
        hit += m is not None
        Refill.of([box], item, nbytes)(got, pad)
        _plain(want, [box], pad)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (box, m)
    assert hit > 30 or item == 8  # (the masked path was taken; 8-byte items never fit a word)


def test_words_past_the_buffer_are_not_masked() -> None:
    assert masked((1, (4, 3), (4, 1)), 1, 16) is not None
    assert masked((1, (4, 3), (4, 1)), 1, 15) is None  # the last word would end past byte 15


def _source(t: PhysicalTarget, data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    buf = np.frombuffer(rng.bytes(t.physical_elements * data.itemsize), data.dtype).copy()
    buf[t.offsets] = data.reshape(-1)
    return buf


@pytest.mark.parametrize(("src", "dst"), [
    ("u8[1000,29]{0,1:T(8,128)(4,1)}", "u8[1000,29]{0,1:T(8,128)(4,1)}"),  # 1 row of 4
    ("pred[5,7,423]{2,1,0:T(4,128)(4,1)}", "pred[5,7,423]{2,1,0:T(4,128)(4,1)}"),  # 3 rows of 4
    ("s8[3,39,130]{2,1,0:T(4,128)(4,1)}", "s8[3,39,130]{2,1,0:T(8,128)(4,1)}"),
    ("bf16[5,33,130]{2,1,0:T(8,128)(2,1)}", "bf16[5,33,130]{2,1,0:T(16,128)(2,1)}"),  # 1 row of 2
    ("f16[45,207]{1,0:T(2,128)(2,1)}", "f16[45,207]{1,0:T(8,128)(2,1)}"),
    ("bf16[1000,33]{0,1:T(8,128)(2,1)}", "bf16[1000,33]{0,1:T(8,128)(2,1)}"),  # 1 row of 2
])
def test_one_pass_relayouts_with_refills_match_the_definition(engine_mode: str, src: str, dst: str) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    dtype = np.dtype(np.uint16 if s.element_bits == 16 else np.uint8)
    rng = np.random.default_rng(3)
    data = np.frombuffer(rng.bytes(s.size * dtype.itemsize), dtype).reshape(s.logical_shape)
    buf = _source(s, data, rng)
    prepared = engine.prepare_direct(s, d, buf, np.empty(d.physical_elements, dtype))
    assert prepared.refill.words, prepared.how  # (the masked refill is what these check)
    for pad in (0, 5, 0x3F80 if dtype.itemsize == 2 else 0xA5):
        want = np.full(d.physical_elements, pad, dtype)
        want[d.offsets] = data.reshape(-1)
        for start in (0, 1):  # out= on and off the buffer's alignment, guarded on both sides
            store = np.full(d.physical_elements * dtype.itemsize + 2 * GUARD + 1, 0x5A, np.uint8)
            raw = store[GUARD + start:GUARD + start + d.physical_elements * dtype.itemsize]
            aligned = start == 0 or dtype.itemsize == 1
            out = raw.view(dtype) if aligned else np.empty(d.physical_elements, dtype)
            got = relayout(buf, s, d, pad_value=pad, out=out)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (src, dst, pad, start)
            assert (store[:GUARD + start] == 0x5A).all()
            assert (store[GUARD + start + d.physical_elements * dtype.itemsize:] == 0x5A).all()
