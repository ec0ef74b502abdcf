"""XLA tiling conformance checks (see ``tests/tiling/xla/__init__.py``): the symbolic tiling
kinds (``symbolic_tile``, ``constraint_expression``, ``affine_map_evaluator``...).

Each kind replays the vector's C++ steps and subjects (:mod:`tests.tiling.xla.cxx_replay`)
against a namespace of tensorlayout calls named as XLA names them, then checks every
expectation through the matcher table ``MATCHERS``; an unknown call or matcher fails, naming it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from math import prod
from typing import Any

from tensorlayout.hlo import (
    FusionAdaptor,
    HloInstruction,
    HloModule,
    grouped_output_to_input_indexing,
    output_to_input_indexing,
    parse_module,
)
from tensorlayout.indexing import IndexingMap, Interval, SymbolicMap, parse_expr, var
from tensorlayout.tiling.affine_map_evaluator import evaluate_affine_map
from tensorlayout.tiling.constraint_expression import Constraint, ConstraintExpression
from tensorlayout.tiling.symbolic_tile import SymbolicTile, evaluate_tile_sizes
from tensorlayout.tiling.symbolic_tile_analysis import (
    FusionDecision,
    SymbolicTileAnalysis,
    get_flat_tilings_for_input_space,
)
from tensorlayout.tiling.symbolic_tiled_hlo import SymbolicTiledHloInstruction
from tensorlayout.tiling.tiled_hlo import TiledHloComputation, TiledHloInstruction
from tensorlayout.tiling.tiled_hlo_schedule import (
    DimensionInfo,
    MajorToMinorTiledHloSchedule,
    TransposedDotTiledHloSchedule,
    create_major_to_minor_tiled_hlo_schedule,
)
from tensorlayout.tiling.tiling_specification import Tiling, TilingSpecification
from tensorlayout.tiling.tiling_util import is_same_shape_multi_output_fusion
from tests.tiling.xla.cxx_replay import Replay
from tests.tiling.xla.matchers import Err, capture, check, match_tiled, ok


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
        self.indexing_maps = _Set(
            _Set(_OperandIndexing(m) for m in indexing.maps(k)) for k in range(len(indexing))
        )


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


def _try_analyze(module: HloModule) -> SymbolicTileAnalysis | None:
    """``TryAnalyzeModule``: the analysis of the entry root fusion's computation, None if forbidden."""
    a = SymbolicTileAnalysis.analyze_computation(module.entry.root.fused_computation)
    return None if isinstance(a, FusionDecision) else a


def _tile_mapping(*args: Any) -> list[Any]:
    """``Tiling::TileMapping{{hlo, sizes}, ...}``: the (hlo, sizes) pairs, however the braces read."""
    if len(args) == 1 and args[0] and isinstance(args[0][0], list):
        return list(args[0])
    return [a for a in args if a]


class _ShapeEqual(dict):  # type: ignore[type-arg]
    """``Shape::Equal()`` and its ``Ignore*()`` options, as keyword arguments of ``Shape.equal``."""

    def IgnoreElementType(self) -> _ShapeEqual:
        return _ShapeEqual(self, ignore_element_type=True)


class _SymbolicBuilder:
    """A ``SymbolicTiledHloInstruction`` built as the C++ tests build it (setters, regions)."""

    def __init__(self, hlo: HloInstruction, indexing_map: IndexingMap, rts: Sequence[Any] = ()) -> None:
        self.hlo, self.indexing_map, self.rts = hlo, indexing_map, list(rts)
        self.symbolic_tile: SymbolicTile | None = None
        self.regions: list[list[Any]] = []

    def set_symbolic_tile(self, tile: SymbolicTile) -> None:
        self.symbolic_tile = tile

    def AddRegion(self, region: list[Any]) -> None:
        self.regions.append(list(region))

    def build(self) -> SymbolicTiledHloInstruction:
        return SymbolicTiledHloInstruction(
            self.hlo,
            self.indexing_map,
            self.symbolic_tile,
            (),
            tuple(r.build() for r in self.rts),
            tuple(tuple(i.build() for i in r) for r in self.regions),
        )

    def to_string(self, separator: str = "\n") -> str:
        return self.build().to_string(separator)


