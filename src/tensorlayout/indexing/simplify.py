"""XLA's range-aware simplifier for expressions and indexing maps (spec §3.1–§3.4).

>>> from tensorlayout.indexing.map import IndexingMap
>>> m = IndexingMap.parse("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
>>> print(m.simplify())
(d0) -> (d0 - 42), domain: d0 in [53, 71]
"""

from __future__ import annotations

from math import gcd

from tensorlayout.errors import IndexingError
from tensorlayout.indexing._guard import guarded
from tensorlayout.indexing.canonical import _canon as canonicalize
from tensorlayout.indexing.canonical import (
    build_sum,
    clear_cache,
    const_rhs,
    split_multiplier,
    split_sum_by_gcd,
    summands,
)
from tensorlayout.indexing.expr import ADD, CONST, FLOORDIV, MAX, MIN, MOD, MUL, Expr, const, make
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap, SimplifyMode, SimplifyPointDimensions, _State
from tensorlayout.indexing.ranges import RangeEvaluator
from tensorlayout.indexing.transforms import merge_mod_constraints

__all__ = [
    "ExprSimplifier",
    "SimplifyPointDimensions",
    "cached_simplification",
    "clear_caches",
    "simplify",
    "simplify_with_status",
]

_MAX_ROUNDS = 64


