"""XLA tiling conformance checks (see ``tests/tiling/xla/__init__.py``): ``codegen/tiling/experimental``.

Each vector's assertions run in order through ``check``: a subject is a C++ expression over XLA's
calls (``TilingSpace::Create``, ``PropagateTileToInput``, ``GetTestTile``...), evaluated by
:mod:`tests.tiling.xla.cxx` against ``FUNCTIONS`` (XLA's names -> tensorlayout) and wrapper
objects exposing XLA's method names; the expected tree is matched by ``MATCHERS``. Test
fixtures (``SetUp`` bodies and debug options), which the vectors do not carry, are written out
in ``FIXTURES`` and ``OPTIONS`` per test suite. Vectors that cannot run are listed in ``NOT_RUN``
with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tensorlayout.hlo import parse_module
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import Expr, const, var
from tensorlayout.indexing.exprparse import parse_symbolic_expr_and_advance
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.scheduling import get_schedule
from tensorlayout.tiling.experimental.tile import DimTile, Tile, tiles_to_string
from tensorlayout.tiling.experimental.tile_propagation import (
    propagate_tile_to_input,
    propagate_tile_to_output,
)
from tensorlayout.tiling.experimental.tiled_hlo import (
    TiledHloComputation,
    TiledHloInstruction,
    TiledHloRegion,
    tiled_instruction,
)
from tensorlayout.tiling.experimental.tiling_space import TilingSpace, first_shape
from tensorlayout.tiling.experimental.tiling_space_utils import get_flat_tilings_for_input_space
from tests.tiling.xla.cxx import Evaluator, parse_steps, to_python
from tests.tiling.xla.experimental_reshape import HAND_WRITTEN

#: Vectors that cannot run, by id, with the reason (none at present: every vector of these kinds runs).
NOT_RUN: dict[str, str] = {}

#: Bare statements of the steps (calls that change a value in place) and the assertion they
#: precede in XLA's test: the vectors keep statements and assertions apart. A statement that
#: precedes a step definition also runs before that definition is first used.
STATEMENTS: dict[str, dict[str, int]] = {
    "tiled_hlo_test/TileAnalysisTest.ExplicitSimplify": {"tiled_computation.Simplify()": 4},
    "tiled_hlo_test/TileAnalysisTest.ExplicitSort": {"tiled_computation.SortInstructionsPostOrder()": 5},
}

#: ``SetUp`` of fixtures whose tests use a prepared tiling space: (HLO, tile sizes, variable).
FIXTURES: dict[str, tuple[str, tuple[int, ...], str]] = {
    "TilingSpaceSimplifyExpressionTest": (
        "HloModule m\nENTRY e {\n p0 = f32[100, 10] parameter(0)\n ROOT a0 = f32[100, 10] exponential(p0)\n}",
        (16, 2),
        "tiling_space_",
    ),
}

#: Debug options set by a fixture class (``GetDebugOptionsForTest``), as ``TilingSpace.create`` flags.
OPTIONS: dict[str, list[dict[str, bool]]] = {
    "TilingSpaceSameShapeMultiOutputTest": [{"same_shape_multi_output_fusion": True}],
    # Parameterized over Combine(Bool(), Bool()) = (triton MOF flag, same-shape MOF flag).
    "TileAnalysisTest": [
        {"triton_multi_output_fusion": a, "same_shape_multi_output_fusion": b}
        for a in (False, True)
        for b in (False, True)
    ],
}


# ---- wrappers exposing XLA's method names ---------------------------------------------------------


class XShape:
    def __init__(self, shape: Any) -> None:
        self._shape = shape

    def dimensions(self) -> list[int]:
        return list(self._shape.dimensions)


class XInstr:
    def __init__(self, instr: HloInstruction) -> None:
        self.hlo = instr

    def opcode(self) -> str:
        return self.hlo.opcode

    def shape(self) -> XShape:
        return XShape(self.hlo.shape)

    def operand(self, i: int) -> XInstr:
        return XInstr(self.hlo.operands[i])


class XTile:
    def __init__(self, tile: Tile) -> None:
        self.tile = tile

    def offsets(self) -> list[Expr]:
        return list(self.tile.offsets)

    def sizes(self) -> list[Expr]:
        return list(self.tile.sizes)

    def strides(self) -> list[Expr]:
        return list(self.tile.strides)

    def upper_bounds(self) -> list[Expr]:
        return list(self.tile.upper_bounds)

    def ToString(self) -> str:
        return self.tile.to_string()


class XTiles(list):  # type: ignore[type-arg]
    def size(self) -> int:
        return len(self)

    def status(self) -> str:
        return "ok"

    def text(self) -> str:
        return tiles_to_string([t.tile for t in self])


class XSpace:
    """A tiling space as XLA's tests use it: ``AssignTileSizes`` changes it in place."""

    def __init__(self, space: TilingSpace | None, num_dims: int = 0, num_rt_vars: int = 0) -> None:
        self.space = space
        self.counts = (space.num_dimensions, space.num_rt_vars) if space else (num_dims, num_rt_vars)

    def AssignTileSizes(self, sizes: list[int]) -> str:
        assert self.space is not None
        self.space = self.space.assign_tile_sizes(sizes)
        return "ok"

    def tiled_roots(self) -> list[XTile]:
        assert self.space is not None
        return [XTile(t) for t in self.space.tiled_roots]

    def num_dimensions(self) -> int:
        return self.counts[0]

    def num_parallel_dimensions(self) -> int:
        assert self.space is not None
        return self.space.num_parallel_dimensions

    def num_rt_vars(self) -> int:
        return self.counts[1]

    def SimplifyExpression(self, expr: Expr) -> Expr:
        assert self.space is not None
        return self.space.simplify_expression(expr)

    def text(self) -> str:
        assert self.space is not None
        return self.space.to_string()


