"""XLA tiling conformance checks (see ``tests/tiling/xla/__init__.py``): the symbolic tiling
kinds (``symbolic_tile``, ``constraint_expression``, ``affine_map_evaluator``...).

Each kind replays the vector's C++ steps and subjects (:mod:`tests.tiling.xla.cxx_replay`)
against a namespace of tensorlayout calls named as XLA names them, then checks every
expectation through the matcher table ``MATCHERS``; an unknown call or matcher fails, naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensorlayout.hlo import output_to_input_indexing, parse_module
from tensorlayout.indexing import IndexingMap, Interval, SymbolicMap, parse_expr, var
from tensorlayout.tiling.affine_map_evaluator import evaluate_affine_map
from tensorlayout.tiling.constraint_expression import Constraint, ConstraintExpression
from tensorlayout.tiling.symbolic_tile import SymbolicTile
from tests.tiling.xla.cxx_replay import Replay


def _squash(text: str) -> str:
    return re.sub(r"\s", "", text)


def _cxx_string(arg: dict[str, Any]) -> str:
    """A ``{text}`` argument, or a C++ literal concatenation ``"a " "b"`` given as ``{expr}``."""
    if "text" in arg:
        return str(arg["text"])
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', arg["expr"]))


# ---- matchers: (value, expected tree, replay) -> None, raising on a disagreement -------------
def _match_text(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    args = exp["args"]
    names = rp.evaluate(args[1]["expr"]) if len(args) > 1 else None
    text = value.to_string(names) if isinstance(value, ConstraintExpression) else str(value)
    assert _squash(text) == _squash(_cxx_string(args[0])), f"got\n{text}\nwant\n{_cxx_string(args[0])}"


def _match_optional(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    assert value is not None, "expected a value, got nullopt"
    check(value, exp["args"][0], rp)


def _match_elements(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    items = list(value)
    assert len(items) == len(exp["args"]), f"{items} has {len(items)} elements, want {len(exp['args'])}"
    for item, e in zip(items, exp["args"], strict=True):
        check(item, e, rp)


MATCHERS: dict[str, Callable[[Any, dict[str, Any], Replay], None]] = {
    "MatchSymbolicTileString": _match_text,
    "MatchConstraintExpressionString": _match_text,
    "MatchIndexingString": _match_text,
    "MatchString": _match_text,
    "Optional": _match_optional,
    "ElementsAre": _match_elements,
}


def check(value: Any, exp: Any, rp: Replay) -> None:
    """``value`` satisfies the expected tree ``exp`` (a matcher call, a literal, nullopt...)."""
    if isinstance(exp, dict) and "call" in exp:
        if exp["call"] not in MATCHERS:
            raise AssertionError(f"no matcher {exp['call']!r}: add it to MATCHERS")
        MATCHERS[exp["call"]](value, exp, rp)
    elif isinstance(exp, dict) and exp.get("nullopt"):
        assert value is None, f"expected nullopt, got {value}"
    elif isinstance(exp, dict) and "text" in exp:
        assert _squash(str(value)) == _squash(exp["text"]), f"got\n{value}\nwant\n{exp['text']}"
    elif isinstance(exp, dict) and "expr" in exp:
        assert value == rp.evaluate(exp["expr"]), f"{value} != {exp['expr']}"
    elif isinstance(exp, bool | int):
        assert value == exp and isinstance(value, bool) == isinstance(exp, bool), f"{value!r} != {exp!r}"
    else:
        raise AssertionError(f"no check for the expectation {exp!r}")


# ---- the namespace: XLA's calls as tensorlayout's ----------------------------------------
class _Set(list):  # type: ignore[type-arg]
    """An ``absl::flat_hash_set`` of operand indexings, read with ``begin()`` and ``size()``."""

    def begin(self) -> Any:
        return self[0]

    def size(self) -> int:
        return len(self)


class _Indexing:
    """``HloInstructionIndexing`` read as XLA's tests read it."""

    def __init__(self, root: Any) -> None:
        indexing = output_to_input_indexing(root)
        self.indexing_maps = _Set(_Set(_OperandIndexing(m) for m in indexing.maps(k))
                                  for k in range(len(indexing)))


class _OperandIndexing:
    def __init__(self, m: IndexingMap) -> None:
        self._map = m

    def map(self) -> IndexingMap:
        return self._map


def _evaluate(m: Any, dims: list[int], symbols: list[int] | None = None) -> Any:
    if isinstance(m, SymbolicMap):
        return evaluate_affine_map(m, dims, symbols or [])
    return m.evaluate(dims, symbols or [])


