"""XLA tiling conformance checks (see ``tests/tiling/xla/__init__.py``): ``coalescing_analysis_test.cc``.

Each expectation's subject is a call (``IsReadCoalescedPerOperand(ir)``, ...); its function name
selects a row of ``SUBJECTS``, its expected value is matched by ``_match``. Vectors that build
their module with C++ builder calls instead of HLO text have the equivalent module written by
hand in ``HAND_WRITTEN_MODULES`` (keyed by vector id, with the steps they stand for).
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

from tensorlayout.hlo import parse_module
from tensorlayout.hlo.model import HloInstruction, HloModule
from tensorlayout.hlo.read_coalescing import (
    RTX_A6000,
    bandwidth_utilization_rate,
    emitter_fusion_kind,
    is_read_coalesced_heuristic,
    read_coalescing,
)
from tensorlayout.indexing import canonicalize
from tensorlayout.tiling.experimental import TiledHloComputation, TilingSpace

#: Modules built in the test body with HloComputation::Builder: the same module as HLO text.
HAND_WRITTEN_MODULES = {
    # f32[100000] p0, p1 -> kLoop fusion whose body negates p0f and never reads p1f.
    "coalescing_analysis_test/CoalescingTest.UnusedParameter": """
HloModule m
subcomp {
  p0f = f32[100000] parameter(0)
  p1f = f32[100000] parameter(1)
  ROOT negate = f32[100000] negate(p0f)
}
ENTRY b {
  p0 = f32[100000] parameter(0)
  p1 = f32[100000] parameter(1)
  ROOT fusion = f32[100000] fusion(p0, p1), kind=kLoop, calls=subcomp
}
""",
}


class _Case:
    """One vector's state: its module (parsed once) and the constexpr values of its steps."""

    def __init__(self, vector: dict[str, Any]) -> None:
        self.vector = vector
        self.constants: dict[str, float] = {}
        for step in vector["steps"]:
            found = re.fullmatch(r"constexpr \w+ (\w+) = ([-\d.]+)", step)
            if found:
                self.constants[found.group(1)] = float(found.group(2))
        self._module: HloModule | None = None

    @property
    def module(self) -> HloModule:
        if self._module is None:
            text = self.vector["hlo"] or HAND_WRITTEN_MODULES.get(self.vector["id"])
            if text is None:
                raise AssertionError(f"{self.vector['id']}: no HLO text and no hand-written module")
            self._module = parse_module(text)
        return self._module

    @property
    def root(self) -> HloInstruction:
        return self.module.entry.root

    def value(self, expr: str) -> float:
        """A C++ arithmetic expression over the test's constexpr names."""
        return _arith(ast.parse(expr, mode="eval").body, self.constants)


_OPS: dict[type, Callable[[float, float], float]] = {
    ast.Div: operator.truediv,
    ast.Mult: operator.mul,
    ast.Add: operator.add,
    ast.Sub: operator.sub,
}


def _arith(node: ast.expr, names: dict[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arith(node.left, names), _arith(node.right, names))
    raise AssertionError(f"unsupported C++ expression {ast.dump(node)}")


def _per_operand(case: _Case, args: str) -> list[bool]:
    return list(read_coalescing(case.root).per_operand)


def _heuristic(case: _Case, args: str) -> bool:
    root = case.root
    return is_read_coalesced_heuristic(emitter_fusion_kind(root), root.operands[0], root)


def _bandwidth(case: _Case, args: str) -> list[float]:
    """``EffectiveBandwidthUtilizationRatePerOperand(root, {sizes})``: the root tiled with these
    sizes (the experimental tiler), each operand's tile sizes and strides rated."""
    root = case.root
    sizes = [int(x) for x in re.findall(r"-?\d+", args.split("{", 1)[1])]
    space = TilingSpace.create(root).assign_tile_sizes(sizes)
    tiled = TiledHloComputation.tile(root, space).simplify()
    rates = []
    for operand in root.operands:
        (tile,) = [i.tile for i in tiled.instructions if i.hlo is operand]
        static = [[int(canonicalize(e).value) for e in fields] for fields in (tile.sizes, tile.strides)]
        rates.append(bandwidth_utilization_rate(operand.shape, *static))
    return rates


def _parse_status(case: _Case, args: str) -> dict[str, str]:
    assert case.module.entry is not None
    return {"status": "ok"}


def _transaction_size(case: _Case, args: str) -> float:
    return float(RTX_A6000.dram_to_l2_transaction_size_bytes)


def _p1f(case: _Case, args: str) -> HloInstruction | None:
    """The builder's second fused parameter (the hand-written module's ``p1f``)."""
    params = case.root.fused_computation.parameters
    return params[1] if len(params) > 1 else None


#: Subject function name -> evaluation (args text given as written).
SUBJECTS: dict[str, Callable[[_Case, str], Any]] = {
    "IsReadCoalescedPerOperand": _per_operand,
    "IsReadCoalescedHeuristic": _heuristic,
    "EffectiveBandwidthUtilizationRatePerOperand": _bandwidth,
    "ParseAndReturnVerifiedModule": _parse_status,
    "device_info_.dram_to_l2_transaction_size_bytes": _transaction_size,
    "p1f": _p1f,
}


def _subject(case: _Case, subject: str) -> Any:
    found = re.fullmatch(r"\s*([\w.]+)\s*(?:\((.*)\))?\s*", subject, re.S)
    if not found or found.group(1) not in SUBJECTS:
        raise AssertionError(f"unknown subject {subject!r}: add it to SUBJECTS")
    return SUBJECTS[found.group(1)](case, found.group(2) or "")


def _match(case: _Case, got: Any, expected: Any, relation: str | None) -> None:
    """``got`` against a matcher tree; fails with both sides."""
    if relation == "ne":
        assert expected == {"nullptr": True}, expected
        assert got is not None
        return
    if isinstance(expected, dict) and expected.get("call") == "ElementsAre":
        assert len(got) == len(expected["args"]), (got, expected)
        for g, e in zip(got, expected["args"]):
            _match(case, g, e, None)
        return
    if isinstance(expected, dict) and "expr" in expected:
        want = case.value(expected["expr"])
        assert abs(float(got) - want) < 1e-12, (got, want)
        return
    if isinstance(expected, bool):
        assert got is expected, (got, expected)
        return
    if isinstance(expected, float):
        assert abs(float(got) - expected) < 1e-12, (got, expected)
        return
    if isinstance(expected, dict) and "status" in expected:
        assert got == expected, (got, expected)
        return
    raise AssertionError(f"unknown expectation {expected!r}")


def check(vector: dict[str, Any]) -> None:
    case = _Case(vector)
    for expectation in vector["expectations"]:
        got = _subject(case, expectation["subject"])
        _match(case, got, expectation["expected"], expectation.get("relation"))


HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {"gpu_coalescing": check}
