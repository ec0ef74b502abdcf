"""Regression tests: each reproducer from issues 11, 15, 16 and 17 that concerns XLA shapes.

What XLA does for each was asked of XLA itself (jaxlib 0.10.2); ``test_xla_differential.py``
asks it again wherever jaxlib is installed.
"""

from __future__ import annotations

import pytest

from tensorlayout import _cursor
from tensorlayout.errors import LayoutError, ParseError
from tensorlayout.xla import (
    Layout,
    Shape,
    Tile,
    allocated_elements,
    array_size,
    byte_strides,
    linear_index,
    padding_overhead,
    parse_layout,
    parse_shape,
    validate_layout,
)
from tensorlayout.xla.advice import layout_warnings
from tensorlayout.xla.layout import COMBINE_DIMENSION, tile_to_string
from tensorlayout.xla.validate import problems

# -- issue 17: huge literals, deep nesting, Unicode digits -----------------------------------


def test_huge_integer_literal_is_a_parse_error_with_position() -> None:
    with pytest.raises(ParseError, match="at most 1000 digits") as info:
        parse_shape("f32[" + "9" * 4301 + "]")
    assert (info.value.line, info.value.column) == (1, 5)


def test_huge_integer_literal_in_a_layout() -> None:
    with pytest.raises(ParseError, match="digits"):
        parse_layout("{0:T(" + "9" * 5000 + ")}")


def test_deep_tuple_nesting_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=f"nested at most {_cursor.MAX_DEPTH} deep"):
        parse_shape("(" * 1000 + "f32[2]" + ")" * 1000)


def test_nesting_up_to_the_limit_parses() -> None:
    depth = _cursor.MAX_DEPTH
    shape = parse_shape("(" * depth + "f32[2]" + ")" * depth)
    assert str(shape) == "(" * depth + "f32[2]{0}" + ")" * depth


def test_deep_physical_shape_nesting_is_a_parse_error() -> None:
    text = "f32[2]{0:" + "P(f32[2]{0:" * 1000
    with pytest.raises(ParseError, match="nested at most"):
        parse_shape(text)


def test_deep_buffer_nesting_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"expected a buffer shape nested at most 64 deep at line 1,"):
        parse_shape("b(" * 1000 + "f32[2]" + ")" * 1000)


@pytest.mark.parametrize("text", ["f32[\u00b2]", "f32[\u0662]", "f32[2]{\u0660}", "f32[2,\u00a03]",
                                  "f32[2]{0:T(\uff18)}"])
def test_only_ascii_digits_and_spaces(text: str) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column"):
        parse_shape(text)


# -- issue 17: post-parse helpers ------------------------------------------------------------

def test_byte_strides_of_an_invalid_layout_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="out-of-bounds"):
        byte_strides(parse_shape("s1[3]{2}"))


def test_padding_overhead_beyond_int64_is_a_layout_error() -> None:
    huge = ",".join(["9223372036854775807"] * 5)
    shape = parse_shape(f"f32[3,3,3,3,3]{{4,3,2,1,0:T({huge})}}")
    assert array_size(shape) > 2**300  # exact, as a Python int
    with pytest.raises(LayoutError, match="more than int64"):
        padding_overhead(shape)


def test_long_sub_tile_validates_as_in_xla() -> None:
    """XLA accepts ``T(4)(2,2,2)`` on rank 1; missing major dims count as size 1 (as in
    ``ArraySize``'s ``f32[]{:T(256)}``), so the sub-tile pads the buffer to 16 slots."""
    shape = parse_shape("f32[4]{0:T(4)(2,2,2)}")
    validate_layout(shape)
    offsets = [linear_index(shape, (i,)) for i in range(4)]
    assert offsets == [0, 1, 8, 9]
    assert allocated_elements(shape) == 16 and max(offsets) < allocated_elements(shape)


# -- issue 15: what XLA's validator accepts and rejects --------------------------------------

@pytest.mark.parametrize(("text", "rule"), [
    ("(f32[4,8]{1,0:SC(0:5)})", "split indices must increase strictly within \\(0, 4\\)"),
    ("(f32[4,4]{1,0:SC(5:1)})", "not in \\[0, 2\\)"),
    ("(f32[4,4]{1,0:SC(0:1)(0:2)})", "named twice"),
    ("(f32[4,4]{1,0:SC(0:2,2)})", "increase strictly"),
    ("(f32[4,4]{1,0:SC(0:0)})", "increase strictly"),
    ("(c64[9223372036854775807,2,0])", "size may overflow"),
])
def test_tuple_elements_rejected_as_xla_does(text: str, rule: str) -> None:
    with pytest.raises(ParseError, match=rule):
        parse_shape(text)


@pytest.mark.parametrize("text", ["(f32[4,8]{0,1:SC(0:5)})", "(f32[4,4]{1,0:SC(1:1)(0:2)})",
                                  "(f32[4]{0:SC(0:)})", "(c64[9223372036854775807,0,1000,1])",
                                  "(s8[?,9223372036854775807])", "(s8[]{:E(4)})", "(f32[2]{0:E(3)})"])
def test_tuple_elements_accepted_as_xla_does(text: str) -> None:
    assert problems(parse_shape(text)) == []


