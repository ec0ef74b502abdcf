"""The kernel's small calls (``_kernel.c``, ``_copy.small_call``): a remembered call with an
``out`` array runs in C, and only when the Python path would do the same. Each run of calls
here is made twice from the same bytes — on a target with remembered calls (small calls on)
and on a fresh target (the Python path alone) — and must leave every byte of memory the same
and raise the same errors: wrong-size, read-only, non-contiguous, overlapping and unaligned
``out`` arrays included, with guard bytes around every array."""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._copy as engine
from tensorlayout.errors import LayoutError
from tensorlayout.relayout import PhysicalTarget, from_physical, to_physical
from tensorlayout.relayout._call import FromPhysical, ToPhysical
from tensorlayout.relayout._padding import fill_order, padding_boxes
from tensorlayout.relayout._plan import copy_plan

pytestmark = pytest.mark.skipif(not engine.kernel_available(), reason="the C copy kernel was not built")

TEXTS = ["f32[128,128]{1,0:T(8,128)}", "f32[3,5]{1,0:T(2,2)}", "bf16[17,40]{0,1:T(8,128)(2,1)}",
         "s8[5,6,7]{0,2,1:T(4,4)}", "u8[33]{0:T(8)}", "s32[8,8]{0,1}", "f64[]",
         "f32[24,300]{1,0:T(8,128)}", "s8[100,300]{1,0:T(32,128)(4,1)}",  # padding boxes (not filled whole)
         "s8[5,50,300]{2,1,0:T(4,128)(4,1)}", "bf16[3,33,130]{2,1,0:T(8,128)(2,1)}"]  # ... of short rows
DTYPES = {"f32": [np.float32, np.int32], "bf16": [np.uint16, np.float16], "s8": [np.int8, np.bool_],
          "u8": [np.uint8, np.int8], "s32": [np.int32, np.float32], "f64": [np.float64, np.int64]}
GUARD = 64  # bytes around every array, which no call may touch


def _view(base: np.ndarray, offset: int, shape: tuple[int, ...], dtype: np.dtype,
          order: str = "C") -> np.ndarray:
    """An array over ``base``'s bytes from ``offset``: C order, F order, reversed or spaced."""
    item = dtype.itemsize
    strides = [item] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    if order == "F":
        strides = [item] * len(shape)
        for k in range(1, len(shape)):
            strides[k] = strides[k - 1] * shape[k - 1]
    if order == "spaced":
        strides = [2 * s for s in strides]
    if order == "reversed" and shape:
        offset += (shape[0] - 1) * strides[0]
        strides[0] = -strides[0]
    return np.ndarray(shape, dtype, base, offset, tuple(strides))


def _outcome(run: Callable[[], np.ndarray], base: np.ndarray, out: np.ndarray | None) -> tuple:
    """(error type or "", every byte of base afterwards, whether the result is out, a new
    result's dtype, shape and bytes)."""
    try:
        result = run()
    except LayoutError as e:
        return type(e).__name__, base.tobytes(), False
    new = None if out is not None else (result.dtype, result.shape, result.tobytes())
    return "", base.tobytes(), result is out, new


def _bytes_of(shape: tuple[int, ...], dtype: np.dtype, order: str) -> int:
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize * (2 if order == "spaced" else 1)


BAD = {"out_shape": ["short", "long"], "out_dtype": ["other"], "out_shift": [1, 2, 4, 8],
       "readonly": [True], "overlap": [True], "out_order": ["F", "reversed", "spaced"],
       "pad": [300, 2**40, True, 0.0, -0.0], "threads": [2.0, True]}


