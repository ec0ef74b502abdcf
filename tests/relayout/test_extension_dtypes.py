"""Arrays of number types registered from outside numpy (``ml_dtypes``: bfloat16, float8_*,
int4 — what jax's arrays of those types are on the host) relayout like the numbers of their
width: every byte equals the same call on the array viewed as unsigned integers of that width
(a path the definition tests already cover), the pad value is checked against the type itself,
and raw records stay refused."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.errors import LayoutError
from tensorlayout.relayout import from_physical, relayout, to_physical
from tensorlayout.relayout._checks import is_extension_integer, is_extension_number

ml_dtypes = pytest.importorskip("ml_dtypes")

FLOATS = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz"]
LAYOUTS = {  # element bits -> tilings the TPU uses for that width, with ragged shapes
    16: ["bf16[37,300]{1,0:T(8,128)(2,1)}", "bf16[37,300]{0,1:T(8,128)(2,1)}",
         "bf16[5,9,130]{2,0,1:T(4,128)(2,1)}"],
    8: ["s8[37,300]{1,0:T(8,128)(4,1)}", "s8[37,300]{0,1:T(32,128)(4,1)}",
        "s8[5,9,130]{1,2,0:T(8,128)(4,1)}"],
}


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def _random(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    dtype = np.dtype(getattr(ml_dtypes, name))
    bits = np.random.default_rng(seed).integers(0, 1 << (8 * dtype.itemsize), size=shape)
    return bits.astype(_unsigned(dtype)).view(dtype)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("threads", [1, 3])
def test_moves_equal_the_unsigned_view(name: str, threads: int) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name))
    for k, text in enumerate(LAYOUTS[8 * dtype.itemsize]):
        shape = tuple(int(d) for d in text[text.index("[") + 1:text.index("]")].split(","))
        a = _random(name, shape, k)
        pad = np.array(-2.0, dtype)
        got = to_physical(a, text, pad_value=-2.0, threads=threads)
        want = to_physical(a.view(_unsigned(dtype)), text, pad_value=int(pad.view(_unsigned(dtype))),
                           threads=threads)
        assert got.dtype == dtype and np.array_equal(got.view(_unsigned(dtype)), want)
        back = from_physical(got, text, threads=threads)
        assert back.dtype == dtype and np.array_equal(back.view(_unsigned(dtype)), a.view(_unsigned(dtype)))
        other = LAYOUTS[8 * dtype.itemsize][(k + 1) % 3]
        if shape == tuple(int(d) for d in other[other.index("[") + 1:other.index("]")].split(",")):
            moved = relayout(got, text, other, pad_value=-2.0)
            unsigned = _unsigned(dtype)
            assert np.array_equal(from_physical(moved, other).view(unsigned), a.view(unsigned))


def test_pad_values_are_checked_against_the_type() -> None:
    a = np.zeros((3, 5), ml_dtypes.bfloat16)
    text = "bf16[3,5]{1,0:T(8,128)(2,1)}"
    padded = to_physical(a, text, pad_value=0.1)  # rounded to bfloat16, as numpy rounds
    assert padded[-1] == np.array(0.1, ml_dtypes.bfloat16)
    assert np.isnan(to_physical(a, text, pad_value=float("nan"))[-1])
    with pytest.raises(LayoutError, match=r"pad_value 1e\+39 does not fit the bfloat16 buffer"):
        to_physical(a, text, pad_value=1e39)
    with pytest.raises(LayoutError, match=r"pad_value 1j does not fit"):
        to_physical(a, text, pad_value=1j)
    with pytest.raises(LayoutError, match=r"pad_value 1000000 does not fit the float8_e4m3fn buffer"):
        to_physical(np.zeros((3, 5), ml_dtypes.float8_e4m3fn), "s8[3,5]{1,0:T(8,128)(4,1)}", pad_value=10**6)


def test_extension_integers_take_integers_they_hold() -> None:
    a = np.arange(15).reshape(3, 5).astype(ml_dtypes.int4) if hasattr(ml_dtypes, "int4") else None
    if a is None:
        pytest.skip("ml_dtypes without int4")
    assert is_extension_integer(a.dtype) and not is_extension_integer(np.dtype(ml_dtypes.bfloat16))
    got = to_physical(a, "s8[3,5]{0,1:T(8,128)}", pad_value=-3)
    assert np.array_equal(from_physical(got, "s8[3,5]{0,1:T(8,128)}").view(np.uint8), a.view(np.uint8))
    for bad in (9, 0.5):
        with pytest.raises(LayoutError, match="does not fit the int4 buffer"):
            to_physical(a, "s8[3,5]{0,1:T(8,128)}", pad_value=bad)
    with pytest.raises(LayoutError, match=r"packed 4-bit elements need an integer array, but got int4"):
        to_physical(a, "s4[3,5]{1,0:T(8,128)(8,1)E(4)}")


def test_raw_records_stay_refused() -> None:
    assert not is_extension_number(np.dtype("V2")) and is_extension_number(np.dtype(ml_dtypes.bfloat16))
    for dtype in (np.dtype("V2"), np.dtype([("a", "u1"), ("b", "u1")])):
        with pytest.raises(LayoutError, match=r"relayout moves numbers, not .* \(object or void\)"):
            to_physical(np.zeros((3, 5), dtype), "bf16[3,5]{1,0:T(8,128)(2,1)}")


def test_jax_bfloat16_arrays_in_place() -> None:
    jnp = pytest.importorskip("jax.numpy")
    a = _random("bfloat16", (16, 300), 7)
    text = "bf16[16,300]{0,1:T(8,128)(2,1)}"
    got = to_physical(jnp.asarray(a), text)
    assert np.array_equal(got.view(np.uint16), to_physical(a.view(np.uint16), text))
