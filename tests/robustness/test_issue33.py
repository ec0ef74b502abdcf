"""Issue 33's reproducers, one test each: the exact answer or a typed error, never a wrap or a
non-library exception, and costs bounded by what is drawn or asked for."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable

import numpy as np
import pytest

from tensorlayout import cute, hlo, relayout, render, triton, xla
from tensorlayout.core.intmath import show_int
from tensorlayout.cute.inverses import (  # C++'s O(n^2) exchange sort, as written
    _exchange_sort,
    exchange_order,
)
from tensorlayout.cute.lowering import lower_layout
from tensorlayout.cute.swizzle import Swizzle, parse_layout
from tensorlayout.errors import HloError, LayoutError, ParseError, TensorLayoutError, UnsupportedError
from tensorlayout.hlo.coalescing import coalescing_report
from tensorlayout.indexing import IndexingMap, verify_equivalent
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.xla import problems, tpu
from tests.fuzz import _runner
from tests.fuzz._cli import run_cli
from tests.fuzz._common import Target


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


# ---------------------------------------------------------------- E3: big integers in messages
def test_padding_overhead_of_a_3000_dim_shape_is_a_bounded_message() -> None:
    shape = xla.parse_shape("f32[" + ",".join(["1000"] * 3000) + "]")
    with pytest.raises(LayoutError, match=r"would allocate 4\.000e\+9000 bytes"):
        xla.padding_overhead(shape)


def test_to_physical_with_a_600_entry_tile_is_a_bounded_message() -> None:
    text = "s8[2]{0:T(" + ",".join(["100000000"] * 600) + ")}"
    with pytest.raises(LayoutError, match=r"would take 1\.000e\+4800 bytes"):
        relayout.to_physical(np.zeros(2, np.int8), text)


def test_render_of_a_swizzle_past_every_limit_is_a_bounded_message() -> None:
    with pytest.raises(UnsupportedError, match=r"in 2\.564e\+19730 slots"):
        render.to_svg("Sw<3,65535,5> o _0 o 6")


def test_map_folding_to_a_huge_constant_is_a_bounded_message() -> None:
    with pytest.raises(ParseError, match=r"folds to the constant 1\.000e\+30000"):
        IndexingMap.parse("(d0) -> (d0" + " * 1000000" * 5000 + "), domain: d0 in [0, 3]")


def test_verdict_of_a_250_dim_map_prints() -> None:
    dims = ", ".join(f"d{i}" for i in range(250))
    m = IndexingMap.parse(f"({dims}) -> ({dims}), domain: "
                          + ", ".join(f"d{i} in [0, 1000000000000000000]" for i in range(250)))
    assert str(verify_equivalent(m, m, samples=10)).endswith(
        "the box of 1.000e+4500 points exceeds the limit of 200000)")


# ---------------------------------------------------------------- E4, E5, E6, E7
@pytest.mark.parametrize("text", ["s8[2]{0:T(" + ",".join(["1"] * 70) + ")}",
                                  "u16[3,5]{0,1:T(" + ",".join(["1"] * 68) + ",2,4)}"])
def test_relayout_of_a_tiling_past_64_dims_matches_the_offsets(text: str) -> None:
    t = PhysicalTarget.from_xla(text)
    a = np.arange(int(np.prod(t.logical_shape))).astype(np.uint16 if text[0] == "u" else np.int8)
    a = a.reshape(t.logical_shape)
    want = np.full(t.physical_elements, 7, a.dtype)
    want[t.offsets] = a.ravel()
    got = relayout.to_physical(a, text, pad_value=7)
    assert got.tolist() == want.tolist()
    assert relayout.from_physical(got, text).tolist() == a.tolist()


def test_verify_equivalent_of_a_mod_by_a_folded_zero() -> None:
    m = IndexingMap.parse("(d0) -> (d0 mod ((3 mod 0) mod -2)), domain: d0 in [0, 3]")
    assert verify_equivalent(m, m).equivalent


def test_coalescing_of_a_scatter_with_no_outputs_is_an_hlo_error() -> None:
    module = hlo.parse_module("HloModule m\nadd {\n  ROOT t = () tuple()\n}\nENTRY e {\n"
                              "  i = s32[2,1] parameter(0)\n  ROOT s = () scatter(i), update_window_dims={}, "
                              "inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=1, "
                              "to_apply=add\n}\n")
    with pytest.raises(HloError, match="has 0 output"):
        coalescing_report(module.entry.root)


def test_render_of_a_composed_layout_with_a_negative_offset_is_refused() -> None:
    with pytest.raises(UnsupportedError, match=r"negative offset \(-128\)"):
        render.to_svg("Sw<1,4,1> o -128 o 5:1")


# ---------------------------------------------------------------- picture cost: the window's
@pytest.mark.parametrize("text", ["Sw<3,3,3> o _0 o (32,32):(32,1)", "Sw<3,3,3> o 100 o (32,32):(1,32)",
                                  "Sw<2,2,-3> o 7 o (8,(4,8)):(4,(1,32))", "Sw<1,1,1> o 3 o (6,10):(10,1)",
                                  "Sw<2,0,2> o 0 o (3,(2,5)):(10,(1,2))"])
def test_owners_through_a_swizzle_match_brute_force(text: str) -> None:
    lay = lower_layout(text)
    offs = lay.offsets()
    n = int(offs.max()) + 3
    want = [int(np.flatnonzero(offs == k)[0]) if (offs == k).any() else -1 for k in range(n)]
    assert lay.owners(n).tolist() == want


def test_picture_of_a_big_swizzled_layout_costs_with_its_window() -> None:
    start = time.perf_counter()
    svg = render.to_svg("Sw<3,3,3> o _0 o (4096,4096):(4096,1)", window=(range(64), range(64)))
    assert time.perf_counter() - start < 5 and svg.count('class="cell"') == 64 * 64


# ---------------------------------------------------------------- W4: TPU default layouts
def test_tpu_default_shape_past_int64_is_refused() -> None:
    with pytest.raises(LayoutError, match="size may overflow int64"):
        tpu.default_shape("s32", (2**31, 2**31))
    shape = tpu.default_shape("s32", (2**20, 2**20))
    assert not problems(shape) and str(shape) == "s32[1048576,1048576]{1,0:T(8,128)}"


# ---------------------------------------------------------------- CLI windows of any rank
def _ones(n: int) -> str:
    return ",".join(["1"] * n)


@pytest.mark.parametrize("target", [f"f32[{_ones(33)}]", f"f32[{_ones(65)}]", f"({_ones(65)}):({_ones(65)})",
                                    f"({_ones(40)},2):({_ones(40)},1)"])
@pytest.mark.parametrize("json", [[], ["--json"]])
def test_cli_show_of_many_dims(target: str, json: list[str]) -> None:
    code, out, err = run_cli(["show", *json, target])
    assert (code, err) == (0, "")
    assert ("0 |" in out or "offset" in out) if not json else (out.count("[") > 33)


# ---------------------------------------------------------------- costs of the algebra
@pytest.mark.parametrize("strides", [lambda n: [4**i for i in range(n)],
                                     lambda n: [4 ** (n - 1 - i) for i in range(n)]])
def test_composition_of_3000_modes_is_fast(strides: Callable[[int], list[int]]) -> None:
    n = 3000
    lay = cute.Layout((2,) * n, tuple(strides(n)))
    start = time.perf_counter()
    out = cute.composition(lay, lay)
    cute.right_inverse(lay)
    cute.left_inverse(lay)
    assert time.perf_counter() - start < 3
    assert [out(i) for i in (1, 2, 3, 5)] == [lay(lay(i)) for i in (1, 2, 3, 5)]


def test_composition_by_definition_on_random_layouts() -> None:
    rng = random.Random(33)
    checked = 0
    for _ in range(3000):
        n = rng.randint(1, 4)
        a = cute.Layout(tuple(rng.choice([1, 2, 3, 4]) for _ in range(n)),
                        tuple(rng.choice([0, 1, 2, 4, 8, 12]) for _ in range(n)))
        m = rng.randint(1, 3)
        b = cute.Layout(tuple(rng.choice([1, 2, 4]) for _ in range(m)),
                        tuple(rng.choice([0, 1, 2, 4]) for _ in range(m)))
        try:
            r = cute.composition(a, b)
        except TensorLayoutError:
            continue
        checked += 1
        assert [r(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())], (a, b)
    assert checked > 1000


# ---------------------------------------------------------------- the padded-buffer guard
def test_padded_buffer_past_a_quarter_of_memory_is_refused_before_allocating() -> None:
    limit = relayout.buffer_limit()
    assert relayout.MAX_BUFFER_BYTES is None and 0 < limit < 1 << 50
    start = time.perf_counter()
    with pytest.raises(LayoutError, match=f"would take {limit + 1} bytes, more than the {limit}"):
        relayout.to_physical(np.zeros(1, np.uint8), f"u8[1]{{0:T({limit + 1})}}")
    assert time.perf_counter() - start < 1


def test_the_buffer_limit_is_the_callers_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relayout, "MAX_BUFFER_BYTES", 64)
    assert relayout.buffer_limit() == 64
    with pytest.raises(LayoutError, match="would take 128 bytes, more than the 64"):
        relayout.to_physical(np.zeros(1, np.uint8), "u8[1]{0:T(128)}")
    monkeypatch.setattr(relayout, "MAX_BUFFER_BYTES", 128)
    assert relayout.to_physical(np.ones(1, np.uint8), "u8[1]{0:T(128)}").tolist() == [1] + [0] * 127


def test_exchange_order_past_the_small_sort_matches_the_exchange_sort() -> None:
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(40, 200)
        top = rng.choice((1, 2, 5, 40, 10**6))
        keys = [rng.randint(-top, top) * rng.choice((1, 2**70)) for _ in range(n)]
        assert exchange_order(keys) == _exchange_sort(keys)


def test_inverses_of_3000_modes_with_repeated_strides_are_fast() -> None:
    rng = random.Random(3)
    lay = cute.Layout(tuple(rng.choice((2, 3)) for _ in range(3000)),
                      tuple(rng.randint(0, 40) for _ in range(3000)))
    start = time.perf_counter()
    for op in (cute.right_inverse, cute.left_inverse):
        with contextlib.suppress(TensorLayoutError):
            op(lay)
    assert time.perf_counter() - start < 5


# ---------------------------------------------------------------- found by the campaign
def test_composed_offsets_past_int64_stop_at_the_first() -> None:
    text = ("Sw<2,64,4> o 18446744073709551616 o (((3),(2,2,6),(8,8)),2,((2,6),(1),4))"
            ":(((0),(1,0,8),(2,16)),8,((2,1),(1),4))")
    start = time.perf_counter()
    with pytest.raises(LayoutError, match="reaches 18446744073709551616, past int64"):
        parse_layout(text).offsets()
    assert time.perf_counter() - start < 2


def test_offsets_of_an_empty_layout_with_a_huge_stride() -> None:
    lay = cute.Layout.parse("((2,6,(2,1,1)),((0,1),2,3)):((0,4611686018427387904,(0,1,1)),((4,-1),2,1))")
    assert lay.offsets().tolist() == []


@pytest.mark.parametrize("text", [
    "Sw<5,1,-5> o 9223372036854775808 o Sw<3,4,62> o -9223372036854775808 o (4,1,8):(3,1,0)",
    "((2,2),(2,2)):((-9223372036854775808,4),(8,16))",  # a stride of -2^63: every offset still fits
])
def test_offsets_whose_sums_wrap_on_the_way_are_exact(text: str) -> None:
    c = parse_layout(text)
    assert c.offsets().tolist() == [c(i) for i in range(c.size())]


def test_fuzz_timeouts_count_cpu_time_not_waiting() -> None:
    # the campaign found a 'timeout' (relayout of c64[4,8,2]{1,2,0:T(4444444,2)}: 1.9 s of CPU,
    # 7.6 s of wall time on a loaded machine): the per-input budget is CPU time
    def spin(_: object) -> None:
        while True:
            pass

    waiting = _runner.run(Target("sleep", lambda rng: 1, lambda _: time.sleep(0.6)), 1, 0, 1, seconds=0.3)
    spinning = _runner.run(Target("spin", lambda rng: 1, spin), 1, 0, 1, seconds=0.3)
    assert not waiting.failures and list(spinning.failures) == ["timeout"]


def test_an_encoding_over_a_tensor_dim_past_2_30_is_refused_as_its_printed_form_is() -> None:
    # campaign (triton.parse_layout #31067): the encoding built a layout whose printed form
    # (out-dim of size 2**32) LinearLayout.parse refuses
    text = ("tensor<1x128x4294967296xf16, #ttg.blocked<{sizePerThread = [1, 2, 2], threadsPerWarp = "
            "[2, 4, 4], warpsPerCTA = [1, 1, 1], order = [1, 0, 2]}>>")
    with pytest.raises(LayoutError, match=r"tensor dim 4294967296 is past 2\*\*30"):
        triton.parse_layout(text)
    assert str(triton.parse_layout(text.replace("4294967296", "1073741824"))).startswith("\n - register")
