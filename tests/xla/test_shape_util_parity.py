"""The ShapeUtil / LayoutUtil functions added for API parity (issue 15).

Expected values follow XLA's definitions in xla/shape_util.cc, layout_util.cc, shape.cc and
util.cc (CommonFactors); where jaxlib exposes the function (``Shape.leaf_count``, shape
equality) it is asked too. Brute-force checks recompute the answer from the definition.
"""

from __future__ import annotations

import itertools
import random
from math import prod

import pytest

from tensorlayout.errors import LayoutError
from tensorlayout.xla import index_util as iu
from tensorlayout.xla import layout_util as lu
from tensorlayout.xla import shape_dims as sd
from tensorlayout.xla import shape_index as si
from tensorlayout.xla import shape_make as sm
from tensorlayout.xla import shape_query as sq
from tensorlayout.xla.layout import Layout, memory_space_name, parse_layout
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape, parse_shape
from tensorlayout.xla.shape_util import (
    is_effectively_most_major_dimension,
    is_reshape_or_transpose_bitcast,
    prepend_major_dimension,
    reshape_is_bitcast,
    transpose_is_bitcast,
)
from tensorlayout.xla.sizes import byte_size, byte_size_of_tuple_index_table
from tensorlayout.xla.types import ELEMENT_TYPES

P = parse_shape
NESTED = P("(f32[2], (s8[], u4[3]), ())")


# -- Shape::Equal options ---------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "options", "expected"), [
    ("f32[2,3]", "f32[4,5]", {"ignore_dimensions": True}, True),
    ("f32[2,3]", "f32[6]", {"ignore_dimensions": True}, False),        # ranks still compared
    ("f32[?,3]", "f32[7,3]", {"ignore_dynamic_dimension": True}, True),  # '?' matches any size
    ("f32[<=4,3]", "f32[7,3]", {"ignore_dynamic_dimension": True}, False),
    ("f32[?,3]", "f32[7,3]", {}, False),
    ("f32[2]{0:T(2)}", "f32[2]{0}", {"ignore_tiles": True}, True),
    ("token[]", "opaque[]", {"ignore_element_type": True}, False),
    ("(f32[2], s8[])", "(f32[2], s8[])", {}, True),
    ("(f32[2])", "f32[2]", {}, False),
    ("b(f32[2]{0})", "f32[2]{0}", {}, False),
    ("b(f32[2]{0})", "f32[2]{0}", {"ignore_buffer": True}, True),
])
def test_shape_equal_options(a: str, b: str, options: dict[str, bool], expected: bool) -> None:
    assert P(a).equal(P(b), **options) is expected


def test_layout_equal_new_options() -> None:
    a = Layout((1, 0), index_primitive_type=None)
    b = parse_layout("{1,0:T(2)}")
    assert not a.equal(b) and a.equal(b, ignore_tiles=True)
    assert a.to_string() == "{1,0}" and b.to_string() == str(b)
    assert a.equal(a, ignore_index_primitive_type=True, ignore_pointer_primitive_type=True,
                   ignore_physical_shape=True)


def test_shape_equality_agrees_with_jaxlib() -> None:
    xc = pytest.importorskip("jaxlib.xla_client")
    rng = random.Random(15)
    for _ in range(200):
        dims_a = tuple(rng.choice([1, 2, 3]) for _ in range(rng.randint(0, 3)))
        dims_b = dims_a if rng.random() < 0.6 else tuple(rng.choice([1, 2, 3]) for _ in dims_a)
        m_a = tuple(rng.sample(range(len(dims_a)), len(dims_a)))
        m_b = m_a if rng.random() < 0.5 else tuple(rng.sample(range(len(dims_b)), len(dims_b)))
        ta, tb = rng.choice(["f32", "s8"]), rng.choice(["f32", "s8"])
        xa = xc.Shape.array_shape(getattr(xc.PrimitiveType, ta.upper()), dims_a, m_a)
        xb = xc.Shape.array_shape(getattr(xc.PrimitiveType, tb.upper()), dims_b, m_b)
        ours = Shape.array(ta, dims_a, Layout(m_a)).equal(Shape.array(tb, dims_b, Layout(m_b)))
        assert ours == (xa == xb), (xa, xb)


