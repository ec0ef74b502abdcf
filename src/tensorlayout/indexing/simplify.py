"""XLA's range-aware simplifier for expressions and indexing maps (spec §3.1–§3.4).

>>> from tensorlayout.indexing.map import IndexingMap
>>> m = IndexingMap.parse("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
>>> print(m.simplify())
(d0) -> (d0 - 42), domain: d0 in [53, 71]
"""

from __future__ import annotations

from typing import cast

from tensorlayout.core.intmath import INT64_MAX, INT64_MIN
from tensorlayout.errors import IndexingError
from tensorlayout.indexing._guard import guarded
from tensorlayout.indexing.canonical import _canon as canonicalize
from tensorlayout.indexing.canonical import clear_cache, const_rhs, split_sum_by_gcd, summands
from tensorlayout.indexing.expr import (
    ADD,
    CEILDIV,
    FLOORDIV,
    MOD,
    MUL,
    Expr,
    clear_memos,
    const,
    make,
    out_of_int64,
)
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_base import IndexingMapBase, M, SimplifyMode, SimplifyPointDimensions, _State
from tensorlayout.indexing.ranges import RangeEvaluator
from tensorlayout.indexing.rules import rewrite_once
from tensorlayout.indexing.transforms import merge_mod_constraints

__all__ = [
    "ExprSimplifier",
    "SimplifyPointDimensions",
    "cached_simplification",
    "clear_caches",
    "is_partial",
    "simplify",
    "simplify_with_status",
]

_MAX_ROUNDS = 64


class ExprSimplifier:
    """``SimplifyExpr``: canonicalize, apply one range-aware rewrite pass, repeat to a fixed point.

    ``replace=True`` (XLA's kReplace) turns any expression whose range is one point into that
    constant; ``replace=False`` (kPreserve) keeps it. The rewrites are the named rules of
    :mod:`tensorlayout.indexing.rules`; pass a list as ``fired`` to record the rules that applied.
    """

    def __init__(self, evaluator: RangeEvaluator, replace: bool = True,
                 fired: list[str] | None = None) -> None:
        self.ev = evaluator
        self.range = evaluator._range  # the unguarded recursion; simplify() is guarded
        self.replace = replace
        self.fired = fired
        self._once: dict[Expr, Expr] = {}
        self._full: dict[Expr, Expr] = {}

    @guarded
    def simplify(self, e: Expr) -> Expr:
        """``SimplifyExpr``: the fixed point of canonicalize + one rewrite pass.

        >>> from tensorlayout.indexing.expr import var
        >>> ExprSimplifier(RangeEvaluator([Interval(0, 15)])).simplify(var(0) // 16)
        Expr('0')
        """
        got = self._full.get(e)
        if got is not None:
            return got
        x = e
        for _ in range(_MAX_ROUNDS):
            c = canonicalize(x)
            s = self.once(c)
            if s is c:
                break
            x = s
        else:
            c = canonicalize(x)
        self._full[e] = c
        self._full[c] = c
        return c

    def once(self, e: Expr) -> Expr:
        """XLA's ``SimplifyOnce`` (memoised): :func:`~tensorlayout.indexing.rules.rewrite_once`."""
        got = self._once.get(e)
        if got is None:
            got = rewrite_once(self, e)
            self._once[e] = got
        return got


# ---- map-level simplification ----------------------------------------------------------
# Constraint rules (spec §3.1 step 1b): each moves arithmetic from a constraint's expression
# into its interval, ``(e, [lo, hi]) -> (e', [lo', hi'])``, or returns None.
Constraint = tuple[Expr, Interval]


def constraint_add_constant(expr: Expr, iv: Interval, ev: RangeEvaluator, exact: bool) -> Constraint | None:
    """``e + c in [lo, hi] -> e in [lo - c, hi - c]`` (``c`` the point range of the right summand)."""
    if expr.kind != ADD:
        return None
    assert expr.lhs is not None and expr.rhs is not None
    rr = ev.range(expr.rhs)
    return (expr.lhs, Interval(iv.lower - rr.lower, iv.upper - rr.lower)) if rr.is_point else None


