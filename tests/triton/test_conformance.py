"""Every vector of ``triton_cases.json`` (Triton 3.9, run on the CPU through Gluon), replayed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.triton import LinearLayout, bank_conflicts
from tests.conftest import DATA
from tests.triton._cases import build, layout_of, make

CASES = json.loads((DATA / "triton_cases.json").read_text())
FAMILIES = ["blocked", "nvidia_mma", "dot_operand", "swizzled_shared", "nvmma_shared"]


def _ids(family: str) -> list[str]:
    return [f"{family}-{i}" for i in range(len(CASES[family]))]


def _check(ll: LinearLayout, record: dict[str, Any]) -> None:
    assert str(ll) == record["text"]
    assert ll == layout_of(record)
    for key in ("is_surjective", "is_injective", "is_invertible"):
        if key in record:
            assert getattr(ll, key)() == record[key], key


@pytest.mark.parametrize("family", FAMILIES)
def test_encodings(family: str) -> None:
    for i, case in enumerate(CASES[family]):
        layout = build(case["layout"])
        if "error" in case and "offset_bases must not be empty" in case["error"]:
            # Gluon's Python wrapper refuses an empty offset list; the C++ map is the trivial
            # layout, which is what we return (see test_gluon_refuses_size_one).
            assert layout.to_linear_layout(case["shape"]).get_total_in_dim_size() == 1
        elif "error" in case:
            with pytest.raises(TensorLayoutError,
                match=r"Illegal shared layout; expected collapsed shapePerCTA to be"):
                layout.to_linear_layout(case["shape"])
        else:
            got = layout.to_linear_layout(case["shape"])
            assert str(got) == case["linear_layout"]["text"], (family, i, case["layout"], case["shape"])


def test_gluon_refuses_size_one() -> None:
    cases = [c for c in CASES["swizzled_shared"] if "error" in c]
    assert cases and all(c["shape"] == [1] for c in cases)


@pytest.mark.parametrize("case", CASES["linear_layout_ops"], ids=range(len(CASES["linear_layout_ops"])))
def test_linear_layout_ops(case: dict[str, Any]) -> None:
    ll = make(case)
    _check(ll, case["result"])
    assert LinearLayout.parse(case["result"]["text"]) == ll
    assert ll.get_matrix_view() == case["matrix"]
    if "inferred_out_dim_sizes" in case:
        assert ll.get_out_dim_sizes() == case["inferred_out_dim_sizes"]
    for ins, outs in case["apply"]:
        assert ll.apply(ins) == outs
    _check(ll.compose(make(case["compose"]["outer"])), case["compose"]["result"])
    if "invert_and_compose" in case:
        outer = make(case["invert_and_compose"]["outer"])
        _check(ll.invert_and_compose(outer), case["invert_and_compose"]["result"])
    for op in ("invert", "pseudoinvert"):
        if op in case:
            _check(getattr(ll, op)(), case[op])
        elif op == "invert":
            assert not ll.is_invertible()


@pytest.mark.parametrize("case", CASES["bank_conflicts"], ids=range(len(CASES["bank_conflicts"])))
def test_bank_conflicts(case: dict[str, Any]) -> None:
    """The register and shared layouts recorded with each bank-conflict vector, and the count."""
    shape = case["shape"]
    reg = build(case["distributed"]).to_linear_layout(shape)
    shared = build(case["shared"]).to_linear_layout(shape)
    assert str(reg) == case["reg_ll"]["text"]
    assert str(shared) == case["smem_ll"]["text"]
    assert bank_conflicts(reg, shared, case["bitwidth"]) == case["bank_conflicts"]


def test_text_round_trip_of_every_recorded_layout() -> None:
    for family in FAMILIES:
        for case in CASES[family]:
            if "linear_layout" in case:
                text = case["linear_layout"]["text"]
                assert str(LinearLayout.parse(text)) == text
