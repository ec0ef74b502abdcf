"""XLA's ``ConstraintExpression``: a disjunction of conjunctions of ``expr in [lo, hi]``.

The tile-size constraints of a symbolic tile and of a whole tiling live in this flat form:
``&`` distributes over ``|``, constraints on the same expression inside one conjunction
intersect, and the two canonical values print ``always satisfied`` and ``unsatisfiable``.

>>> from tensorlayout.indexing import var
>>> c = Constraint.of(var(0), (1, 1)) & Constraint.of(var(1), (0, 7)) | Constraint.of(var(1), (8, 8))
>>> print(c.to_string(2))
d0 in [1, 1] && d1 in [0, 7] || d1 in [8, 8]
>>> c.is_satisfied_by([3, 8]), c.is_satisfied_by([3, 2])
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tensorlayout.indexing import Expr, Interval
from tensorlayout.indexing.expr import Names

__all__ = ["Constraint", "ConstraintExpression"]


@dataclass(frozen=True, slots=True)
class Constraint:
    """One ``expr in [lower, upper]`` (``Constraint`` in XLA); see :meth:`of` for pairs."""

    expr: Expr
    interval: Interval

    @classmethod
    def of(cls, expr: Expr, bounds: Interval | tuple[int, int]) -> Constraint:
        """The constraint ``expr in bounds`` (an Interval or a ``(lo, hi)`` pair)."""
        return cls(expr, Interval.of(bounds))

    def to_string(self, names: Names = None) -> str:
        """``expr in [lo, hi]`` with the variables named by ``names`` (see ``Expr.to_string``)."""
        return f"{self.expr.to_string(names)} in [{self.interval.lower}, {self.interval.upper}]"

    def holds(self, values: Sequence[int]) -> bool:
        """The expression, evaluated at ``values``, lies in the interval."""
        v = self.expr.evaluate(values)
        return self.interval.lower <= v <= self.interval.upper

    def __and__(self, other: Constraint | ConstraintExpression) -> ConstraintExpression:
        return ConstraintExpression.of(self) & other

    def __or__(self, other: Constraint | ConstraintExpression) -> ConstraintExpression:
        return ConstraintExpression.of(self) | other


Conjunction = tuple[Constraint, ...]


def _lift(x: Constraint | ConstraintExpression) -> ConstraintExpression:
    return ConstraintExpression.of(x) if isinstance(x, Constraint) else x


def _conjoin(first: Conjunction, second: Conjunction) -> Conjunction | None:
    """Both conjunctions at once; constraints on one expression intersect (None when empty)."""
    merged = list(first)
    for c in second:
        for i, m in enumerate(merged):
            if m.expr is c.expr:
                iv = m.interval.intersect(c.interval)
                if iv.lower > iv.upper:
                    return None
                merged[i] = Constraint(m.expr, iv)
                break
        else:
            merged.append(c)
    return tuple(merged)


def _constant_verdict(c: Constraint) -> bool | None:
    """True if ``c`` always holds, False if it never does, None if that depends on the values."""
    lo, hi = c.interval
    if lo > hi:
        return False
    if c.expr.is_const:
        return lo <= c.expr.value <= hi
    return None


@dataclass(frozen=True, slots=True)
class ConstraintExpression:
    """XLA's ``ConstraintExpression`` (``&`` and ``|`` are its ``&&`` and ``||``).

    ``conjunctions`` empty and ``is_satisfiable`` means always satisfied; not satisfiable
    means bottom (no conjunctions).

    >>> ConstraintExpression.get_always_satisfied().is_always_satisfied()
    True
    """

    conjunctions: tuple[Conjunction, ...] = ()
    is_satisfiable: bool = True

    @classmethod
    def get_always_satisfied(cls) -> ConstraintExpression:
        """The expression without constraints (prints ``always satisfied``)."""
        return cls((), True)

    @classmethod
    def get_unsatisfiable(cls) -> ConstraintExpression:
        """Bottom (prints ``unsatisfiable``)."""
        return cls((), False)

    @classmethod
    def of(cls, constraint: Constraint) -> ConstraintExpression:
        """The expression holding the single ``constraint``."""
        return cls(((constraint,),), True)

    def is_always_satisfied(self) -> bool:
        """``IsAlwaysSatisfied``: satisfiable and no constraint at all."""
        return self.is_satisfiable and not self.conjunctions

    def __and__(self, other: Constraint | ConstraintExpression) -> ConstraintExpression:
        o = _lift(other)
        if not (self.is_satisfiable and o.is_satisfiable):
            return ConstraintExpression.get_unsatisfiable()
        if self.is_always_satisfied():
            return o
        if o.is_always_satisfied():
            return self
        pairs = [_conjoin(a, b) for a in self.conjunctions for b in o.conjunctions]
        kept = tuple(p for p in pairs if p is not None)
        return ConstraintExpression(kept, True) if kept else ConstraintExpression.get_unsatisfiable()

    def __or__(self, other: Constraint | ConstraintExpression) -> ConstraintExpression:
        o = _lift(other)
        if not self.is_satisfiable:
            return o
        if not o.is_satisfiable:
            return self
        if self.is_always_satisfied() or o.is_always_satisfied():
            return ConstraintExpression.get_always_satisfied()
        return ConstraintExpression(self.conjunctions + o.conjunctions, True)

    def simplify(self) -> ConstraintExpression:
        """``Simplify``: drop constant-true constraints and impossible conjunctions, dedupe.

        A conjunction left empty makes the whole expression always satisfied; none left
        makes it unsatisfiable.
        """
        if self.is_always_satisfied() or not self.is_satisfiable:
            return self
        kept: list[Conjunction] = []
        seen: set[frozenset[Constraint]] = set()
        for conj in self.conjunctions:
            verdicts = [_constant_verdict(c) for c in conj]
            if False in verdicts:
                continue
            rest = tuple(c for c, v in zip(conj, verdicts, strict=True) if v is None)
            if not rest:
                return ConstraintExpression.get_always_satisfied()
            key = frozenset(rest)
            if key not in seen:
                seen.add(key)
                kept.append(rest)
        return ConstraintExpression(tuple(kept), True) if kept else ConstraintExpression.get_unsatisfiable()

    def is_satisfied_by(self, values: Sequence[int]) -> bool:
        """``IsSatisfiedBy``: some conjunction holds entirely at the dimension ``values``."""
        if not self.is_satisfiable:
            return False
        if not self.conjunctions:
            return True
        return any(all(c.holds(values) for c in conj) for conj in self.conjunctions)

    def to_string(self, names: Names = None) -> str:
        """XLA's text: sorted constraints joined by `` && ``, sorted conjunctions by `` || ``."""
        if not self.is_satisfiable:
            return "unsatisfiable"
        if not self.conjunctions:
            return "always satisfied"
        parts = sorted(" && ".join(sorted(c.to_string(names) for c in conj)) for conj in self.conjunctions)
        return " || ".join(parts)

    def __str__(self) -> str:
        return self.to_string()