def _opcode(name: str) -> str:
    """``kScaledDot`` -> ``scaled-dot``."""
    return re.sub(r"(?<!^)([A-Z])", r"-\1", name.removeprefix("k")).lower()


class XList(list):  # type: ignore[type-arg]
    def size(self) -> int:
        return len(self)

    def empty(self) -> bool:
        return not self

    def front(self) -> Any:
        return self[0]

    def back(self) -> Any:
        return self[-1]


class XTiledInstr:
    def __init__(self, instr: TiledHloInstruction) -> None:
        self.instr = instr

    def hlo(self) -> XInstr:
        return XInstr(self.instr.hlo)

    def text(self) -> str:
        return self.instr.to_string()


class XRegion:
    def __init__(self, region: TiledHloRegion) -> None:
        self.region = region

    def instructions(self) -> XList:
        return XList(XTiledInstr(i) for i in self.region.instructions)

    def roots(self) -> XList:
        return XList(XTiledInstr(i) for i in self.region.roots)


class XComputation:
    """A tiled computation as the tests use it: ``Simplify`` and the sort change it in place."""

    def __init__(self, computation: TiledHloComputation) -> None:
        self.computation = computation

    def tiled_root_region(self) -> XRegion:
        return XRegion(self.computation.region)

    def Simplify(self) -> None:
        self.computation = self.computation.simplify()

    def SortInstructionsPostOrder(self) -> None:
        self.computation = self.computation.sort_instructions_post_order()

    def ToString(self) -> str:
        return self.computation.to_string()

    def text(self) -> str:
        return self.computation.to_string()


class XDimTile(DimTile):
    def ToString(self) -> str:
        return self.to_string()


def _tile(space: XSpace, *fields: Any) -> XTile:
    n, r = space.counts
    if len(fields) == 1:
        return XTile(Tile(n, r, tuple(fields[0])))
    return XTile(Tile.from_fields(n, r, *fields))


def _test_tile(space: XSpace, dims: list[int]) -> XTile:
    """``GetTestTile``: offset ``tid_i * ts_i``, size ``ts_i``, stride ``i + 1``, bound ``dims[i]``."""
    n, r = space.counts
    return XTile(
        Tile(
            n,
            r,
            tuple(
                DimTile(var(i) * var(n + i), var(n + i), const(i + 1), const(d)) for i, d in enumerate(dims)
            ),
        )
    )


