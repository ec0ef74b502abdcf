"""CuTe's printed text (issue 14 item 1): composed layouts, swizzles and static ints read and print
exactly as CuTe's C++ ``print`` writes them, with offsets from CuTe's C++ (tests/data/cute_print_cases.json,
copied from the project's shared conformance vectors, cute_tv_cases.json)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tensorlayout import cute
from tensorlayout.cute import ComposedLayout, Layout, SmemPtrFlag, Swizzle, parse_layout
from tensorlayout.cute.int_tuple import parse_int_tuple
from tensorlayout.errors import ParseError, TensorLayoutError
from tests.conftest import DATA

CASES = json.loads((DATA / "cute_print_cases.json").read_text())["cases"]


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [c for c in CASES if c["kind"] == kind]


@pytest.mark.parametrize("case", by_kind("composed_layout"), ids=lambda c: c["id"])
def test_composed_layouts_print_and_evaluate_as_cpp(case: dict[str, Any]) -> None:
    c = parse_layout(case["text"])
    assert isinstance(c, ComposedLayout) and str(c) == case["text"]
    want = case["offsets"]  # the first n offsets (n may be below the size)
    assert c.offsets()[: len(want)].tolist() == want
    assert ComposedLayout.parse(str(c)) == c


@pytest.mark.parametrize("case", by_kind("swizzle"), ids=lambda c: c["id"])
def test_swizzles_print_and_evaluate_as_cpp(case: dict[str, Any]) -> None:
    sw = Swizzle(case["B"], case["M"], case["S"])
    assert str(sw) == case["text"]
    assert [sw(i) for i in range(case["n"])] == case["offsets"]


@pytest.mark.parametrize("case", by_kind("print"), ids=lambda c: c["id"])
def test_static_and_dynamic_ints_print_as_cpp(case: dict[str, Any]) -> None:
    text = case["text"]
    value: Any = parse_layout(text) if ":" in text else parse_int_tuple(text)
    printed = str(value) if ":" in text else cute.int_tuple.format_int_tuple(value)
    assert printed == text


def test_composition_of_a_swizzle_prints_the_static_zero_offset() -> None:
    c = cute.composition(Swizzle(3, 3, 3), Layout.parse("(_8,_64):(_64,_1)"))
    assert str(c) == "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"
    assert c(1, 0) == 72


def test_the_dsl_form_is_read_and_printed_as_cpp() -> None:
    assert str(parse_layout("S<3,3,3> o 0 o (8,64):(64,1)")) == "Sw<3,3,3> o 0 o (8,64):(64,1)"
    assert isinstance(parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o 8:1").offset, SmemPtrFlag)


@pytest.mark.parametrize("text", ["Sw<3,3,3>", "Sw<3,3,3> o", "Sw<3,3,3> o _0", "Sw<3,3,3> o _0 o",
                                  "Sw<3,3,1> o 0 o 8:1", "Sw<3,3,3> o x o 8:1", "Sw<3,3> o 0 o 8:1",
                                  "(8,64):(64,1) o"])
def test_malformed_composed_text(text: str) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column 1"):
        parse_layout(text)


def test_print_layout_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert cute.print_layout(Layout.parse("(2,3):(3,1)")) is None
    assert capsys.readouterr().out == cute.format_grid(Layout.parse("(2,3):(3,1)")) + "\n"
    cute.print_layout(parse_layout("Sw<1,1,1> o _0 o (2,2):(2,1)"))
    assert "Sw<1,1,1> o _0 o (2,2):(2,1)" in capsys.readouterr().out


def test_composed_text_fuzz_only_library_errors() -> None:
    rng = random.Random(14)
    base = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_64,_2),(_8,_8)):((_1,_512),(_64,_1024))"
    for _k in range(3000):
        chars = list(base)
        for _e in range(rng.randint(1, 3)):
            pos = rng.randrange(len(chars) + 1)
            if rng.random() < 0.5 and pos < len(chars):
                del chars[pos]
            else:
                chars.insert(pos, rng.choice("()<>,:_o -0123456789Swb[]"))
        text = "".join(chars)
        try:
            parsed = parse_layout(text)
        except TensorLayoutError:
            continue
        assert str(parse_layout(str(parsed))) == str(parsed)
