"""Every public indexing-map vector of tests/data/indexing_cases.json (map and expression kinds).

Each case's ``steps`` are the C++ test's operations; :mod:`tests.indexing.replay` replays them
with the Python API and compares printed maps with all whitespace removed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tensorlayout.errors import IndexingError, ParseError
from tensorlayout.indexing import (
    IndexingMap,
    RangeEvaluator,
    SymbolicMap,
    canonicalize,
    get_used_parameters,
    parse_expr,
    var,
)
from tests.conftest import DATA
from tests.indexing.replay import Replay, construction_map, cxx_expr, squash

CASES = json.loads((DATA / "indexing_cases.json").read_text())

MAP_KINDS = {
    "simplify", "parse_print", "compose", "remove_unused", "rescale_symbols", "known_empty",
    "convert_vars", "range_eval", "equality", "verify", "other", "used_parameters",
    "print_symbolic_map_with_names",
}
EXPR_KINDS = {
    "expr_print", "expr_canonicalize", "expr_creation", "expr_parse_print", "expr_parse_error",
    "expr_parse", "symbolic_map_parse", "expr_evaluate",
}

# Vectors this implementation does not reproduce yet, with the precise reason.
XFAIL: dict[str, str] = {}


def _cases(kinds: set[str]) -> list[Any]:
    out = []
    for case in CASES:
        if case["kind"] in kinds:
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[case["id"]])] if case["id"] in XFAIL else []
            out.append(pytest.param(case, id=case["id"], marks=marks))
    return out


@pytest.mark.parametrize("case", _cases(MAP_KINDS))
def test_map_vector(case: dict[str, Any]) -> None:
    kind = case["kind"]
    if kind == "parse_print":
        if case.get("construction") == "IndexingMap::GetUndefined()":
            m = IndexingMap.undefined()
        else:
            m = IndexingMap.parse(case["input"])
        assert squash(str(m)) == squash(case["expected"])
        assert IndexingMap.parse(str(m)) == m or m.is_known_empty
        Replay(case).run()
    elif kind == "verify":
        step = case["steps"][0]
        with pytest.raises(IndexingError, match=re.escape(step["expected_message"])):
            construction_map(case["construction"])
    elif kind == "equality":
        maps = [IndexingMap.parse(x) if isinstance(x, str) else construction_map(x["construction"])
                for x in case["inputs"]]
        equal = {tuple(p) for p in case["expected_equal_pairs"]}
        for i in range(len(maps)):
            for j in range(i + 1, len(maps)):
                assert (maps[i] == maps[j]) == ((i, j) in equal), (i, j)
                if (i, j) in equal:
                    assert hash(maps[i]) == hash(maps[j])
    elif kind == "range_eval":
        m = IndexingMap.parse(case["input"])
        ev = RangeEvaluator.for_map(m)
        for step in case["steps"]:
            inner = re.fullmatch(r"(\w+)\((.*)\)", step["op"])
            assert inner
            e = m.parse_expr(inner.group(2))
            if inner.group(1) == "IsAlwaysPositiveOrZero":
                assert ev.is_always_positive_or_zero(e) == step["returns"]
            else:
                assert list(ev.range(e)) == step["returns"]
    elif kind == "used_parameters":
        for step in case["steps"]:
            inner = re.fullmatch(r"GetUsedParameters\(\[(.*)\], num_dims=(\d+)\)", step["op"])
            assert inner
            n = int(inner.group(2))
            exprs = [parse_expr(t.replace("%", "mod"), num_dims=n) for t in inner.group(1).split(", ")]
            dims, syms = get_used_parameters(exprs, n)
            assert {"dims": dims, "symbols": syms} == step["returns"]
    elif kind == "other":
        assert IndexingMap.undefined().is_undefined
        assert not IndexingMap.from_tensor_sizes("(d0) -> (d0)", [10], []).is_undefined
    elif kind == "print_symbolic_map_with_names":
        d0, d1, s0, s1, r0, r1 = (var(i) for i in range(6))
        sm = SymbolicMap(2, 4, (d0 + d1 // 8 - r0 * 64, s0 + s1 % 16 + r1))
        for step in case["steps"]:
            args = re.findall(r"\{([^}]*)\}", step["op"])
            dims, ranges, rts = ([n.strip().strip('"') for n in a.split(",")] for a in args)
            assert step["expected_substring"] in sm.to_string(dims, ranges, rts)
    else:
        Replay(case).run()
        if "expected" in case and not any("expected" in s for s in case.get("steps", [])):
            pytest.fail("case has an expected text but no step printed it")


@pytest.mark.parametrize("case", _cases(EXPR_KINDS))
def test_expr_vector(case: dict[str, Any]) -> None:
    kind = case["kind"]
    if kind == "expr_print":
        if "expected_postorder" in case:
            e = cxx_expr(case["construction"])
            assert [str(x) for x in e.walk()] == case["expected_postorder"]
        elif "cases" in case:
            for src, want in case["cases"]:
                assert str(cxx_expr(src)) == want, src
        else:
            e = cxx_expr(case["construction"])
            assert e.to_string(case.get("var_names")) == case["expected"]
    elif kind == "expr_canonicalize":
        for src, want in case["cases"]:
            assert str(canonicalize(cxx_expr(src))) == want, src
    elif kind == "expr_creation":
        for src, want in case["cases"]:
            assert str(cxx_expr(src)) == want, src
    elif kind == "expr_evaluate":
        for c in case["cases"]:
            assert cxx_expr(c["construction"]).safe_evaluate([*c["dims"], *c["syms"]]) == c["expected"]
    elif kind == "expr_parse_print":
        for src, want in case["cases"]:
            assert str(parse_expr(src)) == want
    elif kind == "expr_parse_error":
        for src, _ in case["cases"]:
            with pytest.raises(ParseError, match=r"at line 1, column"):
                parse_expr(src)
    elif kind == "expr_parse":
        for c in case["cases"]:
            if "expected_error" in c:
                with pytest.raises(ParseError,
                    match=r"symbol cannot be parsed because number of dimensions is not"):
                    parse_expr(c["input"], num_dims=c["num_dims"])
            else:
                e = parse_expr(c["input"], num_dims=c["num_dims"])
                assert e == var(c["expected_var_id"])
    elif kind == "symbolic_map_parse":
        for c in case["cases"]:
            sm = SymbolicMap.parse(c["input"])
            assert (sm.num_dims, sm.num_symbols) == (c["num_dims"], c["num_symbols"])
            assert [str(r) for r in sm.results] == c["results_var_form"]
