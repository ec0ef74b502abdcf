"""One-pass ``relayout`` between two physical layouts (no logical intermediate) against the
two-pass recipe and a brute-force reference: nesting tilings of every kind, ragged dims,
padding values, odd buffers, 1 or N threads, with and without the C kernel; layouts whose
tilings do not nest take the two-pass path and give the same answer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout.cute import tla
from tensorlayout.errors import LayoutError
from tensorlayout.relayout import _direct as direct
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.relayout._direct import common_digits, is_direct

LAYOUTS = ["{1,0:T(8,128)(2,1)}", "{0,1:T(8,128)(2,1)}", "{1,0}", "{0,1}", "{1,0:T(2,4)}",
           "{0,1:T(4,2)(2,1)}", "{1,0:T(16,16)}", "{0,1:T(8,128)}", "{1,0:T(4,128)(2,1)}"]


@pytest.fixture
def one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every nesting pair copied in one pass, short runs too (so the one-pass copier is tested)."""
    monkeypatch.setattr(direct, "MIN_RUN", 1)
    monkeypatch.setattr(direct, "MIN_RUN_BYTES", 1)
    monkeypatch.setattr(direct, "MIN_COMMON_BYTES", 1)


@settings(suppress_health_check=list(HealthCheck), max_examples=60, deadline=None)
@given(src=st.sampled_from(LAYOUTS), dst=st.sampled_from(LAYOUTS), rows=st.integers(1, 40),
       cols=st.integers(1, 300), threads=st.sampled_from([1, 3]), pad=st.integers(0, 9))
def test_direct_relayout_matches_the_two_pass_recipe(engine_mode: str, one_pass: None, src: str, dst: str,
                                                     rows: int, cols: int, threads: int, pad: int) -> None:
    s, d = as_target(f"u16[{rows},{cols}]{src}"), as_target(f"u16[{rows},{cols}]{dst}")
    assert is_direct(s, d)  # power-of-two tilings nest (MIN_RUN is 1 here)
    data: np.ndarray = np.random.default_rng(rows * cols).integers(0, 60000, (rows, cols)).astype(np.uint16)
    buf = to_physical(data, s, pad_value=7)
    want = to_physical(data, d, pad_value=pad)
    got = relayout(buf, s, d, pad_value=pad, threads=threads)
    assert np.array_equal(got, want)
    assert np.array_equal(from_physical(got, d), data)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64, np.complex128])
def test_direct_relayout_every_width_and_tla(engine_mode: str, one_pass: None, dtype: type) -> None:
    bits = np.dtype(dtype).itemsize * 8
    name = {8: "u8", 32: "f32", 64: "f64", 128: "c128"}[bits]
    data: np.ndarray = np.random.default_rng(bits).integers(0, 100, (37, 70)).astype(dtype)
    s, d = f"{name}[37,70]{{0,1:T(8,8)}}", f"{name}[37,70]{{1,0:T(4,16)(2,1)}}"
    assert np.array_equal(relayout(to_physical(data, s), s, d), to_physical(data, d))
    zn = tla.make_format("zN", 37, 70, "f16")
    nz = tla.make_format("nZ", 37, 70, "f16")
    half = data.real.astype(np.float16)
    assert np.array_equal(relayout(to_physical(half, zn), zn, nz, pad_value=-1),
                          to_physical(half, nz, pad_value=-1))


@pytest.mark.parametrize("how", ["reversed", "strided", "readonly", "aliased-out"])
def test_direct_relayout_odd_buffers(engine_mode: str, one_pass: None, how: str) -> None:
    s, d = "s32[20,40]{1,0:T(8,8)}", "s32[20,40]{0,1:T(4,8)}"
    data = np.arange(800, dtype=np.int32).reshape(20, 40)
    buf, want = to_physical(data, s), to_physical(data, d)
    if how == "reversed":
        arg = np.ascontiguousarray(buf[::-1])[::-1]
    elif how == "strided":
        arg = np.zeros(2 * buf.size, np.int32)[::2]
        arg[...] = buf
    else:
        arg = buf.copy()
        arg.setflags(write=how != "readonly")
    if how == "aliased-out" and arg.size >= want.size:
        out = arg[:want.size]  # the output overwrites its own input
        assert np.array_equal(relayout(arg, s, d, out=out), want)
        return
    assert np.array_equal(relayout(arg, s, d), want)


