"""Issue 33's reproducers, one test each: the exact answer or a typed error, never a wrap or a
non-library exception, and costs bounded by what is drawn or asked for."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.core.intmath import show_int
from tensorlayout.cute.swizzle import Swizzle, parse_layout
from tensorlayout.errors import LayoutError


def brute_offsets(text: str) -> list[int]:
    """``c(i)`` on Python ints for every 1-D index: the exact reference of ``offsets()``."""
    c = parse_layout(text)
    return [c(i) for i in range(c.size())]


# ---------------------------------------------------------------- W1, W2, E1, E2: composed offsets
@pytest.mark.parametrize("text", [
    "3:4294967295 o _0 o 3:4294967295",  # W1: an outer layout past int64
    "Sw<3,3,-128> o _0 o (_8,_64):(_64,_1)",  # W1: a negative shift of 62 or more
    "Sw<1,0,1> o 9223372036854775808 o 2:1",  # E2: an offset of 2^63
])
def test_composed_offsets_past_int64_are_layout_errors(text: str) -> None:
    assert any(not -(2**63) <= v < 2**63 for v in brute_offsets(text))
    with pytest.raises(LayoutError, match="past int64"):
        parse_layout(text).offsets()


@pytest.mark.parametrize("text", [
    "Sw<1,62,1> o _0 o 4:1",  # E1: a mask past bit 63
    "Sw<1,62,1> o -1 o 4:1",
    "Sw<2,58,-3> o _0 o 8:-1",
    "Sw<3,3,3> o 5 o (_8,_64):(_64,_1)",
    "2:3 o 7 o 4:1",
    "():() o _0 o ():()",  # W2: one offset, as Layout.parse("():()").offsets()
    "Sw<1,0,1> o 9223372036854775806 o 1:1",
])
def test_composed_offsets_are_exact(text: str) -> None:
    got = parse_layout(text).offsets()
    assert got.dtype == np.int64 and got.ndim == 1
    assert got.tolist() == brute_offsets(text)


def test_swizzle_on_arrays_is_exact_or_refused() -> None:
    assert Swizzle(1, 2, -61)(4) == 9223372036854775812
    with pytest.raises(LayoutError, match="past int64"):
        Swizzle(1, 2, -61)(np.arange(8))
    small = np.arange(256, dtype=np.uint8)
    assert Swizzle(3, 3, 3)(small).tolist() == [Swizzle(3, 3, 3)(i) for i in range(256)]
    assert Swizzle(1, 62, 1)(np.array([3, -1])).tolist() == [3, -1 ^ (1 << 62)]


def test_big_integers_print_in_bounded_form() -> None:
    assert show_int(-12) == "-12"
    assert show_int(3 * 10**5000) == "3.000e+5000"
    assert len(show_int(7**100_000)) < 20
