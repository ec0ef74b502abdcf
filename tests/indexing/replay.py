"""Replays the C++ test steps of the indexing-map vectors with the Python API.

A case has an ``input`` (or ``inputs``/``construction(s)``) and ``steps``: each step's ``op`` is
the C++ call written as text (``indexing_map.Simplify()``, ``ToString(composed)``...), with the
C++ return value in ``returns`` and printed maps in ``expected`` (compared without whitespace).
"""

from __future__ import annotations

import re
from typing import Any

from tensorlayout.indexing import (
    IndexingMap,
    compose,
    const,
    parse_expr,
    var,
)

__all__ = ["Replay", "construction_map", "cxx_expr", "squash"]

_CXX_METHODS = {
    ".ceilDiv(": ".ceil_div(", ".floorDiv(": ".floor_div(", ".IsMultipleOf(": ".is_multiple_of(",
    ".ReplaceDimsAndSymbols(": ".replace_dims_and_symbols(", ".ReplaceDims(": ".replace_dims(",
    ".ReplaceSymbols(": ".replace_symbols(", ".Replace(": ".replace(",
}


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def cxx_expr(text: str) -> Any:
    """Evaluate a C++ SymbolicExpr construction (``v0 * 2``, ``cN``, ``.ceilDiv()``...)."""
    src = text
    for cxx, py in _CXX_METHODS.items():
        src = src.replace(cxx, py)
    src = re.sub(r"(?<![/])/(?!/)", "//", src)
    src = re.sub(r"ParseSymbolicExpr\(", "parse_expr(", src)
    if ".ReplaceVariables({" in src:
        src = src.replace(".ReplaceVariables({", ".replace_variables([").replace("})", "])")
    src = src.replace("<none>", "None")
    names: dict[str, Any] = {"parse_expr": parse_expr}
    for k, n in re.findall(r"\b([vc])(\d+)\b", src):
        names[f"{k}{n}"] = var(int(n)) if k == "v" else const(int(n))
    return eval(src, {"__builtins__": {}}, names)


def construction_map(c: dict[str, Any]) -> IndexingMap:
    """A map built like the C++ constructors (symbolic map + variables [+ constraints])."""
    if c.get("api") == "IndexingMap::FromTensorSizes":
        return IndexingMap.from_tensor_sizes(c["symbolic_map"], c["dim_upper_bounds"],
                                             c["symbol_upper_bounds"])
    num_dims = len(c["dim_vars"])
    constraints = [(parse_expr(e, num_dims=num_dims), iv) for e, iv in c.get("constraints", [])]
    return IndexingMap.from_symbolic_map(c["symbolic_map"], c["dim_vars"], c["range_vars"], c["rt_vars"],
                                         constraints)


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


