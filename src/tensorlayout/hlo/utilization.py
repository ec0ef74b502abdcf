"""Operand utilization: how many distinct elements of each operand an instruction reads.

The count comes from the instruction's output→input indexing maps (fusions: composed through
the body). Small domains are enumerated exactly (vectorised with numpy); large ones get an
upper bound ``min(operand size, points of the domains, box of the result ranges)`` and say so.
Runtime variables range over all their feasible values, so maps with them give "may read"
counts (``exact=False``).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[8,8] parameter(0)\\n"
...                  " ROOT s = f32[4,8] slice(p), slice={[0:8:2], [0:8]}\\n}")
>>> u = operand_utilization(m.entry.root)[0]
>>> u.read, u.elements, u.fraction, u.method
(32, 64, 0.5, 'exact (enumeration)')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tensorlayout.hlo.analysis import OperandIndexing, output_to_input_indexing
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import Expr, IndexingMap, RangeEvaluator
from tensorlayout.indexing.expr import ADD, CEILDIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, VAR

__all__ = ["OperandUtilization", "domain_points", "eval_expr", "operand_utilization"]

#: Above this many domain points (per operand, all maps together) counts are bounded, not exact.
EXACT_LIMIT = 1 << 21


@dataclass(frozen=True)
class OperandUtilization:
    """Distinct elements of operand ``operand`` read by the instruction."""

    operand: int
    name: str
    elements: int
    read: int
    exact: bool
    method: str

    @property
    def fraction(self) -> float:
        return self.read / self.elements if self.elements else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"operand": self.operand, "name": self.name, "elements": self.elements,
                "read": self.read, "fraction": round(self.fraction, 6), "exact": self.exact,
                "method": self.method}


def eval_expr(e: Expr, values: Sequence[np.ndarray]) -> np.ndarray:
    """Evaluate ``e`` on numpy arrays of variable values (floor division and Python mod)."""
    cache: dict[Expr, np.ndarray] = {}

    def go(x: Expr) -> np.ndarray:
        got = cache.get(x)
        if got is not None:
            return got
        k = x.kind
        if k == CONST:
            r = np.asarray(x.value, dtype=np.int64)
        elif k == VAR:
            r = values[x.value]
        else:
            a, b = go(x.lhs), go(x.rhs)
            if k == ADD:
                r = a + b
            elif k == MUL:
                r = a * b
            elif k == FLOORDIV:
                r = np.floor_divide(a, b)
            elif k == CEILDIV:
                r = -np.floor_divide(-a, b)
            elif k == MOD:
                r = np.mod(a, b)
            elif k == MAX:
                r = np.maximum(a, b)
            elif k == MIN:
                r = np.minimum(a, b)
            else:  # pragma: no cover
                raise AssertionError(k)
        cache[x] = r
        return r

    return go(e)


def domain_points(m: IndexingMap) -> int:
    """Points of the map's bounding box (constraints ignored)."""
    n = 1
    for v in m.all_vars():
        n *= max(0, v.bounds.upper - v.bounds.lower + 1)
    return n


def enumerate_map(m: IndexingMap) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """All domain points (variables, flattened) and the results there, constraints applied."""
    grids = np.meshgrid(*[np.arange(v.bounds.lower, v.bounds.upper + 1, dtype=np.int64)
                          for v in m.all_vars()], indexing="ij")
    flat = [g.reshape(-1) for g in grids]
    if not flat:
        flat_len = 1
    else:
        flat_len = flat[0].size
    keep = np.ones(flat_len, dtype=bool)
    for e, iv in m.constraints.items():
        val = np.broadcast_to(eval_expr(e, flat), (flat_len,))
        keep &= (val >= iv.lower) & (val <= iv.upper)
    variables = [f[keep] for f in flat]
    count = int(keep.sum())
    results = [np.broadcast_to(eval_expr(r, variables), (count,)) for r in m.results]
    return variables, results


def _flat_reads(maps: Iterable[IndexingMap], dims: Sequence[int]) -> np.ndarray:
    chunks = []
    for m in maps:
        if m.is_known_empty:
            continue
        variables, results = enumerate_map(m)
        if not dims:
            if not variables or variables[0].size:
                chunks.append(np.zeros(1, dtype=np.int64))
            continue
        inside = np.ones(results[0].shape, dtype=bool)
        flat = np.zeros(results[0].shape, dtype=np.int64)
        for r, n in zip(results, dims):
            inside &= (r >= 0) & (r < n)
            flat = flat * n + r
        chunks.append(flat[inside])
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(chunks))


def _bound(maps: Sequence[IndexingMap], numel: int) -> int:
    points = 0
    for m in maps:
        if m.is_known_empty:
            continue
        box = 1
        ev = RangeEvaluator.for_map(m)
        for r in m.results:
            iv = ev.range(r)
            box *= max(0, iv.upper - iv.lower + 1)
        points += min(domain_points(m), box)
    return min(numel, points)


def _utilization(k: int, operand: HloInstruction, group: Sequence[OperandIndexing],
                 limit: int) -> OperandUtilization:
    shape = operand.shape
    dims = tuple(shape.dimensions) if shape.is_array else ()
    numel = 1
    for n in dims:
        numel *= n
    if not shape.is_array:
        return OperandUtilization(k, operand.name, 0, 0, False, "not an array")
    if any(oi.is_undefined for oi in group):
        return OperandUtilization(k, operand.name, numel, numel, False, "unknown indexing (upper bound)")
    maps = [oi.map for oi in group]
    has_rt = any(m.num_rt_vars for m in maps)
    if sum(domain_points(m) for m in maps if not m.is_known_empty) <= limit:
        read = int(_flat_reads(maps, dims).size)
        if has_rt:
            return OperandUtilization(k, operand.name, numel, read, False,
                                      "may read: enumeration over all runtime-variable values")
        return OperandUtilization(k, operand.name, numel, read, True, "exact (enumeration)")
    return OperandUtilization(k, operand.name, numel, _bound(maps, numel), False,
                              "upper bound: min(operand size, domain points, result-range box)")


def operand_utilization(instr: HloInstruction, *, limit: int = EXACT_LIMIT) -> list[OperandUtilization]:
    """Per operand of ``instr``: distinct elements read over all outputs, as a count and fraction."""
    outputs = len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1
    groups: list[list[OperandIndexing]] = [[] for _ in instr.operands]
    for o in range(outputs):
        idx = output_to_input_indexing(instr, o)
        for k in range(min(len(idx), len(groups))):
            groups[k].extend(idx[k])
    return [_utilization(k, op, groups[k], limit) for k, op in enumerate(instr.operands)]
