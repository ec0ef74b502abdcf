"""Every public vector of xla_layout_cases.json, one test each."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tensorlayout._cursor import Cursor
from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError
from tensorlayout.xla import (
    COMBINE_DIMENSION,
    UNBOUNDED_SIZE,
    Layout,
    Shape,
    SplitConfig,
    Tile,
    layout_util_linear_index,
    parse_element_type,
    parse_shape,
    sizes,
    types,
    validate_layout,
)
from tensorlayout.xla import index_util as iu
from tensorlayout.xla import shape_util as su
from tensorlayout.xla.layout import read_xla_int
from tests.conftest import DATA

CASES: dict[str, list[dict[str, Any]]] = json.loads(
    (DATA / "xla_layout_cases.json").read_text())


def current(category: str) -> list[Any]:
    """Cases that hold for the 2026 snapshot (entries tagged 2025-04 only are skipped)."""
    cases = [c for c in CASES[category] if "2026-02" in c.get("versions", ["2026-02"])]
    return [pytest.param(c, id=f"{category}-{i}") for i, c in enumerate(cases)]


def layout_from_spec(spec: dict[str, Any]) -> Layout:
    tiles = tuple(Tile(tuple(COMBINE_DIMENSION if d == "*" else d for d in t))
                  for t in spec.get("tiles", []))
    optional = {
        "index_primitive_type": spec.get("index_primitive_type"),
        "pointer_primitive_type": spec.get("pointer_primitive_type"),
    }
    return Layout(
        tuple(spec["minor_to_major"]),
        tiles,
        spec.get("tail_padding_alignment_in_elements", 1),
        *(parse_element_type(v) if v else None for v in optional.values()),
        element_size_in_bits=spec.get("element_size_in_bits", 0),
        memory_space=spec.get("memory_space", 0),
        split_configs=tuple(SplitConfig(d, tuple(i)) for d, i in spec.get("split_configs", [])),
        physical_shape=shape_from_spec(spec["physical_shape"]) if "physical_shape" in spec else None,
        dynamic_shape_metadata_prefix_bytes=spec.get("dynamic_shape_metadata_prefix_bytes", 0),
    )


def shape_from_spec(spec: dict[str, Any]) -> Shape:
    if "tuple" in spec:
        return Shape.tuple_of(*(shape_from_spec(s) for s in spec["tuple"]))
    if "buffer" in spec:
        inner = shape_from_spec(spec["buffer"])
        return Shape(inner.element_type, tuple_shapes=(inner,), is_buffer=True)
    et = parse_element_type(spec["element_type"])
    if not et.is_array:
        return Shape(et)
    dims = tuple(UNBOUNDED_SIZE if d == "?" else d for d in spec["dimensions"])
    dyn = tuple(spec.get("dynamic", [False] * len(dims)))
    layout = layout_from_spec(spec["layout"]) if spec.get("layout") else None
    return Shape(et, dims, dyn, layout)


def shape_arg(text: str) -> Shape:
    """Vector shapes; ``<no layout>`` marks an array whose layout was cleared."""
    if "<no layout>" not in text:
        try:
            return parse_shape(text)
        except ParseError:
            pass
    # Programmatic shapes the HLO parser would reject: build leaf by leaf.

    def rebuild(t: str) -> Shape:
        cur = Cursor(t.replace("<no layout>", ""), comments=True)
        return _lenient(cur)

    return rebuild(text)


def _lenient(cur: Cursor) -> Shape:
    from tensorlayout.xla.layout import read_layout
    from tensorlayout.xla.shape import read_shape

    cur.skip()
    if cur.accept("("):
        elems = []
        if not cur.accept(")"):
            while True:
                elems.append(_lenient(cur))
                if cur.accept(")"):
                    break
                cur.expect(",")
        return Shape.tuple_of(*elems)
    start = cur.pos
    end = cur.text.index("]", start) + 1
    base = read_shape(Cursor(cur.text[start:end]))
    cur.pos = end
    no_layout = not cur.peek("{")
    if no_layout:
        return base.with_layout(None)
    return base.with_layout(read_layout(cur))


@pytest.mark.parametrize("case", current("roundtrip"))
def test_roundtrip(case: dict[str, Any]) -> None:
    shape = parse_shape(case["input"])
    assert shape.to_string(with_layout=case["print_layout"]) == case["expected"]
    assert parse_shape(str(shape)) == shape


@pytest.mark.parametrize("case", current("parse"))
def test_parse(case: dict[str, Any]) -> None:
    shape = parse_shape(case["input"])
    assert shape == shape_from_spec(case["expected"])
    assert shape.to_string(with_layout=True) == case["print_with_layout"]
    assert shape.to_string(with_layout=False) == case["print_without_layout"]


@pytest.mark.parametrize("case", current("invalid"))
def test_invalid(case: dict[str, Any]) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column") as info:
        parse_shape(case["input"])
    if "error_contains" in case:
        assert case["error_contains"] in str(info.value)


@pytest.mark.parametrize("case", current("layout_to_string"))
def test_layout_to_string(case: dict[str, Any]) -> None:
    layout = layout_from_spec(case["layout"])
    assert str(layout) == case["expected"]


@pytest.mark.parametrize("case", current("tile_to_string"))
def test_tile_to_string(case: dict[str, Any]) -> None:
    assert str(Tile(tuple(case["tile"]))) == case["expected"]


@pytest.mark.parametrize("case", current("shape_to_string"))
def test_shape_to_string(case: dict[str, Any]) -> None:
    shape = shape_from_spec(case["shape"])
    if "expected_without_layout" in case:
        assert shape.to_string() == case["expected_without_layout"]
    if "expected_with_layout" in case:
        assert shape.to_string(with_layout=True) == case["expected_with_layout"]


@pytest.mark.parametrize("case", current("program_shape_to_string"))
def test_program_shape_to_string(case: dict[str, Any]) -> None:
    from tensorlayout.xla.shape import program_shape_to_string

    params = [shape_from_spec(p) for p in case["parameters"]]
    result = shape_from_spec(case["result"])
    names = case.get("parameter_names")
    assert program_shape_to_string(params, result, names) == case["expected"]


@pytest.mark.parametrize("case", current("byte_size"))
def test_byte_size(case: dict[str, Any]) -> None:
    shape = parse_shape(case["shape"])
    fn = {"ByteSizeOf": sizes.byte_size, "ArraySize": sizes.array_size,
          "ArrayDataSize": sizes.array_data_size}[case["function"]]
    assert fn(shape) == case["expected"]


@pytest.mark.parametrize("case", current("byte_size_of_primitive_type"))
def test_byte_size_of_primitive_type(case: dict[str, Any]) -> None:
    t = parse_element_type(case["element_type"])
    assert sizes.byte_size_of_primitive_type(t) == case["expected"]


@pytest.mark.parametrize("case", current("byte_strides"))
def test_byte_strides(case: dict[str, Any]) -> None:
    shape = parse_shape(case["shape"])
    fn = {"ByteStrides": sizes.byte_strides,
          "UnpackedByteStrides": sizes.unpacked_byte_strides}[case["function"]]
    got = fn(shape)
    expected = case["expected"]
    assert (list(got) if got is not None else None) == expected


@pytest.mark.parametrize("case", current("byte_strides_is_major_to_minor"))
def test_byte_strides_is_major_to_minor(case: dict[str, Any]) -> None:
    t = parse_element_type(case["element_type"])
    assert sizes.byte_strides_is_major_to_minor(case["byte_strides"], case["dims"], t) \
        == case["expected"]


@pytest.mark.parametrize("case", current("elements_in"))
def test_elements_in(case: dict[str, Any]) -> None:
    assert parse_shape(case["shape"]).elements_in() == case["expected"]


@pytest.mark.parametrize("case", current("is_zero_element_array"))
def test_is_zero_element_array(case: dict[str, Any]) -> None:
    assert parse_shape(case["shape"]).is_zero_element_array == case["expected"]


@pytest.mark.parametrize("case", current("float_type_info"))
def test_float_type_info(case: dict[str, Any]) -> None:
    fn = {"ExponentWidth": types.exponent_width, "SignificandWidth": types.significand_width,
          "OverflowExponent": types.overflow_exponent,
          "UnderflowExponent": types.underflow_exponent}[case["function"]]
    assert fn(parse_element_type(case["element_type"])) == case["expected"]


@pytest.mark.parametrize("case", current("primitive_type_names"))
def test_primitive_type_names(case: dict[str, Any]) -> None:
    if case["expected"] is None:
        with pytest.raises(LayoutError, match=r"expected an XLA element type name, but got '"):
            parse_element_type(case["input"])
    else:
        assert parse_element_type(case["input"]).name.upper() == case["expected"]


@pytest.mark.parametrize("case", current("lexer_int"))
def test_lexer_int(case: dict[str, Any]) -> None:
    cur = Cursor(case["input"])
    if case["expected"] == "error":
        with pytest.raises(ParseError, match=r"at line 1, column 1, but got '"):
            read_xla_int(cur)
            cur.expect_end()
    else:
        assert read_xla_int(cur) == case["expected"]


@pytest.mark.parametrize("case", current("linear_index"))
def test_linear_index(case: dict[str, Any]) -> None:
    shape = parse_shape(case["shape"])
    assert iu.multidimensional_index_to_linear_index(shape, case["index"]) == case["expected"]


@pytest.mark.parametrize("case", current("multi_index"))
def test_multi_index(case: dict[str, Any]) -> None:
    shape = parse_shape(case["shape"])
    got = iu.linear_index_to_multidimensional_index(shape, case["linear_index"])
    assert list(got) == case["expected"]


@pytest.mark.parametrize("case", current("linear_index_roundtrip"))
def test_linear_index_roundtrip(case: dict[str, Any]) -> None:
    shape = parse_shape(case["shape"])
    idx = iu.linear_index_to_multidimensional_index(shape, case["linear_index"])
    assert iu.multidimensional_index_to_linear_index(shape, idx) == case["linear_index"]


@pytest.mark.parametrize("case", current("tiled_linear_index"))
def test_tiled_linear_index(case: dict[str, Any]) -> None:
    from tensorlayout.xla import linear_index

    shape = parse_shape(case["shape"])
    assert layout_util_linear_index(shape, case["index"]) == case["expected"]
    assert linear_index(shape, case["index"]) == case["expected"]


@pytest.mark.parametrize("case", current("bump_indices"))
def test_bump_indices(case: dict[str, Any]) -> None:
    idx = list(case["indices"])
    assert iu.bump_indices(parse_shape(case["shape"]), idx) == case["expected_return"]
    if "expected_indices" in case:
        assert idx == case["expected_indices"]


@pytest.mark.parametrize("case", current("for_each_index"))
def test_for_each_index(case: dict[str, Any]) -> None:
    shape = parse_shape(case["shape"])
    visited = list(iu.iter_indices(shape, case["base"], case["count"], case["incr"]))
    if "expected_invocations" in case:
        assert len(visited) == case["expected_invocations"]
    if "expected_visited" in case:
        assert sorted(map(list, visited)) == sorted(case["expected_visited"])


@pytest.mark.parametrize("case", current("max_split_size"))
def test_max_split_size(case: dict[str, Any]) -> None:
    assert sizes.max_split_size(parse_shape(case["shape"]), case["dim"]) == case["expected"]


@pytest.mark.parametrize("case", current("max_elements_in_per_split"))
def test_max_elements_in_per_split(case: dict[str, Any]) -> None:
    assert sizes.max_elements_in_per_split(parse_shape(case["shape"])) == case["expected"]


@pytest.mark.parametrize("case", current("is_untiled_layout"))
def test_is_untiled_layout(case: dict[str, Any]) -> None:
    got = iu.is_untiled_layout(case["tiles"], case["physical_dims_major_to_minor"])
    assert got == case["expected"]


LAYOUT_OPTIONS = {"IgnoreTiles": "ignore_tiles", "IgnoreElementSize": "ignore_element_size",
                  "IgnoreMemorySpace": "ignore_memory_space",
                  "IgnoreSplitConfigs": "ignore_split_configs",
                  "IgnoreTailPaddingAlignmentInElements": "ignore_tail_padding",
                  "MinorToMajorOnly": "minor_to_major_only"}


@pytest.mark.parametrize("case", current("layout_equality"))
def test_layout_equality(case: dict[str, Any]) -> None:
    lhs, rhs = layout_from_spec(case["lhs"]), layout_from_spec(case["rhs"])
    options = {LAYOUT_OPTIONS[o]: True for o in case["options"]}
    assert lhs.equal(rhs, **options) == case["expected"]
    if not options:
        assert (lhs == rhs) == case["expected"]


SHAPE_EQUALITY = {
    "Equal": lambda a, b: a.equal(b),
    "Compatible": lambda a, b: a.compatible(b),
    "CompatibleIgnoringElementType": lambda a, b: a.compatible(b, ignore_element_type=True),
    "CompatibleIgnoringFpPrecision": lambda a, b: a.compatible(b, ignore_fp_precision=True),
    "EqualIgnoringElementType": lambda a, b: a.equal(b, ignore_element_type=True),
    "EqualIgnoringFpPrecision": lambda a, b: a.equal(b, ignore_fp_precision=True),
    "SameDimensions": su.same_dimensions,
    "Equal.IgnoreBuffer.IgnoreLayout": lambda a, b: a.equal(b, ignore_buffer=True,
                                                             ignore_layout=True),
}


@pytest.mark.parametrize("case", current("shape_equality"))
def test_shape_equality(case: dict[str, Any]) -> None:
    fn = SHAPE_EQUALITY[case["function"]]
    assert fn(parse_shape(case["lhs"]), parse_shape(case["rhs"])) == case["expected"]


@pytest.mark.parametrize("case", current("validate_layout"))
def test_validate_layout(case: dict[str, Any]) -> None:
    if case.get("function") == "CopyLayoutBetweenShapes":
        got = su.copy_layout_between_shapes(parse_shape(case["src"]), parse_shape(case["dst"]))
        assert str(got) == case["expected_dst"]
        return
    shape = shape_arg(case["shape"])
    allow = case["allow_missing_layouts"]
    if case["expected_ok"]:
        validate_layout(shape, allow_missing_layouts=allow)
    else:
        with pytest.raises(LayoutError, match=re.escape(case.get("error_contains", ""))):
            validate_layout(shape, allow_missing_layouts=allow)


LAYOUT_OPS = {
    "LayoutUtil::MoveDimToMinor": lambda c: iu.move_dim_to_minor(
        Layout(tuple(c["minor_to_major"])), c["arg"]),
    "LayoutUtil::MoveDimToMajor": lambda c: iu.move_dim_to_major(
        Layout(tuple(c["minor_to_major"])), c["arg"]),
    "LayoutUtil::MakeDescendingLayout": lambda c: iu.make_descending_layout(c["arg"]),
    "LayoutUtil::MakeAscendingLayout": lambda c: iu.make_ascending_layout(c["arg"]),
    "LayoutUtil::GetDefaultLayoutForRank": lambda c: iu.get_default_layout_for_rank(c["arg"]),
}


@pytest.mark.parametrize("case", current("layout_ops"))
def test_layout_ops(case: dict[str, Any]) -> None:
    got = LAYOUT_OPS[case["function"]](case)
    assert list(got.minor_to_major) == case["expected_minor_to_major"]


def _shape_op(case: dict[str, Any]) -> Shape:
    fn, shape, arg = case["function"].split("::")[1], parse_shape(case["shape"]), case["arg"]
    return {
        "MoveDimToMajor": lambda: su.move_dim_to_major(shape, arg),
        "DeleteDimensions": lambda: su.delete_dimensions(arg, shape),
        "PrependMajorDimension": lambda: su.prepend_major_dimension(arg, shape),
        "AppendMinorDimension": lambda: su.append_minor_dimension(arg, shape),
        "InsertDimensionAtIndex": lambda: su.insert_dimension_at_index(shape, *arg),
        "InsertDimensionsAtIndex": lambda: su.insert_dimensions_at_index(shape, *arg),
        "MakeShapeWithDescendingLayoutAndSamePhysicalLayout":
            lambda: su.make_shape_with_descending_layout_and_same_physical_layout(shape),
        "ReorderLogicalDimensions": lambda: su.reorder_logical_dimensions(shape, arg),
        "PermuteDimensionsIgnoringLayout":
            lambda: su.permute_dimensions_ignoring_layout(arg, shape),
        "ChangeElementType": lambda: su.change_element_type(shape, arg),
        "DeviceShapeToHostShape": lambda: su.device_shape_to_host_shape(shape),
    }[fn]()


@pytest.mark.parametrize("case", current("shape_ops"))
def test_shape_ops(case: dict[str, Any]) -> None:
    assert str(_shape_op(case)) == case["expected"]


@pytest.mark.parametrize("case", current("shape_queries"))
def test_shape_queries(case: dict[str, Any]) -> None:
    fn, shape, arg = case["function"].split("::")[1], parse_shape(case["shape"]), case.get("arg")
    call = {
        "GetDimension": lambda: shape.dimension(arg),
        "IsEffectivelyMostMajorDimension":
            lambda: su.is_effectively_most_major_dimension(shape, arg),
        "HasDegenerateDimensions": lambda: su.has_degenerate_dimensions(shape),
        "LastDimIsMinorMost": lambda: su.last_dim_is_minor_most(shape),
    }[fn]
    if isinstance(case["expected"], str) and case["expected"].startswith("fatal"):
        with pytest.raises(TensorLayoutError,
            match=r"expected a dimension number in \[-2, 1\] for f32\[2,3\], but"):
            call()
    else:
        assert call() == case["expected"]


@pytest.mark.parametrize("case", current("bitcast"))
def test_bitcast(case: dict[str, Any]) -> None:
    fn = case["function"].split("::")[1]
    a = parse_shape(case["input"])
    if fn == "ReshapeIsBitcast":
        got = su.reshape_is_bitcast(a, parse_shape(case["output"]),
                                    ignore_element_type=case.get("ignore_element_type", False))
    elif fn == "TransposeIsBitcast":
        got = su.transpose_is_bitcast(a, parse_shape(case["output"]), case["dimensions"],
                                      ignore_element_type=case["ignore_element_type"])
    elif fn == "IsReshapeOrTransposeBitcast":
        got = su.is_reshape_or_transpose_bitcast(a, parse_shape(case["output"]))
    else:
        out = su.align_layouts(a, parse_shape(case["output_dims_shape"]))
        got = None if out is None else list(out.layout.minor_to_major)
        assert got == case["expected_minor_to_major"]
        return
    assert got == case["expected"]