class Replay:
    """Runs the ``steps`` of one case; maps live in ``env`` under their C++ variable names."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case
        self.texts: dict[str, str] = {}
        if "input" in case:
            self.texts["input"] = case["input"]
        for k, v in (case.get("inputs") or {}).items():
            self.texts[f"input_{k}"] = v
        self.env: dict[str, Any] = {}
        if isinstance(case.get("construction"), dict):
            self.env["map"] = construction_map(case["construction"])
        for k, v in (case.get("constructions") or {}).items():
            self.env[k] = construction_map(v)
        if "input" in case:
            self.env.setdefault("indexing_map", IndexingMap.parse(case["input"]))
            self.env.setdefault("map", self.env["indexing_map"])

    def compose_call(self, text: str) -> IndexingMap:
        m = re.search(r"ComposeIndexingMaps\(first=(\w+), second=(\w+)\)", text)
        assert m, text
        return compose(self.env[m.group(1)], self.env[m.group(2)])

    def run(self) -> None:
        for step in self.case.get("steps", []):
            self.step(step)

    def check(self, step: dict[str, Any], value: Any) -> None:
        if "returns" in step:
            assert value == step["returns"], (step["op"], value)

    def check_text(self, step: dict[str, Any], m: Any) -> None:
        if "expected" in step:
            assert squash(str(m)) == squash(step["expected"]), (str(m), step["expected"])

    def step(self, step: dict[str, Any]) -> None:
        op = step["op"]
        env = self.env
        if m := re.fullmatch(r"(\w+) = ParseIndexingMap\((\w+)\)", op):
            env[m.group(1)] = IndexingMap.parse(self.texts[m.group(2)])
        elif m := re.fullmatch(r"(\w+)\.Simplify\((kPreserve)?\)", op):
            new, changed = env[m.group(1)].simplify_with_status("preserve" if m.group(2) else "replace")
            env[m.group(1)] = new
            self.check(step, changed)
        elif m := re.fullmatch(r"ToString\((\w+)\)", op):
            self.check_text(step, env[m.group(1)])
        elif m := re.fullmatch(r"(?:(\w+) = )?(\w+)\.RemoveUnused(Vars|Symbols)\(\)", op):
            target = env[m.group(2)]
            if m.group(3) == "Vars":
                env[m.group(2)], mask = target.remove_unused_vars_with_mask()
            else:
                env[m.group(2)], mask = target.remove_unused_symbols_with_mask()
            env["bitvector " + (m.group(1) or "_")] = mask
        elif m := re.fullmatch(r"bitvector (\w+)", op):
            self.check(step, env["bitvector " + m.group(1)])
        elif m := re.fullmatch(r"(?:(\w+)\.)?RescaleSymbols\(\)", op):
            name = m.group(1) or "indexing_map"
            env[name], changed = env[name].rescale_symbols_with_status()
            self.check(step, changed)
        elif op.startswith("every constraint key is found again"):
            cons = env["indexing_map"].constraints
            assert all(cons[k] == v for k, v in cons.items())
        elif m := re.fullmatch(r"(\w+) = (ComposeIndexingMaps\(.*\))", op):
            env[m.group(1)] = self.compose_call(m.group(2))
        elif m := re.fullmatch(r"(\w+) == (\w+)", op):
            self.check(step, env[m.group(1)] == env[m.group(2)])
        elif op.startswith("ToString(ComposeIndexingMaps"):
            self.check_text(step, self.compose_call(op))
        elif op.startswith("ComposeIndexingMaps") and op.endswith(".GetNumResults()"):
            self.check(step, self.compose_call(op).num_results)
        elif op.startswith("AddConstraint((d0 - 5) % 1"):
            d0 = env["map"].dim(0)
            env["map"] = env["map"].add_constraint((d0 - 5) % 1, (0, 0))
        elif m := re.fullmatch(
                r'(?:(\w+)\.)?AddConstraint\("(.*)" parsed with num_dims=(\d+), \[(-?\d+), (-?\d+)\]\)', op):
            name = m.group(1) or "map"
            e = parse_expr(m.group(2), num_dims=int(m.group(3)))
            env[name] = env[name].add_constraint(e, (int(m.group(4)), int(m.group(5))))
        elif op == "ToString(map.ConvertSymbolsToDimensions())":
            self.check_text(step, env["map"].convert_symbols_to_dimensions())
        elif m := re.fullmatch(r"ToString\(ConvertRangeVariablesToDimensions\((\w+), \{([\d, ]*)\}\)\)", op):
            idx = [int(x) for x in m.group(2).split(",")]
            self.check_text(step, env[m.group(1)].convert_range_variables_to_dimensions(idx))
        elif m := re.fullmatch(r"(?:(\w+)\.)?IsKnownEmpty\(\)", op):
            self.check(step, env[m.group(1) or "map"].is_known_empty)
        elif m := re.fullmatch(r"(\w+)\.(Evaluate|ConstraintsSatisfied)\(dims=(.*), symbols=(.*)\)", op):
            target, dims, syms = env[m.group(1)], _ints(m.group(3)), _ints(m.group(4))
            if m.group(2) == "Evaluate":
                self.check(step, list(target.evaluate(dims, syms)))
            else:
                self.check(step, target.constraints_satisfied(dims, syms))
        elif m := re.fullmatch(r"(\w+)\.ComputeResultRanges\(\)", op):
            self.check(step, [list(r) for r in env[m.group(1)].compute_result_ranges()])
        elif m := re.fullmatch(r"(\w+)\.ClearConstraints\(\)", op):
            env[m.group(1)] = env[m.group(1)].clear_constraints()
        elif m := re.fullmatch(r"(\w+)\.GetConstraintsCount\(\)", op):
            self.check(step, env[m.group(1)].num_constraints)
        elif m := re.fullmatch(r"\(result (\d+), the only constraint\) of (\w+), num_dims=(\d+)", op):
            target, n = env[m.group(2)], int(m.group(3))
            assert target.num_constraints == 1
            (expr, iv), = target.constraints.items()
            got = (target.results[int(m.group(1))], expr, list(iv))
            options = [(parse_expr(r, num_dims=n), parse_expr(c, num_dims=n), i)
                       for r, c, i in step["any_of"]]
            assert got in options, got
        else:
            raise AssertionError(f"unknown step {op!r}")
