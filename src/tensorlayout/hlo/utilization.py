"""Operand utilization: how many distinct elements of each operand an instruction reads.

The count comes from the instruction's output→input indexing maps (fusions: composed through
the body). Small domains (counting only the variables a map uses) are enumerated exactly,
vectorised with numpy; a large map whose results are distinct ``v + c`` without constraints
reads exactly a box; other large ones get an upper bound ``min(operand size, points of the
domains, box of the result ranges)``. Each figure says which method gave it.
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
from tensorlayout.indexing.evaluate import evaluate_columns
from tensorlayout.indexing.expr import ADD, CONST, VAR

__all__ = ["OperandUtilization", "domain_points", "eval_expr", "operand_utilization"]

#: Above this many domain points (per operand, all maps together) counts are bounded, not exact.
EXACT_LIMIT = 1 << 21
#: Operands of at most this many elements count distinct reads in a bitmap.
BITMAP_LIMIT = 1 << 25


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
    """Evaluate ``e`` on numpy arrays of variable values (floor division, XLA's mod; the value
    at a point that divides by zero is unspecified: see :func:`evaluate_columns`)."""
    return evaluate_columns(e, list(values))[0]


def _used_vars(m: IndexingMap) -> list[int]:
    """Variables the results or constraints mention; the others cannot change what is read."""
    used: set[int] = set()
    for e in (*m.results, *m.constraints):
        used |= e.variables()
    return sorted(used)


def _is_empty(m: IndexingMap) -> bool:
    return m.is_known_empty or any(v.bounds.upper < v.bounds.lower for v in m.all_vars())


def domain_points(m: IndexingMap) -> int:
    """Points of the box of the variables the map uses (constraints ignored).

    >>> m = "(d0, d1)[s0] -> (s0), domain: d0 in [0, 9], d1 in [0, 9], s0 in [0, 3]"
    >>> domain_points(IndexingMap.parse(m))
    4
    """
    if _is_empty(m):
        return 0
    variables = m.all_vars()
    n = 1
    for k in _used_vars(m):
        n *= variables[k].bounds.upper - variables[k].bounds.lower + 1
    return n


def enumerate_map(m: IndexingMap) -> tuple[int, list[np.ndarray]]:
    """How many domain points satisfy the constraints, and the results at each of them.

    Only the variables the map uses are enumerated (see :func:`domain_points`).
    """
    if _is_empty(m):
        return 0, [np.zeros(0, dtype=np.int64) for _ in m.results]
    variables = m.all_vars()
    used = _used_vars(m)
    grids = np.meshgrid(*[np.arange(variables[k].bounds.lower, variables[k].bounds.upper + 1,
                                    dtype=np.int64) for k in used], indexing="ij")
    count = grids[0].size if grids else 1
    values = [np.zeros(1, dtype=np.int64)] * len(variables)  # unused: any value will do
    for k, g in zip(used, grids):
        values[k] = g.reshape(-1)
    keep = np.ones(count, dtype=bool)
    for e, iv in m.constraints.items():
        val, undefined = evaluate_columns(e, values, safe=True)  # as constraints_satisfied
        keep &= ~undefined & (val >= iv.lower) & (val <= iv.upper)
    values = [v[keep] if v.size == count else v for v in values]
    count = int(keep.sum())
    return count, [np.broadcast_to(eval_expr(r, values), (count,)) for r in m.results]


def _flat_reads(maps: Iterable[IndexingMap], dims: Sequence[int]) -> np.ndarray:
    """Row-major offsets of the operand elements the maps read (inside the operand)."""
    chunks = []
    for m in maps:
        count, results = enumerate_map(m)
        if not dims:
            if count:
                chunks.append(np.zeros(1, dtype=np.int64))
            continue
        inside = np.ones(count, dtype=bool)
        flat = np.zeros(count, dtype=np.int64)
        for r, n in zip(results, dims):
            inside &= (r >= 0) & (r < n)
            flat = flat * n + r
        chunks.append(flat[inside])
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate(chunks)


def _distinct(flat: np.ndarray, numel: int) -> int:
    """How many distinct offsets in ``flat`` (all in ``[0, numel)``): a bitmap when it is
    small (linear time; sorting 2M reads took ~0.1 s each), else ``np.unique``."""
    if numel <= BITMAP_LIMIT:
        seen = np.zeros(max(numel, 1), dtype=bool)
        seen[flat.astype(np.int64)] = True  # exact-int (object) reads fit: they are inside
        return int(np.count_nonzero(seen))
    return int(np.unique(flat).size)


def _var_plus_const(e: Expr) -> tuple[int, int] | None:
    """``(k, c)`` if ``e`` is ``v_k + c`` (or ``v_k``), else None."""
    if e.kind == VAR:
        return e.value, 0
    lhs, rhs = e.lhs, e.rhs
    if e.kind == ADD and lhs is not None and rhs is not None and lhs.kind == VAR and rhs.kind == CONST:
        return lhs.value, rhs.value
    return None


def _projection_count(m: IndexingMap, dims: Sequence[int]) -> int | None:
    """Exact count for an unconstrained map whose results are distinct ``v + c``, else None.

    Such a map reads the box of its result ranges, clipped to the operand: a product.
    ``(d0, d1)[s0] -> (s0, d0 + 1)`` over ``s0 in [0, 99]``, ``d0 in [0, 9]`` reads
    ``min(100, n0) * |[1, 10] ∩ [0, n1 - 1]|`` elements, however large ``d1``'s range.
    """
    if m.constraints or m.num_rt_vars:
        return None
    parts = [_var_plus_const(r) for r in m.results]
    if any(p is None for p in parts) or len({p[0] for p in parts if p}) != len(parts):
        return None
    variables = m.all_vars()
    count = 1
    for (k, c), n in zip([p for p in parts if p], dims):
        lo, hi = variables[k].bounds.lower + c, variables[k].bounds.upper + c
        count *= max(0, min(hi, n - 1) - max(lo, 0) + 1)
    return count


def _bound(maps: Sequence[IndexingMap], dims: Sequence[int], numel: int) -> int:
    """``min(operand size, sum over maps of min(domain points, result box ∩ operand))``."""
    points = 0
    for m in maps:
        if _is_empty(m):
            continue
        box = 1
        ev = RangeEvaluator.for_map(m)
        for r, n in zip(m.results, dims):
            iv = ev.range(r)
            box *= max(0, min(iv.upper, n - 1) - max(iv.lower, 0) + 1)
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
    if any(oi.is_undefined or oi.map.num_results != len(dims) for oi in group):
        return OperandUtilization(k, operand.name, numel, numel, False, "unknown indexing (upper bound)")
    maps = [oi.map for oi in group]
    has_rt = any(m.num_rt_vars for m in maps)
    if sum(domain_points(m) for m in maps) <= limit:
        read = _distinct(_flat_reads(maps, dims), numel)
        if has_rt:
            return OperandUtilization(k, operand.name, numel, read, False,
                                      "may read: enumeration over all runtime-variable values")
        return OperandUtilization(k, operand.name, numel, read, True, "exact (enumeration)")
    exact = _projection_count(maps[0], dims) if len(maps) == 1 and not _is_empty(maps[0]) else None
    if exact is not None:
        return OperandUtilization(k, operand.name, numel, exact, True, "exact (box of the result ranges)")
    return OperandUtilization(k, operand.name, numel, _bound(maps, dims, numel), False,
                              "upper bound: min(operand size, domain points, "
                              "result-range box within the operand)")


def operand_utilization(instr: HloInstruction, *, limit: int = EXACT_LIMIT) -> list[OperandUtilization]:
    """Per operand of ``instr``: distinct elements read over all outputs, as a count and fraction."""
    outputs = len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1
    groups: list[list[OperandIndexing]] = [[] for _ in instr.operands]
    for o in range(outputs):
        idx = output_to_input_indexing(instr, o)
        for k in range(min(len(idx), len(groups))):
            groups[k].extend(idx[k])
    return [_utilization(k, op, groups[k], limit) for k, op in enumerate(instr.operands)]
