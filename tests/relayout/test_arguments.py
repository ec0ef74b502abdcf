"""Arguments of the relayout functions: rank-0 targets, and typed errors raised before
anything is allocated (element types, pad values, widths for every kind of target, sizes)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorlayout.relayout as relayout_module
import tensorlayout.relayout._buffers as buffers
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import LayoutError
from tensorlayout.relayout import PhysicalTarget, as_target, from_cute, from_physical, relayout, to_physical


def test_rank0_targets() -> None:
    buf = to_physical(np.array(1.5), "f64[]")
    assert buf.shape == (1,) and buf.tolist() == [1.5]
    source = np.array([2.5])
    back = from_physical(source, "f64[]")
    assert back.shape == () and back.dtype == np.float64 and float(back) == 2.5
    assert not np.shares_memory(back, source)  # a new array, not a view of the buffer
    source[0] = 0
    assert float(back) == 2.5
    assert relayout(np.array([3.5]), "f64[]", PhysicalTarget.from_xla("f64[]")).tolist() == [3.5]
    # objects are not numbers: no object array comes back
    with pytest.raises(LayoutError, match=r"s64\[\]: relayout moves numbers, not object \(object or void\)"):
        from_physical(np.array([1.5], dtype=object), "s64[]")
    with pytest.raises(LayoutError, match=r"f64\[\]: relayout moves numbers, not object \(object or void\)"):
        to_physical(np.array(1.5, dtype=object), "f64[]")
    for bad in (np.zeros(2), np.zeros(0)):
        with pytest.raises(LayoutError, match=r"f64\[\]: expected a buffer of 1 elements, but got"):
            from_physical(bad, "f64[]")


@pytest.fixture
def no_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's allocations fail loudly: a typed error must come first."""
    def refuse(*args: object) -> None:
        raise AssertionError("allocated before the argument check")

    for module in ("_call", "_buffers", "_pack_numpy", "_copy"):
        monkeypatch.setattr(f"tensorlayout.relayout.{module}.allocate", refuse, raising=False)


S4 = "s4[3,5]{1,0:T(2,2)E(4)}"
BAD_CALLS: list[Callable[[], object]] = [
    lambda: to_physical(np.zeros((2, 2), object), "f32[2,2]"),
    lambda: to_physical(np.zeros((2, 2), "V4"), "f32[2,2]"),
    lambda: to_physical(np.zeros((2, 2), [("a", "i2"), ("b", "i2")]), "f32[2,2]"),
    lambda: from_physical(np.zeros(4, object), "f32[2,2]"),
    lambda: from_physical(np.zeros(4, "V4"), "f32[2,2]{0,1}"),
    lambda: from_physical(np.zeros(8, object)[::2], "f32[2,2]{0,1}"),  # not copied first
    lambda: relayout(np.zeros(4, object), "f32[2,2]", "f32[2,2]{0,1}"),
    *[lambda pad=pad: to_physical(np.zeros((3, 5), np.int32), "s32[3,5]{1,0:T(2,2)}", pad_value=pad)
      for pad in ["x", None, 2**70, 1.5, 1j, [0], np.zeros(1)]],
    lambda: to_physical(np.zeros((3, 5), np.uint8), "u8[3,5]{1,0:T(2,2)}", pad_value=-1),
    lambda: to_physical(np.zeros((3, 5), np.float32), "f32[3,5]{1,0:T(2,2)}", pad_value=1e300),
    lambda: to_physical(np.zeros((3, 5), np.float16), "f16[3,5]{1,0:T(2,2)}", pad_value=70000),
    lambda: to_physical(np.zeros((3, 5), np.float64), "f64[3,5]{1,0:T(2,2)}", pad_value=2**2000),
    lambda: to_physical(np.zeros((3, 5), np.complex64), "c64[3,5]{1,0:T(2,2)}", pad_value=1e300j),
    lambda: to_physical(np.zeros((3, 5), np.float32), "f32[3,5]{1,0:T(2,2)}", pad_value=1 + 1j),
    *[lambda pad=pad: to_physical(np.zeros((3, 5), np.int8), S4, pad_value=pad)
      for pad in [1j, 8, -9, 0.5, "x", None]],
    lambda: to_physical(np.zeros((3, 5), np.uint8), "u4[3,5]{1,0:T(2,2)E(4)}", pad_value=-1),
    lambda: to_physical(np.zeros((1, 1), np.float32), "f32[1,1]{1,0:T(1048576,1048576)}"),
    lambda: relayout(np.zeros(1, np.float32), "f32[1,1]", "f32[1,1]{1,0:T(1048576,1048576)}"),
    lambda: to_physical(np.zeros((1, 1), np.int8), "s4[1,1]{1,0:T(2097152,2097152)E(4)}"),
]


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"c64\[3,5\]\{1,0:T\(2,2\)\}:|"
            r"f16\[3,5\]\{1,0:T\(2,2\)\}:|"
            r"f32\[1,1\]\{1,0:T\(1048576,10485|"
            r"f32\[2,2\]\{0,1\}: relayout|"
            r"f32\[2,2\]\{1,0\}: relayout|"
            r"f32\[3,5\]\{1,0:T\(2,2\)\}:|"
            r"f64\[3,5\]\{1,0:T\(2,2\)\}:|"
            r"s32\[3,5\]\{1,0:T\(2,2\)\}:|"
            r"s4\[1,1\]\{1,0:T\(2097152,209715|"
            r"s4\[3,5\]\{1,0:T\(2,2\)E\(4\)\}:|"
            r"u4\[3,5\]\{1,0:T\(2,2\)E\(4\)\}:|"
            r"u8\[3,5\]\{1,0:T\(2,2\)\}:")


