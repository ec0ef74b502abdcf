"""Bridges between XLA tiling, CuTe/TLA layouts and indexing maps, checked by brute force.

Every property compares a bridge with the direct offset function of its source — XLA's
``linear_indices``, CuTe's crd2idx, TLA's ``crd2offset`` — on every logical index of
hypothesis-generated layouts (see ``strategies.py``).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tensorlayout import convert
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError, UnsupportedError
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.xla import Shape, allocated_elements, linear_index, linear_indices, parse_shape

from .strategies import cute_layouts, cute_offsets, logical_indices, tpu_like_shapes, xla_shapes

TLA_DTYPES = ["f16", "f32", "s8", "s4", "bf16", "u4", "half", "float", "int8", "bfloat16", "int4",
              "f8e4m3fn", "f64", 8, 16, 4]


def _valid(shape: Shape) -> np.ndarray:
    """``linear_indices(shape)``, or reject the example when the layout is not valid XLA."""
    try:
        return linear_indices(shape)
    except TensorLayoutError:
        assume(False)
        raise


def _agrees(m: object, dims: tuple[int, ...], want: np.ndarray, limit: int = 1500) -> bool:
    """The map gives ``want`` (offsets in C order) at every logical index, or at an evenly
    spread ``limit`` of them."""
    idx = logical_indices(dims) if want.size else np.zeros((0, len(dims)), dtype=np.int64)
    step = max(1, -(-len(idx) // limit))
    got = [m.evaluate(list(map(int, ix)))[0] for ix in idx[::step]]  # type: ignore[attr-defined]
    return got == want[::step].tolist()


# ---------------------------------------------------------------- XLA → CuTe


@given(xla_shapes())
def test_xla_to_cute_agrees_with_linear_indices(shape: Shape) -> None:
    want = _valid(shape)
    try:
        layout = convert.xla_to_cute(shape)
    except UnsupportedError as err:
        # only layouts that have no strided form at all (the relayout engine agrees)
        assert PhysicalTarget.from_xla(shape).digits is None, err
        assert "does not divide" in str(err) or "do not nest" in str(err)
        return
    assert layout.rank() == shape.rank
    assert np.array_equal(cute_offsets(layout, shape.dimensions), want)
    # the layout's domain is the padded one: it covers the dims and stays inside the buffer
    sizes = tuple(int(m.size()) for m in layout.modes())
    assert all(s >= d for s, d in zip(sizes, shape.dimensions))
    assert layout.cosize() <= max(allocated_elements(shape), 1)


@given(xla_shapes(combine=True, max_rank=5, max_dim=6))
def test_combined_dims_raise_typed_error_or_agree(shape: Shape) -> None:
    want = _valid(shape)
    try:
        layout = convert.xla_to_cute(shape)
    except UnsupportedError as err:
        assert "'*'" in str(err) or "does not divide" in str(err) or "nest" in str(err)
        return
    assert np.array_equal(cute_offsets(layout, shape.dimensions), want)


# ---------------------------------------------------------------- CuTe → XLA


@given(tpu_like_shapes())
def test_cute_to_xla_finds_every_single_tile_layout(shape: Shape) -> None:
    want = _valid(shape)
    back = convert.cute_to_xla(convert.xla_to_cute(shape), shape.element_type.name, dims=shape.dimensions)
    assert np.array_equal(linear_indices(back), want)
    assert allocated_elements(back) == allocated_elements(shape)


@pytest.mark.parametrize("tiles", ["T(8,128)(2,1)", "T(8,128)(4,1)", "T(8,128)(8,1)", "T(4,128)",
                                   "T(512)(128)(2,1)", "T(1024)(128)(4,1)", "T(256)", "T(2,128)(2,1)"])
@settings(max_examples=25)  # x 8 formats
@given(dims=st.lists(st.sampled_from([1, 2, 3, 8, 13, 128, 130, 300]), min_size=1, max_size=3),
       data=st.data())
def test_cute_to_xla_finds_tpu_formats(tiles: str, dims: list[int], data: st.DataObject) -> None:
    assume(tiles.count(",") <= 1 or len(dims) >= 2)
    m2m = data.draw(st.permutations(range(len(dims))))
    shape = parse_shape(f"bf16[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}:{tiles}}}")
    assume(allocated_elements(shape) <= 1 << 20)
    layout = convert.xla_to_cute(shape)
    back = convert.cute_to_xla(layout, "bf16", dims=shape.dimensions)
    padded = tuple(int(m.size()) for m in layout.modes())
    assert np.array_equal(cute_offsets(convert.xla_to_cute(back), padded), cute_offsets(layout, padded))


def _pads_inside_a_tile(shape: Shape) -> bool:
    """Whether a tile of the chain does not divide what it tiles (the search's stated gap: such a
    chain can be missed, see the strict xfail below)."""
    assert shape.layout is not None
    sizes = [shape.dimensions[d] for d in reversed(shape.layout.minor_to_major)]
    for tile in shape.layout.tiles:
        k = len(tile.dims)
        under = ([1] * k + sizes)[-k:]  # the dims the tile covers (missing majors are 1)
        if any(t > 0 and n % t for n, t in zip(under, tile.dims)):  # '*' (combined) takes the dim
            return True
        sizes = list(tile.dims)
    return False


@given(xla_shapes())
def test_cute_to_xla_of_any_xla_layout_is_right_or_has_holes(shape: Shape) -> None:
    """Complete on hole-free layouts: when the CuTe form fills its buffer, an XLA layout exists
    (the one we started from), so the search must find one."""
    want = _valid(shape)
    try:
        layout = convert.xla_to_cute(shape)
    except UnsupportedError:
        return
    try:
        back = convert.cute_to_xla(layout, "f32", dims=shape.dimensions)
    except UnsupportedError as err:
        assert "has no XLA layout" in str(err)
        assert layout.cosize() > layout.size() or _pads_inside_a_tile(shape), \
            f"missed a hole-free layout: {err}"
        return
    assert np.array_equal(linear_indices(back), want)
    # the same function over the whole padded domain, not only the logical one
    padded = tuple(int(m.size()) for m in layout.modes())
    assert np.array_equal(cute_offsets(convert.xla_to_cute(back), padded), cute_offsets(layout, padded))


@pytest.mark.xfail(strict=True, raises=UnsupportedError, reason=(
    "known gap of the CuTe -> XLA tile-chain search: a chain whose tiles pad inside a tile "
    "(here 1 padded to 2 by T(1,1,2), then two more tiles) is not rebuilt from the digits; "
    "found by hypothesis"))
def test_cute_to_xla_finds_chains_that_pad_inside_a_tile() -> None:
    shape = parse_shape("f32[1,1,1,1]{0,1,2,3:T(1,1,2)(1,1,2,1)(2,2,1,1)}")
    layout = convert.xla_to_cute(shape)
    assert layout.cosize() == layout.size()  # hole-free: an XLA layout exists (this one)
    back = convert.cute_to_xla(layout, "f32", dims=shape.dimensions)
    padded = tuple(int(m.size()) for m in layout.modes())
    assert np.array_equal(cute_offsets(convert.xla_to_cute(back), padded), cute_offsets(layout, padded))


@given(cute_layouts())
def test_cute_to_xla_of_random_layouts_is_right_or_says_why(layout: Layout) -> None:
    sizes = tuple(int(m.size()) for m in layout.modes())
    try:
        shape = convert.cute_to_xla(layout)
    except UnsupportedError as err:
        assert "has no XLA layout" in str(err)
        offsets = layout.offsets()
        if "stride-0" in str(err) or "one offset" in str(err):
            assert len(np.unique(offsets)) < offsets.size or any(
                d == 0 and s > 1 for s, d in layout.flat_modes())
        return
    assert shape.dimensions == sizes
    assert np.array_equal(linear_indices(shape), cute_offsets(layout, sizes))


# ---------------------------------------------------------------- indexing maps


@given(xla_shapes(max_dim=9))
def test_indexing_map_of_xla_shapes_agrees_on_every_index(shape: Shape) -> None:
    want = _valid(shape)
    assert _agrees(convert.to_indexing_map(shape), shape.dimensions, want)
    assert _agrees(convert.to_indexing_map(shape, simplify=False), shape.dimensions, want, 300)


@given(xla_shapes(combine=True, max_rank=5, max_dim=5))
def test_indexing_map_handles_combined_dims(shape: Shape) -> None:
    want = _valid(shape)
    assume(want.size <= 3000)
    assert _agrees(convert.to_indexing_map(shape), shape.dimensions, want)


@given(cute_layouts())
def test_indexing_map_of_cute_layouts_agrees_on_every_index(layout: Layout) -> None:
    sizes = tuple(int(m.size()) for m in layout.modes())
    want = cute_offsets(layout, sizes)
    assert _agrees(convert.to_indexing_map(layout), sizes, want)
    assert _agrees(convert.to_indexing_map(str(layout)), sizes, want, 300)


# ---------------------------------------------------------------- TLA formats


@pytest.mark.parametrize("tag", tla.FORMATS)
@settings(max_examples=40)  # x 9 formats
@given(rows=st.integers(1, 70), cols=st.integers(1, 140), dtype=st.sampled_from(TLA_DTYPES),
       data=st.data())
def test_every_tla_format_through_every_bridge(tag: str, rows: int, cols: int, dtype: str | int,
                                               data: st.DataObject) -> None:
    t = tla.make_format(tag, rows, cols, dtype)
    dims = t.origin_shape
    want = cute_offsets(t.layout, dims)  # crd2offset is crd2idx: checked point by point below
    shape = convert.tla_to_xla(tag, rows, cols, dtype)  # every format has an XLA form
    assert shape.dimensions == dims
    assert np.array_equal(linear_indices(shape), want)
    bits = tla.element_bits(dtype)
    assert shape.element_type.bits == bits or tag in ("L0C", "Weight4BitnZ")
    assert shape.layout is not None and shape.layout.element_size_in_bits == (bits if bits < 8 else 0)
    assert np.array_equal(cute_offsets(convert.xla_to_cute(shape), dims), want)
    m = convert.to_indexing_map(t)
    for _ in range(20):
        ix = tuple(data.draw(st.integers(0, n - 1)) for n in dims)
        flat = int(np.ravel_multi_index(ix, dims))
        assert m.evaluate(list(ix)) == (tla.crd2offset(ix, t),) == (want[flat],)


@pytest.mark.parametrize("tag, dtype, text", [
    ("zZ", "f16", "f16[40,72]{1,0:T(16,16)}"),
    ("zN", "f16", "f16[40,72]{0,1:T(16,16)(16,1)}"),
    ("nZ", "f32", "f32[40,72]{1,0:T(8,16)(8,1)}"),
    ("nN", "s8", "s8[40,72]{0,1:T(16,32)}"),
    ("L0C", "f32", "f32[40,72]{0,1:T(16,16)(16,1)}"),
    ("RowMajor", "bf16", "bf16[40,72]{1,0}"),
    ("ColumnMajor", "int8", "s8[40,72]{0,1}"),
    ("zN", "int4", "s4[40,72]{0,1:T(64,16)(64,1)E(4)}"),
    ("VectorLayout", "f16", "f16[72]{0}"),
])
def test_tla_formats_in_xla_notation(tag: str, dtype: str, text: str) -> None:
    assert str(convert.tla_to_xla(tag, 40, 72, dtype)) == text


# ---------------------------------------------------------------- the seed's examples and edge cases


def test_seed_examples_in_every_notation() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert str(convert.xla_to_cute(shape)) == "((2,2),(2,3)):((2,12),(1,4))"
    assert str(convert.cute_to_xla("((2,2),(2,3)):((2,12),(1,4))", dims=(3, 5))) == str(shape)
    assert convert.to_indexing_map(shape).evaluate([2, 3]) == (17,)
    fig2 = parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}")
    assert np.array_equal(cute_offsets(convert.xla_to_cute(fig2), (4, 8)), linear_indices(fig2))
    assert str(convert.cute_to_xla(convert.xla_to_cute(fig2))) == str(fig2)
    zn = "((4,2),(4,3)):((4,16),(1,32))"  # the zN table of seed 004
    assert convert.to_indexing_map(zn).evaluate([1, 5]) == (37,)
    assert str(convert.cute_to_xla(zn)) == "f32[8,12]{0,1:T(4,4)(4,1)}"


@pytest.mark.parametrize("text, cute_text, xla_text", [
    ("f32[]", "():()", "f32[]"),  # rank 0
    ("f32[1]{0}", "(1):(0)", "f32[1]{0}"),  # a size-1 dim
    ("f32[3,5]{1,0:T(8,128)}", "(8,128):(128,1)", "f32[3,5]{1,0:T(8,128)}"),  # tiles wider than dims
    ("f32[3,5]{0,1:T(2)}", "((2,2),5):((1,2),4)", "f32[3,5]{0,1:T(2)}"),  # fewer tile dims
    ("f32[3,5]{1,0:T(2,2,2)}", "((2,2),(2,3)):((2,24),(1,8))", None),  # more tile dims than the rank
    ("s4[8,128]{1,0:T(8,128)(8,1)E(4)}", "(8,128):(1,8)", "s4[8,128]{0,1:E(4)}"),  # the same function
    ("f32[3,5]{1,0:T(2,2)L(8)S(1)}", "((2,2),(2,3)):((2,12),(1,4))", "f32[3,5]{1,0:T(2,2)}"),
    ("f32[5]{0:T(2)(4)}", "((2,3)):((1,4))", None),  # padding inside a tile: holes in the image
    ("f32[0,5]{1,0:T(2,2)}", "((2,0),(2,3)):((2,12),(1,4))", None),  # zero elements
])
def test_edge_cases(text: str, cute_text: str, xla_text: str | None) -> None:
    shape = parse_shape(text)
    layout = convert.xla_to_cute(shape)
    assert str(layout) == cute_text
    if xla_text is not None:
        back = convert.cute_to_xla(layout, shape.element_type.name, dims=shape.dimensions)
        assert str(back) == xla_text
        assert np.array_equal(linear_indices(back), linear_indices(shape))


@pytest.mark.parametrize("text, error, match", [
    ("f32[<=3,5]{1,0:T(2,2)}", LayoutError, "dynamic"),
    ("f32[?,5]{1,0}", LayoutError, "dynamic"),
    ("(f32[3]{0}, f32[2]{0})", UnsupportedError, "tuple"),
    ("token[]", UnsupportedError, "token"),
    ("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", UnsupportedError, "combines"),
    ("f32[6]{0:T(3)(2)}", UnsupportedError, "does not divide"),
    ("f32[3,5", ParseError, "expected"),
])
def test_xla_to_cute_typed_errors(text: str, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        convert.xla_to_cute(text)


def test_combined_dims_have_no_cute_form_but_a_map() -> None:
    shape = parse_shape("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    m = convert.to_indexing_map(shape)
    for idx in [(0, 0, 0, 0, 0), (1, 6, 7, 10, 9), (1, 3, 5, 2, 4)]:
        assert m.evaluate(list(idx)) == (linear_index(shape, idx),)
    # '*' over a size-1 dim merges nothing, so the CuTe form exists
    one = parse_shape("f32[1,6,4]{2,1,0:T(*,2,2)}")
    assert np.array_equal(cute_offsets(convert.xla_to_cute(one), (1, 6, 4)), linear_indices(one))


@pytest.mark.parametrize("text, why", [
    ("(4,8):(0,1)", "stride-0"), ("(2,2):(1,1)", "one offset"), ("(4,4):(1,5)", "holes"),
    ("(4,8):(-1,4)", "negative stride"),
])
def test_cute_to_xla_says_why_not(text: str, why: str) -> None:
    with pytest.raises(UnsupportedError, match=why):
        convert.cute_to_xla(text)


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"dims \(4,\) do not match the|"
            r"expected XLA shape or CuTe|"
            r"expected an XLA shape, a CuTe, TLA or Triton "
            r"layout|"
            r"expected a CuTe, TLA or|"
            r"expected an XLA element|"
            r"expected dims as a sequence|"
            r"expected end of input at|"
            r"rows and cols must be|"
            r"unknown TLA format 'zQ';")


@pytest.mark.parametrize("call", [
    lambda: convert.cute_to_xla("(4,8):(8,1)@"),
    lambda: convert.cute_to_xla("(4,8):(8,1)", dims=(4,)),
    lambda: convert.cute_to_xla("(4,8):(8,1)", dims=(4, True)),
    lambda: convert.cute_to_xla("(4,8):(8,1)", dims="48"),
    lambda: convert.cute_to_xla("(4,8):(8,1)", element="F32"),
    lambda: convert.cute_to_xla(parse_shape("f32[3]")),
    lambda: convert.tla_to_xla("zQ", 4, 4),
    lambda: convert.tla_to_xla("zN", -1, 4),
    lambda: convert.tla_to_xla("zN", 4, 4, "f24"),
    lambda: convert.to_indexing_map(3),
    lambda: convert.parse_target(None),
])
def test_bad_arguments_raise_library_errors(call: object) -> None:
    with pytest.raises(TensorLayoutError, match=MESSAGES):
        call()  # type: ignore[operator]


def test_static_ints_and_rank_zero() -> None:
    assert str(convert.cute_to_xla("_4:_1")) == "f32[4]{0}"
    assert str(convert.cute_to_xla("():()")) == "f32[]"
    assert str(convert.to_indexing_map("f32[]")) == "() -> (0)"
    assert str(convert.cute_to_xla("(2,(3,4)):(1,(2,6))")) == "f32[2,12]{0,1}"  # no useless T(1,1)
    assert convert.to_indexing_map(tla.make_format("zN", 0, 5)).is_known_empty
    assert str(convert.tla_to_xla("zN", 0, 5)).startswith("f16[0,5]")


ALPHABET = "()[]{},:*_0123456789fsTEuSL<=?@ bfpred"


@given(st.text(alphabet=ALPHABET, max_size=30))
def test_random_text_raises_only_library_errors(text: str) -> None:
    for fn in (convert.parse_target, convert.xla_to_cute, convert.cute_to_xla, convert.to_indexing_map):
        with contextlib.suppress(TensorLayoutError):
            fn(text)


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=True),
                 st.text(max_size=6), st.lists(st.integers(-2, 9), max_size=4).map(tuple),
                 st.sampled_from(["f32", "s4", "half", "zN", "nN", "(4,8):(8,1)", "f32[3,5]", b"f16"]))


@given(JUNK, JUNK, JUNK, JUNK)
def test_junk_arguments_raise_only_library_errors(a: object, b: object, c: object, d: object) -> None:
    calls = [lambda: convert.cute_to_xla("(4,8):(8,1)", a, b),  # type: ignore[arg-type]
             lambda: convert.cute_to_xla(a, "f32", b),  # type: ignore[arg-type]
             lambda: convert.tla_to_xla(a, b, c, d),  # type: ignore[arg-type]
             lambda: convert.tla_to_xla("zN", 8, 8, a),  # type: ignore[arg-type]
             lambda: convert.to_indexing_map(a, simplify=bool(b)),
             lambda: convert.xla_to_cute(a)]  # type: ignore[arg-type]
    for call in calls:
        with contextlib.suppress(TensorLayoutError):
            call()