@st.composite
def _case(draw: st.DrawFn) -> dict:
    """A call whose arguments are good but for at most two, drawn from BAD."""
    text = draw(st.sampled_from(TEXTS))
    c = {"text": text, "dtype": np.dtype(draw(st.sampled_from(DTYPES[text.split("[")[0]]))),
         "in_order": draw(st.sampled_from(["C", "F", "reversed", "spaced"])),
         "out_order": "C", "out_shape": draw(st.sampled_from(["flat", "2d", "none"])), "out_dtype": "same",
         "out_shift": 0, "readonly": False, "overlap": False,
         "pad": draw(st.sampled_from([0, 1, -1, 7])), "threads": draw(st.sampled_from([None, 0, 1, 2])),
         "seed": draw(st.integers(0, 99))}
    for key in draw(st.lists(st.sampled_from([None, None, None, *BAD]), max_size=2)):
        if key is not None:
            c[key] = draw(st.sampled_from(BAD[key]))
    return c


def _arrays(c: dict, t: PhysicalTarget, to: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(base, input, out) for case ``c``: the input at GUARD bytes into base, out after it (or
    over the same bytes when overlapping), everything else random guard bytes."""
    dtype: np.dtype = c["dtype"]
    logical, physical = t.logical_shape, (t.physical_elements,)
    in_shape, in_order = (logical, c["in_order"]) if to else \
        (physical, c["in_order"] if c["in_order"] == "spaced" else "C")
    n_out = t.physical_elements if to else int(np.prod(logical, dtype=np.int64))
    out_shape = {"flat": (n_out,) if to else logical, "2d": (1, n_out) if to else logical, "none": (n_out,),
                 "short": (n_out - 1,), "long": (n_out + 1,)}[c["out_shape"]]
    other = np.dtype(np.float64 if dtype.itemsize != 8 else np.int8)
    out_dtype = dtype if c["out_dtype"] == "same" else other
    out_order = "C" if to and c["out_order"] in ("F", "reversed") else c["out_order"]
    in_bytes = _bytes_of(in_shape, dtype, in_order)
    out_bytes = _bytes_of(out_shape, out_dtype, out_order)
    out_at = GUARD if c["overlap"] else GUARD + in_bytes + GUARD
    size = max(GUARD + in_bytes, out_at + c["out_shift"] + out_bytes) + GUARD
    base = np.random.default_rng(c["seed"]).integers(0, 256, size).astype(np.uint8)
    a = _view(base, GUARD, in_shape, dtype, in_order)
    if dtype == np.bool_:
        a[...] = a.view(np.uint8) & 1 if a.ndim else bool(a.view(np.uint8) & 1)
    elif dtype.kind == "f":
        a[...] = np.arange(a.size).reshape(a.shape) % 13 - 6
    out = _view(base, out_at + c["out_shift"], out_shape, out_dtype, out_order)
    if c["readonly"]:
        out.setflags(write=False)
    return base, a, out


def _run(c: dict, t: PhysicalTarget, to: bool) -> tuple:
    base, a, given = _arrays(c, t, to)
    out = None if c["out_shape"] == "none" else given
    if to:
        return _outcome(lambda: to_physical(a, t, c["pad"], out=out, threads=c["threads"]), base, out)
    return _outcome(lambda: from_physical(a, t, out=out, threads=c["threads"]), base, out)


def _warm(t: PhysicalTarget, c: dict, to: bool) -> None:
    """Remember calls on ``t`` for every order and for case ``c``'s key with a good out."""
    for order, shape in itertools.product(("C", "F", "reversed", "spaced"), ("flat", "none")):
        good = dict(c, out_shape=shape, out_dtype="same", out_shift=0, readonly=False, overlap=False,
                    in_order=order, out_order=order)
        _run(good, t, to)


@given(st.lists(_case(), min_size=1, max_size=6), st.booleans())
@settings(max_examples=150, deadline=None)
def test_small_calls_leave_the_same_bytes_as_the_python_path(cases: list[dict], to: bool) -> None:
    warm = {text: PhysicalTarget.from_xla(text) for text in TEXTS}
    for c in cases:
        t = warm[c["text"]]
        _warm(t, c, to)
        remembered = _run(c, t, to)
        fresh = _run(c, PhysicalTarget.from_xla(c["text"]), to)
        assert remembered == fresh, c


def _remembered(text: str) -> tuple[PhysicalTarget, np.ndarray, np.ndarray, np.ndarray]:
    t = PhysicalTarget.from_xla(text)
    a = np.arange(np.prod(t.logical_shape), dtype=np.float32).reshape(t.logical_shape)
    buf = np.empty(t.physical_elements, np.float32)
    back = np.empty_like(a)
    to_physical(a, t, out=buf)
    from_physical(buf, t, out=back)
    assert len(t._small_calls) == 2
    return t, a, buf, back


def test_a_remembered_call_with_out_runs_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    t, a, buf, back = _remembered("f32[128,128]{1,0:T(8,128)}")
    want = buf.copy()

    def python_path(*args: object) -> None:
        raise AssertionError("the Python path ran")

    monkeypatch.setattr(ToPhysical, "__call__", python_path)
    monkeypatch.setattr(FromPhysical, "__call__", python_path)
    buf[...] = 0
    back[...] = 0
    assert to_physical(a, t, out=buf) is buf and (buf == want).all()
    assert from_physical(buf, t, out=back) is back and (back == a).all()


def test_a_remembered_call_without_out_runs_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    t, a, buf, back = _remembered("f32[128,128]{1,0:T(8,128)}")
    to_physical(a, t)
    from_physical(buf, t)  # remembered without out
    assert len(t._small_calls) == 3  # to_physical's serves both

    def python_path(*args: object) -> None:
        raise AssertionError("the Python path ran")

    monkeypatch.setattr(ToPhysical, "__call__", python_path)
    monkeypatch.setattr(FromPhysical, "__call__", python_path)
    got = to_physical(a, t)
    assert got is not buf and got.shape == buf.shape and got.dtype == buf.dtype and (got == buf).all()
    again = from_physical(buf, t)
    assert again is not back and again.shape == a.shape and again.flags.c_contiguous and (again == a).all()


@pytest.mark.parametrize("switch", [
    lambda m: m.setattr(engine, "USE_KERNEL", False),
    lambda m: m.setattr(engine, "_kernel", None),
    lambda m: m.setattr(engine, "THREAD_MIN_BYTES", 1),
    lambda m: m.setattr(engine, "STREAM_MIN_BYTES", 1),
])
def test_the_engine_switches_turn_small_calls_off(monkeypatch: pytest.MonkeyPatch,
                                                  switch: Callable[[pytest.MonkeyPatch], None]) -> None:
    t, a, buf, back = _remembered("f32[128,128]{1,0:T(8,128)}")
    switch(monkeypatch)
    assert engine.to_physical_small is not None and engine.from_physical_small is not None
    assert engine.to_physical_small(t, a, buf, 0, None) is None
    assert engine.from_physical_small(t, buf, back, None) is None
    monkeypatch.undo()
    assert engine.to_physical_small(t, a, buf, 0, None) is buf
    assert engine.from_physical_small(t, buf, back, None) is back


def test_a_small_call_needs_its_whole_key() -> None:
    t, a, buf, _ = _remembered("f32[3,5]{1,0:T(2,2)}")
    small = engine.to_physical_small
    assert small is not None and small(t, a, buf, 0, None) is buf
    assert small(t, a, buf, 1, None) is None  # another pad value
    assert small(t, a, buf, 0.0, None) is None  # not an int: -0.0 == 0
    assert small(t, a, buf, False, None) is None
    assert small(t, a, buf, 0, 1) is None  # another thread cap
    assert small(t, a.astype(np.int32), buf.view(np.int32), 0, None) is None
    assert small(t, np.asfortranarray(a), buf, 0, None) is None
    assert small(t, a.tolist(), buf, 0, None) is None
    assert small(t, a, buf[:-1], 0, None) is None
    assert small(t, a, np.zeros(2 * buf.size, np.float32)[::2], 0, None) is None
    assert small(PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}"), a, buf, 0, None) is None
    raw = np.zeros(buf.nbytes + 1, np.uint8)
    assert small(t, a, raw[1:].view(np.float32), 0, None) is None  # unaligned: numpy path
    assert small(t, a, raw[:-1].view(np.float32), 0, None) is not None


def test_threads_clearing_the_remembered_calls_while_others_run_them() -> None:
    """Small calls stay alive while they copy, though another thread forgets them (MAX_CALLS)."""
    t = PhysicalTarget.from_xla("f32[64,128]{1,0:T(8,128)}")
    a = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    want = to_physical(a, t)
    failures: list[str] = []

    def work(seed: int) -> None:
        out = np.empty_like(want)
        for i in range(300):
            pad = (seed * 300 + i) % 80  # more keys than MAX_CALLS: the lists are cleared
            if not (to_physical(a, t, pad, out=out) == want).all() or not (from_physical(out, t) == a).all():
                failures.append(f"thread {seed}, call {i}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures


@pytest.mark.parametrize("text", ["f32[64,32,128]{0,2,1:T(8,128)}", "f32[24,300]{1,0:T(8,128)}",
                                  "s8[100,300]{1,0:T(32,128)(4,1)}", "bf16[17,40]{0,1:T(8,128)(2,1)}"])
def test_padding_boxes_are_filled_along_their_smallest_stride(text: str) -> None:
    """The kernel fills a box's last axis in its inner loop: that must be the contiguous one
    (f32[64,32,128]{0,2,1:T(8,128)} took 480 us instead of 70 filling 512 bytes apart)."""
    t = PhysicalTarget.from_xla(text)
    for box in padding_boxes(copy_plan(t), 4):
        _, shape, strides = fill_order(box)
        assert list(strides) == sorted(strides, key=abs, reverse=True) and len(shape) == len(strides)
        assert all(strides[k] != shape[k + 1] * strides[k + 1] for k in range(len(shape) - 1))  # merged


def test_small_calls_keep_reference_counts() -> None:
    """No reference leaks or losses in the C path (with and without out, hits and misses)."""
    t, a, buf, back = _remembered("f32[3,5]{1,0:T(2,2)}")
    to_physical(a, t)
    from_physical(buf, t)
    objects = [a, buf, back, a.dtype, t, t._small_calls, 7, 2]

    def calls() -> None:
        to_physical(a, t, out=buf)
        to_physical(a, t)
        to_physical(a, t, 7, out=buf)
        from_physical(buf, t, out=back)
        from_physical(buf, t)
        from_physical(buf, t, out=back, threads=2)

    calls()  # remembers the calls of pad 7 and of threads=2
    objects += list(t._small_calls)  # the kernel's capsules
    before = [sys.getrefcount(x) for x in objects]
    for _ in range(1000):
        calls()
        assert engine.to_physical_small is not None
        assert engine.to_physical_small(t, a[::-1], buf, 0, None) is None  # misses too
    assert [sys.getrefcount(x) for x in objects] == before


def test_a_small_call_refuses_tasks_outside_its_arrays() -> None:
    make = engine._new_small_call
    assert make is not None
    dst, src = np.zeros(16, np.float32), np.zeros(16, np.float32)
    good = [(0, 0, (4, 4), (16, 4), (16, 4))]
    assert make(dst, src, good, True, src.dtype, None, 0, None, 64, 4, False, (16,)) is not None
    for bad in ([(4, 0, (4, 4), (16, 4), (16, 4))], [(0, 0, (4, 5), (16, 4), (16, 4))],
                [(0, -4, (4, 4), (16, 4), (16, 4))]):
        with pytest.raises(IndexError, match=r"copy: a task leaves the"):
            make(dst, src, bad, True, src.dtype, None, 0, None, 64, 4, False, (16,))
    fill = (bytes(4), [(60, 0, (2,), (4,), (0,))])  # a padding box past the end
    with pytest.raises(IndexError, match=r"copy: a task leaves the destination array"):
        make(dst, src, good, True, src.dtype, None, 0, fill, 64, 4, False, (16,))