def _propagate(to_input: bool) -> Callable[..., XTiles]:
    def call(space: XSpace, hlo: XInstr, tile: XTile, index: int = 0, **kwargs: int) -> XTiles:
        assert space.space is not None
        k = next(iter(kwargs.values()), index)
        rule = propagate_tile_to_input if to_input else propagate_tile_to_output
        return XTiles(XTile(t) for t in rule(space.space, hlo.hlo, tile.tile, k))

    return call


def _parse_and_tile(options: dict[str, bool]) -> Callable[[str, list[int]], XComputation]:
    """The fixture's ``ParseAndTile``: tiling space of the entry root, tile sizes, ``Tile``,
    ``Simplify``, ``SortInstructionsPostOrder``."""

    def call(text: str, sizes: list[int]) -> XComputation:
        root = parse_module(text).entry.root
        space = TilingSpace.create(root, **options).assign_tile_sizes(sizes)
        computation = TiledHloComputation.tile(root, space).simplify().sort_instructions_post_order()
        return XComputation(computation)

    return call


def _tile_computation(fusion: XInstr, space: XSpace) -> XComputation:
    assert space.space is not None
    return XComputation(TiledHloComputation.tile(fusion.hlo, space.space))


def _functions(options: dict[str, bool]) -> dict[str, Any]:
    return {
        "ParseAndTile": _parse_and_tile(options),
        "GetSchedule": lambda computation, n=1: get_schedule(computation.computation, n),
        "TiledHloComputation__Tile": _tile_computation,
        "TiledHloInstruction": lambda hlo, tile: XTiledInstr(tiled_instruction(hlo.hlo, tile.tile)),
        "std__move": lambda x: x,
        "ParseAndGetRoot": lambda text: XInstr(parse_module(text).entry.root),
        "HloFusionAdaptor__ForInstruction": lambda root: root,
        "TilingSpace__Create": lambda root: XSpace(TilingSpace.create(root.hlo, **options)),
        "GetFakeTilingSpace": lambda num_dims, num_rt_vars: XSpace(None, num_dims, num_rt_vars),
        "GetTestTile": _test_tile,
        "GetFirstShape": lambda instr: XShape(first_shape(instr.hlo)),
        "PropagateTileToInput": _propagate(True),
        "PropagateTileToOutput": _propagate(False),
        "Tile": _tile,
        "DimTile": XDimTile,
        "CreateDimExpr": var,
        "CreateSymbolExpr": lambda i, num_dims: var(num_dims + i),
        "CreateSymbolicConstant": const,
        "ParseSymbolicExpr": lambda text, num_dims: parse_symbolic_expr_and_advance(text, num_dims)[0],
        "GetFlatTilingsForInputSpace": get_flat_tilings_for_input_space,
        "FlatTiling": lambda *xs: tuple(xs),
        "absl__StrCat": str,
    }


# ---- one vector --------------------------------------------------------------------------------


