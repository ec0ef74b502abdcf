"""Coalescing report: how far apart in memory are the elements neighbouring outputs read?

For every operand, the map from an output index to the operand's physical element offset
(:func:`~tensorlayout.hlo.physical.linearized_output_to_input`, tiling included) is
evaluated at output points and at their neighbours along the output's minor-most physical
dim; the difference is the *step* (1 = contiguous, 0 = the same element, e.g. a broadcast).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[64,32]{1,0} parameter(0)\\n"
...                  " ROOT t = f32[32,64]{1,0} transpose(p), dimensions={1,0}\\n}")
>>> [(r.operand, r.typical_step) for r in coalescing_report(m.entry.root)]
[(0, 32)]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from tensorlayout.errors import HloError, IndexingError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.ops._common import major_to_minor
from tensorlayout.hlo.physical import linearized_output_to_input
from tensorlayout.indexing import IndexingMap
from tensorlayout.indexing.evaluate import columns, evaluate_columns

__all__ = ["OperandCoalescing", "coalescing_report"]


@dataclass(frozen=True)
class OperandCoalescing:
    """Steps between the offsets read for neighbouring outputs, for one operand."""

    operand: int
    name: str
    steps: tuple[tuple[int, int], ...]  # (step, how many sampled neighbours), most common first
    sampled: int
    exhaustive: bool
    known: bool = True

    @property
    def typical_step(self) -> int | None:
        return self.steps[0][0] if self.steps else None

    @property
    def contiguous_fraction(self) -> float:
        """Share of sampled neighbours whose step is exactly 1."""
        return dict(self.steps).get(1, 0) / self.sampled if self.sampled else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"operand": self.operand, "name": self.name, "typical_step": self.typical_step,
                "contiguous_fraction": self.contiguous_fraction, "steps": [list(s) for s in self.steps],
                "sampled": self.sampled, "exhaustive": self.exhaustive, "known": self.known}


def _points(bounds: list[tuple[int, int]], minor: int, limit: int, seed: int) -> tuple[np.ndarray, bool]:
    """Output points (rows of exact ints) whose neighbour along ``minor`` is in the domain
    (all, or a seeded sample of ``limit``), and whether that is all of them."""
    spans = [hi - lo + 1 for lo, hi in bounds]
    spans[minor] -= 1
    total = 1
    for s in spans:
        total *= max(s, 0)
    if total == 0:
        return np.zeros((0, len(bounds)), dtype=object), True
    if total <= limit:
        grid = np.indices([max(s, 0) for s in spans]).reshape(len(spans), -1).T.astype(object)
        return grid + np.array([lo for lo, _ in bounds], dtype=object), True
    rng = np.random.default_rng(seed)
    cols = [lo + rng.integers(0, s, size=limit).astype(object) if s < 1 << 62 else
            np.array([lo + int(x) for x in _big_sample(rng, s, limit)], dtype=object)
            for (lo, _), s in zip(bounds, spans)]
    return np.stack(cols, axis=1), False


def _big_sample(rng: np.random.Generator, span: int, n: int) -> list[int]:
    """``n`` values in ``[0, span)`` for a span past int64 (two 62-bit draws each)."""
    high, low = rng.integers(0, 1 << 62, size=n).tolist(), rng.integers(0, 1 << 62, size=n).tolist()
    return [((h << 62) | lo) % span for h, lo in zip(high, low)]


def _satisfied(m: IndexingMap, cols: list[np.ndarray]) -> np.ndarray:
    """Per row of ``cols`` (dims then symbols): every constraint holds (bounds not checked)."""
    ok = np.ones(len(cols[0]) if cols else 1, dtype=bool)
    for e, iv in m.constraints.items():
        v, undefined = evaluate_columns(e, cols, safe=True)
        ok &= ~undefined & (v >= iv.lower) & (v <= iv.upper)
    return ok


def _first_symbols(m: IndexingMap, dims: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """Per point: the first feasible symbol values (range vars, then runtime vars) — the lower
    bounds, or for a single symbol of fewer than 4096 values the first that satisfies the
    constraints — and whether there is one."""
    n = len(dims[0])
    bounds = [v.bounds for v in m.range_vars] + [v.bounds for v in m.rt_vars]
    syms = [np.full(n, b.lower, dtype=object) for b in bounds]
    found = _satisfied(m, dims + syms)
    if len(bounds) == 1 and bounds[0].upper - bounds[0].lower < 4096 and not found.all():
        for s in range(bounds[0].lower + 1, bounds[0].upper + 1):
            todo = np.flatnonzero(~found)
            if not len(todo):
                break
            trial = np.full(len(todo), s, dtype=object)
            hit = todo[_satisfied(m, [d[todo] for d in dims] + [trial])]
            syms[0][hit] = s
            found[hit] = True
    return syms, found


def _steps(m: IndexingMap, pts: np.ndarray, minor: int) -> Counter[int]:
    """Physical steps between the first element read at each point and at its neighbour."""
    dims = columns(pts)
    nxt = list(dims)
    nxt[minor] = dims[minor] + 1
    sp, fp = _first_symbols(m, dims)
    sq, fq = _first_symbols(m, nxt)
    ok = fp & fq
    if not m.results:  # a scalar operand: always the same element
        return Counter({0: int(ok.sum())})
    a, bad_a = evaluate_columns(m.results[0], dims + sp)
    b, bad_b = evaluate_columns(m.results[0], nxt + sq)
    if (ok & (bad_a | bad_b)).any():
        raise IndexingError(f"division by zero evaluating {m.results[0]}")
    return Counter((b[ok] - a[ok]).tolist())


def coalescing_report(instr: HloInstruction, output_id: int = 0, *, limit: int = 4096,
                      seed: int = 0) -> list[OperandCoalescing]:
    """Per operand: the distribution of physical steps between the elements read for
    neighbouring outputs along the output's minor-most physical dim.

    All neighbour pairs are used when there are at most ``limit``; otherwise a seeded sample of
    ``limit`` (``exhaustive`` says which). Where an output reads several elements (a range
    variable, e.g. a reduction), the first element read is compared.
    """
    if not isinstance(instr, HloInstruction):
        raise HloError(f"expected an HLO instruction, got {type(instr).__name__}")
    outputs = len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1
    if not 0 <= output_id < outputs:
        raise HloError(f"{instr.name} has {outputs} output(s); output {output_id} does not exist")
    shape = instr.shape.tuple_shapes[output_id] if instr.shape.is_tuple else instr.shape
    indexing = linearized_output_to_input(instr, output_id)
    out: list[OperandCoalescing] = []
    for k, group in enumerate(indexing.indexing_maps):
        name = instr.operands[k].name if k < len(instr.operands) else f"operand {k}"
        maps = [oi.map for oi in group if not oi.is_undefined]
        if not maps or not shape.is_array or not shape.dimensions:
            out.append(OperandCoalescing(k, name, (), 0, True, known=bool(maps)))
            continue
        m = maps[0]
        minor = major_to_minor(shape)[-1] if shape.layout and shape.layout.minor_to_major \
            else len(shape.dimensions) - 1  # major_to_minor refuses a layout that is no permutation
        bounds = [(v.bounds.lower, v.bounds.upper) for v in m.dim_vars]
        pts, exhaustive = _points(bounds, minor, limit, seed)
        steps = _steps(m, pts, minor)
        ordered = tuple(sorted(steps.items(), key=lambda kv: (-kv[1], abs(kv[0]))))
        out.append(OperandCoalescing(k, name, ordered, sum(steps.values()), exhaustive))
    return out
