"""Parse/print round trips and robustness of the shape parser."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tensorlayout.errors import ParseError, TensorLayoutError
from tensorlayout.xla import (
    ELEMENT_TYPES,
    Layout,
    Shape,
    SplitConfig,
    Tile,
    memory_space_name,
    parse_layout,
    parse_shape,
    validate_layout,
)
from tensorlayout.xla.layout import COMBINE_DIMENSION

ARRAY_TYPES = sorted(n for n, t in ELEMENT_TYPES.items() if t.is_array)


@st.composite
def layouts(draw: st.DrawFn, rank: int) -> Layout:
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = tuple(
        Tile(tuple(draw(st.lists(st.one_of(st.integers(1, 512), st.just(COMBINE_DIMENSION)),
                                 min_size=1, max_size=3))))
        for _ in range(draw(st.integers(0, 2))))
    return Layout(
        m2m, tiles,
        tail_padding_alignment_in_elements=draw(st.integers(1, 4)),
        element_size_in_bits=draw(st.sampled_from([0, 4, 8, 32])),
        memory_space=draw(st.integers(0, 6)),
        split_configs=tuple(SplitConfig(draw(st.integers(0, max(rank - 1, 0))),
                                        tuple(draw(st.lists(st.integers(1, 99), max_size=2))))
                            for _ in range(draw(st.integers(0, 1)))),
        dynamic_shape_metadata_prefix_bytes=draw(st.sampled_from([0, 1024])),
    )


def _is_valid(shape: Shape) -> bool:
    try:
        validate_layout(shape)
    except TensorLayoutError:
        return False
    return True


@st.composite
def shapes(draw: st.DrawFn, depth: int = 0) -> Shape:
    if depth < 2 and draw(st.integers(0, 4)) == 0:
        # XLA validates the layouts of tuple elements while parsing; keep them valid.
        elements = draw(st.lists(shapes(depth + 1), max_size=7))
        assume(all(_is_valid(e) for e in elements))
        return Shape.tuple_of(*elements)
    rank = draw(st.integers(0, 4))
    dims = tuple(draw(st.lists(st.integers(0, 300), min_size=rank, max_size=rank)))
    dyn = tuple(draw(st.lists(st.booleans(), min_size=rank, max_size=rank)))
    return Shape(ELEMENT_TYPES[draw(st.sampled_from(ARRAY_TYPES))], dims, dyn,
                 draw(layouts(rank)))


@given(shapes())
def test_print_then_parse_gives_an_equal_shape(shape: Shape) -> None:
    text = str(shape)
    again = parse_shape(text)
    assert again == shape
    assert str(again) == text


@given(st.text(alphabet="fbsu0123456789[]{}(),:*<=?TLESCPMD# ", max_size=40))
def test_random_text_raises_only_library_errors(text: str) -> None:
    try:
        shape = parse_shape(text)
    except TensorLayoutError:
        return
    with contextlib.suppress(TensorLayoutError):
        validate_layout(shape)


@pytest.mark.parametrize("text, column", [
    ("f32[3,5", 8), ("f32[3,5]{1,0:T(2,2)", 20), ("g32[]", 1), ("f32[3]{0:T(0x)}", 13),
    ("f32[2]{0:E(4)T(2)}", 14),
])
def test_parse_errors_name_the_column(text: str, column: int) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column") as info:
        parse_shape(text)
    assert info.value.column == column
    assert "^" in info.value.caret()


def test_annotations_print_in_xla_order() -> None:
    text = "f32[8,16]{1,0:T(8,128)(2,1)L(2)#(u32)*(u16)E(32)S(1)SC(0:4)M(64)}"
    assert str(parse_shape(text)) == text
    assert parse_layout("{:T(256)}") == Layout((), (Tile((256,)),))


def test_negative_dimension_numbers_count_from_the_end() -> None:
    shape = parse_shape("f32[2,3,4]")
    assert shape.dimension(-1) == 4 and shape.dimension(-3) == 2


def test_memory_space_names() -> None:
    assert memory_space_name(0).startswith("HBM")
    assert memory_space_name(1).startswith("VMEM")
    assert memory_space_name(5).startswith("host")
    assert "device-specific" in memory_space_name(2)


@pytest.mark.parametrize("text, rule", [
    ("(f32[2,3]{0,0})", "duplicate"), ("(f32[2,3]{0,5})", "out-of-bounds"),
    ("(f32[2]{0:T(0)})", "invalid tiles"), ("(f32[4,8]{1,0:SC(0:5)})", "split config"),
])
def test_tuple_elements_are_validated(text: str, rule: str) -> None:
    with pytest.raises(ParseError, match=rule):
        parse_shape(text)
