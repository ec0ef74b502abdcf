"""Remembered calls (``_call``): a repeated ``to_physical`` / ``from_physical`` reuses its
checks and copy plan, and only when nothing that decides them changed — each test first
makes a call remembered, then changes one input and compares with a fresh target (no
remembered calls) or with the offsets recipe."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._call as call_module
import tensorlayout.relayout._copy as engine
import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.errors import LayoutError
from tensorlayout.relayout import PhysicalTarget, from_physical, relayout, to_physical
from tensorlayout.relayout._cute import remembered_target

TEXT = "f32[24,300]{1,0:T(8,128)}"


def _fresh(text: str = TEXT) -> PhysicalTarget:
    return PhysicalTarget.from_xla(text)


def _want(a: np.ndarray, t: PhysicalTarget, pad: object = 0) -> np.ndarray:
    """The buffer by the definition: every logical element at its offset, padding = pad."""
    buf = np.full(t.physical_elements, pad, dtype=a.dtype)
    buf[t.offsets] = a.reshape(-1)
    return buf


def _data(dtype: type = np.float32, shape: tuple[int, ...] = (24, 300), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-100, 100, shape).astype(dtype)


def test_a_call_is_remembered_and_reused() -> None:
    t = _fresh()
    a = _data()
    to_physical(a, t)
    assert len(t._calls) == 1
    first = next(iter(t._calls.values()))
    to_physical(_data(seed=1), t)
    assert len(t._calls) == 1 and next(iter(t._calls.values())) is first
    from_physical(to_physical(a, t), t)
    assert len(t._calls) == 2


@pytest.mark.parametrize("view", [
    lambda a: a.T.copy().T,  # column-major
    lambda a: a[::-1, ::-1],  # negative strides
    lambda a: np.repeat(a, 2, axis=1)[:, ::2],  # strided rows
    lambda a: np.broadcast_to(a[:1], a.shape),  # zero stride
])
def test_other_strides_get_their_own_call(view: object) -> None:
    t = _fresh()
    a = _data()
    to_physical(a, t)  # remembered for C order
    b = view(_data(seed=2))  # type: ignore[operator]
    assert (to_physical(b, t) == _want(b, t)).all()
    buf = _want(b, t)
    out = view(np.zeros_like(a))  # type: ignore[operator]
    if out.flags.writeable:
        from_physical(buf, t)  # remembered for a new C-order result
        assert (from_physical(buf, t, out=out) == b).all() and (out == b).all()


def test_other_dtypes_of_the_same_width_get_their_own_call() -> None:
    t = PhysicalTarget.from_digits((6, 10), [[(3, 8), (2, 4)], [(3, 24), (4, 1)]], physical_elements=72)
    f = np.arange(60, dtype=np.float32).reshape(6, 10) + 0.5
    i = np.arange(60, dtype=np.int32).reshape(6, 10)
    assert to_physical(f, t).dtype == np.float32
    got = to_physical(i, t, pad_value=-1)
    assert got.dtype == np.int32 and (got == _want(i, t, -1)).all()
    assert from_physical(got, t).dtype == np.int32
    assert from_physical(to_physical(f, t), t).dtype == np.float32
    # no plan remembered for an object array
    with pytest.raises(LayoutError, match=r"target\[6, 10\] in 72 slots: relayout moves numbers, not object"):
        to_physical(i.astype(object), t)


def test_pad_values_are_not_confused() -> None:
    t = _fresh("f32[3,5]{1,0:T(2,2)}")
    a = np.ones((3, 5), np.float32)
    assert (to_physical(a, t, pad_value=0) == _want(a, t, 0)).all()
    neg = to_physical(a, t, pad_value=-0.0)  # equal to 0, but another bit pattern
    assert (np.signbit(neg) == np.signbit(_want(a, t, -0.0))).all() and np.signbit(neg).any()
    assert (to_physical(a, t, pad_value=7) == _want(a, t, 7)).all()
    assert (to_physical(a, t, pad_value=True) == _want(a, t, 1)).all()
    u = np.ones((3, 5), np.uint8)
    to_physical(u, "u8[3,5]{1,0:T(2,2)}", pad_value=255)
    with pytest.raises(LayoutError, match=r"u8\[3,5\]\{1,0:T\(2,2\)\}: pad_value 256 does not fit the uint8"):
        to_physical(u, "u8[3,5]{1,0:T(2,2)}", pad_value=256)


def test_out_is_checked_on_every_call() -> None:
    t = _fresh()
    a = _data()
    out = np.zeros(t.physical_elements, np.float32)
    to_physical(a, t, out=out)  # remembered
    for bad in [np.zeros(t.physical_elements - 1, np.float32), np.zeros(t.physical_elements, np.int32),
                np.zeros(2 * t.physical_elements, np.float32)[::2], [0.0] * t.physical_elements]:
        with pytest.raises(LayoutError,
                           match=r"f32\[24,300\]\{1,0:T\(8,128\)\}: out must be (a writeable|an array in)"):
            to_physical(a, t, out=bad)  # type: ignore[arg-type]
    out.setflags(write=False)
    with pytest.raises(LayoutError, match=r"f32\[24,300\]\{1,0:T\(8,128\)\}: out must be a writeable"):
        to_physical(a, t, out=out)
    logical = np.zeros_like(a)
    buf = _want(a, t)
    from_physical(buf, t, out=logical)  # remembered
    logical.setflags(write=False)
    with pytest.raises(LayoutError,
        match=r"f32\[24,300\]\{1,0:T\(8,128\)\}: out must be a writeable array of"):
        from_physical(buf, t, out=logical)
    with pytest.raises(LayoutError,
        match=r"f32\[24,300\]\{1,0:T\(8,128\)\}: out must be a writeable array of"):
        from_physical(buf, t, out=np.zeros(a.shape, np.float64))


def test_out_overlapping_the_input_after_a_remembered_call() -> None:
    t = _fresh("s32[8,8]{0,1}")
    a = np.arange(64, dtype=np.int32).reshape(8, 8)
    want = _want(a, t)
    assert (to_physical(a, t, out=np.zeros(64, np.int32)) == want).all()  # remembered, apart
    flat = a.reshape(-1)  # out aliases the input
    assert (to_physical(a, t, out=flat) == want).all()
    buf = want.copy()
    assert (from_physical(buf, t, out=np.zeros((8, 8), np.int32)) == np.arange(64).reshape(8, 8)).all()
    assert (from_physical(buf, t, out=buf.reshape(8, 8)) == np.arange(64).reshape(8, 8)).all()


def test_unaligned_arrays_after_a_remembered_call() -> None:
    t = _fresh("bf16[24,300]{1,0:T(8,128)(2,1)}")
    a = _data(np.uint16)
    want = to_physical(a, t)  # remembered for aligned C-order arrays
    raw = np.zeros(a.nbytes + 1, np.uint8)
    unaligned = raw[1:].view(np.uint16).reshape(a.shape)  # the same strides, not aligned
    unaligned[...] = a
    assert not unaligned.flags.aligned
    assert (to_physical(unaligned, t) == want).all()


def _copy_spy(kernel: object, calls: list[tuple]) -> object:
    """``kernel`` whose ``copy`` also appends its arguments to ``calls``."""
    class Spy:
        @staticmethod
        def copy(*args: object) -> None:
            calls.append(args)
            kernel.copy(*args)  # type: ignore[attr-defined]

    return Spy


def test_the_engine_is_chosen_on_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    if not engine.kernel_available():
        pytest.skip("the C copy kernel was not built")
    t = _fresh()
    a = _data()
    want = to_physical(a, t)  # remembered while the kernel is on
    calls: list[tuple] = []
    monkeypatch.setattr(engine, "_kernel", _copy_spy(engine._kernel, calls))
    monkeypatch.setattr(engine, "USE_KERNEL", False)
    assert (to_physical(a, t) == want).all() and not calls  # the numpy path
    monkeypatch.setattr(engine, "USE_KERNEL", True)
    assert (to_physical(a, t) == want).all() and len(calls) == 1
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # now shared among the kernel's threads
    assert (to_physical(a, t, threads=3) == want).all() and len(calls) == 2
    assert calls[-1][4] == 3 and len(calls[-1][2]) > 3  # workers, and pieces for them to claim


def test_threads_claim_near_equal_pieces_of_every_box(monkeypatch: pytest.MonkeyPatch) -> None:
    # A ragged layout's copy is a main box and small edge boxes; a shared copy cuts each box in
    # near-equal pieces at whole lines (PIECES_PER_THREAD per thread), which the kernel's
    # threads claim in turn: one call, the workers counted in it.
    if not engine.kernel_available():
        pytest.skip("the C copy kernel was not built")
    t = PhysicalTarget.from_xla("bf16[200,3000]{1,0:T(8,128)(2,1)}")
    a = np.arange(200 * 3000, dtype=np.uint16).reshape(200, 3000)
    want = to_physical(a, t, threads=1)
    calls: list[tuple] = []
    monkeypatch.setattr(engine, "_kernel", _copy_spy(engine._kernel, calls))
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    for threads in (2, 3):
        calls.clear()
        assert (to_physical(a, t, threads=threads) == want).all()
        (_, _, tasks, _, workers), = calls
        assert workers == threads
        boxes: dict[tuple, list[int]] = {}  # the pieces of each box, by its strides
        for task in tasks:
            boxes.setdefault((task[3], task[4]), []).append(task[2][0])
        assert len(boxes) == 2
        for lengths in boxes.values():
            assert len(lengths) == min(engine.PIECES_PER_THREAD * threads, sum(lengths))
            assert max(lengths) - min(lengths) <= 1


def test_packed_threads_claim_near_equal_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    # the packed copies' boxes of whole bytes, cut in near-equal pieces (pieces cut at ceil
    # steps gave one of three threads half the work), in one call the kernel's threads claim
    if pack_path._pack is None:
        pytest.skip("the C packing kernel was not built")
    t = PhysicalTarget.from_xla("s4[64,1000]{1,0:T(8,128)(8,1)E(4)}")
    a = np.random.default_rng(5).integers(-8, 8, (64, 1000)).astype(np.int8)
    want = to_physical(a, t, threads=1)
    calls: list[tuple[str, tuple]] = []
    kernel = pack_path._pack

    class Spy:
        def __getattr__(self, name: str) -> Callable[..., object]:
            def call(*args: object) -> object:
                calls.append((name, args))
                return getattr(kernel, name)(*args)
            return call

    monkeypatch.setattr(pack_path, "_pack", Spy())
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # one threshold for the kernel and packed copies
    for threads in (2, 3):
        for direction in ("to", "from"):
            calls.clear()
            if direction == "to":
                assert (to_physical(a, t, threads=threads) == want).all()
            else:
                assert (from_physical(want, t, threads=threads) == a).all()
            (args,) = [args for _, args in calls if args[-1] == threads]  # workers, last
            boxes: dict[tuple, list[int]] = {}  # the pieces of each box, by kind and strides
            for task in args[2]:
                boxes.setdefault((task[0], task[4], task[5]), []).append(task[3][0])
            assert boxes
            for lengths in boxes.values():  # 1-D tasks cut on whole bytes (2 slots of s4)
                assert len(lengths) <= engine.PIECES_PER_THREAD * threads
                assert len(lengths) == engine.PIECES_PER_THREAD * threads or sum(lengths) < 4 * len(lengths)
                assert max(lengths) - min(lengths) <= 4


def test_threads_are_checked_and_do_not_change_results(monkeypatch: pytest.MonkeyPatch) -> None:
    t = _fresh()
    a = _data()
    to_physical(a, t)  # remembered with threads=None
    for bad in ["2", -1, 1.5, True, [2]]:
        with pytest.raises(LayoutError, match=r"threads must be an int >= 0 \(0 and 1: the calling thread"):
            to_physical(a, t, threads=bad)  # type: ignore[arg-type]
        with pytest.raises(LayoutError, match=r"threads must be an int >= 0 \(0 and 1: the calling thread"):
            from_physical(_want(a, t), t, threads=bad)  # type: ignore[arg-type]
        with pytest.raises(LayoutError, match=r"threads must be an int >= 0 \(0 and 1: the calling thread"):
            relayout(_want(a, t), t, "f32[24,300]{0,1:T(8,128)}", threads=bad)  # type: ignore[arg-type]
    to_physical(a, t, threads=2)
    from_physical(_want(a, t), t, threads=2)
    for equal in [2.0, np.int64(2)]:  # equal to a remembered cap, but not an int
        with pytest.raises(LayoutError, match=r"threads must be an int >= 0 \(0 and 1: the calling thread"):
            to_physical(a, t, threads=equal)  # type: ignore[arg-type]
        with pytest.raises(LayoutError, match=r"threads must be an int >= 0 \(0 and 1: the calling thread"):
            from_physical(_want(a, t), t, threads=equal)  # type: ignore[arg-type]
    to_physical(a, t, threads=1)
    with pytest.raises(LayoutError, match=r"threads must be an int >= 0 \(0 and 1: the calling thread"):
        to_physical(a, t, threads=True)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    one = to_physical(a, t, threads=1)
    assert all((to_physical(a, t, threads=n) == one).all() for n in (0, 2, 3, 4, 7))
    assert all((from_physical(one, t, threads=n) == a).all() for n in (1, 2, 5))
    direct = relayout(one, t, "f32[24,300]{0,1:T(8,128)}", threads=1)
    assert all((relayout(one, t, "f32[24,300]{0,1:T(8,128)}", threads=n) == direct).all() for n in (2, 3))
    s4 = "s4[64,300]{1,0:T(8,128)(8,1)E(4)}"
    nibbles = np.random.default_rng(3).integers(-8, 8, (64, 300)).astype(np.int8)
    packed = to_physical(nibbles, s4, threads=1)
    assert all((to_physical(nibbles, s4, threads=n) == packed).all() for n in (2, 3))
    assert all((from_physical(packed, s4, threads=n) == nibbles).all() for n in (1, 2, 3))
    monkeypatch.setenv("TENSORLAYOUT_THREADS", "3")
    assert (to_physical(a, t) == one).all()
    monkeypatch.setenv("TENSORLAYOUT_THREADS", "many")
    with pytest.raises(LayoutError, match=r"TENSORLAYOUT_THREADS must be a whole number, not 'many'"):
        to_physical(a, t)


def test_a_buffer_of_another_shape_or_strides() -> None:
    t = _fresh()
    a = _data()
    buf = _want(a, t)
    from_physical(buf, t)  # remembered for a 1-D contiguous buffer
    assert (from_physical(buf.reshape(-1, 8), t) == a).all()
    spaced = np.zeros(2 * buf.size, np.float32)
    spaced[::2] = buf
    assert (from_physical(spaced[::2], t) == a).all()
    with pytest.raises(LayoutError, match=r"f32\[24,300\]\{1,0:T\(8,128\)\}: expected a buffer of 9216"):
        from_physical(buf[:-1], t)
    to_physical(a, t)  # remembered for (24, 300)
    with pytest.raises(LayoutError,
        match=r"f32\[24,300\]\{1,0:T\(8,128\)\}: expected an array of shape \(24,"):
        to_physical(a.reshape(300, 24), t)


def test_texts_are_remembered_only_for_strided_targets() -> None:
    assert remembered_target(TEXT) is remembered_target(TEXT)
    odd = "f32[3,5]{1,0:T(4,3)(3,2)}"  # no strided description: its offsets would be kept
    assert remembered_target(odd) is not remembered_target(odd)


def test_remembered_calls_are_bounded() -> None:
    t = _fresh()
    for pad in range(call_module.MAX_CALLS + 5):
        to_physical(_data(), t, pad_value=pad)
    assert len(t._calls) <= call_module.MAX_CALLS
    assert (to_physical(_data(), t, pad_value=3) == _want(_data(), t, 3)).all()


def test_a_replaced_target_starts_without_remembered_calls() -> None:
    t = _fresh()
    to_physical(_data(), t)
    other = replace(t, name="renamed")
    assert t._calls and not other._calls and not other._small_calls
    assert (to_physical(_data(), other) == _want(_data(), t)).all()


def test_a_target_with_remembered_calls_pickles_and_deep_copies() -> None:
    t = _fresh("f32[128,128]{1,0:T(8,128)}")
    a = _data(shape=(128, 128))
    want = to_physical(a, t, out=np.empty(t.physical_elements, np.float32))
    assert t._small_calls  # the kernel's, which do not pickle: a copy starts without them
    for other in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert not other._small_calls
        assert (to_physical(a, other, out=np.empty_like(want)) == want).all()
        assert (from_physical(want, other) == a).all()


TARGETS = ["f32[9,300]{1,0:T(8,128)}", "bf16[17,40]{0,1:T(8,128)(2,1)}", "s8[5,6,7]{0,2,1:T(4,4)}",
           "f64[]", "u8[33]{0:T(8)}", "f32[3,5]{1,0:T(4,3)(3,2)}"]
VIEWS = [lambda x: x, lambda x: x[::-1] if x.ndim else x, lambda x: x.T.copy().T,
         lambda x: np.repeat(x, 2, axis=-1)[..., ::2] if x.ndim else x]
DTYPES = {"f32": [np.float32, np.int32, np.uint32], "bf16": [np.uint16, np.float16, np.int16],
          "s8": [np.int8, np.uint8, np.bool_], "f64": [np.float64, np.int64], "u8": [np.uint8, np.int8]}


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_repeated_calls_match_the_definition(data: st.DataObject) -> None:
    """A run of calls on one target with inputs varied at random, each checked from scratch."""
    text = data.draw(st.sampled_from(TARGETS))
    t = remembered_target(text)
    kinds = DTYPES.get(text.split("[")[0], [np.float32])
    for _ in range(6):
        dtype = data.draw(st.sampled_from(kinds))
        a = VIEWS[data.draw(st.integers(0, 3))](
            np.random.default_rng(data.draw(st.integers(0, 9))).integers(0, 2, t.logical_shape).astype(dtype))
        pad = data.draw(st.sampled_from([0, 1, True, 0.0]))
        want = _want(a, t, pad)
        out = np.full(t.physical_elements, 3, dtype) if data.draw(st.booleans()) else None
        got = to_physical(a, text, pad_value=pad, out=out)
        assert got.dtype == want.dtype and (got == want).all() and (out is None or got is out)
        back_out = VIEWS[data.draw(st.integers(0, 3))](np.zeros(t.logical_shape, dtype)) \
            if data.draw(st.booleans()) else None
        if back_out is not None and not back_out.flags.writeable:
            back_out = None
        back = from_physical(got, text, out=back_out)
        assert back.dtype == a.dtype and (back == a).all() and (back_out is None or back is back_out)
