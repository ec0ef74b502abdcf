"""Upstream XLA test cases beyond the public vectors (tests/data/indexing_extra_cases.json).

Each case names its upstream test (``source``) and the commit it was read at. Cases from
files of the older ``floordiv`` era are either rewritten in today's syntax (noted per case) or,
for expressions, compared by structure instead of printed text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tensorlayout.errors import ParseError
from tensorlayout.indexing import (
    IndexingMap,
    Interval,
    VariableKind,
    const,
    parse_expr,
    parse_symbolic_expr_and_advance,
    parse_symbolic_map,
    parse_symbolic_map_and_advance,
    to_variable_name,
    to_variable_type,
    var,
)
from tests.conftest import DATA
from tests.indexing.replay import Replay, cxx_expr, squash

CASES = json.loads((DATA / "indexing_extra_cases.json").read_text())
MAP_KINDS = {"simplify", "known_empty", "remove_unused", "compose", "rescale_symbols", "construct_print",
             "evaluate", "range_eval"}


def _ids(kinds: set[str]) -> list[Any]:
    return [pytest.param(c, id=c["id"]) for c in CASES if c["kind"] in kinds]


def test_every_case_has_a_runner() -> None:
    known = MAP_KINDS | {"variable_kind", "parse_print", "expr_print", "expr_parse_print", "expr_parse",
                         "symbolic_map_parse", "expr_equal", "expr_multiple_of", "expr_evaluate",
                         "expr_divmod", "interval"}
    assert {c["kind"] for c in CASES} <= known
    assert all(c["source"].startswith("xla/hlo/analysis/") and len(c["commit"]) == 40 for c in CASES)


@pytest.mark.parametrize("case", _ids(MAP_KINDS))
def test_map_case(case: dict[str, Any]) -> None:
    replay = Replay(case)
    replay.run()
    if "expected" in case and not any("expected" in s for s in case["steps"]):
        pytest.fail("case has an expected text but no step printed it")


@pytest.mark.parametrize("case", _ids({"parse_print"}))
def test_parse_print(case: dict[str, Any]) -> None:
    m = IndexingMap.parse(case["input"])
    assert squash(str(m)) == squash(case["expected"])
    assert IndexingMap.parse(str(m)) == m


@pytest.mark.parametrize("case", _ids({"variable_kind"}))
def test_variable_kind(case: dict[str, Any]) -> None:
    for name, cxx_kind in case["cases"]:
        kind = to_variable_type(name)
        assert isinstance(kind, VariableKind) and to_variable_name(kind) == name
        assert "k" + kind.name.title().replace("_", "") == cxx_kind


@pytest.mark.parametrize("case", _ids({"expr_print", "expr_parse_print", "expr_parse", "symbolic_map_parse"}))
def test_expression_text(case: dict[str, Any]) -> None:
    kind = case["kind"]
    for c in case["cases"]:
        if kind == "expr_print":
            src, num_dims, want = c
            assert cxx_expr(src).to_string(num_dims) == want
        elif kind == "expr_parse_print":
            assert str(parse_expr(c[0])) == c[1]
        elif "expected_error" in c:
            with pytest.raises(ParseError, match=r"at line 1, column"):
                if kind == "expr_parse":
                    parse_expr(c["input"], names=c["variable_map"])
                else:
                    parse_symbolic_map(c["input"])
        elif kind == "expr_parse":
            e, rest = parse_symbolic_expr_and_advance(c["input"], names=c["variable_map"])
            assert (str(e), rest) == (c["expected"], c["rest"])
        else:
            sm, rest = parse_symbolic_map_and_advance(c["input"])
            assert (sm.num_dims, sm.num_symbols) == (c["num_dims"], c["num_symbols"])
            assert [str(r) for r in sm.results] == c["results_var_form"]
            assert rest.strip() == c["rest"]


@pytest.mark.parametrize("case", _ids({"expr_equal", "expr_multiple_of", "expr_evaluate", "expr_divmod"}))
def test_expression_semantics(case: dict[str, Any]) -> None:
    kind = case["kind"]
    for c in case["cases"]:
        if kind == "expr_equal":
            assert cxx_expr(c[0]) is cxx_expr(c[1]), c
        elif kind == "expr_multiple_of":
            assert cxx_expr(c[0]).is_multiple_of(c[1]) == c[2], c
        elif kind == "expr_evaluate":
            assert cxx_expr(c["construction"]).evaluate([*c["dims"], *c["syms"]]) == c["expected"]
        else:
            n, d = c
            num, den = const(n), const(d)
            mod, fdiv, cdiv = ((num % den).evaluate([]), (num // den).evaluate([]),
                               num.ceil_div(den).evaluate([]))
            if abs(n) % abs(d) == 0:
                assert mod == 0 and fdiv == cdiv
            else:
                assert mod > 0 and fdiv + 1 == cdiv
    for a, b in case.get("not_equal", []):
        assert cxx_expr(a) is not cxx_expr(b)
    assert len({cxx_expr("v0 + 42"), cxx_expr("v0 + 42"), var(1) + 3}) == 2


@pytest.mark.parametrize("case", _ids({"interval"}))
def test_interval(case: dict[str, Any]) -> None:
    for op, a, b, want in case["cases"]:
        x, y = Interval(*a), Interval(*b)
        if op == "add":
            assert list(x + y) == want
        elif op == "mul":
            assert list(x * y) == want
        else:
            assert getattr(x, op)(y) is want, (op, a, b)
