"""Check that two indexing maps mean the same thing, by enumeration or sampling.

Two maps over the same variables are equivalent when they have the same feasible points and
the same results at each of them. When the symbol counts differ (e.g. after
``remove_unused_symbols``), each dims point is compared by its set of results over all symbols.
Boxes of up to ``limit`` points are enumerated; larger ones are sampled, and the result says
so (``exhaustive=False``, with the box size and the limit).

>>> from tensorlayout.indexing.map import IndexingMap
>>> a = IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
>>> r = verify_equivalent(a, a.simplify())
>>> r.equivalent, r.exhaustive, r.points_checked
(True, True, 105)
>>> b = IndexingMap.parse("(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 15]")
>>> print(verify_equivalent(a, b))
NOT equivalent at (0, 15): only the second map contains the point (found after 16 points, enumerating)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tensorlayout.core.intmath import show_int
from tensorlayout.errors import IndexingError
from tensorlayout.indexing._guard import guarded
from tensorlayout.indexing.evaluate import columns, evaluate_columns
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap

__all__ = ["VerifyResult", "verify_equivalent"]

#: Boxes of at most this many points are scanned in numpy chunks of CHUNK points; it is also
#: the most points any scan enumerates: a ``limit`` that asks to enumerate a larger box is an
#: IndexingError naming the box's size (sampling needs a smaller ``limit``).
BATCHED_LIMIT = 1 << 40
CHUNK = 1 << 16

Outcome = tuple[bool, "tuple[int | None, ...] | None"]


@dataclass(frozen=True)
class VerifyResult:
    """The verdict: ``equivalent``, whether every point was checked, and a counterexample.

    ``counterexample`` is a point (dims then symbols; dims only when the symbol counts
    differ) where the maps disagree; ``box_size`` is the number of points in the compared box
    and ``limit`` the enumeration limit above which points were sampled.
    """

    equivalent: bool
    exhaustive: bool
    points_checked: int
    counterexample: tuple[int, ...] | None = None
    detail: str = ""
    box_size: int = 0
    limit: int = 0

    def __bool__(self) -> bool:
        return self.equivalent

    def __str__(self) -> str:
        sampled = f"the box of {show_int(self.box_size)} points exceeds the limit of {show_int(self.limit)}"
        if self.equivalent:
            if self.exhaustive:
                return f"equivalent (all {self.points_checked} points checked)"
            return f"equivalent ({self.points_checked} random points checked: {sampled})"
        how = "enumerating" if self.exhaustive else f"sampling: {sampled}"
        found = f"found after {self.points_checked} points, {how}"
        return f"NOT equivalent at {self.counterexample}: {self.detail} ({found})"


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


def _size(box: Sequence[Interval]) -> int:
    total = 1
    for b in box:
        total *= b.num_elements
    return total


def _odometer(box: list[Interval]) -> Iterator[tuple[int, ...]]:
    """The box's points in ``itertools.product`` order, holding one point at a time (product
    would first copy every range: a 2**40-point dimension is a MemoryError).

    >>> list(_odometer([Interval(0, 1), Interval(5, 6)]))
    [(0, 5), (0, 6), (1, 5), (1, 6)]
    """
    if any(b.num_elements == 0 for b in box):
        return
    point = [b.lower for b in box]
    while True:
        yield tuple(point)
        k = len(point) - 1
        while k >= 0 and point[k] == box[k].upper:
            point[k] = box[k].lower
            k -= 1
        if k < 0:
            return
        point[k] += 1


def _points(
    box: list[Interval], limit: int, samples: int, seed: int
) -> tuple[Iterator[tuple[int, ...]], bool]:
    size = _size(box)
    if size <= limit:
        if size > BATCHED_LIMIT:
            raise IndexingError(f"verify: enumerating {size} points is past the {BATCHED_LIMIT} it "
                                f"enumerates at most; a limit below the box's size samples it")
        return _odometer(box), True
    rng = random.Random(seed)

    def gen() -> Iterator[tuple[int, ...]]:
        corners = [tuple(b.lower for b in box), tuple(b.upper for b in box)]
        yield from (c for c in corners if all(b.num_elements for b in box))
        for _ in range(min(samples, _size(box))):
            yield tuple(rng.randint(b.lower, b.upper) for b in box)

    return gen(), False


def _scan(box: list[Interval], limit: int, samples: int, seed: int,
          check: Callable[[tuple[int, ...]], str]) -> VerifyResult:
    """Run ``check`` (an empty string means "agree") over the box's points."""
    points, exhaustive = _points(box, limit, samples, seed)
    size, checked = _size(box), 0
    for p in points:
        checked += 1
        problem = check(p)
        if problem:
            return VerifyResult(False, exhaustive, checked, p, problem, size, limit)
    return VerifyResult(True, exhaustive, checked, None, "", size, limit)


