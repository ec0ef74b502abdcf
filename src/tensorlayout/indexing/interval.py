"""Closed int64 intervals with saturating arithmetic (XLA's ``Interval``, spec §1.2).

``INT64_MIN`` and ``INT64_MAX`` act as "possibly saturated" sentinels: once an end is
saturated it stays saturated.

>>> Interval(0, 9) + Interval(-10, -1)
Interval(-10, 8)
>>> Interval(0, 9) * Interval(-1, 2)
Interval(-9, 18)
>>> str(Interval(3, 2)), Interval(3, 2).is_feasible
('[3, 2]', False)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import NamedTuple, SupportsIndex

from tensorlayout.core.intmath import INT64_MAX, INT64_MIN
from tensorlayout.errors import IndexingError

__all__ = ["INT64_MAX", "INT64_MIN", "Interval"]



def _clamp(x: int) -> int:
    return INT64_MIN if x < INT64_MIN else INT64_MAX if x > INT64_MAX else x


def _as_interval(x: object) -> Interval:
    """An Interval operand: an Interval, or an integer as a point."""
    if isinstance(x, Interval):
        return x
    if isinstance(x, SupportsIndex):
        v = operator.index(x)
        return Interval(v, v)
    raise IndexingError(f"interval arithmetic needs an Interval or an int, got {type(x).__name__}")


class Interval(NamedTuple):
    """``[lower, upper]`` of int64; feasible iff ``lower <= upper``."""

    lower: int
    upper: int

    @classmethod
    def point(cls, value: int) -> Interval:
        return cls(value, value)

    @classmethod
    def of(cls, bounds: object) -> Interval:
        """An Interval from an Interval or a ``(lower, upper)`` pair of ints."""
        if isinstance(bounds, Interval):
            return bounds
        if not isinstance(bounds, Sequence) or isinstance(bounds, str) or len(bounds) != 2:
            raise IndexingError(f"bounds must be a (lower, upper) pair, got {bounds!r}")
        lo, hi = bounds
        for x in (lo, hi):
            if isinstance(x, bool) or not isinstance(x, int):
                raise IndexingError(f"bounds must be ints, got {bounds!r}")
            if not INT64_MIN <= x <= INT64_MAX:
                raise IndexingError(f"bound {x} does not fit in int64")
        return cls(int(lo), int(hi))

    @property
    def is_feasible(self) -> bool:
        return self.lower <= self.upper

    @property
    def is_point(self) -> bool:
        return self.lower == self.upper

    @property
    def num_elements(self) -> int:
        return max(0, self.upper - self.lower + 1)

    def contains(self, x: int | Interval) -> bool:
        if isinstance(x, Interval):
            return self.lower <= x.lower and x.upper <= self.upper
        return self.lower <= x <= self.upper

    def __contains__(self, x: object) -> bool:
        return isinstance(x, (int, Interval)) and self.contains(x)

    def intersect(self, other: Interval) -> Interval:
        """The intersection; an empty result is normalised to ``upper = lower - 1``."""
        lo, hi = max(self.lower, other.lower), min(self.upper, other.upper)
        return Interval(lo, hi) if lo <= hi else Interval(lo, lo - 1)

    def union(self, other: Interval) -> Interval:
        """The hull of both intervals."""
        return Interval(min(self.lower, other.lower), max(self.upper, other.upper))

    def __str__(self) -> str:
        return f"[{self.lower}, {self.upper}]"

    def __repr__(self) -> str:
        return f"Interval({self.lower}, {self.upper})"

    # Comparisons: True/False when every pair of points agrees, None when it depends ----
    def gt(self, other: Interval) -> bool | None:
        """Is every point greater than every point of ``other``? None if it depends.

        >>> Interval(12, 64).gt(Interval(-10, 11)), Interval(12, 64).gt(Interval(12, 12))
        (True, None)
        """
        if self.lower > other.upper:
            return True
        return False if self.upper <= other.lower else None

    def lt(self, other: Interval) -> bool | None:
        """Is every point less than every point of ``other``? None if it depends."""
        return other.gt(self)

    def ge(self, other: Interval) -> bool | None:
        """Is every point at least every point of ``other``? None if it depends."""
        if self.lower >= other.upper:
            return True
        return False if self.upper < other.lower else None

    def le(self, other: Interval) -> bool | None:
        """Is every point at most every point of ``other``? None if it depends."""
        return other.ge(self)

    def eq(self, other: Interval) -> bool | None:
        """Equal everywhere (both the same point), never (disjoint), or None."""
        if self.is_point and self == other:
            return True
        return False if self.upper < other.lower or other.upper < self.lower else None

    def ne(self, other: Interval) -> bool | None:
        """The negation of :meth:`eq` (None stays None)."""
        same = self.eq(other)
        return None if same is None else not same

    # Arithmetic ------------------------------------------------------------------------
    def __add__(self, other: object) -> Interval:
        o = _as_interval(other)
        lo = INT64_MIN if INT64_MIN in (self.lower, o.lower) else _clamp(self.lower + o.lower)
        hi = INT64_MAX if INT64_MAX in (self.upper, o.upper) else _clamp(self.upper + o.upper)
        return Interval(lo, hi)

    def __neg__(self) -> Interval:
        return Interval(_clamp(-self.upper), _clamp(-self.lower))

    def __sub__(self, other: Interval) -> Interval:
        return self + (-other)

    def __mul__(self, other: object) -> Interval:
        o = _as_interval(other)
        corners = [
            _sat_mul(a, b) for a in (self.lower, self.upper) for b in (o.lower, o.upper)
        ]
        return Interval(min(corners), max(corners))

    def floordiv(self, d: int) -> Interval:
        """``[min, max]`` of the floored quotients of the ends by the constant ``d != 0``."""
        if d == 0:
            raise IndexingError("interval division by zero")
        a, b = self.lower // d, self.upper // d
        return Interval(min(a, b), max(a, b))

    def ceildiv(self, d: int) -> Interval:
        if d == 0:
            raise IndexingError("interval division by zero")
        a, b = -((-self.lower) // d), -((-self.upper) // d)
        return Interval(min(a, b), max(a, b))

    def min(self, other: Interval) -> Interval:
        return Interval(min(self.lower, other.lower), min(self.upper, other.upper))

    def max(self, other: Interval) -> Interval:
        return Interval(max(self.lower, other.lower), max(self.upper, other.upper))


_SAT = (INT64_MIN, INT64_MAX)


def _sat_mul(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    if a in _SAT or b in _SAT:
        return INT64_MAX if (a > 0) == (b > 0) else INT64_MIN
    return _clamp(a * b)
