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

import random
from collections import Counter
from dataclasses import dataclass

from tensorlayout.errors import HloError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.physical import linearized_output_to_input
from tensorlayout.indexing import IndexingMap

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


def _points(bounds: list[tuple[int, int]], minor: int, limit: int, seed: int) -> tuple[list[list[int]], bool]:
    """Output points whose neighbour along ``minor`` is in the domain (all, or a sample)."""
    spans = [hi - lo + 1 for lo, hi in bounds]
    spans[minor] -= 1
    total = 1
    for s in spans:
        total *= max(s, 0)
    if total == 0:
        return [], True
    if total <= limit:
        pts: list[list[int]] = [[]]
        for (lo, _), s in zip(bounds, spans):
            pts = [p + [lo + i] for p in pts for i in range(s)]
        return pts, True
    rng = random.Random(seed)
    return [[lo + rng.randrange(s) for (lo, _), s in zip(bounds, spans)] for _ in range(limit)], False


def _first_symbols(m: IndexingMap, dims: list[int]) -> list[int] | None:
    """The first feasible symbol values (range vars, then runtime vars) at ``dims``, or None."""
    syms = [v.bounds for v in m.range_vars] + [v.bounds for v in m.rt_vars]
    lows = [b.lower for b in syms]
    if m.constraints_satisfied(dims, lows):
        return lows
    if len(syms) == 1 and syms[0].upper - syms[0].lower < 4096:
        for s in range(syms[0].lower, syms[0].upper + 1):
            if m.constraints_satisfied(dims, [s]):
                return [s]
    return None


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
        minor = shape.layout.minor_to_major[0] if shape.layout and shape.layout.minor_to_major \
            else len(shape.dimensions) - 1
        bounds = [(v.bounds.lower, v.bounds.upper) for v in m.dim_vars]
        pts, exhaustive = _points(bounds, minor, limit, seed)
        steps: Counter[int] = Counter()
        for p in pts:
            q = list(p)
            q[minor] += 1
            sp, sq = _first_symbols(m, p), _first_symbols(m, q)
            if sp is None or sq is None:
                continue
            a, b = m.evaluate(p, sp), m.evaluate(q, sq)
            steps[(b[0] - a[0]) if a else 0] += 1  # a scalar operand: always the same element
        ordered = tuple(sorted(steps.items(), key=lambda kv: (-kv[1], abs(kv[0]))))
        out.append(OperandCoalescing(k, name, ordered, sum(steps.values()), exhaustive))
    return out