def test_split_configs_are_validated_at_top_level_too() -> None:
    with pytest.raises(LayoutError, match="split config"):
        validate_layout(parse_shape("f32[4,8]{1,0:SC(0:5)}"))


def test_narrow_element_size_is_a_warning_not_an_error() -> None:
    shape = parse_shape("s8[]{:E(4)}")
    validate_layout(shape)
    assert layout_warnings(shape) == ["E(4) is narrower than s8's 8 bits"]
    assert layout_warnings(parse_shape("s4[2]{0:E(4)}")) == []


def test_dimension_of_2_to_the_64_is_rejected() -> None:
    with pytest.raises(ParseError, match="fits in 64 bits"):
        parse_shape("c64[18446744073709551616,2,7]")


def test_dimension_in_the_uint64_range_lexes_negative_and_is_rejected() -> None:
    with pytest.raises(ParseError, match="non-negative"):
        parse_shape("f32[18446744073709551615]")


# -- issue 11: tiles are checked when built, printed in one place ----------------------------

@pytest.mark.parametrize("dims", [(-1,), (8, -2), (True,), (1.5,)])
def test_tile_rejects_what_xla_cannot_hold(dims: tuple[object, ...]) -> None:
    with pytest.raises(LayoutError, match="tile sizes"):
        Tile(dims)  # type: ignore[arg-type]


def test_tile_needs_a_tuple() -> None:
    with pytest.raises(LayoutError, match=r"expected tile sizes >= 0 or '\*' \(COMBINE_DIMENSION\), but"):
        Tile([8, 128])  # type: ignore[arg-type]


def test_empty_and_zero_tiles_build_and_fail_validation_as_in_xla() -> None:
    for tile in (Tile(()), Tile((0, 8))):
        shape = Shape.array("f32", (8, 8)).with_layout(Layout((1, 0), (tile,)))
        with pytest.raises(LayoutError, match="invalid tiles"):
            validate_layout(shape)


def test_tile_text() -> None:
    dims = (8, COMBINE_DIMENSION, 128)
    assert tile_to_string(dims) == str(Tile(dims)) == "(8,*,128)"


def test_physical_shape_only_inside_a_shape() -> None:
    with pytest.raises(ParseError, match="P\\(\\.\\.\\.\\)"):
        parse_layout("{0:P(f32[2])}")
    with pytest.raises(ParseError, match="not for a sparse array"):
        parse_shape("f32[2]{0:P(f32[2])}")


# -- issue 16: repr is the text form ---------------------------------------------------------

def test_repr_is_the_text_form() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert repr(shape) == "Shape('f32[3,5]{1,0:T(2,2)}')"
    assert repr(shape.layout) == "Layout('{1,0:T(2,2)}')"
    assert repr(parse_shape("(f32[2], s32[])")) == "Shape('(f32[2]{0}, s32[])')"


# -- found by the differential run against jaxlib --------------------------------------------

@pytest.mark.parametrize("text", ["f32[<=9223372036854775808]", "f32[<=-9223372036854775808]"])
def test_bounded_int64_min_is_unbounded_as_in_xla(text: str) -> None:
    assert str(parse_shape(text)) == "f32[?]{0}"


@pytest.mark.parametrize("text", ["f32[2]{0:T(9223372036854775808)}", "f32[2]{0:T(-9223372036854775808)}"])
def test_tile_size_int64_min_is_combine_dimension_as_in_xla(text: str) -> None:
    assert str(parse_shape(text)) == "f32[2]{0:T(*)}"


def test_buffer_is_validated_only_inside_a_tuple_as_in_xla() -> None:
    assert str(parse_shape("b(f32[2]{5})")) == "b(f32[2]{5})"
    with pytest.raises(ParseError, match="out-of-bounds"):
        parse_shape("(b(f32[2]{5}))")


@pytest.mark.parametrize("text", ["f16[-9223322332036854775808]", "s8[4,-92233720368547758077808]"])
def test_dimension_below_int64_is_rejected_not_wrapped(text: str) -> None:
    with pytest.raises(ParseError, match="fits in 64 bits"):
        parse_shape(text)


@pytest.mark.parametrize(("text", "printed"), [("f32\t[5,64,3]", "f32[5,64,3]{2,1,0}"), ("s16 []", "s16[]"),
                                               ("(f32 [2], s8/*x*/[])", "(f32[2]{0}, s8[])")])
def test_whitespace_before_the_dims_as_in_xla(text: str, printed: str) -> None:
    assert str(parse_shape(text)) == printed


def test_sub_tile_of_higher_rank_than_its_tile_round_trips() -> None:
    # XLA accepts f32[4]{0:T(4)(2,2,2)}: the (2,2,2) tile sees the missing major dims as size 1,
    # so the 4 elements sit at 0, 1, 8 and 9 of a 16-slot buffer; every offset reads back.
    from tensorlayout.xla import allocated_elements, linear_indices, multi_index, parse_shape

    shape = parse_shape("f32[4]{0:T(4)(2,2,2)}")
    offsets = linear_indices(shape).tolist()
    assert offsets == [0, 1, 8, 9] and allocated_elements(shape) == 16
    assert [multi_index(shape, k) for k in offsets] == [(0,), (1,), (2,), (3,)]