@pytest.mark.parametrize("call", BAD_CALLS)
def test_typed_errors_before_any_allocation(no_allocation: None, call: Callable[[], object]) -> None:
    with pytest.raises(LayoutError, match=MESSAGES):
        call()


def test_pad_values_that_fit() -> None:
    a = np.zeros((3, 5), np.int8)
    for pad, want in [(1 + 0j, 1), (np.int64(-8), -8), (7.0, 7), (True, 1)]:
        buf = to_physical(a, S4, pad_value=pad)
        assert (from_physical(buf, S4) == 0).all() and (buf[-1] >> 4) == (want & 15)
    f = np.zeros((3, 5), np.float32)
    assert np.isinf(to_physical(f, "f32[3,5]{1,0:T(2,2)}", pad_value=float("inf"))[-1])
    assert np.isnan(to_physical(f, "f32[3,5]{1,0:T(2,2)}", pad_value=float("nan"))[-1])
    assert to_physical(f, "f32[3,5]{1,0:T(2,2)}", pad_value=2**70)[-1] == 2.0**70
    c = to_physical(np.zeros((3, 5), np.complex64), "c64[3,5]{1,0:T(2,2)}", pad_value=2 - 3j)
    assert c[-1] == 2 - 3j
    b = to_physical(np.zeros((3, 5), bool), "pred[3,5]{1,0:T(2,2)}", pad_value=2**80)
    assert b[-1]


def test_too_large_says_how_large(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LayoutError, match="4398046511104 bytes"):
        to_physical(np.zeros((1, 1), np.float32), "f32[1,1]{1,0:T(1048576,1048576)}")
    monkeypatch.setattr(relayout_module, "MAX_BUFFER_BYTES", 1000)
    with pytest.raises(LayoutError, match="would take 1024 bytes"):
        to_physical(np.zeros((16, 16), np.float32), "f32[16,16]")

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(buffers.np, "empty", no_memory)
    with pytest.raises(LayoutError, match="16 bytes"):
        to_physical(np.zeros((2, 2), np.float32), "f32[2,2]{0,1}")
    with pytest.raises(LayoutError, match="16 bytes"):
        from_physical(np.zeros(4, np.float32), "f32[2,2]{0,1}")


F16_TARGETS: list[Callable[[], object]] = [
    lambda: "f16[40,72]{1,0:T(8,128)(2,1)}",  # XLA, strided
    lambda: "f16[40,72]{1,0:T(3,5)(2,3)}",  # XLA, offsets only
    lambda: tla.make_format("zN", 40, 72, "f16"),  # TLA
    lambda: tla.make_format("nZ", 40, 72, "f16"),
    lambda: from_cute(Layout.parse("(40,72):(72,1)"), element_bits=16),  # CuTe
    lambda: PhysicalTarget.from_digits((40, 72), [[(40, 72)], [(72, 1)]], element_bits=16),
    lambda: PhysicalTarget.from_offsets((40, 72), np.arange(2880), element_bits=16),
]


@pytest.mark.parametrize("make", F16_TARGETS)
def test_width_mismatch_for_every_kind_of_target(make: Callable[[], object]) -> None:
    target = as_target(make())
    assert target.element_bits == 16, target
    wide = np.zeros((40, 72), np.float32)
    with pytest.raises(LayoutError, match="16 bits"):
        to_physical(wide, target)
    with pytest.raises(LayoutError, match="16 bits"):
        from_physical(np.zeros(target.physical_elements, np.float32), target)
    with pytest.raises(LayoutError, match="16 bits"):
        relayout(np.zeros(target.physical_elements, np.float32), target, "f16[40,72]{0,1}")
    narrow = np.arange(2880, dtype=np.float16).reshape(40, 72)
    assert (from_physical(to_physical(narrow, target), target) == narrow).all()


def test_large_results_start_on_a_cache_line() -> None:
    a = np.ones((256, 512), np.float32)  # 512 KiB
    for text in ("f32[256,512]{1,0:T(8,128)}", "f32[256,512]{0,1:T(8,128)}"):
        buf = to_physical(a, text)
        back = from_physical(buf, text)
        assert buf.ctypes.data % buffers.ALIGN_BYTES == 0 and back.ctypes.data % buffers.ALIGN_BYTES == 0
        assert (back == a).all() and back.flags.c_contiguous and back.flags.writeable