def _tile_root_fusion(module: HloModule, flat: tuple[int, ...]) -> TiledHloComputation:
    """``TileRootFusionComputation``: the entry root fusion tiled with a flat tiling (all offsets)."""
    analysis = _try_analyze(module)
    assert analysis is not None
    tiling = Tiling.unflatten(flat, analysis.get_tiling_specification())
    return analysis.compute_tiled_computation(tiling, compute_all_tile_offset_indexing_maps=True)


def _tiling(items: Any) -> Tiling:
    """``Tiling({{hlo, sizes}, ...})`` / ``Tiling::TileMapping{...}``."""
    if isinstance(items, Tiling):
        return items
    return Tiling({h: tuple(sizes) for h, sizes in items})


def _tiled_matcher(sizes: list[int], strides: list[int], offsets: str) -> Callable[[Any], None]:
    exp = {
        "args": [
            {"label": "tile_sizes", "value": sizes},
            {"label": "tile_strides", "value": strides},
            {"label": "tile_offsets_indexing", "value": {"text": offsets}},
        ]
    }
    return lambda value: match_tiled(value, exp, None)  # type: ignore[arg-type]


def _all_instructions(analysis: SymbolicTileAnalysis) -> list[SymbolicTiledHloInstruction]:
    out: list[SymbolicTiledHloInstruction] = []

    def walk(instrs: Any) -> None:
        for t in instrs:
            for r in t.regions:
                walk(r)
            if t not in out:
                out.append(t)

    walk(analysis.get_symbolic_tiled_hlo_computation())
    return out


def _find_first(analysis: SymbolicTileAnalysis, opcode: str) -> SymbolicTiledHloInstruction | None:
    return next((t for t in _all_instructions(analysis) if t.hlo.opcode == opcode), None)


def _parameters_tiling(computation: TiledHloComputation) -> dict[int, TiledHloInstruction]:
    """``GetParametersTiling``: parameter number -> its tiled instruction."""
    out: dict[int, TiledHloInstruction] = {}

    def walk(instrs: Any) -> None:
        for t in instrs:
            for r in t.regions:
                walk(r)
            if t.hlo.opcode == "parameter":
                out[t.hlo.parameter_number] = t

    walk(computation.instructions)
    return out


def _spec_for_module(module: HloModule) -> TilingSpecification:
    """``TilingSpecificationForModule``: the specification of the entry root fusion's analysis."""
    a = SymbolicTileAnalysis.analyze_computation(module.entry.root.fused_computation)
    assert not isinstance(a, FusionDecision), a.explain()
    return a.get_tiling_specification()


def _opcode(camel: str) -> str:
    """``HloOpcode::kDynamicSlice`` -> ``dynamic-slice``."""
    return re.sub(r"(?<!^)([A-Z])", r"-\1", camel).lower()


def _parameter(number: int, shape: str, name: str) -> HloInstruction:
    """``HloInstruction::CreateParameter``: a parameter instruction (in a module of its own)."""
    others = "".join(f" unused.{i} = f32[] parameter({i})\n" for i in range(number))
    text = f"HloModule m\nENTRY e {{\n{others} ROOT {name} = {shape} parameter({number})\n}}"
    return parse_module(text).entry.root


class _Scheduler:
    """A schedule called as XLA's tests call it: ``Schedule(offsets, {{id, size}, ...}, ctx)``."""

    def __init__(self, schedule: Any) -> None:
        self.schedule = schedule

    def Schedule(self, offsets: IndexingMap, space: list[Any], _ctx: Any = None) -> IndexingMap:
        return self.schedule.schedule(offsets, [DimensionInfo(*d) for d in space])


def _status(value: Any) -> Any:
    """``x.status()``: the error of a failed call, else an OK marker."""
    return value if isinstance(value, Err) else "OK"