# -- shape_query ------------------------------------------------------------------------------

def test_rank_and_type_queries() -> None:
    assert sq.same_rank(P("f32[2,3]"), P("s8[7,1]")) and not sq.same_rank(P("f32[2]"), P("f32[]"))
    assert sq.same_element_type(P("f32[2]"), P("f32[9,9]"))
    assert sq.same_element_type_ignoring_fp_precision(P("f32[2]"), P("bf16[2]"))
    assert not sq.same_element_type_ignoring_fp_precision(P("f32[2]"), P("s32[2]"))
    assert not sq.same_element_type_ignoring_fp_precision(P("c64[2]"), P("f32[2]"))
    assert sq.true_rank(P("f32[1,4,1,5]")) == 2 and sq.true_rank(P("f32[]")) == 0
    assert sq.is_effective_scalar(P("f32[1,1]")) and not sq.is_effective_scalar(P("f32[1,2]"))
    assert not sq.is_effective_scalar(P("(f32[])"))
    assert sq.is_scalar_with_element_type(P("s32[]"), "s32")
    assert not sq.is_scalar_with_element_type(P("s32[1]"), "s32")
    with pytest.raises(LayoutError, match=r"true_rank needs an array shape, but got \(f32\[2\]\{0\}\)"):
        sq.true_rank(P("(f32[2])"))


@pytest.mark.parametrize(("a", "b", "higher"), [
    ("f16", "bf16", "bf16"),      # more exponent range wins
    ("f16", "f32", "f32"),
    ("f32", "c64", "c64"),        # complex first
    ("c64", "c128", "c128"),
    ("s8", "f8e4m3fn", "f8e4m3fn"),
    ("s32", "u32", "s32"),        # signed beats unsigned at equal width
    ("u16", "s8", "u16"),         # then width
    ("f8e4m3fn", "f8e5m2", "f8e5m2"),
])
def test_higher_precision_element_type(a: str, b: str, higher: str) -> None:
    sa, sb = Shape.array(a, (2,)), Shape.array(b, (2,))
    assert sq.higher_precision_element_type(sa, sb).name == higher
    assert sq.higher_precision_element_type(sb, sa).name == higher
    assert sq.element_can_upcast(sa if higher == b else sb, sb if higher == b else sa)


def test_higher_precision_unordered_pair_is_an_error() -> None:
    with pytest.raises(LayoutError, match=r"pred and u1 have no precision order"):
        sq.higher_precision_element_type(Shape.array("pred", (1,)), Shape.array("u1", (1,)))


def test_element_predicates() -> None:
    assert sq.element_is_integral_with_bits(P("s16[2]"), 16)
    assert not sq.element_is_integral_with_bits(P("f16[2]"), 16)
    assert sq.element_is_signed(P("f16[2]")) and sq.element_is_signed(P("s4[2]"))
    assert not sq.element_is_signed(P("u8[2]")) and not sq.element_is_signed(P("c64[2]"))
    assert not sq.element_is_signed(P("pred[2]"))


def test_structure_queries() -> None:
    assert sq.compatible_kind(P("(f32[2], s8[])"), P("(u4[9], f64[])"))
    assert not sq.compatible_kind(P("(f32[2], s8[])"), P("(f32[2], s8[1])"))
    assert not sq.compatible_kind(P("b(f32[2])"), P("f32[2]"))
    assert sq.compatible_kind(P("b(f32[2])"), P("f32[2]"), ignore_buffer=True)
    assert sq.equal_structure(NESTED, P("(s1[], (f32[9], f32[]), ())"))
    assert not sq.equal_structure(NESTED, P("(f32[2], (s8[], u4[3]), (f32[]))"))
    assert not sq.equal_structure(P("(f32[2])"), P("f32[2]"))
    assert sq.has_primitive_type(NESTED, "u4") and not sq.has_primitive_type(NESTED, "f64")
    assert sq.has_primitive_type(NESTED, "tuple")
    assert sq.elements_in_recursive(NESTED) == 2 + 1 + 3
    with pytest.raises(LayoutError, match=r"elements_in_recursive needs an array or a tuple, but got"):
        sq.elements_in_recursive(P("token[]"))


