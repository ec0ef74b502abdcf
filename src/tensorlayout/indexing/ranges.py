"""The range of an expression over a box of variable bounds (XLA's ``RangeEvaluator``, spec §1.4).

>>> from tensorlayout.indexing.expr import var
>>> ev = RangeEvaluator([Interval(0, 9), Interval(-10, -1)])
>>> ev.range(var(0) * 2 + var(1))
Interval(-10, 17)
>>> ev.range(var(0) % 4)
Interval(0, 3)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tensorlayout.core.intmath import INT64_MAX, INT64_MIN
from tensorlayout.errors import IndexingError
from tensorlayout.indexing._guard import guarded
from tensorlayout.indexing.expr import ADD, CEILDIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, VAR, Expr
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_base import IndexingMapBase

__all__ = ["FULL", "RangeEvaluator", "compute_result_ranges"]

FULL = Interval(INT64_MIN, INT64_MAX)


class RangeEvaluator:
    """Bounds of expressions given per-variable bounds and, optionally, constraint intervals.

    With ``constraints``, an expression that is itself a constraint key is intersected with
    that constraint's interval (XLA's ``use_constraints``).
    """

    def __init__(
        self, bounds: Sequence[Interval], constraints: Mapping[Expr, Interval] | None = None
    ) -> None:
        self.bounds = list(bounds)
        self.constraints = constraints
        self._cache: dict[Expr, Interval] = {}

    @classmethod
    def for_map(cls, m: IndexingMapBase, use_constraints: bool = True) -> RangeEvaluator:
        """An evaluator over an :class:`~tensorlayout.indexing.map.IndexingMap`'s domain box."""
        if not isinstance(m, IndexingMapBase):
            raise IndexingError("RangeEvaluator.for_map needs an IndexingMap")
        return cls([v.bounds for v in m.all_vars()], m.constraints if use_constraints else None)

    def is_always_positive_or_zero(self, e: Expr) -> bool:
        """``IsAlwaysPositiveOrZero``: the range of ``e`` has a lower bound >= 0."""
        return self.range(e).lower >= 0

    def is_always_negative_or_zero(self, e: Expr) -> bool:
        """``IsAlwaysNegativeOrZero``: the range of ``e`` has an upper bound <= 0."""
        return self.range(e).upper <= 0

    def compute_expression_range(self, e: Expr) -> Interval:
        """Alias of :meth:`range` with XLA's name."""
        return self.range(e)

    @guarded
    def range(self, e: Expr) -> Interval:
        """The interval of values ``e`` takes over the box (intersected with its constraint)."""
        return self._range(e)

    def _range(self, e: Expr) -> Interval:
        got = self._cache.get(e)
        if got is None:
            got = self._compute(e)
            if self.constraints is not None:
                c = self.constraints.get(e)
                if c is not None:
                    got = got.intersect(c)
            self._cache[e] = got
        return got

    def _compute(self, e: Expr) -> Interval:
        k = e.kind
        if k == CONST:
            return Interval.point(e.value)
        if k == VAR:
            if e.value >= len(self.bounds):
                raise IndexingError(f"variable v{e.value} has no bounds here")
            return self.bounds[e.value]
        assert e.lhs is not None and e.rhs is not None
        a, b = self._range(e.lhs), self._range(e.rhs)
        if k == ADD:
            return a + b
        if k == MUL:
            return a * b
        if k == MIN:
            return a.min(b)
        if k == MAX:
            return a.max(b)
        if k == MOD:
            if b.is_point:
                m = b.lower
                if m > 0:
                    return a if a.lower >= 0 and a.upper < m else Interval(0, m - 1)
                if m < 0:
                    return Interval(0, -m - 1)
                return FULL
            if b.lower > 0:
                return a if a.lower >= 0 and a.upper < b.lower else Interval(0, b.upper - 1)
            return FULL
        if k in (FLOORDIV, CEILDIV):
            if b.is_point and b.lower != 0:
                return a.floordiv(b.lower) if k == FLOORDIV else a.ceildiv(b.lower)
            if b.lower > 0 or b.upper < 0:
                ends = [
                    (x // y if k == FLOORDIV else -((-x) // y))
                    for x in (a.lower, a.upper)
                    for y in (b.lower, b.upper)
                ]
                return Interval(min(ends), max(ends))
            return FULL
        return FULL  # pragma: no cover


def compute_result_ranges(m: IndexingMapBase) -> list[Interval]:
    """The range of every result over the map's domain box, using the constraints.

    >>> from tensorlayout.indexing import IndexingMap
    >>> from tensorlayout.indexing.expr import var
    >>> m = IndexingMap([var(0) // 4], [(0, 99)], constraints=[(var(0), (0, 9))])
    >>> compute_result_ranges(m)
    [Interval(0, 2)]
    """
    ev = RangeEvaluator.for_map(m)
    return [ev.range(r) for r in m.results]