BASE: dict[str, Any] = {
    "_capture": capture,
    "_status": _status,
    "_opcode": _opcode,
    "nullptr": None,
    "ParseAndReturnVerifiedModule": parse_module,
    "TryAnalyzeModule": _try_analyze,
    "AnalyzeModule": _try_analyze,
    "SymbolicTileAnalysis__AnalyzeComputation": lambda c, _ctx, builder=None: (
        SymbolicTileAnalysis.analyze_computation(c, builder)
    ),
    "Tiling": _tiling,
    "Tiling__TileMapping": _tile_mapping,
    "TilingVector": lambda *items: [tuple(t) for t in items],
    "TileRootFusionComputation": _tile_root_fusion,
    "FusionDecision": FusionDecision,
    "SymbolicTiledHloInstruction": _SymbolicBuilder,
    "HloFusionAdaptor__ForInstruction": FusionAdaptor.for_instruction,
    "ComputeGroupedOutputToInputIndexing": lambda adaptor, root, _ctx: {
        h: _Set(_OperandIndexing(oi.map) for oi in maps)
        for h, maps in grouped_output_to_input_indexing(adaptor, root).items()
    },
    "IsSameShapeMultiOutputFusion": lambda roots, options: is_same_shape_multi_output_fusion(
        roots, **options
    ),
    "Shape__Equal": _ShapeEqual,
    "FlatTiling": tuple,
    "default_schedule_builder_": create_major_to_minor_tiled_hlo_schedule,
    "GetFirstRoot": lambda c: c.roots[0],
    "GetParametersTiling": _parameters_tiling,
    "FindFirstInstruction": _find_first,
    "MatchTiledHloInstruction": _tiled_matcher,
    "GetFlatTilingsForInputSpace": get_flat_tilings_for_input_space,
    "FlattenTilings": lambda tilings, spec: list(tilings),
    "LogTilingsIfVlog1": lambda *args: None,
    "EvaluateTileSizes": evaluate_tile_sizes,
    "TilingSpecificationForModule": _spec_for_module,
    "TransposedDotTiledHloSchedule__Create": lambda spec: _Scheduler(
        TransposedDotTiledHloSchedule.create(spec)
    ),
    "MajorToMinorTiledHloSchedule": lambda: _Scheduler(MajorToMinorTiledHloSchedule()),
    "DimensionInfo": DimensionInfo,
    "ParseIndexingMap": lambda text, _ctx: IndexingMap.parse(text),
    "TiledHloInstruction__Create": lambda *a: TiledHloInstruction.create(*a),
    "HloInstruction__CreateParameter": lambda n, shape, name: _parameter(n, shape, name),
    "ShapeUtil__MakeShape": lambda dtype, dims: f"{dtype}[{','.join(str(d) for d in dims)}]",
    "xla__F32": "f32",
    "PrimitiveType__F32": "f32",
    "IndexingMap__Variable": lambda lo, hi, name="": (lo, hi),
    "SymbolicMap__Get": lambda _ctx, nd, ns, exprs: SymbolicMap.get(nd, ns, exprs),
    "CreateDimExpr": lambda i, _ctx: var(i),
    "IndexingMap": lambda sm, dims, ranges, rts, constraints=(): IndexingMap.from_symbolic_map(
        sm, dims, ranges, rts, constraints
    ),
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
    (r"(\d+)LL\b", r"\1"),
    (r"std__move\((\w+)\)", r"\1"),
    (r"\.GetRoots\(\)", ".roots"),
    (r"\.begin\(\)\.map\(\)", ".begin().map()"),
    (r"\.value\(\)", ""),
    (r"HloOpcode__k(\w+)", r'_opcode("\1")'),
    (r"std__holds_alternative<FusionDecision>\((\w+)\)", r"isinstance(\1, FusionDecision)"),
    (r"\.mutable_operand\(", ".operand("),
    (r"std__get<FusionDecision>\((\w+)\)", r"\1"),
    (r"\.Explain\(\)", ".explain()"),
    (r"(^\s*|[(,=]\s*)\*(?=\w)", r"\1"),
    (r"&(?=\w)", ""),
    (r"(\w+(?:\.\w+(?:\(\))?)*)\.status\(\)", r"_status(\1)"),
    (r"\.message\(\)", ""),
    (r"\.entry_computation\(\)", ".entry"),
    (r"\.root_instruction\(\)", ".root"),
    (r"\.fused_expression_root\(\)", ".fused_computation.root"),
    (r"\.fused_instructions_computation\(\)", ".fused_computation"),
    (r"\.hlo\(\)", ".hlo"),
    (r"\.opcode\(\)", ".opcode"),
    (r"\.name\(\)", ".name"),
    (r"\.roots\(\)", ".roots"),
    (r"\.operands\(\)", ".operands"),
    (r"\.runtime_variables\(\)", ".runtime_variables"),
    (r"\.regions\(\)", ".regions"),
    (r"\.front\(\)", "[0]"),
    (r"\.back\(\)", "[-1]"),
    (r"\.size\(\)", ".__len__()"),
    (r"\.indexing_map\(\)", ".indexing_map"),
    (r"\.symbolic_tile\(\)", ".symbolic_tile"),
    (r"\.tile_strides\(\)", ".tile_strides"),
    (r"\.tile_sizes\(\)", ".tile_sizes"),
    (r"\.tile_offsets_indexing\(\)", ".tile_offsets_indexing"),
    (r"\.GetNumDims\(\)", ".num_dims"),
    (r"\.GetNumSymbols\(\)", ".num_symbols"),
    (r"\.GetTilingSpecification\(\)", ".get_tiling_specification()"),
    (r"\.GetSymbolicTiledHloComputation\(\)", ".get_symbolic_tiled_hlo_computation()"),
    (r"\.constraints\(\)", ".constraints"),
    (r"\.num_parameters\(\)", ".num_parameters"),
    (r"\.parameter_mapping\(\)", ".parameter_mapping"),
    (r"\.ConformsTo\(", ".conforms_to("),
    (r"\.ParametersSatisfyConstraints\(", ".parameters_satisfy_constraints("),
    (r"\.ComputeTiledComputation\(", ".compute_tiled_computation("),
    (r"\.GetValidTilings\(\)", ".get_valid_tilings()"),
    (r"\.num_output_tiles_per_dim\(\)", ".num_output_tiles_per_dim"),
    (r"\.num_output_tiles\(\)", ".num_output_tiles"),
    (r"\.ToString\(", ".to_string("),
]