def _add_constraint(m: IndexingMap, expr: Any, interval: Interval) -> IndexingMap:
    return m.add_constraint(expr, interval)


BASE: dict[str, Any] = {
    "ParseAndGetRoot": lambda text: parse_module(text).entry.root,
    "GetOutputToInputIndexing": _Indexing,
    "SymbolicTile__FromIndexingMap": SymbolicTile.from_indexing_map,
    "IndexingMap__FromTensorSizes": IndexingMap.from_tensor_sizes,
    "ParseSymbolicMap": lambda text, _ctx: SymbolicMap.parse(text),
    "ParseSymbolicExpr": lambda text, _ctx, num_dims=None: parse_expr(text, num_dims),
    "Interval": Interval,
    "Evaluate": _evaluate,
    "GetConstraint": lambda text, lo, hi: Constraint(parse_expr(text), Interval(lo, hi)),
    "ConstraintExpression": lambda c: ConstraintExpression.of(c) if isinstance(c, Constraint) else c,
    "ConstraintExpression__GetAlwaysSatisfied": ConstraintExpression.get_always_satisfied,
    "ConstraintExpression__GetUnsatisfiable": ConstraintExpression.get_unsatisfiable,
    "Simplify": lambda c: (ConstraintExpression.of(c) if isinstance(c, Constraint) else c).simplify(),
    "EvaluateAffineMap": evaluate_affine_map,
    "AffineMap__get": lambda nd, ns, exprs, _ctx: SymbolicMap.get(nd, ns, exprs),
    "_add_constraint": _add_constraint,
}

#: C++ methods called as statements on a value tensorlayout keeps immutable: the receiver is
#: replaced by the function's result.
MUTATORS = {"Simplify": "Simplify", "AddConstraint": "_add_constraint"}

#: C++ method spellings -> tensorlayout's (a trailing "()" dropped where tensorlayout has a property).
METHODS: list[tuple[str, str]] = [
    (r"\.is_satisfiable\(\)", ".is_satisfiable"),
    (r"\.IsAlwaysSatisfied\(\)", ".is_always_satisfied()"),
    (r"\.IsSatisfiedBy\(", ".is_satisfied_by("),
    (r"\.stride_map\(\)", ".stride_map"),
    (r"\.size_map\(\)", ".size_map"),
    (r"\.offset_map\(\)", ".offset_map"),
    (r"\.GetDimensionCount\(\)", ".num_dims"),
    (r"\.floorDiv\(", ".floor_div("),
    (r"\.ceilDiv\(", ".ceil_div("),
    (r"([\w.\[\]()]+?)\.Evaluate\(", r"Evaluate(\1, "),
    (r"\.has_value\(\)", " is not None"),
]


def _bind(names: str, first: int) -> dict[str, Any]:
    return {n.strip(): var(first + i) for i, n in enumerate(names.split(","))}


#: Steps that are C++ plumbing: (pattern, action on the namespace).
STEP_ACTIONS: list[tuple[str, Callable[[dict[str, Any], re.Match[str]], None]]] = [
    (r"^AffineExpr [\w, ]+$", lambda env, m: None),
    (r"^bindDims\(None, ([\w, ]+)\)$", lambda env, m: env.update(_bind(m.group(1), 0))),
    (r"^bindSymbols\(None, ([\w, ]+)\)$",
     lambda env, m: env.update(_bind(m.group(1), sum(1 for k in env if re.fullmatch(r"d\d+", k))))),
]


def replay(vector: dict[str, Any]) -> Replay:
    """The vector's steps run; expectations are checked by :func:`run`."""
    rp = Replay(vector, dict(BASE), MUTATORS, METHODS, STEP_ACTIONS)
    rp.run_steps()
    return rp


#: Loop variables of the C++ that the steps do not carry: subject pattern -> the values they take.
LOOPS: dict[str, Callable[[Replay], range]] = {
    # `for (int i = 1; i < input_indexing.indexing_maps.size(); ++i)`: every operand after the first.
    r"indexing_maps\[i\]": lambda rp: range(1, len(rp.env["input_indexing"].indexing_maps)),
}


def run(vector: dict[str, Any]) -> None:
    """Replay the vector and check every expectation."""
    rp = replay(vector)
    for exp, value in rp.subjects(lazy=[p for p in LOOPS]):
        loop = next((f for p, f in LOOPS.items() if re.search(p, exp["subject"])), None)
        if loop is None:
            check(value, exp["expected"], rp)
            continue
        for i in loop(rp):
            rp.env["i"] = i
            check(rp.evaluate(exp["subject"]), exp["expected"], rp)


HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "symbolic_tile": run,
    "constraint_expression": run,
    "affine_map_evaluator": run,
}
