"""CuTe's print grammar, read and printed back: every layout print CuTe's C++ made for
``gpu2_cases.json`` (atoms, tiled copies, shared-memory atoms, identity layouts and partitions),
scaled bases and counting tensors evaluated to CuTe's coordinates, and parse errors that say
where and what was expected."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tensorlayout import cute
from tensorlayout.convert import is_xla_text, parse_target
from tensorlayout.cute import (
    ArithmeticTuple,
    ComposedLayout,
    CoordLayout,
    CountingTensor,
    E,
    Int,
    Layout,
    ScaledBasis,
    make_identity_layout,
    make_identity_tensor,
    parse_int_tuple,
    parse_layout,
)
from tensorlayout.cute.basis import as_arithmetic_tuple, basis_add
from tensorlayout.errors import LayoutError, ParseError
from tests.conftest import DATA

FAMILIES: dict[str, list[dict[str, Any]]] = json.loads((DATA / "gpu2_cases.json").read_text())["families"]

#: Record fields that hold one layout print, and those that hold an IntTuple print.
LAYOUT_FIELDS = ("ThrID", "ALayout", "BLayout", "CLayout", "SrcLayout", "DstLayout", "RefLayout", "ValID",
                 "ValLayoutSrc", "ValLayoutDst", "ValLayoutRef", "layout_src_tv_tiled", "layoutS_TV",
                 "layoutD_TV", "text")
TUPLE_FIELDS = ("Shape_MNK", "tiler_mn")
#: The lines of the multi-line prints (``MMA_Atom``, ``Copy_Atom``, ``TiledCopy``) and what they hold.
LINE_KINDS = {"ThrID": "layout", "LayoutA_TV": "layout", "LayoutB_TV": "layout", "LayoutC_TV": "layout",
              "ValLayoutSrc": "layout", "ValLayoutDst": "layout", "ValLayoutRef": "layout",
              "TiledLayout_TV": "layout", "Shape_MNK": "tuple", "Tiler_MN": "tuple", "ValueType": "bits"}


def _prints() -> list[tuple[str, str, str]]:
    """(where, kind, text) of every CuTe print in the data."""
    out = []
    for family, records in FAMILIES.items():
        if not family.startswith("cute_"):
            continue
        for r in records:
            for key, value in r.items():
                if not isinstance(value, str):
                    continue
                where = f"{family}:{r['id']}:{key}"
                if "\n" in value:
                    out += _lines(where, value)
                elif key in LAYOUT_FIELDS:
                    out.append((where, "layout", value))
                elif key in TUPLE_FIELDS:
                    out.append((where, "tuple", value))
    return out


def _lines(where: str, text: str) -> list[tuple[str, str, str]]:
    out = []
    for line in text.splitlines()[1:]:
        if line and not line.startswith(" "):  # the next block's title: "Copy_Atom"
            continue
        key, _sep, value = line.strip().partition(":")
        if key not in LINE_KINDS:
            raise AssertionError(f"{where}: unknown line {line!r}: add it to LINE_KINDS")
        out.append((f"{where}:{key}", LINE_KINDS[key], value.strip()))
    return out


PRINTS = _prints()


def test_the_data_has_every_kind_of_print() -> None:
    texts = [t for _w, _k, t in PRINTS]
    assert len(PRINTS) > 500
    assert any("smem_ptr[" in t for t in texts) and any("@" in t for t in texts)
    assert any(t.startswith("ArithTuple") for t in texts)


@pytest.mark.parametrize(("where", "kind", "text"), PRINTS, ids=[w for w, _k, _t in PRINTS])
def test_every_print_reads_back_identically(where: str, kind: str, text: str) -> None:
    if kind == "bits":
        assert text.endswith("b") and text[:-1].isdigit()
        return
    value = parse_int_tuple(text) if kind == "tuple" else parse_layout(text)
    printed = cute.int_tuple.format_int_tuple(value) if kind == "tuple" else str(value)
    assert printed == text
    if kind == "layout":
        assert not is_xla_text(text) and str(parse_target(text)) == text


# ---------------------------------------------------------------- scaled bases by definition


def _random_basis_layout(rng: random.Random) -> CoordLayout:
    """A random layout whose strides are scaled bases over random mode paths (and some _0)."""
    def leaf() -> tuple[Any, Any]:
        s = rng.choice((1, 2, 3, 4))
        shape = Int(s) if rng.random() < 0.7 else s
        if rng.random() < 0.15:
            return shape, Int(0)
        path = tuple(rng.randrange(3) for _ in range(rng.choice((1, 1, 2))))
        value = rng.choice((1, 2, 4, 8))
        return shape, ScaledBasis(Int(value) if rng.random() < 0.8 else value, path)

    def mode(depth: int) -> tuple[Any, Any]:
        if depth == 0 or rng.random() < 0.6:
            return leaf()
        parts = [mode(depth - 1) for _ in range(rng.choice((1, 2, 3)))]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)

    parts = [mode(2) for _ in range(rng.choice((1, 2, 3)))]
    return CoordLayout(tuple(p[0] for p in parts), tuple(p[1] for p in parts))


def _expected(layout: CoordLayout, i: int) -> Any:
    """The coordinate at index ``i`` from the definition: split ``i`` colexicographically over
    the flat leaves (the last leaf takes the rest), add ``c·value`` at each basis's mode path."""
    shapes = list(cute.int_tuple.flatten(layout.shape))
    strides = list(_flat(layout.stride))
    out: dict[tuple[int, ...], int] = {}
    for k, (s, d) in enumerate(zip(shapes, strides)):
        c = i if k == len(shapes) - 1 else i % s
        i = i if k == len(shapes) - 1 else i // s
        if isinstance(d, ScaledBasis):
            out[d.modes] = out.get(d.modes, 0) + c * d.value
    return out