def _bind(names: str, first: int) -> dict[str, Any]:
    return {n.strip(): var(first + i) for i, n in enumerate(names.split(","))}


#: Steps that are C++ plumbing: (pattern, action on the namespace).
STEP_ACTIONS: list[tuple[str, Callable[[dict[str, Any], re.Match[str]], None]]] = [
    (r"^mlir__MLIRContext \w+$|^RegisterSymbolicExprStorage\(", lambda env, m: None),
    # `T v;`: a default-constructed T (an empty vector for container types)
    (
        r"^([\w<>]+) (\w+)$",
        lambda env, m: env.update({m.group(2): env[m.group(1)]() if m.group(1) in env else []}),
    ),
    (r"^(\w+)\.push_back\((.*)\)$", lambda env, m: env[m.group(1)].append(eval(m.group(2), env))),
    (r"^AffineExpr [\w, ]+$", lambda env, m: None),
    (r"^bindDims\(None, ([\w, ]+)\)$", lambda env, m: env.update(_bind(m.group(1), 0))),
    (
        r"^bindSymbols\(None, ([\w, ]+)\)$",
        lambda env, m: env.update(_bind(m.group(1), sum(1 for k in env if re.fullmatch(r"d\d+", k)))),
    ),
]


#: Loop variables of the C++ that the steps do not carry: subject pattern -> (name, its values).
LOOPS: dict[str, tuple[str, Callable[[Replay], Sequence[Any]]]] = {
    # `for (int i = 1; i < input_indexing.indexing_maps.size(); ++i)`: every operand after the first.
    r"indexing_maps\[i\]": ("i", lambda rp: range(1, len(rp.env["input_indexing"].indexing_maps))),
    # `for (const auto& instruction : analysis->GetSymbolicTiledHloComputation())` (and regions).
    r"^instruction->": ("instruction", lambda rp: _all_instructions(rp.env["analysis"])),
}

#: ``ASSERT_OK_AND_ASSIGN(name, call)``: the vectors keep the call; the name it binds, by call.
ASSIGN_NAMES: list[tuple[str, str]] = [
    (r"^ParseAndReturnVerifiedModule", "module"),
    (r"ComputeTiledComputation|TileRootFusionComputation", "tiled_hlo_computation"),
    (r"GetValidTilings", "valid_tilings"),
    (r"^GetFlatTilingsForInputSpace", "tilings_large"),
    (r"^TilingSpecificationForModule", "tiling_specification"),
    (r"^TransposedDotTiledHloSchedule::Create", "transposed_scheduler"),
    (r"^major_to_minor_scheduler\.Schedule", "major_to_minor_scheduled_indexing"),
    (r"^transposed_scheduler->Schedule", "transposed_scheduled_indexing"),
    (r"^TiledHloInstruction::Create", "rt0"),
]
_ASSIGN_MACROS = ("ASSERT_OK_AND_ASSIGN", "TF_ASSERT_OK_AND_ASSIGN")


def _assign_name(subject: str) -> str:
    for pattern, name in ASSIGN_NAMES:
        if re.search(pattern, subject):
            return name
    raise AssertionError(f"no binding known for ASSERT_OK_AND_ASSIGN({subject}): add it to ASSIGN_NAMES")


