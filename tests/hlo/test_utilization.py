"""Operand utilization against brute force: the evaluator's reads, the bound and the box path."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.hlo import operand_utilization, parse_module
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.reference import reads

OPS = {
    "slice": ("f32[6,8] slice(p0), slice={[1:6:2], [0:8:3]}", ["f32[6,8]"]),
    "pad": ("f32[7,3] pad(p0, p1), padding=1_-1_1x0_0", ["f32[4,3]", "f32[]"]),
    "reduce_window": ("f32[3,2] reduce-window(p0, p1), window={size=2x3 stride=2x2 pad=0_1x1_0}, "
                      "to_apply=sum", ["f32[5,4]", "f32[]"]),
    "broadcast": ("f32[3,4,2] broadcast(p0), dimensions={2}", ["f32[2]"]),
    "reshape": ("f32[6] reshape(p0)", ["f32[2,3]"]),
    "dot": ("f32[2,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            ["f32[2,4]", "f32[4,3]"]),
    "concatenate": ("f32[5] concatenate(p0, p1), dimensions={0}", ["f32[2]", "f32[3]"]),
}


def _module(root: str, params: list[str]) -> HloInstruction:
    lines = "\n".join(f"  p{i} = {s} parameter({i})" for i, s in enumerate(params))
    text = ("HloModule m\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            f"  ROOT s = f32[] add(a, b)\n}}\nENTRY e {{\n{lines}\n  ROOT r = {root}\n}}\n")
    return parse_module(text).entry.root


@pytest.mark.parametrize("name", sorted(OPS))
def test_exact_count_is_what_the_evaluator_reads(name: str) -> None:
    root = _module(*OPS[name])
    values = [np.random.default_rng(0).uniform(1, 2, tuple(op.shape.dimensions)) for op in root.operands]
    for u in operand_utilization(root):
        if not root.operands[u.operand].shape.dimensions:
            continue
        read = set().union(*reads(root, u.operand, values).values())
        assert u.exact and u.method.startswith("exact")
        assert u.read == len(read), (u, sorted(read))


@pytest.mark.parametrize("name", sorted(OPS))
def test_bound_is_at_least_the_exact_count(name: str) -> None:
    root = _module(*OPS[name])
    for exact, bound in zip(operand_utilization(root), operand_utilization(root, limit=0)):
        assert bound.read >= exact.read
        assert bound.method.startswith(("upper bound", "exact (box"))


def test_large_projection_is_exact_without_enumeration() -> None:
    root = _module("f32[4096,2048] transpose(p0), dimensions={1,0}", ["f32[2048,4096]"])
    u = operand_utilization(root, limit=1000)[0]
    assert (u.read, u.exact, u.method) == (2048 * 4096, True, "exact (box of the result ranges)")
    sliced = _module("f32[1000,3000] slice(p0), slice={[5:1005], [0:3000]}", ["f32[2000,3000]"])
    v = operand_utilization(sliced, limit=1000)[0]
    assert (v.read, v.fraction, v.exact) == (3_000_000, 0.5, True)


def test_unused_variables_are_not_enumerated() -> None:
    """A dot's rhs map ignores the lhs free dims: only the variables it uses are counted."""
    root = _module("f32[3000,64] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                   ["f32[3000,512]", "f32[512,64]"])
    lhs, rhs = operand_utilization(root, limit=1 << 16)
    assert (rhs.read, rhs.exact, rhs.method) == (512 * 64, True, "exact (enumeration)")
    assert lhs.read == 3000 * 512 and lhs.exact