def test_dynamic_compatibility() -> None:
    assert sq.dynamic_array_shape_is_compatible(P("f32[<=3,2]"), P("f32[4,2]"))
    assert not sq.dynamic_array_shape_is_compatible(P("f32[<=5,2]"), P("f32[4,2]"))
    assert sq.dynamic_array_shape_is_compatible(P("f32[?]"), P("f32[4]"))  # INT64_MIN <= any
    assert sq.dynamic_shape_is_compatible(P("(f32[<=3], s8[9])"), P("(f32[4], s8[1])"))
    assert not sq.dynamic_shape_is_compatible(P("(f32[<=5])"), P("(f32[4])"))
    assert not sq.dynamic_shape_is_compatible(P("((f32[2]))"), P("(f32[2])"))
    assert not sq.dynamic_shape_is_compatible(P("(f32[2], f32[2])"), P("(f32[2])"))


# -- shape_index ------------------------------------------------------------------------------

def test_tuple_helpers() -> None:
    assert si.is_nested_tuple(NESTED) and not si.is_nested_tuple(P("(f32[2])"))
    assert si.is_empty_tuple(P("()")) and not si.is_empty_tuple(NESTED)
    assert si.tuple_element_count(NESTED) == 3 and si.tuple_element_count(P("f32[2]")) == 0
    assert str(si.slice_tuple(NESTED, 0, 2)) == "(f32[2]{0}, (s8[], u4[3]{0}))"
    with pytest.raises(LayoutError, match=r"tuple slice \[0, 4\) out of range for 3 elements"):
        si.slice_tuple(NESTED, 0, 4)


def _all_indices(shape: Shape) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    si.for_each_subshape(shape, lambda _s, i: out.append(i))
    return out


def test_subshapes_by_brute_force() -> None:
    indices = _all_indices(NESTED)
    assert indices == [(), (0,), (1,), (1, 0), (1, 1), (2,)]
    assert si.subshape_count(NESTED) == len(indices)
    leaves = [i for i in indices if si.is_leaf_index(NESTED, i)]
    assert leaves == [(0,), (1, 0), (1, 1)]
    assert si.get_leaf_count(NESTED) == len(leaves) == len(list(NESTED.leaves()))
    assert str(si.get_subshape(NESTED, (1, 1))) == "u4[3]{0}"
    for bad in [(3,), (0, 0), (-1,), (1, 2)]:
        assert not si.index_is_valid(NESTED, bad) and si.try_get_subshape(NESTED, bad) is None
        with pytest.raises(LayoutError, match="not a valid subshape index"):
            si.get_subshape(NESTED, bad)
    assert si.shape_index_to_string((1, 0)) == "{1,0}"


def test_leaf_count_agrees_with_jaxlib() -> None:
    xc = pytest.importorskip("jaxlib.xla_client")
    rng = random.Random(7)

    def build(depth: int) -> tuple[Shape, object]:
        if depth == 0 or rng.random() < 0.4:
            return Shape.array("f32", (2,)), xc.Shape.array_shape(xc.PrimitiveType.F32, (2,))
        parts = [build(depth - 1) for _ in range(rng.randint(0, 3))]
        return Shape.tuple_of(*(p[0] for p in parts)), xc.Shape.tuple_shape([p[1] for p in parts])

    for _ in range(100):
        ours, theirs = build(3)
        assert si.get_leaf_count(ours) == theirs.leaf_count(), theirs


def test_byte_size_of_tuple_index_table() -> None:
    assert byte_size_of_tuple_index_table(NESTED, 4) == 12
    assert byte_size(NESTED) == byte_size_of_tuple_index_table(NESTED)
    with pytest.raises(LayoutError, match=r"byte_size_of_tuple_index_table needs a tuple shape and a"):
        byte_size_of_tuple_index_table(P("f32[2]"))


# -- shape_make -------------------------------------------------------------------------------