def _relation(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    """``EXPECT_NE`` / ``EXPECT_GT`` (the others are matcher trees or equalities)."""
    expected = exp["expected"]
    want = rp.evaluate(expected["expr"]) if isinstance(expected, dict) and "expr" in expected else expected
    if exp["relation"] == "ne":
        assert (
            value is not None
            if isinstance(exp["expected"], dict) and exp["expected"].get("nullptr")
            else value != want
        ), f"{value!r} == {exp['expected']!r}"
    else:
        assert exp["relation"] == "gt", f"no check for relation {exp['relation']!r}"
        assert ok(value) > want, f"{value!r} <= {want!r}"


def _check_transposed_schedule(vector: dict[str, Any]) -> None:
    """The C++ loops over every program id: the major-to-minor schedule walks (m, n) with n fastest,
    the transposed-dot schedule with m fastest; the other (batch) indices agree."""
    strings = {s["ref"]: s["text"] for s in vector["strings"]}
    module = parse_module(strings[re.search(r"<S#\d+>", vector["steps"][0]).group(0)])  # type: ignore[union-attr]
    transposed = TransposedDotTiledHloSchedule.create(_spec_for_module(module))
    offsets = IndexingMap.parse(strings[re.search(r"<S#\d+>", vector["steps"][2]).group(0)])  # type: ignore[union-attr]
    space = [DimensionInfo(i, offsets.get_dimension_bound(i).upper + 1) for i in range(offsets.num_dims)]
    m_bound, n_bound = space[3].dimension_size, space[4].dimension_size
    major = MajorToMinorTiledHloSchedule().schedule(offsets, space)
    swapped = transposed.schedule(offsets, space)
    for i in range(prod(d.dimension_size for d in space)):
        a, b = major.evaluate([i]), swapped.evaluate([i])
        assert a[:2] == b[:2], (i, a, b)
        assert (a[2], a[3]) == ((i // n_bound) % m_bound, i % n_bound), (i, a)
        assert (b[2], b[3]) == (i % m_bound, (i // m_bound) % n_bound), (i, b)


#: Vectors whose checks are C++ loops over computed values: a hand-written equivalent, chosen by
#: a call their steps make.
HAND_WRITTEN: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    (r"transposed_scheduled_indexing\.Evaluate", _check_transposed_schedule),
]


def run(vector: dict[str, Any]) -> None:
    """Replay the vector and check every expectation (assignments bind where the steps need them)."""
    for pattern, hand_written in HAND_WRITTEN:
        if any(re.search(pattern, step) for step in vector["steps"]):
            hand_written(vector)
            return
    rp = Replay(vector, dict(BASE), MUTATORS, METHODS, STEP_ACTIONS)
    pending = [
        (e, _assign_name(e["subject"])) for e in vector["expectations"] if e["macro"] in _ASSIGN_MACROS
    ]

    def bind(step: str) -> None:
        for item in list(pending):
            exp, name = item
            if re.search(rf"\b{name}\b", step):
                pending.remove(item)
                rp.env[name] = ok(rp.evaluate(exp["subject"]))

    rp.run_steps(bind)
    bind(" ".join(name for _, name in pending))
    checks = [e for e in vector["expectations"] if e["macro"] not in _ASSIGN_MACROS]
    counts = Counter(e["subject"] for e in checks)
    seen: Counter[str] = Counter()
    for exp in checks:
        s = exp["subject"]
        loop = next((v for p, v in LOOPS.items() if re.search(p, s)), None)
        values = loop[1](rp) if loop else [None]
        for v in values:
            if loop:
                rp.env[loop[0]] = v
            history = rp.history.get(s, [])
            if not loop and counts[s] > 1 and len(history) == counts[s]:  # checked after each assignment
                value = history[seen[s]]
                seen[s] += 1
            else:
                value = rp.evaluate(s)
            if exp.get("relation") in ("ne", "gt"):
                _relation(value, exp, rp)
            else:
                check(value, exp["expected"], rp)


HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "symbolic_tile": run,
    "constraint_expression": run,
    "affine_map_evaluator": run,
    "symbolic_tile_analysis": run,
    "symbolic_tiled_hlo_instruction": run,
    "tiled_hlo_computation": run,
    "tiled_hlo_instruction": run,
    "tiled_hlo_schedule": run,
    "tiling_specification": run,
    "tiling_util": run,
}