def _flat(t: Any) -> Any:
    if isinstance(t, tuple):
        for x in t:
            yield from _flat(x)
    else:
        yield t


def _at(value: Any, path: tuple[int, ...]) -> int:
    """The entry of a coordinate at a mode path (0 where the coordinate stops short)."""
    v = as_arithmetic_tuple(value)
    for k in path:
        v = as_arithmetic_tuple(v[k]) if isinstance(v, tuple) and k < len(v) else 0
    assert not isinstance(v, tuple)
    return int(v)


def test_random_basis_layouts_evaluate_by_definition_and_print_back() -> None:
    rng = random.Random(26)
    checked = 0
    for _k in range(300):
        L = _random_basis_layout(rng)
        paths = {d.modes for d in _flat(L.stride) if isinstance(d, ScaledBasis)}
        if any(p != q and p[:len(q)] == q for p in paths for q in paths):
            continue  # a path inside another: CuTe adds an int to a tuple there, which it refuses
        assert str(parse_layout(str(L))) == str(L)
        for i in range(L.size()):
            try:
                got = L(i)
            except LayoutError:
                assert not paths  # only an all-_0 layout gives a plain int
                continue
            want = _expected(L, i)
            for path, value in want.items():
                assert _at(got, path) == value, (str(L), i, str(got))
            checked += 1
    assert checked > 1000


def test_statics_follow_cute() -> None:
    # a _1 mode splits off a static _0, a dynamic index keeps the others dynamic
    assert str(parse_layout("(_1,_4):(_1@0,_1@1)")(3)) == "(_0,3)"
    assert str(parse_layout("(_2,_4):(_1@1@0,_1@1)")(1)) == "((_0,1),0)"
    assert str(parse_layout("(_32,_4):(_1@2,_32@2)")(5)) == "(_0,_0,5)"
    assert str(parse_layout("_4:_2@1")(3)) == "6@1"  # one term: the basis itself, as C++ prints it
    assert str(parse_layout("(_2,_3):(_0,_1@1)")(3)) == "1@1"
    with pytest.raises(LayoutError, match="adds no integer"):
        parse_layout("(_2,_3):(2,_1@1)")(3)
    assert str(basis_add(ArithmeticTuple((Int(0), 6)), E(0))) == "(_1,6)"


def test_identity_layout_and_tensor_as_cute_prints_them() -> None:
    assert str(make_identity_layout((2, 3))) == "(2,3):(_1@0,_1@1)"
    assert str(make_identity_layout(((Int(2), Int(2)), Int(4)))) == "((_2,_2),_4):((_1@0@0,_1@1@0),_1@1)"
    t = make_identity_tensor((Int(2), Int(3)))
    assert str(t) == "ArithTuple(_0,_0) o (_2,_3):(_1@0,_1@1)"
    assert [str(t(i)) for i in range(6)] == ["(0,0)", "(1,0)", "(0,1)", "(1,1)", "(0,2)", "(1,2)"]
    assert cute.coshape(make_identity_layout((2, (3, 4)))) == (2, (3, 4))


def test_composed_and_counting_texts_read_back() -> None:
    text = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
    c = parse_layout(text)
    assert isinstance(c, ComposedLayout) and str(c) == text

    def sw(x: int) -> int:  # Sw<3,4,3>: bits 7..9 XORed into bits 4..6; the pointer flag adds 0
        return x ^ ((x & 0b1110000000) >> 3)
    assert all(c(m, n) == sw(64 * m + n) for m in range(8) for n in range(64))
    t = parse_layout("ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)")
    assert isinstance(t, CountingTensor)
    assert [str(x) for x in t.coords()] == ["(0,6)", "(0,7)", "(8,6)", "(8,7)"]
    assert isinstance(parse_layout("(2,3):(_1@0,3)"), CoordLayout)
    assert isinstance(parse_layout("(2,3):(_1,_2)"), Layout)


@pytest.mark.parametrize(("text", "expected"), [
    ("(2,3):(_1@0,_1@)", r"a mode index .* after '@' at line 1, column 16"),
    ("(2,3):(_1@0)", r"a stride congruent with the shape \(2,3\) at line 1, column 7"),
    ("ArithTuple 5 o 4:1", r"a tuple such as \(0,6\) after 'ArithTuple' at line 1, column 12"),
    ("ArithTuple(0,1) o Sw<1,2,3> o _0 o 8:1", r"a layout shape:stride after 'ArithTuple\(..\) o'"),
    ("Sw<3,4,3> o smem_ptr[16b](unset) o (2,3):(_1@0,_1@1)", r"an integer-strided layout after the offset"),
    ("(2,3):(_1@0,_1@1) o _0 o 8:1", r"a swizzle or an integer-strided layout before ' o '"),
    ("Sw<3,4,3> o smem_ptr[16](unset) o 8:1", r"at line 1, column 13"),
])
def test_parse_errors_name_the_place_and_what_was_expected(text: str, expected: str) -> None:
    with pytest.raises(ParseError, match=expected):
        parse_layout(text)


def test_smem_ptr_text_is_not_sent_to_the_xla_parser() -> None:
    assert not is_xla_text("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)")
    assert is_xla_text("f32[2]") and is_xla_text("(f32[2], s32[])")
    with pytest.raises(ParseError, match="column 13"):
        parse_target("Sw<3,4,3> o smem_ptr[x](unset) o 8:1")