def constraint_drop_remainder(expr: Expr, iv: Interval, ev: RangeEvaluator, exact: bool) -> Constraint | None:
    """``a*g + b in [0, hi] -> a*g in [0, hi] when (hi - b) floordiv g is one value over b's range``.

    XLA drops ``b`` without checking its sign, which is unsound for ``b < 0`` or ``b >= g``
    (``b = d0 / -7`` in ``[-1, 0]``: ``0 <= s0*2 - 1`` fails at ``s0 = 0``); ``exact`` also
    needs ``b`` in ``[0, g-1]`` and ``(hi - b) / g == hi / g``.
    """
    if expr.kind != ADD or iv.lower != 0:
        return None
    hi = iv.upper
    a, g, b = split_sum_by_gcd(summands(expr))
    if g <= 1:
        return None
    rb = ev.range(b)
    q = (Interval(hi, hi) - rb).floordiv(g)
    if q.is_point and (not exact or (rb.lower >= 0 and rb.upper < g and q.lower == hi // g)):
        new = make(MUL, a, const(g))
        return None if new is expr else (new, Interval(0, hi))
    return None


def constraint_mul(expr: Expr, iv: Interval, ev: RangeEvaluator, exact: bool) -> Constraint | None:
    """``e * c in [lo, hi] -> e in [ceil(lo/c), floor(hi/c)]`` (``c != 0``; negating first if ``c < 0``)."""
    c = const_rhs(expr) if expr.kind == MUL else None
    if c is None or c == 0:
        return None
    assert expr.lhs is not None
    lo, hi = iv
    if c < 0:
        c, lo, hi = -c, -hi, -lo
    return expr.lhs, Interval(-((-lo) // c), hi // c)


def constraint_floordiv(expr: Expr, iv: Interval, ev: RangeEvaluator, exact: bool) -> Constraint | None:
    """``e floordiv c in [lo, hi] -> e in [lo*c, (hi+1)*c - 1]`` for ``c > 0``.

    For ``c < 0`` XLA treats ``e / c`` as ``-(e / -c)``: unsound (spec §7 item 13), kept for
    parity; ``exact`` uses ``floor(e / c) in [lo, hi] <=> e in [(hi+1)*c + 1, lo*c]``.
    """
    c = const_rhs(expr) if expr.kind == FLOORDIV else None
    if c is None or c == 0:
        return None
    assert expr.lhs is not None
    lo, hi = iv
    if c > 0:
        return expr.lhs, Interval(lo * c, (hi + 1) * c - 1)
    if exact:
        return expr.lhs, Interval((hi + 1) * c + 1, lo * c)
    return expr.lhs, Interval(-hi * -c, (-lo + 1) * -c - 1)


CONSTRAINT_RULES = (constraint_add_constant, constraint_drop_remainder, constraint_mul, constraint_floordiv)


def _constraint_range_step(expr: Expr, iv: Interval, ev: RangeEvaluator, exact: bool) -> Constraint | None:
    """The first rule of :data:`CONSTRAINT_RULES` that applies, or None."""
    for rule in CONSTRAINT_RULES:
        out = rule(expr, iv, ev, exact)
        if out is not None:
            return out
    return None


def _replace_constraints(state: _State[M], to_remove: list[Expr],
                         to_add: list[tuple[Expr, Interval]]) -> None:
    for e in to_remove:
        state.constraints.pop(e, None)
    for e, iv in to_add:
        state.add_constraint(e, iv)


def is_partial(e: Expr, ev: RangeEvaluator) -> bool:
    """True if ``e`` may have no value somewhere in the box: a ``mod`` by a divisor that can be
    ``<= 0``, a division by one that can be 0, or a value that may leave int64 (``SafeEvaluate``
    is None there, so a constraint on ``e`` excludes those points; XLA's rewrites, e.g.
    ``x mod 0 -> 0``, would let them in).

    >>> from tensorlayout.indexing.expr import var
    >>> ev = RangeEvaluator([Interval(0, 7)])
    >>> is_partial(var(0) % 4, ev), is_partial((var(0) + 1) % -2, ev), is_partial(var(0) // var(0), ev)
    (False, True, True)
    >>> is_partial(var(0) * 2 - 2**63, ev)
    True
    """
    for x in e.walk():
        r = ev.range(x)
        if r.lower == INT64_MIN or r.upper == INT64_MAX:  # saturated: may overflow
            return True
        if x.kind in (MOD, FLOORDIV, CEILDIV):
            assert x.rhs is not None
            d = ev.range(x.rhs)
            if d.lower <= 0 and (x.kind == MOD or d.upper >= 0):
                return True
    return False


def _fits(e: Expr, iv: Interval) -> bool:
    """True if a rewritten constraint stays in int64 (folding ``x*2**62 + x*2**62`` would not).

    XLA computes in int64 and would overflow; an out-of-range rewrite is not made instead.
    """
    return out_of_int64(e) is None and min(iv) >= INT64_MIN and max(iv) <= INT64_MAX


def _simplify_result(simp: ExprSimplifier, r: Expr, exact: bool, box: RangeEvaluator) -> Expr:
    """The simplified result, or ``r`` itself if exact and partial, or if simplifying leaves int64."""
    if exact and is_partial(r, box):
        return r
    s = simp.simplify(r)
    return r if out_of_int64(s) is not None else s


def _simplify_constraint_exprs(state: _State[M], exact: bool = False) -> bool:
    """Simplify every constraint expression; drop the always-true ones. True if any was rewritten.

    ``exact`` leaves constraints on partial expressions (:func:`is_partial`) as they are.
    """
    ev = RangeEvaluator(state.bounds())
    simp = ExprSimplifier(ev, replace=True)
    to_remove: list[Expr] = []
    to_add: list[tuple[Expr, Interval]] = []
    for expr, iv in state.constraints.items():
        if exact and is_partial(expr, ev):
            continue
        s = simp.simplify(expr)
        if not _fits(s, iv):
            continue
        if iv.contains(ev.range(s)):
            to_remove.append(expr)  # always satisfied; not counted as a change (XLA)
        elif s is not expr:
            to_remove.append(expr)
            to_add.append((s, iv))
    _replace_constraints(state, to_remove, to_add)
    return bool(to_add)


def _simplify_constraint_ranges(state: _State[M], exact: bool) -> bool:
    """Apply :func:`_constraint_range_step` to every constraint until none applies. True if any did."""
    ev = RangeEvaluator(state.bounds())
    to_remove: list[Expr] = []
    to_add: list[tuple[Expr, Interval]] = []
    for expr, iv in state.constraints.items():
        if exact and is_partial(expr, ev):
            continue
        e, i = expr, iv
        for _ in range(_MAX_ROUNDS):
            step = _constraint_range_step(e, i, ev, exact)
            if step is None:
                break
            e, i = step
        if (e is not expr or i != iv) and _fits(e, i):
            to_remove.append(expr)
            to_add.append((e, i))
    _replace_constraints(state, to_remove, to_add)
    return bool(to_add)


_MODES = {"replace": True, "preserve": False, SimplifyPointDimensions.REPLACE: True,
          SimplifyPointDimensions.PRESERVE: False, "kReplace": True, "kPreserve": False}


def _normalize_mode(mode: SimplifyMode) -> bool:
    """True for XLA's kReplace, False for kPreserve."""
    replace = _MODES.get(mode) if isinstance(mode, str) else None
    if replace is None:
        raise IndexingError(f"simplify mode must be 'replace' or 'preserve', not {mode!r}")
    return replace


@guarded
def _compute(m: M, replace: bool, exact: bool) -> tuple[M, bool, bool]:
    """``(simplified map, changed, stable)``; ``stable``: simplifying the result changes nothing.

    The constraint loop runs to a fixed point and results are fixed points of the expression
    simplifier, so a second pass can only differ if MergeModConstraints changed something
    (its tighter bounds can make a constraint always true, to be dropped next time).
    """
    state = m._state()
    changed = False
    converged = True
    for _ in range(_MAX_ROUNDS if state.constraints else 0):
        if state.known_empty:
            break
        did = _simplify_constraint_exprs(state, exact)
        did |= not state.known_empty and _simplify_constraint_ranges(state, exact)
        if not did:
            break
        changed = True
    else:
        converged = not state.constraints
    merged = False
    if state.constraints and not state.known_empty:
        merged = merge_mod_constraints(state, exact)
    if not state.known_empty:
        ev = RangeEvaluator(state.bounds(), state.constraints)
        simp = ExprSimplifier(ev, replace=replace)
        box = RangeEvaluator(state.bounds())
        state.results = [_simplify_result(simp, r, exact, box) for r in state.results]
    out = state.freeze()
    changed |= merged or out.results != m.results
    stable = (converged and not merged) or out.is_known_empty
    if not changed and out == m:
        return m, False, stable
    return out, changed, stable


# Results by class and structure (interned expressions make the key cheap), so simplifying an
# equal map again, e.g. one parsed from the printed output, is a dictionary lookup.
_CACHE: dict[tuple[object, ...], tuple[IndexingMapBase, bool]] = {}
_CACHE_LIMIT = 1 << 15


def clear_caches() -> None:
    """Forget memoised simplifications, canonical forms and variable sets (results are unaffected,
    only speed); the intern table then holds only the expressions still in use."""
    _CACHE.clear()
    clear_cache()
    clear_memos()


def _simplify(m: M, replace: bool, exact: bool) -> tuple[M, bool]:
    if not isinstance(m, IndexingMapBase):
        raise IndexingError(f"simplify expects an IndexingMap, got {type(m).__name__}")
    if m.is_undefined or m.is_known_empty:
        return m, False
    key = (type(m), m.structural_key(), replace, exact)
    hit = _CACHE.get(key)
    if hit is not None:
        return cast("tuple[M, bool]", hit)  # the key holds the class
    out, changed, stable = _compute(m, replace, exact)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = (out, changed)
    if stable:  # simplifying ``out`` again would give ``out`` back, unchanged
        _CACHE.setdefault((type(out), out.structural_key(), replace, exact), (out, False))
    return out, changed


def cached_simplification(m: M, mode: SimplifyMode = "replace", *,
                          exact: bool = False) -> M | None:
    """``simplify(m, mode, exact=exact)`` if it is already memoised, else None (never computes).

    A map that ``simplify`` returned and found stable is memoised as its own simplification.

    >>> from tensorlayout.indexing import IndexingMap
    >>> m = IndexingMap.parse("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
    >>> s = simplify(m)
    >>> cached_simplification(s) is s
    True
    """
    hit = _CACHE.get((type(m), m.structural_key(), _normalize_mode(mode), exact))
    return None if hit is None else cast(M, hit[0])  # the key holds the class


def simplify_with_status(
    m: M, mode: SimplifyMode = "replace", *, exact: bool = False
) -> tuple[M, bool]:
    """XLA's ``Simplify(mode)``: the new map and XLA's return value (did anything change).

    ``mode`` is ``"replace"`` (default; expressions whose range is one point, such as a dim
    with domain ``[5, 5]``, become constants) or ``"preserve"`` (reshape/bitcast maps keep
    them). Dropping an always-true constraint alone does not count as a change, as in XLA.

    Exactness: by default three constraint rewrites match XLA even where XLA is unsound, for
    parity: ``e / c in [lo, hi]`` with ``c < 0`` is solved as if ``e / c`` were ``-(e / -c)``
    (spec §7 item 13: ``s0 / -3 in [-11, -5]`` gives ``s0 in [15, 35]``, not ``[13, 33]``);
    ``A*g + B in [0, hi]`` becomes ``A*g in [0, hi]`` without checking that ``B`` is in
    ``[0, g-1]``; and MergeModConstraints snaps a variable's bounds to its residue with C++
    truncating division, which can drop valid negative values (§3.4). ``exact=True`` (CLI
    ``--exact``) gives the exact result in all three cases.

    >>> from tensorlayout.indexing import IndexingMap
    >>> m = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [-99, 99], s0 / -3 in [-11, -5]")
    >>> print(m.simplify().range_vars[0].bounds, m.simplify(exact=True).range_vars[0].bounds)
    [15, 35] [13, 33]
    """
    return _simplify(m, _normalize_mode(mode), exact)


def simplify(
    m: M, mode: SimplifyMode = "replace", *, exact: bool = False
) -> M:
    """The simplified map (cached); see :func:`simplify_with_status` for ``mode`` and ``exact``.

    >>> from tensorlayout.indexing import IndexingMap
    >>> m = IndexingMap.parse("(d0, d1) -> ((d0 mod 8) * 128 + d1 + (d0 / 8) * 1024), "
    ...                       "domain: d0 in [0, 1023], d1 in [0, 127]")
    >>> print(m.simplify())
    (d0, d1) -> (d0 * 128 + d1), domain: d0 in [0, 1023], d1 in [0, 127]
    """
    return _simplify(m, _normalize_mode(mode), exact)[0]