def test_makers() -> None:
    assert str(sm.make_nil()) == "()" and str(sm.make_scalar_shape("f32")) == "f32[]"
    assert sm.make_token_shape().is_token and sm.make_opaque_shape().is_opaque
    one = P("f32[2]")
    assert sm.make_maybe_tuple_shape([one]) is one
    assert str(sm.make_maybe_tuple_shape([one, one])) == "(f32[2]{0}, f32[2]{0})"
    assert str(sm.make_shape_with_descending_layout("s8", [2, 3, 4])) == "s8[2,3,4]{2,1,0}"
    assert str(sm.make_shape_with_dense_layout("f32", [8, 128], [1, 0], [(8, 128)])) == \
        "f32[8,128]{1,0:T(8,128)}"
    assert str(sm.make_shape_with_dense_layout("f32", [4], [0], element_size_in_bits=32)) == "f32[4]{0}"
    assert str(sm.complex_component_shape(P("c128[2,3]{0,1}"))) == "f64[2,3]{0,1}"
    with pytest.raises(LayoutError, match=r"complex_component_shape needs a complex array, but got"):
        sm.complex_component_shape(P("f32[2]"))


@pytest.mark.parametrize(("args", "message"), [
    (("f32", [2, -1]), "Invalid dimension size -1"),
    (("f32", [2, UNBOUNDED_SIZE], [False, False]), "Invalid dimension size"),
    (("s8", [3074457345618258603, 3]), "overflow in static extent product"),
    (("token", [2]), "non-array shape"),
    (("f32", [2], [True, False]), "did not match"),
])
def test_make_validated_shape_errors(args: tuple, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        sm.make_validated_shape(*args)


def test_make_validated_shape_and_layout_validation() -> None:
    assert str(sm.make_validated_shape("f32", [4, UNBOUNDED_SIZE])) == "f32[4,?]{1,0}"
    assert sm.make_validated_shape("token", []).is_token
    with pytest.raises(LayoutError, match=r"layout minor_to_major field has duplicate values: \{0,0\}"):
        sm.make_shape_with_dense_layout("f32", [2, 3], [0, 0])
    with pytest.raises(LayoutError, match="layout size"):
        sm.make_shape_with_dense_layout("f32", [2, 3], [0])
    sm.validate_shape_with_optional_layout(Shape.array("f32", (2,), None))
    with pytest.raises(LayoutError, match=r"layout minor_to_major field has duplicate values: \{0,0\}"):
        sm.validate_shape_with_optional_layout(Shape.array("f32", (2, 3), Layout((0, 0))))


def test_static_shapes() -> None:
    static = sm.make_shape_with_static_dimensions(P("(f32[<=4,3], s8[<=2])"))
    assert str(static) == "(f32[4,3]{1,0}, s8[2]{0})"
    assert str(sm.make_static_shape(P("f32[<=4,3]{1,0:M(8)}"))) == "f32[4,3]{1,0}"
    assert not sm.make_static_shape(P("b(f32[<=4])")).is_dynamic


# -- shape_dims -------------------------------------------------------------------------------

def test_delete_and_filter_keep_tiles() -> None:
    s = P("f32[5,3,2,7,9]{2,0,1,4,3:T(2)}")
    assert str(sd.delete_dimension(1, s)) == "f32[5,2,7,9]{1,0,3,2:T(2)}"
    assert str(sd.filter_dimensions(lambda d: d in (0, 4), s)) == "f32[5,9]{0,1:T(2)}"
    with pytest.raises(LayoutError, match=r"expected a dimension in \[0, 5\), but got 5"):
        sd.delete_dimension(5, s)


def test_drop_degenerate_and_append_major() -> None:
    assert str(sd.drop_degenerate_dimensions(P("f32[1,4,1,5]{0,2,3,1}"))) == "f32[4,5]{1,0}"
    assert str(sd.append_major_dimension(7, P("f32[2,3]{0,1}"))) == "f32[2,3,7]{0,1,2}"
    # not prepend: the new dimension is the last one
    assert str(prepend_major_dimension(7, P("f32[2,3]{0,1}"))) == "f32[7,2,3]{1,2,0}"


def _brute_common_factors(a: list[int], b: list[int]) -> set[tuple[int, int]]:
    return {(i, j) for i in range(len(a) + 1) for j in range(len(b) + 1)
            if prod(a[:i]) == prod(b[:j])}


@pytest.mark.parametrize(("a", "b", "expected"), [
    ([2, 5, 1, 3], [1, 10, 3, 1], [(0, 0), (0, 1), (2, 2), (3, 2), (4, 3), (4, 4)]),
    ([2, 6, 5], [12, 5], [(0, 0), (2, 1), (3, 2)]),
    ([0, 10, 3], [0, 3, 10], [(0, 0), (1, 1), (3, 3)]),
    ([4, 0, 3], [3, 0, 4], [(0, 0), (3, 3)]),
])
def test_common_factors(a: list[int], b: list[int], expected: list[tuple[int, int]]) -> None:
    got = sd.common_factors(a, b)
    assert got == expected
    if 0 not in a:
        assert set(got) <= _brute_common_factors(a, b)


def test_common_factors_random_bounds_are_common() -> None:
    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice([1, 2, 3, 4, 6]) for _ in range(rng.randint(0, 4))]
        b = list(a)
        rng.shuffle(b)
        got = sd.common_factors(a, b)
        assert got[0] == (0, 0) and got[-1] == (len(a), len(b))
        assert set(got) <= _brute_common_factors(a, b)
        assert got == sorted(got)


