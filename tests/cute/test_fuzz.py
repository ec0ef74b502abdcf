"""Robustness (issue 17): only library errors escape the CuTe parser and algebra, text round-trips,
and the issue's reproducers get typed errors or exact answers."""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorlayout import cute
from tensorlayout.cute import Layout, Swizzle, _
from tensorlayout.cute.int_tuple import MAX_DEPTH, MAX_DIGITS, flatten, unflatten
from tensorlayout.errors import AlgebraError, LayoutError, ParseError, TensorLayoutError
from tests.fuzz._common import parse_or_none, roundtrip

INTS = st.one_of(st.integers(-3, 9), st.integers(-(2**70), 2**70),
                 st.sampled_from(["_2", "_0", "_-1", "9" * 5000]))


@st.composite
def tuple_text(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        return str(draw(INTS))
    items = draw(st.lists(tuple_text(depth - 1), min_size=0, max_size=3))
    return "(" + ",".join(items) + ")"


@st.composite
def layout_text(draw: st.DrawFn) -> str:
    """Grammar-built layout text, then a few random character edits."""
    text = draw(tuple_text())
    if draw(st.booleans()):
        text += ":" + draw(tuple_text())
    chars = list(text)
    for _edit in range(draw(st.integers(0, 2))):
        pos = draw(st.integers(0, len(chars)))
        chars.insert(pos, draw(st.sampled_from(list("(),:_-0 9x"))))
    return "".join(chars)


def check_text(text: str) -> None:
    layout = parse_or_none(Layout.parse, text)
    if layout is not None:
        roundtrip(Layout.parse, layout, "Layout")


@given(layout_text())
def test_layout_text_parses_to_a_layout_or_a_library_error_and_round_trips(text: str) -> None:
    check_text(text)


@pytest.mark.thorough
@settings(max_examples=20000, deadline=None)
@given(layout_text())
def test_layout_text_fuzz_long(text: str) -> None:
    check_text(text)


def test_parser_reproducers() -> None:
    with pytest.raises(ParseError, match="levels of nested"):
        Layout.parse("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))
    assert Layout.parse("(" * 50 + "2" + ")" * 50 + ":" + "(" * 50 + "1" + ")" * 50).size() == 2
    with pytest.raises(ParseError, match="digits"):
        Layout.parse("9" * (MAX_DIGITS + 1))
    with pytest.raises(ParseError, match="compact strides"):  # found by the long fuzz run
        Layout.parse(f"({'9' * 3000},{'9' * 3000},0)")
    for text in ("-1", "-1:1"):  # both rejected: a negative extent has no meaning
        with pytest.raises(LayoutError, match="negative extent"):
            Layout.parse(text)


def test_enumeration_limits_name_the_size() -> None:
    with pytest.raises(LayoutError, match="beyond int64"):
        Layout.parse("4:" + "9" * 30).offsets()
    with pytest.raises(LayoutError, match="bytes"):
        Layout.parse("(65536,65536,65536):(1,1,1)").offsets()
    assert Layout.parse(f"2:{2**62}").offsets().tolist() == [0, 2**62]


@pytest.mark.usefixtures("dot_path")
def test_issue_15_corners() -> None:
    with pytest.raises(LayoutError, match=r"a swizzle maps integer offsets, got 1\.5"):
        Swizzle(3, 3, 3)(1.5)  # type: ignore[arg-type]
    with pytest.raises(AlgebraError, match="positive"):
        cute.logical_divide(Layout.parse("8:1"), 0)
    with pytest.raises(AlgebraError, match="zero extent"):
        cute.composition(Layout.parse("(4,0):(1,4)"), Layout.parse("2:1"))
    with pytest.raises(LayoutError, match="zero extent"):
        Layout.parse("(0,4):(1,1)")(3)
    # all strides 0: C++'s left_inverse keeps the extent (`_6:_0`, checked against C++, seed 102)
    assert str(cute.left_inverse(Layout.parse("(2,3):(0,0)"))) == "6:0"
    empty = Layout.parse("():()")
    assert empty(()) == 0 and str(cute.coalesce(empty)) == "1:0"
    with pytest.raises(AlgebraError, match="empty"):
        cute.zipped_divide(Layout.parse("6:1"), ())
    # C++'s zip2_by takes the rank-2 mode under a `_` apart; a rank-1 mode does not compile there
    assert str(cute.zipped_divide(Layout.parse("((4,2),8):((1,4),8)"), (_, 4))) == \
        "((4,4),(2,2)):((1,8),(4,32))"
    with pytest.raises(AlgebraError, match="rank 2"):
        cute.zipped_divide(Layout.parse("6:1"), (_,))


def _shape(rng: random.Random, depth: int = 2) -> object:
    if depth == 0 or rng.random() < 0.45:
        return rng.choice((0, 1, 1, 2, 3, 4, 6))
    return tuple(_shape(rng, depth - 1) for _k in range(rng.randint(0, 3)))


def _layout(rng: random.Random) -> Layout:
    s = _shape(rng)
    return Layout(s, unflatten([rng.choice((0, 1, 2, 3, -1, 4, 8)) for _ in flatten(s)], s))


OPS = ("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
       "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product")


def _calls(rng: random.Random, a: Layout, b: Layout) -> list[object]:
    tiler = tuple(rng.choice((_, 0, 1, 2, b)) for _k in range(rng.randint(0, 2)))
    calls: list[object] = [
        lambda: cute.coalesce(a), lambda: cute.complement(a),
        lambda: cute.complement(a, rng.choice((0, 1, 8))),
        lambda: cute.left_inverse(a), lambda: cute.right_inverse(a), lambda: cute.filter(a),
        lambda: a.offsets(), lambda: cute.tile_to_shape(a, _shape(rng)), lambda: cute.max_common_vector(a, b),
        lambda: cute.nullspace(a), lambda: cute.upcast(a, 2), lambda: a(0), lambda: cute.idx2crd(5, a.shape)]
    calls += [lambda op=op: getattr(cute, op)(a, b) for op in OPS]
    calls += [lambda op=op: getattr(cute, op)(a, tiler) for op in OPS]
    return calls


def fuzz_algebra(seed: int, n: int) -> None:
    rng = random.Random(seed)
    for _i in range(n):
        a, b = _layout(rng), _layout(rng)
        call = rng.choice(_calls(rng, a, b))
        with contextlib.suppress(TensorLayoutError):
            call()  # type: ignore[operator]


def test_algebra_fuzz_only_library_errors() -> None:
    fuzz_algebra(seed=17, n=3000)


@pytest.mark.thorough
def test_algebra_fuzz_long() -> None:
    fuzz_algebra(seed=1700, n=200_000)


def test_offsets_are_exact_near_int64() -> None:
    layout = Layout.parse(f"(2,2):(1,{2**62})")
    assert layout.offsets().tolist() == [0, 1, 2**62, 2**62 + 1]
    assert layout.offsets().dtype == np.int64


@pytest.mark.usefixtures("dot_path")
def test_strides_beyond_int64_give_exact_ints_or_a_typed_error() -> None:
    """A stride of 2^64 (fuzz reproducer): ints and numpy scalars give the exact Python int; an int
    array is evaluated in int64, so it is a LayoutError, as ``offsets()`` beyond int64 is."""
    big = 1 << 64
    layout = Layout.parse(f"((1,4),(8,1)):((0,1),(4,{big}))")
    assert layout(7) == cute.crd2idx(7, layout.shape, layout.stride) == 3 + 4
    assert layout(np.int64(7)) == 7 and type(layout(np.int64(7))) is int
    assert layout((0, (1, 0))) == 4 and layout(((0, 3), (1, 0))) == 7
    wide = Layout((2, 3), (1, big))
    assert wide(np.int64(5)) == 1 + 2 * big
    with pytest.raises(LayoutError, match="beyond int64"):
        layout(np.array([7]))
    with pytest.raises(LayoutError, match="beyond int64"):
        cute.crd2idx(np.array([3]), layout.shape, layout.stride)
    crd = cute.idx2crd(np.array([3, 5]), (big, 2))
    assert [a.tolist() for a in crd] == [[3, 5], [0, 0]]
    with pytest.raises(LayoutError, match=r"a negative int-array index against an extent of"):
        cute.idx2crd(np.array([-1]), (big, 2))