@guarded
def verify_equivalent(
    a: IndexingMap, b: IndexingMap, *, limit: int = 200_000, samples: int = 20_000, seed: int = 0
) -> VerifyResult:
    """Compare ``a`` and ``b`` on the hull of their domain boxes; return a counterexample if they differ.

    Up to ``limit`` points the box is enumerated (``exhaustive=True``); beyond it ``samples``
    random points (seeded, plus the two corners) are checked and the result says so. Maps with
    different symbol counts are compared per dims point by their sets of results.
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
        which = "first" if other is a else "second"
        return _scan([v.bounds for v in other.all_vars()], limit, samples, seed,
                     lambda p: f"only the {which} map has feasible points" if _at(other, p)[0] else "")
    if a.num_dims != b.num_dims or a.num_results != b.num_results:
        return VerifyResult(False, True, 0, None,
                            f"shapes differ: {a.num_dims}->{a.num_results} vs {b.num_dims}->{b.num_results}")
    if a.num_symbols == b.num_symbols:
        box = _box([a, b], a.num_vars)
        if _size(box) <= min(limit, BATCHED_LIMIT):
            return _scan_batched(a, b, box, limit)
        return _scan(box, limit, samples, seed, lambda p: _compare_at(a, b, p))
    per_point = max(_size([v.bounds for v in (*m.range_vars, *m.rt_vars)]) for m in (a, b))
    budget = max(1, per_point)  # each dims point enumerates its symbols: at most ~8x limit in all
    return _scan(_box([a, b], a.num_dims), max(1, 8 * limit // budget), max(1, 8 * samples // budget), seed,
                 lambda p: _compare_sets(a, b, p, limit))


def _feasible(m: IndexingMap, cols: list[np.ndarray]) -> np.ndarray:
    """Per point: inside ``m``'s variable bounds and satisfying its constraints."""
    ok = np.ones(len(cols[0]) if cols else 1, dtype=bool)
    for v, c in zip(m.all_vars(), cols):
        ok &= (c >= v.bounds.lower) & (c <= v.bounds.upper)
    for e, iv in m.constraints.items():
        value, undefined = evaluate_columns(e, cols, safe=True)
        ok &= ~undefined & (value >= iv.lower) & (value <= iv.upper)
    return ok


def _differs(a: IndexingMap, b: IndexingMap, cols: list[np.ndarray]) -> np.ndarray:
    """Per point: the maps disagree (feasibility, or a result, undefined ones included)."""
    fa, fb = _feasible(a, cols), _feasible(b, cols)
    bad = fa != fb
    for ra, rb in zip(a.results, b.results):
        va, ua = evaluate_columns(ra, cols, safe=True)
        vb, ub = evaluate_columns(rb, cols, safe=True)
        bad |= fa & fb & ((ua != ub) | (~ua & (va != vb)))
    return bad


def _scan_batched(a: IndexingMap, b: IndexingMap, box: list[Interval], limit: int) -> VerifyResult:
    """The exhaustive scan of :func:`_compare_at` over the box, a chunk of points at a time
    (same order, same counterexample and message)."""
    size = _size(box)
    extents, lows = [bx.num_elements for bx in box], np.array([bx.lower for bx in box], dtype=object)
    for start in range(0, size, CHUNK):
        flat = np.arange(start, min(size, start + CHUNK), dtype=np.int64)
        pts = np.stack(np.unravel_index(flat, extents), axis=1).astype(object) + lows if extents else \
            np.zeros((len(flat), 0), dtype=object)
        bad = np.flatnonzero(_differs(a, b, columns(pts)))
        if len(bad):
            p = tuple(int(x) for x in pts[bad[0]])
            detail = _compare_at(a, b, p)
            assert detail, f"the batched and pointwise checks disagree at {p}"
            return VerifyResult(False, True, start + int(bad[0]) + 1, p, detail, size, limit)
    return VerifyResult(True, True, size, None, "", size, limit)


def _compare_at(a: IndexingMap, b: IndexingMap, p: tuple[int, ...]) -> str:
    fa, ra = _at(a, p)
    fb, rb = _at(b, p)
    if fa != fb:
        return f"only the {'first' if fa else 'second'} map contains the point"
    return f"results differ: {ra} vs {rb}" if fa and ra != rb else ""


def _results_by_dims(m: IndexingMap, dims: tuple[int, ...], limit: int) -> set[tuple[int | None, ...]]:
    sym_box = [v.bounds for v in (*m.range_vars, *m.rt_vars)]
    if _size(sym_box) > limit:
        raise IndexingError(f"too many symbol values ({_size(sym_box)} > limit {limit}) to compare maps "
                            "with different symbols; raise the limit or remove unused symbols first")
    if not sym_box:
        feasible, res = _at(m, dims)
        return {res} if feasible and res is not None else set()
    extents = [s.num_elements for s in sym_box]
    if 0 in extents:
        return set()
    syms = np.stack(np.unravel_index(np.arange(_size(sym_box)), extents), axis=1).astype(object)
    pts = np.concatenate([np.tile(np.array(dims, dtype=object), (len(syms), 1)),
                          syms + np.array([s.lower for s in sym_box], dtype=object)], axis=1)
    cols = columns(pts)
    keep = _feasible(m, cols)
    values = []
    for r in m.results:
        v, undefined = evaluate_columns(r, cols, safe=True)
        v = np.array(v, dtype=object)  # a writable copy: undefined results read as None
        v[undefined] = None
        values.append(v[keep])
    return set(zip(*values)) if values else ({()} if keep.any() else set())


def _compare_sets(a: IndexingMap, b: IndexingMap, p: tuple[int, ...], limit: int) -> str:
    sa, sb = _results_by_dims(a, p, limit), _results_by_dims(b, p, limit)
    if sa == sb:
        return ""
    return f"result sets differ: {sorted(sa, key=str)} vs {sorted(sb, key=str)}"
