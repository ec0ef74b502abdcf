"""Check that two indexing maps mean the same thing, by enumeration or sampling.

Two maps over the same variables are equivalent when they have the same feasible points and
the same results at each of them. When the variable counts differ (e.g. after
``remove_unused_symbols``), each dims point is compared by its set of results over all symbols.

>>> from tensorlayout.indexing.map import IndexingMap
>>> a = IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
>>> r = verify_equivalent(a, a.simplify())
>>> r.equivalent, r.exhaustive, r.points_checked
(True, True, 105)
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap

__all__ = ["VerifyResult", "verify_equivalent"]

Outcome = tuple[bool, "tuple[int | None, ...] | None"]


@dataclass(frozen=True)
class VerifyResult:
    """The verdict: ``equivalent``, whether every point was checked, and a counterexample."""

    equivalent: bool
    exhaustive: bool
    points_checked: int
    counterexample: tuple[int, ...] | None = None
    detail: str = ""

    def __bool__(self) -> bool:
        return self.equivalent

    def __str__(self) -> str:
        how = "all" if self.exhaustive else "sampled"
        if self.equivalent:
            return f"equivalent ({how} {self.points_checked} points checked)"
        mode = "enumerating" if self.exhaustive else "sampling"
        where = f"found after {self.points_checked} points, {mode}"
        return f"NOT equivalent at {self.counterexample}: {self.detail} ({where})"


def _at(m: IndexingMap, point: Sequence[int]) -> Outcome:
    """(feasible, results) of ``m`` at a full point (dims then symbols)."""
    n = m.num_dims
    if not m.contains(point[:n], point[n:]):
        return False, None
    return True, tuple(r.safe_evaluate(point) for r in m.results)


def _box(maps: Sequence[IndexingMap], count: int) -> list[Interval]:
    box: list[Interval] = []
    for i in range(count):
        b: Interval | None = None
        for m in maps:
            if i < m.num_vars and m.all_vars()[i].bounds.is_feasible:
                bi = m.all_vars()[i].bounds
                b = bi if b is None else b.union(bi)
        box.append(b if b is not None else Interval(0, -1))
    return box


def _points(
    box: list[Interval], limit: int, samples: int, seed: int
) -> tuple[Iterator[tuple[int, ...]], bool]:
    total = 1
    for b in box:
        total *= b.num_elements
    if total <= limit:
        return itertools.product(*(range(b.lower, b.upper + 1) for b in box)), True
    rng = random.Random(seed)

    def gen() -> Iterator[tuple[int, ...]]:
        corners = [tuple(b.lower for b in box), tuple(b.upper for b in box)]
        yield from (c for c in corners if all(b.num_elements for b in box))
        for _ in range(samples):
            yield tuple(rng.randint(b.lower, b.upper) for b in box)

    return gen(), False


def verify_equivalent(
    a: IndexingMap, b: IndexingMap, *, limit: int = 200_000, samples: int = 20_000, seed: int = 0
) -> VerifyResult:
    """Compare ``a`` and ``b`` on the hull of their domain boxes.

    Up to ``limit`` points the box is enumerated (``exhaustive=True``); beyond it ``samples``
    random points (seeded) are checked and the result says so.
    """
    if not isinstance(a, IndexingMap) or not isinstance(b, IndexingMap):
        raise IndexingError("verify_equivalent expects two IndexingMaps")
    if a.is_undefined or b.is_undefined:
        same = a.is_undefined and b.is_undefined
        return VerifyResult(same, True, 0, None, "" if same else "one map is undefined")
    if a.is_known_empty or b.is_known_empty:
        other = b if a.is_known_empty else a
        if other.is_known_empty:
            return VerifyResult(True, True, 0)
        box = [v.bounds for v in other.all_vars()]
        points, exhaustive = _points(box, limit, samples, seed)
        checked = 0
        for p in points:
            checked += 1
            if _at(other, p)[0]:
                return VerifyResult(False, exhaustive, checked, p, "only one map has feasible points")
        return VerifyResult(True, exhaustive, checked)
    if a.num_dims != b.num_dims or a.num_results != b.num_results:
        return VerifyResult(False, True, 0, None,
                            f"shapes differ: {a.num_dims}->{a.num_results} vs {b.num_dims}->{b.num_results}")
    if a.num_symbols == b.num_symbols:
        return _pointwise(a, b, limit, samples, seed)
    return _by_dims(a, b, limit, samples, seed)


def _pointwise(a: IndexingMap, b: IndexingMap, limit: int, samples: int, seed: int) -> VerifyResult:
    box = _box([a, b], a.num_vars)
    points, exhaustive = _points(box, limit, samples, seed)
    checked = 0
    for p in points:
        checked += 1
        fa, ra = _at(a, p)
        fb, rb = _at(b, p)
        if fa != fb:
            which = "first" if fa else "second"
            return VerifyResult(False, exhaustive, checked, p, f"only the {which} map contains the point")
        if fa and ra != rb:
            return VerifyResult(False, exhaustive, checked, p, f"results differ: {ra} vs {rb}")
    return VerifyResult(True, exhaustive, checked)


def _results_by_dims(m: IndexingMap, dims: tuple[int, ...], limit: int) -> set[tuple[int | None, ...]] | None:
    sym_box = [v.bounds for v in (*m.range_vars, *m.rt_vars)]
    total = 1
    for s in sym_box:
        total *= s.num_elements
    if total > limit:
        return None
    out = set()
    for syms in itertools.product(*(range(s.lower, s.upper + 1) for s in sym_box)):
        feasible, res = _at(m, dims + syms)
        if feasible:
            assert res is not None
            out.add(res)
    return out


def _by_dims(a: IndexingMap, b: IndexingMap, limit: int, samples: int, seed: int) -> VerifyResult:
    box = _box([a, b], a.num_dims)
    points, exhaustive = _points(box, max(1, limit // 64), max(1, samples // 64), seed)
    checked = 0
    for p in points:
        checked += 1
        sa, sb = _results_by_dims(a, p, limit), _results_by_dims(b, p, limit)
        if sa is None or sb is None:
            raise IndexingError("too many symbol values to compare maps with different symbols")
        if sa != sb:
            return VerifyResult(False, exhaustive, checked, p,
                                f"result sets differ: {sorted(sa, key=str)} vs {sorted(sb, key=str)}")
    return VerifyResult(True, exhaustive, checked)