class ExprSimplifier:
    """``SimplifyExpr``: canonicalize, apply one range-aware rewrite pass, repeat to a fixed point.

    ``replace=True`` (XLA's kReplace) turns any expression whose range is one point into that
    constant; ``replace=False`` (kPreserve) keeps it.
    """

    def __init__(self, evaluator: RangeEvaluator, replace: bool = True) -> None:
        self.ev = evaluator
        self._range = evaluator._range  # the unguarded recursion; simplify() is guarded
        self.replace = replace
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
        got = self._once.get(e)
        if got is None:
            got = self._rewrite(e)
            self._once[e] = got
        return got

    def _rewrite(self, e: Expr) -> Expr:
        if e.kind == CONST:
            return e
        if self.replace:
            r = self._range(e)
            if r.is_point:
                return const(r.lower)
        if e.kind == MUL:
            return self._mul(e)
        if e.kind == ADD:
            return self._sum(e)
        if e.kind == MOD:
            return self._mod(e)
        if e.kind == FLOORDIV:
            return self._floordiv(e)
        if e.kind in (MIN, MAX):
            return self._minmax(e)
        return e

    def _point(self, e: Expr) -> int | None:
        r = self._range(e)
        return r.lower if r.is_point else None

    # x * c
    def _mul(self, e: Expr) -> Expr:
        assert e.lhs is not None and e.rhs is not None
        c = self._point(e.rhs)
        if c is None:
            return make(MUL, self.once(e.lhs), self.once(e.rhs))
        x = self.once(e.lhs)
        if c == 1:
            return x
        if x.kind == ADD:
            out = None
            for t in summands(x):
                term = make(MUL, t, const(c))
                out = term if out is None else make(ADD, out, term)
            assert out is not None
            return out
        return make(MUL, x, const(c))

    # RewriteSum
    def _sum(self, e: Expr) -> Expr:
        flat: list[Expr] = []
        for t in summands(e):
            flat.extend(summands(self.once(t)))
        terms = [split_multiplier(t) if t.kind != CONST else (t, 1) for t in flat]
        mods = [i for i, (b, _) in enumerate(terms) if b.kind == MOD and const_rhs(b) is not None]
        divs = [i for i, (b, _) in enumerate(terms) if b.kind == FLOORDIV and const_rhs(b) is not None]
        removed: set[int] = set()
        extra: list[Expr] = []
        for i in mods:
            base, k = terms[i]
            assert base.lhs is not None
            c = const_rhs(base)
            assert c is not None
            x = base.lhs
            want = {make(FLOORDIV, x, const(c))}
            for j in divs:
                if j in removed or terms[j][1] != c * k:
                    continue
                if len(want) == 1:
                    want.add(self.simplify(make(FLOORDIV, x, const(c))))
                if terms[j][0] in want:
                    removed.update((i, j))
                    extra.append(make(MUL, x, const(k)))
                    break
        for j in divs:
            if j in removed:
                continue
            base, m = terms[j]
            c = const_rhs(base)
            assert c is not None and base.lhs is not None
            if m <= 0 and c > 0 and m % c == 0:
                b = m // c
                y = base.lhs
                removed.add(j)
                extra.extend(make(MUL, t, const(b)) for t in summands(y))
                extra.append(make(MUL, make(MOD, y, const(c)), const(-b)))
        if not removed:
            rebuilt = build_sum(flat)
            return e if rebuilt is e else rebuilt
        kept = [flat[i] for i in range(len(flat)) if i not in removed]
        return build_sum(kept + extra)

    # min(a, b) -> a when a <= b everywhere (max picks the other side)
    def _minmax(self, e: Expr) -> Expr:
        assert e.lhs is not None and e.rhs is not None
        a, b = self.once(e.lhs), self.once(e.rhs)
        ra, rb = self._range(a), self._range(b)
        if ra.upper <= rb.lower:
            return a if e.kind == MIN else b
        if rb.upper <= ra.lower:
            return b if e.kind == MIN else a
        return make(e.kind, a, b)

    # RewriteMod
    def _mod(self, e: Expr) -> Expr:
        assert e.lhs is not None and e.rhs is not None
        m = self._point(e.rhs)
        if m is None:
            return make(MOD, self.once(e.lhs), self.once(e.rhs))
        if m == 0:
            return const(0)
        x = self.once(e.lhs)
        if m < 0:
            return make(MOD, x, const(m))
        r = self._range(x)
        off = -(r.lower // m) * m
        if r.upper + off < m:
            return make(ADD, x, const(off))
        if x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
            k = x.rhs.value
            assert x.lhs is not None
            if k > 0 and m % k == 0:
                return make(MUL, make(MOD, x.lhs, const(m // k)), const(k))
        terms: list[Expr] = []
        constant = 0
        for t in summands(x):
            if t.kind == CONST:
                constant += t.value
                continue
            _, k = split_multiplier(t)
            if k % m != 0:
                terms.append(t)
        constant %= m
        a, g, b = split_sum_by_gcd(terms)
        if constant:
            b = make(ADD, b, const(constant)) if not (b.kind == CONST and b.value == 0) else const(constant)
        if g > 1 and m % g == 0:
            rb = self._range(b)
            if rb == Interval(0, 0):
                return make(MUL, make(MOD, a, const(m // g)), const(g))
            if rb.lower >= 0 and rb.upper <= g - 1:
                return make(ADD, make(MOD, make(MUL, a, const(g)), const(m)), b)
        rebuilt = build_sum(terms + ([const(constant)] if constant else []))
        return make(MOD, rebuilt, const(m))

    # RewriteFloorDiv
    def _floordiv(self, e: Expr) -> Expr:
        assert e.lhs is not None and e.rhs is not None
        d = self._point(e.rhs)
        if d is None or d <= 1:
            return make(FLOORDIV, self.once(e.lhs), self.once(e.rhs) if d is None else const(d))
        x = self.once(e.lhs)
        if x.kind == MOD and (dk := const_rhs(x)) is not None and dk > 0 and dk % d == 0:
            assert x.lhs is not None
            return make(MOD, make(FLOORDIV, x.lhs, const(d)), const(dk // d))
        if x.kind == FLOORDIV and (c := const_rhs(x)) is not None and c != 0:
            assert x.lhs is not None
            return make(FLOORDIV, x.lhs, const(c * d))
        changed = False
        outside: list[Expr] = []
        rest: list[Expr] = []
        for t in summands(x):
            if t.kind == CONST:
                q, r = divmod(t.value, d)
                if q:
                    outside.append(const(q))
                    changed = True
                if r:
                    rest.append(const(r))
                continue
            base, k = split_multiplier(t)
            if t.kind == MUL and k % d == 0:
                outside.append(make(MUL, base, const(k // d)))
                changed = True
            else:
                rest.append(t)
        nonconst = [t for t in rest if t.kind != CONST]
        a, g, b = split_sum_by_gcd(rest)
        numer = build_sum(rest)
        if g > 1:
            gg = gcd(d, g)
            rb = self._range(b)
            if gg != 1 and rb.lower >= 0 and rb.upper <= gg - 1:
                numer, d, changed = make(MUL, a, const(g // gg)), d // gg, True
            elif rb.is_point and rb.lower != 0 and (g2 := gcd(rb.lower, gg)) != 1:
                numer = make(ADD, make(MUL, a, const(g // g2)), const(rb.lower // g2))
                d, changed = d // g2, True
        parts = summands(numer)
        inner = [p for p in parts if p.kind == FLOORDIV and (const_rhs(p) or 0) > 0]
        if len(inner) == 1 and nonconst:
            y = inner[0]
            c0 = const_rhs(y)
            assert c0 is not None and y.lhs is not None
            others = [make(MUL, p, const(c0)) for p in parts if p is not y]
            numer = build_sum([*others, y.lhs])
            d *= c0
            changed = True
        if not changed:
            return make(FLOORDIV, x, const(d))
        return build_sum([make(FLOORDIV, numer, const(d)), *outside])


# ---- map-level simplification ----------------------------------------------------------
def _constraint_range_step(
    expr: Expr, iv: Interval, ev: RangeEvaluator, exact: bool
) -> tuple[Expr, Interval] | None:
    """One step of moving arithmetic from a constraint's expression into its interval.

    ``e + c in [lo, hi]`` -> ``e in [lo - c, hi - c]``; ``e * c`` -> ``e in [ceil(lo/c), floor(hi/c)]``;
    ``e / c`` -> ``e in [lo*c, (hi+1)*c - 1]``; a sum ``A*g + B in [0, hi]`` whose ``B`` cannot
    change ``(hi - B) / g`` -> ``A*g in [0, hi]``. None if no step applies (spec §3.1 step 1b).
    """
    lo, hi = iv
    if expr.kind == ADD:
        assert expr.lhs is not None and expr.rhs is not None
        rr = ev.range(expr.rhs)
        if rr.is_point:
            return expr.lhs, Interval(lo - rr.lower, hi - rr.lower)
        if lo == 0:
            # 0 <= A*g + B <= hi  ->  0 <= A*g <= hi when (hi - B) / g does not depend on B.
            # XLA drops B without checking its sign, which is unsound for B < 0 or B >= g
            # (B = d0 / -7 in [-1, 0]: 0 <= s0*2 - 1 fails at s0 = 0); exact also needs B in
            # [0, g-1] and (hi - B) / g == hi / g.
            a, g, b = split_sum_by_gcd(summands(expr))
            if g > 1:
                rb = ev.range(b)
                q = (Interval(hi, hi) - rb).floordiv(g)
                if q.is_point and (not exact or (rb.lower >= 0 and rb.upper < g and q.lower == hi // g)):
                    new = make(MUL, a, const(g))
                    return None if new is expr else (new, Interval(0, hi))
        return None
    c = const_rhs(expr) if expr.kind in (MUL, FLOORDIV) else None
    if c is None or c == 0:
        return None
    assert expr.lhs is not None
    if expr.kind == MUL:
        if c < 0:
            c, lo, hi = -c, -hi, -lo
        return expr.lhs, Interval(-((-lo) // c), hi // c)
    if c > 0:
        return expr.lhs, Interval(lo * c, (hi + 1) * c - 1)
    if exact:  # floor(e / c) in [lo, hi] with c < 0  <=>  e in [(hi+1)c + 1, lo*c]
        return expr.lhs, Interval((hi + 1) * c + 1, lo * c)
    # XLA treats e / -c as -(e / c): unsound, kept for parity (spec §7 item 13)
    return expr.lhs, Interval(-hi * -c, (-lo + 1) * -c - 1)


def _replace_constraints(state: _State, to_remove: list[Expr], to_add: list[tuple[Expr, Interval]]) -> None:
    for e in to_remove:
        state.constraints.pop(e, None)
    for e, iv in to_add:
        state.add_constraint(e, iv)


def _simplify_constraint_exprs(state: _State) -> bool:
    """Simplify every constraint expression; drop the always-true ones. True if any was rewritten."""
    ev = RangeEvaluator(state.bounds())
    simp = ExprSimplifier(ev, replace=True)
    to_remove: list[Expr] = []
    to_add: list[tuple[Expr, Interval]] = []
    for expr, iv in state.constraints.items():
        s = simp.simplify(expr)
        if iv.contains(ev.range(s)):
            to_remove.append(expr)  # always satisfied; not counted as a change (XLA)
        elif s is not expr:
            to_remove.append(expr)
            to_add.append((s, iv))
    _replace_constraints(state, to_remove, to_add)
    return bool(to_add)


def _simplify_constraint_ranges(state: _State, exact: bool) -> bool:
    """Apply :func:`_constraint_range_step` to every constraint until none applies. True if any did."""
    ev = RangeEvaluator(state.bounds())
    to_remove: list[Expr] = []
    to_add: list[tuple[Expr, Interval]] = []
    for expr, iv in state.constraints.items():
        e, i = expr, iv
        for _ in range(_MAX_ROUNDS):
            step = _constraint_range_step(e, i, ev, exact)
            if step is None:
                break
            e, i = step
        if e is not expr or i != iv:
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
def _compute(m: IndexingMap, replace: bool, exact: bool) -> tuple[IndexingMap, bool, bool]:
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
        did = _simplify_constraint_exprs(state)
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
        state.results = [simp.simplify(r) for r in state.results]
    out = state.freeze()
    changed |= merged or out.results != m.results
    stable = (converged and not merged) or out.is_known_empty
    if not changed and out == m:
        return m, False, stable
    return out, changed, stable


# Results by structure (interned expressions make the key cheap), so simplifying an equal map
# again, e.g. one parsed from the printed output, is a dictionary lookup.
_CACHE: dict[tuple[object, ...], tuple[IndexingMap, bool]] = {}
_CACHE_LIMIT = 1 << 15


def clear_caches() -> None:
    """Forget memoised simplifications and canonical forms (results are unaffected, only speed)."""
    _CACHE.clear()
    clear_cache()


def _simplify(m: IndexingMap, replace: bool, exact: bool) -> tuple[IndexingMap, bool]:
    if not isinstance(m, IndexingMap):
        raise IndexingError(f"simplify expects an IndexingMap, got {type(m).__name__}")
    if m.is_undefined or m.is_known_empty:
        return m, False
    key = (m._struct_key(), replace, exact)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    out, changed, stable = _compute(m, replace, exact)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = (out, changed)
    if stable:  # simplifying ``out`` again would give ``out`` back, unchanged
        _CACHE.setdefault((out._struct_key(), replace, exact), (out, False))
    return out, changed


def cached_simplification(m: IndexingMap, mode: SimplifyMode = "replace", *,
                          exact: bool = False) -> IndexingMap | None:
    """``simplify(m, mode, exact=exact)`` if it is already memoised, else None (never computes).

    A map that ``simplify`` returned and found stable is memoised as its own simplification.

    >>> m = IndexingMap.parse("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
    >>> s = simplify(m)
    >>> cached_simplification(s) is s
    True
    """
    hit = _CACHE.get((m._struct_key(), _normalize_mode(mode), exact))
    return None if hit is None else hit[0]


def simplify_with_status(
    m: IndexingMap, mode: SimplifyMode = "replace", *, exact: bool = False
) -> tuple[IndexingMap, bool]:
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

    >>> m = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [-99, 99], s0 / -3 in [-11, -5]")
    >>> print(m.simplify().range_vars[0].bounds, m.simplify(exact=True).range_vars[0].bounds)
    [15, 35] [13, 33]
    """
    return _simplify(m, _normalize_mode(mode), exact)


def simplify(
    m: IndexingMap, mode: SimplifyMode = "replace", *, exact: bool = False
) -> IndexingMap:
    """The simplified map (cached); see :func:`simplify_with_status` for ``mode`` and ``exact``.

    >>> m = IndexingMap.parse("(d0, d1) -> ((d0 mod 8) * 128 + d1 + (d0 / 8) * 1024), "
    ...                       "domain: d0 in [0, 1023], d1 in [0, 127]")
    >>> print(m.simplify())
    (d0, d1) -> (d0 * 128 + d1), domain: d0 in [0, 1023], d1 in [0, 127]
    """
    return _simplify(m, _normalize_mode(mode), exact)[0]
