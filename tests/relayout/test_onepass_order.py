"""One-pass relayouts looped in the source's order (``_onepass.source_order``): runs of at
least ``SOURCE_ORDER_RUN`` bytes, read in order, written to their places; and tiles' last
lanes copied as whole rows, then refilled (``_direct.over_extents``). Byte for byte against
the definition, random source padding, ``out=`` inside guarded memory, one and several
threads (the tasks cut in pieces)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import PhysicalTarget, relayout
from tensorlayout.relayout import _direct as direct
from tensorlayout.relayout import _onepass as onepass

GUARD = 29  # items on each side of an out= buffer, which no call may touch
PAIRS = [
    ("bf16[64,1024]{1,0:T(2,128)(2,1)}", "bf16[64,1024]{1,0:T(4,128)(2,1)}"),
    ("s64[683,180]{0,1:T(8,128)}", "s64[683,180]{0,1:T(1,128)}"),
    ("s32[64,8,256]{2,1,0:T(2,128)}", "s32[64,8,256]{2,1,0:T(128)}"),
    ("pred[4,32,16,256]{3,2,1,0:T(8,128)(4,1)}", "pred[4,32,16,256]{3,2,1,0:T(32,128)(4,1)}"),
    ("f64[213,118]{0,1:T(1,128)}", "f64[213,118]{0,1:T(8,128)}"),  # 85 of the last 128 lanes: whole rows
    ("u8[9,4133]{1,0:T(8,128)(4,1)}", "u8[9,4133]{1,0:T(4,128)(4,1)}"),
]


def _source(t: PhysicalTarget, data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    buf = np.frombuffer(rng.bytes(t.physical_elements * data.itemsize), data.dtype).copy()
    buf[t.offsets] = data.reshape(-1)
    return buf


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_source_ordered_copies_match_the_definition(engine_mode: str, src: str, dst: str) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    dtype = np.dtype(f"u{max(1, s.element_bits // 8)}")
    rng = np.random.default_rng(11)
    data = np.frombuffer(rng.bytes(s.size * dtype.itemsize), dtype).reshape(s.logical_shape)
    buf = _source(s, data, rng)
    for pad in (0, 3):
        want = np.full(d.physical_elements, pad, dtype)
        want[d.offsets] = data.reshape(-1)
        for threads in (1, 2):
            store = np.full(d.physical_elements + 2 * GUARD, 0x5A, dtype)
            out = store[GUARD:GUARD + d.physical_elements]
            assert relayout(buf, s, d, pad_value=pad, out=out, threads=threads) is out
            assert np.array_equal(out.view(np.uint8), want.view(np.uint8)), (src, dst, pad, threads)
            assert (store[:GUARD] == 0x5A).all() and (store[GUARD + d.physical_elements:] == 0x5A).all()


@pytest.mark.parametrize(("src", "dst"), PAIRS[:4])
def test_the_tasks_read_the_source_in_order(src: str, dst: str) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    dtype = np.dtype(f"u{max(1, s.element_bits // 8)}")
    data, buf = np.zeros(s.physical_elements, dtype), np.zeros(d.physical_elements, dtype)
    assert onepass.source_order(direct.direct_pairs(s, d, data, buf))
    for task in onepass.onepass_tasks(s, d, data, buf, 1, "data"):
        src_strides = [st for n, st in zip(task[2], task[4], strict=True) if n > 1]
        assert src_strides == sorted(src_strides, reverse=True), task


def test_short_runs_keep_the_destination_order() -> None:
    s = PhysicalTarget.from_xla("f32[64,64]{1,0:T(4,4)}")  # 16-byte runs
    d = PhysicalTarget.from_xla("f32[64,64]{0,1:T(4,4)}")
    data, buf = np.zeros(s.physical_elements, np.float32), np.zeros(d.physical_elements, np.float32)
    assert not onepass.source_order(direct.direct_pairs(s, d, data, buf))


def test_ragged_lanes_are_copied_as_whole_rows() -> None:
    s = PhysicalTarget.from_xla("f64[213,118]{0,1:T(1,128)}")
    d = PhysicalTarget.from_xla("f64[213,118]{0,1:T(8,128)}")
    assert direct.over_extents(s, d) == (256, 118)
    data = np.zeros(s.physical_elements, np.float64)
    prepared = engine.prepare_direct(s, d, data, np.zeros(d.physical_elements, np.float64))
    assert prepared.how == "over" and prepared.refill


@pytest.mark.parametrize(("src", "dst"), [
    ("pred[5,3,7,5,250]{4,0,3,1,2:T(8,128)(4,1)}", "pred[5,3,7,5,250]{4,0,2,3,1:T(4,128)(4,1)}"),
    ("s16[70,433]{0,1:T(4,128)(2,1)}", "s16[70,433]{0,1:T(2,128)(2,1)}"),
    ("s8[3,1497,13]{1,2,0:T(4,128)(4,1)}", "s8[3,1497,13]{1,2,0:T(8,128)(4,1)}"),
])
def test_into_a_streamed_destination_ragged_rows_and_lanes_run_whole(
        engine_mode: str, monkeypatch: pytest.MonkeyPatch, src: str, dst: str) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    assert direct.over_extents(s, d) == s.logical_shape or "s16" in src  # (in the cache: as they are)
    monkeypatch.setattr(direct, "STREAMED_BYTES", 0)  # every destination streamed
    over = direct.over_extents(s, d)
    assert over != s.logical_shape and all(m >= n for m, n in zip(over, s.logical_shape, strict=True))
    dtype = np.dtype(f"u{max(1, s.element_bits // 8)}")
    rng = np.random.default_rng(4)
    data = np.frombuffer(rng.bytes(s.size * dtype.itemsize), dtype).reshape(s.logical_shape)
    buf = _source(s, data, rng)
    prepared = engine.prepare_direct(s, d, buf, np.empty(d.physical_elements, dtype))
    assert prepared.how == "over" and prepared.refill
    for pad in (0, 9):
        want = np.full(d.physical_elements, pad, dtype)
        want[d.offsets] = data.reshape(-1)
        store = np.full(d.physical_elements + 2 * GUARD, 0x5A, dtype)
        out = store[GUARD:GUARD + d.physical_elements]
        prepared.run(buf, out, pad, 1)
        assert np.array_equal(out.view(np.uint8), want.view(np.uint8)), (src, dst, pad)
        assert (store[:GUARD] == 0x5A).all() and (store[GUARD + d.physical_elements:] == 0x5A).all()


@pytest.mark.parametrize(("src", "dst"), [
    ("s8[50,1800]{1,0:T(8,128)(4,1)}", "s8[50,1800]{1,0:T(4,128)(4,1)}"),  # 8 of the last 128 lanes
    ("s32[1325,51]{0,1:T(2,128)}", "s32[1325,51]{0,1:T(4,128)}"),
    ("bf16[30,1300]{1,0:T(8,128)(2,1)}", "bf16[30,1300]{1,0:T(16,128)(2,1)}"),
])
def test_ragged_lanes_mostly_padding_run_whole_where_that_reads_the_source_in_order(
        engine_mode: str, monkeypatch: pytest.MonkeyPatch, src: str, dst: str) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    monkeypatch.setattr(direct, "STREAMED_BYTES", 0)  # every destination streamed
    dtype = np.dtype(f"u{max(1, s.element_bits // 8)}")
    rng = np.random.default_rng(6)
    data = np.frombuffer(rng.bytes(s.size * dtype.itemsize), dtype).reshape(s.logical_shape)
    buf = _source(s, data, rng)
    prepared = engine.prepare_direct(s, d, buf, np.empty(d.physical_elements, dtype))
    assert prepared.how == "lanes" and prepared.refill
    assert direct.over_extents(s, d, True) != direct.over_extents(s, d)
    for pad in (0, 7):
        want = np.full(d.physical_elements, pad, dtype)
        want[d.offsets] = data.reshape(-1)
        store = np.full(d.physical_elements + 2 * GUARD, 0x5A, dtype)
        out = store[GUARD:GUARD + d.physical_elements]
        for threads in (1, 2):
            prepared.run(buf, out, pad, threads)
            assert np.array_equal(out.view(np.uint8), want.view(np.uint8)), (src, dst, pad, threads)
            assert (store[:GUARD] == 0x5A).all() and (store[GUARD + d.physical_elements:] == 0x5A).all()


def test_ragged_lanes_stay_where_the_boxes_keep_the_destination_order() -> None:
    s = PhysicalTarget.from_xla("f64[37,686,3,13]{1,2,3,0:T(2,128)}")
    d = PhysicalTarget.from_xla("f64[37,686,3,13]{1,0,3,2:T(2,128)}")
    data, buf = np.zeros(s.physical_elements), np.zeros(d.physical_elements)  # 11 MiB: streamed
    assert direct.over_extents(s, d, True) != direct.over_extents(s, d)
    assert onepass.onepass_how(s, d, data, buf, "data") == "data"