class _Run:
    """One instantiation of a vector: its names, steps still to run and the evaluator."""

    def __init__(self, vector: dict[str, Any], options: dict[str, bool]) -> None:
        self.vector = vector
        self.strings = {s["ref"]: s["text"] for s in vector["strings"]}
        self.steps = parse_steps(vector["steps"])
        self.done = [False] * len(self.steps)
        self.values: dict[str, Any] = _functions(options)
        self.evaluator = Evaluator(self.values, self._lazy)
        fixture = FIXTURES.get(vector["suite"])
        if fixture is not None:
            text, sizes, name = fixture
            space = XSpace(TilingSpace.create(parse_module(text).entry.root))
            space.AssignTileSizes(list(sizes))
            self.values[name] = space

    def _run_step(self, k: int) -> None:
        self.done[k] = True
        name, text = self.steps[k]
        value = self.eval(text)
        if name is not None:
            self.values[name] = value

    def _lazy(self, name: str) -> Any:
        """A step-defined name, evaluated on first use; the statements before its definition
        run first (in order)."""
        if name.startswith("HloOpcode__k"):
            return _opcode(name.removeprefix("HloOpcode__"))
        defs = [k for k, (n, _) in enumerate(self.steps) if n == name and not self.done[k]]
        if not defs:
            raise AssertionError(f"unknown name {name!r} in {self.vector['id']}")
        for k in range(defs[0]):
            if self.steps[k][0] is None and not self.done[k]:
                self._run_step(k)
        for k in defs:
            self._run_step(k)
        return self.values[name]

    def run_statement(self, text: str) -> None:
        """Run the bare statement ``text`` of the steps (if not run yet)."""
        (k,) = [k for k, step in enumerate(self.steps) if step == (None, text)]
        if not self.done[k]:
            self._run_step(k)

    def eval(self, text: str) -> Any:
        return self.evaluator.eval(to_python(text, self.strings, self.values))

    def expected_value(self, tree: Any) -> Any:
        """A matcher argument: literal text, a C++ expression, or a call rebuilt as C++ text."""
        if isinstance(tree, dict) and "text" in tree:
            return tree["text"]
        if isinstance(tree, dict) and "expr" in tree:
            return self.eval(tree["expr"])
        if isinstance(tree, dict) and "call" in tree:
            args = [
                f"{a['label']}={_cxx(a['value'])}" if isinstance(a, dict) and "label" in a else _cxx(a)
                for a in tree["args"]
            ]
            return self.eval(f"{tree['call']}({', '.join(args)})")
        return tree


def _cxx(tree: Any) -> str:
    if isinstance(tree, dict) and "text" in tree:
        return '"' + tree["text"].replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(tree, dict) and "expr" in tree:
        return str(tree["expr"])
    return repr(tree)


def _text(value: Any) -> str:
    if hasattr(value, "text"):
        return str(value.text())
    if isinstance(value, XTile):
        return value.ToString()
    return str(value)


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


def _match_string(run: _Run, got: Any, expected: dict[str, Any]) -> None:
    want = run.expected_value(expected["args"][0])
    assert _squash(_text(got)) == _squash(_text(want)), f"\n got: {_text(got)}\nwant: {_text(want)}"


def _elements_are(run: _Run, got: Any, expected: dict[str, Any]) -> None:
    want = [run.expected_value(a) for a in expected["args"]]
    assert list(got) == want, (got, want)


def _has_substr(run: _Run, got: Any, expected: dict[str, Any]) -> None:
    want = run.expected_value(expected["args"][0])
    assert want in _text(got), (want, _text(got))


def _opcode_list(run: _Run, tree: dict[str, Any]) -> list[str]:
    """``std::vector<HloOpcode>{a, b}`` or ``vector<HloOpcode>(n, a)`` as opcode names."""
    if "expr" in tree:
        return [_opcode(k) for k in re.findall(r"HloOpcode::(k\w+)", tree["expr"])]
    count, item = tree["args"]
    return [_opcode(item["expr"].split("::")[-1])] * int(count)


def _contains_hlo_with_operands(run: _Run, got: Any, expected: dict[str, Any]) -> None:
    (inner,) = expected["args"]
    assert inner["call"] == "IsHloWithOperands", inner
    opcode = _opcode(inner["args"][0]["expr"].split("::")[-1])
    operands = _opcode_list(run, inner["args"][1])
    found = [
        i
        for i in got
        if i.instr.hlo.opcode == opcode and [o.hlo.opcode for o in i.instr.operands] == operands
    ]
    assert found, (opcode, operands, [i.text() for i in got])


def _is_ok_and_holds(run: _Run, got: Any, expected: dict[str, Any]) -> None:
    (inner,) = expected["args"]
    MATCHERS[inner["call"]](run, got, inner)


MATCHERS: dict[str, Callable[[_Run, Any, dict[str, Any]], None]] = {
    "IsOkAndHolds": _is_ok_and_holds,
    "MatchSchedule": _match_string,
    "HasSubstr": _has_substr,
    "Contains": _contains_hlo_with_operands,
    "MatchToString": _match_string,
    "MatchString": _match_string,
    "MatchIndexingString": _match_string,
    "ElementsAre": _elements_are,
}