def test_reshape_analysis() -> None:
    pre, post = P("f32[2,3,4]"), P("f32[2,12]")
    assert sd.dimensions_unmodified_by_reshape(pre, post) == [(0, 0)]
    assert sd.reshape_leaves_dimensions_unmodified(pre, post, [0]) == [0]
    assert sd.reshape_leaves_dimensions_unmodified(pre, post, [1]) is None
    assert sd.reshape_leaves_dimensions_unmodified(pre, post, [1, 0]) is None
    d = sd.inserted_or_deleted_1_sized_dimensions(P("f32[1,5,1,3]"), P("f32[5,3,1]"))
    assert d is not None and (d.deleted_dimensions, d.inserted_dimensions) == ([0, 2], [2])
    assert sd.inserted_or_deleted_1_sized_dimensions(P("f32[2,3]"), P("f32[3,2]")) is None


def test_deduce_transpose_dimensions_for_bitcast() -> None:
    rng = random.Random(5)
    for _ in range(100):
        rank = rng.randint(1, 4)
        dims = [rng.randint(2, 4) for _ in range(rank)]
        a = Shape.array("f32", dims, Layout(tuple(rng.sample(range(rank), rank))))
        perm = rng.sample(range(rank), rank)
        b = Shape.array("f32", [dims[p] for p in perm], Layout(tuple(rng.sample(range(rank), rank))))
        got = sd.deduce_transpose_dimensions_for_bitcast(a, b)
        if got is not None:
            assert transpose_is_bitcast(a, b, got) and transpose_is_bitcast(a, b, got, exact=True)
        brute = [list(p) for p in itertools.permutations(range(rank))
                 if transpose_is_bitcast(a, b, p, exact=True)]
        assert (got is not None) == bool(brute)
        # without size-1 dimensions XLA's layout rule and the offset comparison agree
        for p in itertools.permutations(range(rank)):
            if tuple(dims[i] for i in p) == b.dimensions:
                assert transpose_is_bitcast(a, b, p) == transpose_is_bitcast(a, b, p, exact=True)
        if got is not None:
            assert is_reshape_or_transpose_bitcast(a, b, exact=True)
    assert sd.deduce_transpose_dimensions_for_bitcast(P("f32[2,3]"), P("f32[6]")) is None


def test_is_reshape_or_transpose_bitcast_keeps_xlas_argument_order() -> None:
    # XLA deduces the a->b permutation, then checks it as a b->a transpose
    # (TransposeIsBitcast(b, a, dims)); for a permutation that is not its own inverse that says
    # False although the transpose moves no data. Parity by default; exact=True is right.
    a, b = P("f32[4,3,4]{2,0,1}"), P("f32[4,4,3]{0,1,2}")
    assert sd.deduce_transpose_dimensions_for_bitcast(a, b) == [2, 0, 1]
    assert transpose_is_bitcast(a, b, [2, 0, 1])
    assert not is_reshape_or_transpose_bitcast(a, b)
    assert is_reshape_or_transpose_bitcast(a, b, exact=True)
    c, d = P("f32[3,4]{0,1}"), P("f32[4,3]{1,0}")  # a swap is its own inverse: both agree
    assert is_reshape_or_transpose_bitcast(c, d) and is_reshape_or_transpose_bitcast(c, d, exact=True)