def test_direct_relayout_refuses_bad_buffers() -> None:
    s, d = "f32[8,8]{1,0:T(4,4)}", "f32[8,8]{0,1}"
    with pytest.raises(LayoutError, match="64 elements"):
        relayout(np.zeros(63, np.float32), s, d)
    with pytest.raises(LayoutError, match="bits"):
        relayout(np.zeros(64, np.float64), s, d)
    with pytest.raises(LayoutError, match="pad_value"):
        relayout(np.zeros(64, np.float32), s, d, pad_value="x")
    with pytest.raises(LayoutError, match="out"):
        relayout(np.zeros(64, np.float32), s, d, out=np.zeros(63, np.float32))


def test_tilings_that_do_not_nest_take_the_two_pass_path() -> None:
    s, d = as_target("f32[12,12]{1,0:T(3,4)}"), as_target("f32[12,12]{1,0:T(2,2)}")
    assert not is_direct(s, d)
    data = np.arange(144, dtype=np.float32).reshape(12, 12)
    assert np.array_equal(relayout(to_physical(data, s), s, d), to_physical(data, d))


def test_common_digits_of_nesting_radices() -> None:
    # T(8,128)(2,1) rows (blocks 8, 2, 1) against a column-major dim split by 128 (blocks 128, 1)
    s = as_target("bf16[4096,256]{1,0:T(8,128)(2,1)}").digits
    d = as_target("bf16[4096,256]{0,1:T(8,128)(2,1)}").digits
    assert s is not None and d is not None
    refined = common_digits(s[0], d[0], 4096)
    assert refined is not None and [size for size, _, _ in refined] == [32, 16, 4, 2]


def test_an_output_aliasing_the_input_is_read_before_the_padding_is_written() -> None:
    # the padding fill used to run first and overwrite the input it aliases
    text = "s32[3,5]{1,0:T(2,2)}"  # 24 slots, 9 of them padding
    store = np.arange(24, dtype=np.int32)
    data = store[:15].reshape(3, 5)
    want = to_physical(data.copy(), text, pad_value=-1)
    assert np.array_equal(to_physical(data, text, pad_value=-1, out=store), want)


def test_short_runs_against_each_other_take_the_two_pass_path() -> None:
    # a (4,1) sub-tile against a transposed one, or 4-byte items in (2,1) sub-tiles, leave
    # the kernel 4x4 or 2x2 tiles: two passes are faster
    s = as_target("s8[64,256]{1,0:T(8,128)(4,1)}")
    assert not is_direct(s, as_target("s8[64,256]{0,1:T(8,128)(4,1)}"))
    f32 = "f32[64,256]{1,0:T(8,128)(2,1)}", "f32[64,256]{0,1:T(8,128)(2,1)}"
    assert not is_direct(as_target(f32[0]), as_target(f32[1]))
    s = as_target("bf16[64,256]{1,0:T(8,128)(2,1)}")
    assert is_direct(s, as_target("bf16[64,256]{1,0:T(16,128)(2,1)}"))  # the same runs
    assert is_direct(as_target("f32[64,256]{1,0:T(8,128)}"), as_target("f32[64,256]{0,1:T(8,128)}"))


def test_a_two_by_two_subtile_against_its_transpose_is_one_pass() -> None:
    # the kernel moves 2 x 2 blocks of 1- or 2-byte items whole, swapping their middle items
    for dtype in ("bf16", "s8", "u16"):
        s = as_target(f"{dtype}[64,256]{{1,0:T(8,128)(2,1)}}")
        assert is_direct(s, as_target(f"{dtype}[64,256]{{0,1:T(8,128)(2,1)}}"))
