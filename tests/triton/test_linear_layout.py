"""LinearLayout from its definition: brute-force laws, text round trips, typed errors."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from tensorlayout.errors import LayoutError, ParseError
from tensorlayout.triton import LinearLayout
from tests.conftest import DATA
from tests.triton import _random

PROBES = json.loads((DATA / "triton_invert_and_compose_probes.json").read_text())["cases"]


def _random_layouts(n: int, seed: int) -> list[LinearLayout]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        spec = _random.linear_layout(rng, ["register", "lane", "warp"], ["dim0", "dim1", "dim2"])
        out.append(LinearLayout.from_bases(spec["bases"], spec["out_dim_names"], spec["out_dim_sizes"],
                                           require_surjective=False))
    return out


def _inputs(ll: LinearLayout) -> list[dict[str, int]]:
    names = ll.get_in_dim_names()
    return [dict(zip(names, x)) for x in itertools.product(*(range(ll.get_in_dim_size(n)) for n in names))]


def _xor(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a[k] ^ b[k] for k in a}


@pytest.mark.parametrize("ll", _random_layouts(60, 1), ids=range(60))
def test_apply_is_linear_and_matches_the_matrix(ll: LinearLayout) -> None:
    points = _inputs(ll)
    rng = random.Random(0)
    for x in rng.sample(points, min(8, len(points))):
        for y in rng.sample(points, min(4, len(points))):
            assert ll.apply(_xor(x, y)) == _xor(ll.apply(x), ll.apply(y))
    image = {tuple(ll.apply(x).values()) for x in points}
    assert ll.is_surjective() == (len(image) == ll.get_total_out_dim_size())
    assert ll.is_injective() == (len(image) == len(points))


@pytest.mark.parametrize("ll", _random_layouts(60, 2), ids=range(60))
def test_pseudoinvert_is_a_right_inverse_and_text_round_trips(ll: LinearLayout) -> None:
    assert LinearLayout.parse(str(ll)) == ll
    assert eval(repr(ll), {"LinearLayout": LinearLayout}) == ll
    if not ll.is_surjective():
        with pytest.raises(LayoutError, match=r"pseudoinvert needs a surjective layout"):
            ll.pseudoinvert()
        return
    inv = ll.pseudoinvert()
    for y in _inputs(inv):
        assert ll.apply(inv.apply(y)) == y


@pytest.mark.parametrize("case", PROBES, ids=range(len(PROBES)))
def test_invert_and_compose_heuristic_probes(case: dict[str, Any]) -> None:
    """In dims identical in both layouts map to themselves only when no other in dim touches
    their out bits (recorded from Triton 3.9)."""
    inner = LinearLayout.from_bases(case["inner"], ["dim0"], [case["size"]], require_surjective=False)
    outer = LinearLayout.from_bases(case["outer"], ["dim0"], [case["size"]], require_surjective=False)
    got = inner.invert_and_compose(outer)
    assert str(got) == case["text"]
    for x in _inputs(inner):
        assert outer.apply(got.apply(x)) == inner.apply(x)


def test_product_stacks_shared_dims() -> None:
    a = LinearLayout.from_bases([("register", [[1, 0]]), ("lane", [[0, 1]])], ["dim0", "dim1"])
    b = LinearLayout.from_bases([("lane", [[1]]), ("warp", [[1]])], ["dim0"], [2], require_surjective=False)
    prod = a * b
    assert prod.get_in_dim_names() == ["register", "lane", "warp"]
    assert prod.apply({"register": 1, "lane": 2, "warp": 1}) == {"dim0": 1, "dim1": 0}
    assert prod.get_out_dim_sizes() == [4, 2]


@pytest.mark.parametrize("bases, names, sizes, surj, message", [
    ([("lane", [[2]])], ["dim0"], None, True, "surjective"),
    ([("lane", [[3]])], ["dim0"], [2], False, "not below"),
    ([("lane", [[-1]])], ["dim0"], [2], False, "non-negative"),
    ([("lane", [[1, 0]])], ["dim0"], [2], False, "one per out dim"),
    ([("lane", [[1]])], ["dim0"], [3], False, "powers of 2"),
    ([("lane", [[1]])], ["dim0"], [2.0], False, "powers of 2"),  # equal to a size seen before, not an int
    ([("lane", [[1]])], ["dim0"], None, False, "out_dim_sizes must be provided"),
    ([("lane", [[1]])], ["dim0"], [2, 2], False, "same length"),
    ([("lane", [[1]]), ("lane", [])], ["dim0"], [2], False, "distinct"),
    ([("lane", [["1"]])], ["dim0"], [2], False, "ints"),
    ("lane", ["dim0"], [2], False, "sequence"),
    ([("lane", [[1]] * 65)], ["dim0"], [2], False, "too large"),
])
def test_from_bases_rejects(bases: Any, names: Any, sizes: Any, surj: bool, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        LinearLayout.from_bases(bases, names, sizes, surj)


def test_operation_preconditions_are_typed_errors() -> None:
    ll = LinearLayout.from_bases([("lane", [[1], [2]])], ["dim0"])
    with pytest.raises(LayoutError, match="exactly the in dims"):
        ll.apply({"warp": 0})
    with pytest.raises(LayoutError, match="must be an int"):
        ll.apply({"lane": "1"})
    with pytest.raises(LayoutError, match="dimensions must match"):
        ll.compose(ll)
    small = LinearLayout.from_bases([("dim0", [[1]])], ["x"])
    with pytest.raises(LayoutError, match="larger"):
        ll.compose(small)
    with pytest.raises(LayoutError, match="invertible"):
        LinearLayout.from_bases([("lane", [[1], [0]])], ["dim0"], [2]).invert()
    other = LinearLayout.from_bases([("lane", [[1, 0]])], ["dim1", "dim0"], [2, 1])
    with pytest.raises(LayoutError, match="relative order"):
        LinearLayout.from_bases([("lane", [[1, 1]])], ["dim0", "dim1"], [2, 2], False) * other


@pytest.mark.parametrize("text, line, column, expected", [
    ("\n - lane=1 -> (1)\n   lane=4 -> (2)\nwhere out dims are: [dim0 (size 4)]", 3, 9, "2 (the input value"),
    ("\n - lane=1 -> (1)\n   warp=2 -> (2)\nwhere out dims are: [dim0 (size 4)]", 3, 4, "'lane'"),
    ("\n - lane=1 -> (1\nwhere out dims are: [dim0 (size 4)]", 3, 1, "',' or ')'"),
    ("\n - lane=1 -> (1)\nwhere out dims are: [dim0 (size 4]", 3, 34, "')' after"),
    ("\n - lane is a size 2 dimension\nwhere out dims are: []", 2, 19, "'1'"),
    ("\n - lane=1 -> (1)\n", 3, 1, "an in-dim name"),
    ("(empty layout) x", 1, 16, "end of input"),
])
def test_parse_errors_name_line_and_column(text: str, line: int, column: int, expected: str) -> None:
    with pytest.raises(ParseError, match=r"expected .* at line \d+, column \d+") as info:
        LinearLayout.parse(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert expected in str(info.value)


def test_parse_checks_the_layout() -> None:
    with pytest.raises(LayoutError, match="not below"):
        LinearLayout.parse("\n - lane=1 -> (4)\nwhere out dims are: [dim0 (size 4)]")


def test_empty_layouts_print_like_triton() -> None:
    assert str(LinearLayout.empty()) == "\n(empty layout)"
    ll = LinearLayout.from_bases([], ["dim0"], [4], require_surjective=False)
    assert str(ll) == "\n(empty layout with out-dims [dim0 (size 4)])"
    assert LinearLayout.parse(str(ll)) == ll
    assert LinearLayout.parse(str(LinearLayout.empty())) == LinearLayout.empty()