def _status_is(run: _Run, subject: str, expected: dict[str, Any]) -> None:
    code = expected["args"][0]["expr"].split("::")[-1]
    with pytest.raises(TilingStatusError, match=r"\S") as info:  # the status code is checked below
        run.eval(subject)
    assert info.value.code == code, (info.value.code, code, str(info.value))
    for arg in expected["args"][1:]:
        assert arg.get("call") == "HasSubstr", arg
        needle = run.expected_value(arg["args"][0])
        assert needle in str(info.value), (needle, str(info.value))


def _assertion(run: _Run, a: dict[str, Any]) -> None:
    expected, subject = a["expected"], a["subject"]
    if isinstance(expected, dict) and expected.get("call") == "StatusIs":
        _status_is(run, subject, expected)
        return
    got = run.eval(subject)
    if isinstance(expected, dict) and expected.get("status") == "ok":
        if a.get("binds"):
            run.values[a["binds"].split()[-1]] = got
        return
    if isinstance(expected, dict) and expected.get("call") in MATCHERS:
        MATCHERS[expected["call"]](run, got, expected)
        return
    if a["macro"] in ("EXPECT_TRUE", "EXPECT_FALSE", "ASSERT_TRUE", "ASSERT_FALSE") and isinstance(
        expected, bool
    ):
        assert bool(got) is expected, (subject, got)
        return
    if a["macro"] in ("EXPECT_GE", "ASSERT_GE"):
        assert got >= run.expected_value(expected), (got, expected)
        return
    if a["macro"] in ("EXPECT_EQ", "ASSERT_EQ"):
        want = run.expected_value(expected)
        if isinstance(expected, dict) and "text" in expected:
            got = _text(got)
        assert got == want, (got, want)
        return
    raise AssertionError(f"unknown assertion {a['macro']} {expected!r}")


def check(vector: dict[str, Any]) -> None:
    reason = NOT_RUN.get(vector["id"])
    if reason:
        pytest.skip(reason)
    if vector["id"] in REGION_CHECKS:
        REGION_CHECKS[vector["id"]](vector)
        return
    if vector["id"] in HAND_WRITTEN:
        HAND_WRITTEN[vector["id"]](vector)
        return
    placed = STATEMENTS.get(vector["id"], {})
    for options in OPTIONS.get(vector["suite"], [{}]):
        run = _Run(vector, options)
        for k, assertion in enumerate(vector["expectations"]):
            for text, position in placed.items():
                if position == k:
                    run.run_statement(text)
            _assertion(run, assertion)


def _default_region(vector: dict[str, Any]) -> None:
    """``TiledHloRegion region``: no instructions, no roots."""
    region = TiledHloRegion()
    assert not region.instructions and not region.roots


def _invalid_region_root(vector: dict[str, Any]) -> None:
    """A region whose roots include an instruction it does not hold fails (XLA: a CHECK)."""
    root = parse_module(vector["hlo"]).entry.root
    space = TilingSpace.create(root)
    owned = tiled_instruction(root, Tile(space.num_dimensions, space.num_rt_vars, ()))
    stray = tiled_instruction(root, Tile(space.num_dimensions, space.num_rt_vars, ()))
    (death,) = [e for e in vector["expectations"] if e["macro"] == "EXPECT_DEATH"]
    with pytest.raises(TilingStatusError, match=death["expected"]["death_regex"]["text"]):
        TiledHloRegion((owned,), (owned, stray))


#: Tests that build values with C++ constructors and ``std::vector`` calls: checked by hand.
REGION_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "tiled_hlo_test/TiledHloTest.TiledHloRegionDefaultConstruction": _default_region,
    "tiled_hlo_test/TiledHloTest.TiledHloRegionInvalidRootFailsCheck": _invalid_region_root,
}

HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {
    kind: check
    for kind in (
        "experimental_reshape_analysis",
        "experimental_reshape_tile_propagation",
        "experimental_scheduling",
        "experimental_tile_propagation",
        "experimental_tile",
        "experimental_tiled_hlo",
        "experimental_tiling_space",
        "experimental_tiling_space_utils",
    )
}