@pytest.mark.parametrize(("a", "b", "xla", "exact"), [
    ("f32[3,4]{1,0}", "f32[6,2]{1,0}", True, True),
    ("f32[3,4]{0,1}", "f32[6,2]{1,0}", False, False),
    ("f32[3,4]{1,0}", "f32[5,2]{1,0}", False, False),       # XLA: False, not an error
    ("f32[0,4]{1,0}", "f32[2,0]{0,1}", True, True),
    ("f32[1,4,1]{2,1,0}", "f32[4]{0}", True, True),
    ("f32[8,256]{1,0:T(8,128)}", "f32[2048]{0}", True, False),  # XLA ignores tiles
])
def test_reshape_is_bitcast_as_xla_and_exact(a: str, b: str, xla: bool, exact: bool) -> None:
    assert reshape_is_bitcast(P(a), P(b)) is xla
    assert reshape_is_bitcast(P(a), P(b), exact=True) is exact


def test_reshape_bitcast_unit_index_rule_matches_offsets_when_untiled() -> None:
    rng = random.Random(11)
    for _ in range(200):
        dims_a = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 4))]
        total = prod(dims_a)
        dims_b = list(dims_a)
        rng.shuffle(dims_b)
        if rng.random() < 0.5 and total % 2 == 0:
            dims_b = [2, total // 2]
        a = Shape.array("f32", dims_a, Layout(tuple(rng.sample(range(len(dims_a)), len(dims_a)))))
        b = Shape.array("f32", dims_b, Layout(tuple(rng.sample(range(len(dims_b)), len(dims_b)))))
        assert reshape_is_bitcast(a, b) == reshape_is_bitcast(a, b, exact=True), (a, b)


# -- layout_util ------------------------------------------------------------------------------

def test_layout_util() -> None:
    assert lu.get_default_layout_for_shape(P("f32[2,3,4]")) == Layout((2, 1, 0))
    assert lu.get_default_layout_for_shape(P("token[]")) == Layout(())
    with pytest.raises(LayoutError, match=r"get_default_layout_for_shape needs an array shape, but got"):
        lu.get_default_layout_for_shape(NESTED)
    assert str(lu.get_with_default_layout(P("(f32[2,3]{0,1:T(2)}, token[])"))) == "(f32[2,3]{1,0}, token[])"
    assert str(lu.clear_tiles(P("(f32[8,128]{1,0:T(8,128)S(1)})"))) == "(f32[8,128]{1,0:S(1)})"
    assert lu.is_monotonic_with_dim0_minor(Layout((0, 1, 2)))
    assert not lu.is_monotonic_with_dim0_minor(Layout((1, 0)))
    assert lu.is_monotonic_with_dim0_major(Layout((2, 1, 0))) and lu.is_monotonic_with_dim0_major(Layout(()))
    assert lu.has_layout(NESTED) and not lu.has_layout(Shape.tuple_of(Shape.array("f32", (2,), None)))
    assert lu.layouts_in_shapes_equal(P("f32[2,3]{0,1}"), P("s8[7,7]{0,1}"))
    assert not lu.layouts_in_shapes_equal(P("f32[2,3]{0,1}"), P("f32[2,3]{1,0}"))
    assert not lu.layouts_in_shapes_equal(P("f32[2]{0}"), P("f32[2,1]{1,0}"))
    assert lu.layouts_in_shapes_equal(P("f32[2]{0:T(2)}"), P("f32[2]{0}"), ignore_tiles=True)
    assert lu.layouts_in_shapes_equal(P("token[]"), P("f32[2]"))
    assert lu.are_dimensions_consecutive(Layout((2, 0, 1, 3)), [0, 1, 2])
    assert not lu.are_dimensions_consecutive(Layout((2, 0, 1, 3)), [2, 3])


# -- index_util and small Shape/Layout queries (named in the parity table) -----------------------

def test_index_util_queries_by_brute_force() -> None:
    s = P("f32[3,4,5]{0,2,1}")
    strides = {d: iu.get_dimension_stride(s, d) for d in range(3)}
    assert strides == {0: 1, 2: 3, 1: 15}
    for idx in itertools.product(range(3), range(4), range(5)):
        assert iu.multidimensional_index_to_linear_index(s, idx) == sum(
            i * strides[d] for d, i in enumerate(idx))
    assert iu.index_in_bounds(s, (2, 3, 4)) and not iu.index_in_bounds(s, (3, 0, 0))
    assert not iu.index_in_bounds(s, (0, 0))
    assert iu.compare_indices((1, 2), (1, 3)) == -1 and iu.compare_indices((2, 0), (1, 9)) == 1
    assert iu.compare_indices((1, 2), (1, 2)) == 0
    assert s.layout is not None and s.layout.logical_to_physical() == (2, 0, 1)
    assert all(s.layout.major_to_minor[p] == d for d, p in enumerate(s.layout.logical_to_physical()))
    assert s.dim_index(-1) == 2 and s.dim_index(0) == 0
    with pytest.raises(LayoutError, match=r"expected a dimension number in \[-3, 2\] for f32\[3,4,5\], but"):
        s.dim_index(3)


def test_primitive_type_kinds_and_small_queries() -> None:
    kinds = {n: (t.is_integral, t.is_float, t.is_complex, t.is_array) for n, t in ELEMENT_TYPES.items()}
    assert kinds["s4"] == (True, False, False, True) and kinds["pred"] == (False, False, False, True)
    assert kinds["bf16"] == (False, True, False, True) and kinds["c64"] == (False, False, True, True)
    assert kinds["token"] == (False, False, False, False)
    assert P("f32[]").is_scalar and not P("f32[1]").is_scalar and not P("()").is_scalar
    assert iu.make_layout_from_major_to_minor([0, 2, 1]) == Layout((1, 2, 0))


def test_shape_dynamic_predicates() -> None:
    s = P("f32[?,<=4,3]")
    assert sq.is_unbounded_dynamic_dimension(s, 0) and not sq.is_unbounded_dynamic_dimension(s, 1)
    assert sq.is_bounded_dynamic_dimension(s, 1) and not sq.is_bounded_dynamic_dimension(s, 0)
    assert sq.is_static_dimension(s, 2) and not sq.is_static_dimension(s, 0)
    assert s.is_dynamic_dimension(0) and s.is_dynamic_dimension(-2) and not s.is_dynamic_dimension(2)
    assert not sq.is_static(s) and sq.is_static(P("(f32[2], ())"))
    assert sq.is_unbounded_dynamic(P("(f32[2], s8[?])")) and not sq.is_unbounded_dynamic(P("f32[<=2]"))
    assert sq.is_bounded_dynamic(P("(f32[<=2])")) and not sq.is_bounded_dynamic(P("f32[?]"))
    assert sq.are_all_leaves_integers(P("(s8[2], (u4[]))"))
    assert not sq.are_all_leaves_integers(P("(s8[2], pred[])"))
    assert sq.dimensions_minor(P("f32[2,3,5]{1,2,0}"), 0) == 3
    assert str(parse_layout("{2,0,1:T(2)}").delete_dimension(2)) == "{0,1:T(2)}"
    with pytest.raises(LayoutError, match=r"expected a dimension in \[0, 2\), but got 2"):
        parse_layout("{1,0}").delete_dimension(2)


def test_memory_space_names() -> None:
    assert memory_space_name(0).startswith("HBM") and memory_space_name(1).startswith("VMEM")
    assert memory_space_name(7) == "device-specific memory space 7"


def test_tuple_element_and_memory_space() -> None:
    assert str(si.get_tuple_element_shape(NESTED, 1)) == "(s8[], u4[3]{0})"
    with pytest.raises(LayoutError, match=r"Shape index \{3\} not a valid subshape index for tuple with"):
        si.get_tuple_element_shape(NESTED, 3)
    assert lu.memory_space(P("f32[8]{0:S(5)}")) == 5 and lu.memory_space(P("f32[8]")) == 0


def test_effectively_most_major_dimension_outside_the_layout() -> None:
    assert is_effectively_most_major_dimension(P("f32[1,1,5]"), 2)
    assert not is_effectively_most_major_dimension(P("f32[1,1]"), 5)  # XLA: not found -> false
