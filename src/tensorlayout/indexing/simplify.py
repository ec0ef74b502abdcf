"""XLA's range-aware simplifier for expressions and indexing maps (spec §3.1–§3.4).

>>> from tensorlayout.indexing.map import IndexingMap
>>> m = IndexingMap.parse("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
>>> print(m.simplify())
(d0) -> (d0 - 42), domain: d0 in [53, 71]
"""

from __future__ import annotations

from collections.abc import Iterable
from math import gcd

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.canonical import build_sum, canonicalize, split_multiplier, summands
from tensorlayout.indexing.expr import ADD, CONST, FLOORDIV, MOD, MUL, VAR, Expr, const, make, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap, _State
from tensorlayout.indexing.ranges import RangeEvaluator

__all__ = [
    "ExprSimplifier",
    "get_used_parameters",
    "merge_mod_constraints",
    "remove_unused",
    "rescale_symbols",
    "simplify",
    "simplify_with_status",
]

_MAX_ROUNDS = 64


def _split_by_gcd(terms: list[Expr]) -> tuple[Expr, int, Expr]:
    """SplitSumByGcd: ``sum = A * g + B`` with g the gcd of the summands' constant multipliers."""
    g = 0
    for t in terms:
        if t.kind == MUL and t.rhs is not None and t.rhs.kind == CONST:
            g = gcd(g, t.rhs.value)
    if g <= 1:
        return const(0), 1, build_sum(terms)
    a: list[Expr] = []
    b: list[Expr] = []
    for t in terms:
        if t.kind == MUL and t.rhs is not None and t.rhs.kind == CONST:
            assert t.lhs is not None
            k = t.rhs.value // g
            a.append(t.lhs if k == 1 else make(MUL, t.lhs, const(k)))
        else:
            b.append(t)
    return build_sum(a), g, build_sum(b)


class ExprSimplifier:
    """``SimplifyExpr``: canonicalize, apply one range-aware rewrite pass, repeat to a fixed point.

    ``replace=True`` (XLA's kReplace) turns any expression whose range is one point into that
    constant; ``replace=False`` (kPreserve) keeps it.
    """

    def __init__(self, evaluator: RangeEvaluator, replace: bool = True) -> None:
        self.ev = evaluator
        self.replace = replace
        self._once: dict[Expr, Expr] = {}
        self._full: dict[Expr, Expr] = {}

    def simplify(self, e: Expr) -> Expr:
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
            r = self.ev.range(e)
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
        return e

    def _point(self, e: Expr) -> int | None:
        r = self.ev.range(e)
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
        mods = [i for i, (b, _) in enumerate(terms) if b.kind == MOD and _const_rhs(b) is not None]
        divs = [i for i, (b, _) in enumerate(terms) if b.kind == FLOORDIV and _const_rhs(b) is not None]
        removed: set[int] = set()
        extra: list[Expr] = []
        for i in mods:
            base, k = terms[i]
            assert base.lhs is not None
            c = _const_rhs(base)
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
            c = _const_rhs(base)
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
        r = self.ev.range(x)
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
        a, g, b = _split_by_gcd(terms)
        if constant:
            b = make(ADD, b, const(constant)) if not (b.kind == CONST and b.value == 0) else const(constant)
        if g > 1 and m % g == 0:
            rb = self.ev.range(b)
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
        if x.kind == MOD and (dk := _const_rhs(x)) is not None and dk > 0 and dk % d == 0:
            assert x.lhs is not None
            return make(MOD, make(FLOORDIV, x.lhs, const(d)), const(dk // d))
        if x.kind == FLOORDIV and (c := _const_rhs(x)) is not None and c != 0:
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
        a, g, b = _split_by_gcd(rest)
        numer = build_sum(rest)
        if g > 1:
            gg = gcd(d, g)
            rb = self.ev.range(b)
            if gg != 1 and rb.lower >= 0 and rb.upper <= gg - 1:
                numer, d, changed = make(MUL, a, const(g // gg)), d // gg, True
            elif rb.is_point and rb.lower != 0 and (g2 := gcd(rb.lower, gg)) != 1:
                numer = make(ADD, make(MUL, a, const(g // g2)), const(rb.lower // g2))
                d, changed = d // g2, True
        parts = summands(numer)
        inner = [p for p in parts if p.kind == FLOORDIV and (_const_rhs(p) or 0) > 0]
        if len(inner) == 1 and nonconst:
            y = inner[0]
            c0 = _const_rhs(y)
            assert c0 is not None and y.lhs is not None
            others = [make(MUL, p, const(c0)) for p in parts if p is not y]
            numer = build_sum([*others, y.lhs])
            d *= c0
            changed = True
        if not changed:
            return make(FLOORDIV, x, const(d))
        return build_sum([make(FLOORDIV, numer, const(d)), *outside])


def _const_rhs(e: Expr) -> int | None:
    if e.rhs is not None and e.rhs.kind == CONST:
        return e.rhs.value
    return None


# ---- map-level simplification ----------------------------------------------------------
def _constraint_range(
    expr: Expr, iv: Interval, ev: RangeEvaluator, exact_negative_divisor: bool
) -> tuple[Expr, Interval]:
    """Move arithmetic from a constraint's expression into its interval (spec §3.1 step 1b)."""
    for _ in range(_MAX_ROUNDS):
        lo, hi = iv
        if expr.kind == ADD:
            assert expr.lhs is not None and expr.rhs is not None
            rr = ev.range(expr.rhs)
            if rr.is_point:
                expr, iv = expr.lhs, Interval(lo - rr.lower, hi - rr.lower)
                continue
            if lo == 0:
                a, g, b = _split_by_gcd(summands(expr))
                if g > 1 and (Interval(hi, hi) - ev.range(b)).floordiv(g).is_point:
                    expr, iv = make(MUL, a, const(g)), Interval(0, hi)
                    continue
            break
        c = _const_rhs(expr) if expr.kind in (MUL, FLOORDIV) else None
        if c is None or c == 0:
            break
        assert expr.lhs is not None
        if expr.kind == MUL:
            if c < 0:
                c, lo, hi = -c, -hi, -lo
            expr, iv = expr.lhs, Interval(-((-lo) // c), hi // c)
        elif c > 0:
            expr, iv = expr.lhs, Interval(lo * c, (hi + 1) * c - 1)
        elif exact_negative_divisor:
            expr, iv = expr.lhs, Interval((hi + 1) * c + 1, lo * c)
        else:  # XLA treats e / -c as -(e / c): unsound, kept for parity (spec §7 item 13)
            c, lo, hi = -c, -hi, -lo
            expr, iv = expr.lhs, Interval(lo * c, (hi + 1) * c - 1)
    return expr, iv


def _simplify_constraints(state: _State, exact_negative_divisor: bool) -> None:
    for _ in range(_MAX_ROUNDS):
        if state.known_empty:
            return
        changed = False
        ev = RangeEvaluator(state.bounds())
        simp = ExprSimplifier(ev, replace=True)
        for expr, iv in list(state.constraints.items()):
            if state.known_empty:
                return
            if state.constraints.get(expr) != iv:
                continue
            s = simp.simplify(expr)
            if iv.contains(ev.range(s)):
                del state.constraints[expr]
            elif s is not expr:
                del state.constraints[expr]
                state.add_constraint(s, iv)
                changed = True
        if state.known_empty:
            return
        ev = RangeEvaluator(state.bounds())
        for expr, iv in list(state.constraints.items()):
            if state.known_empty:
                return
            if state.constraints.get(expr) != iv:
                continue
            new_e, new_iv = _constraint_range(expr, iv, ev, exact_negative_divisor)
            if new_e is not expr or new_iv != iv:
                del state.constraints[expr]
                state.add_constraint(new_e, new_iv)
                changed = True
        if not changed:
            return


def merge_mod_constraints(state: _State) -> bool:
    """MergeModConstraints (spec §3.4), in place on a working state; True if anything changed."""
    groups: dict[tuple[Expr, int], list[tuple[Expr, int]]] = {}
    for expr, iv in state.constraints.items():
        if expr.kind == MOD and iv.is_point and (c := _const_rhs(expr)) is not None and c > 0:
            assert expr.lhs is not None
            groups.setdefault((expr.lhs, iv.lower), []).append((expr, c))
    changed = False
    for (lhs, r), items in groups.items():
        if state.known_empty:
            break
        d = items[0][1]
        if len(items) >= 2:
            for expr, c in items:
                d = d * c // gcd(d, c)
                del state.constraints[expr]
            state.add_constraint(make(MOD, lhs, const(d)), Interval(r, r))
            changed = True
        if lhs.kind == VAR and not state.known_empty:
            b = state.get_bounds(lhs.value)
            lo = _trunc_div(b.lower, d) * d + r
            if lo < b.lower:
                lo += d
            hi = _trunc_div(b.upper, d) * d + r
            if hi > b.upper:
                hi -= d
            new = Interval(lo, hi)
            if new != b:
                changed = True
                state.set_bounds(lhs.value, new)
                if not new.is_feasible:
                    state.reset_to_known_empty()
    return changed


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _normalize_mode(mode: str) -> bool:
    m = str(mode).lower().lstrip("k")
    if m not in ("replace", "preserve"):
        raise IndexingError(f"simplify mode must be 'replace' or 'preserve', not {mode!r}")
    return m == "replace"


def simplify_with_status(
    m: IndexingMap, mode: str = "replace", *, exact_negative_divisor: bool = False
) -> tuple[IndexingMap, bool]:
    """XLA's ``Simplify(mode)``: returns the new map and whether results or constraints changed.

    ``mode`` is ``"replace"`` (default: single-point ranges become constants) or ``"preserve"``.
    By default a constraint ``e / c in [lo, hi]`` with ``c < 0`` is rewritten as XLA does, which
    is unsound (it treats ``e / -c`` as ``-(e / c)``); ``exact_negative_divisor=True`` uses the
    exact bounds instead.

    >>> m = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [-99, 99], s0 / -3 in [-11, -5]")
    >>> print(m.simplify().range_vars[0].bounds, m.simplify(exact_negative_divisor=True).range_vars[0].bounds)
    [15, 35] [13, 33]
    """
    replace = _normalize_mode(mode)
    if m.is_undefined or m.is_known_empty:
        return m, False
    state = m._state()
    _simplify_constraints(state, exact_negative_divisor)
    if not state.known_empty:
        merge_mod_constraints(state)
    if not state.known_empty:
        ev = RangeEvaluator(state.bounds(), state.constraints)
        simp = ExprSimplifier(ev, replace=replace)
        state.results = [simp.simplify(r) for r in state.results]
    out = state.freeze()
    changed = out.results != m.results or out.constraints != m.constraints or out.is_known_empty
    if not changed and out == m:
        return m, False
    return out, changed


def simplify(m: IndexingMap, mode: str = "replace", *, exact_negative_divisor: bool = False) -> IndexingMap:
    """The simplified map; see :func:`simplify_with_status` for the options. Cached per map.

    >>> m = IndexingMap.parse("(d0, d1) -> ((d0 mod 8) * 128 + d1 + (d0 / 8) * 1024), "
    ...                       "domain: d0 in [0, 1023], d1 in [0, 127]")
    >>> print(m.simplify())
    (d0, d1) -> (d0 * 128 + d1), domain: d0 in [0, 1023], d1 in [0, 127]
    """
    key = (_normalize_mode(mode), exact_negative_divisor)
    cached = m._simplified
    if cached is not None and cached[0] == key:
        return cached[1]  # type: ignore[no-any-return]
    out, _ = simplify_with_status(m, mode, exact_negative_divisor=exact_negative_divisor)
    object.__setattr__(m, "_simplified", (key, out))
    if out._simplified is None:
        object.__setattr__(out, "_simplified", (key, out))
    return out


# ---- other rewrites ----------------------------------------------------------------------
def remove_unused(m: IndexingMap, symbols_only: bool) -> tuple[IndexingMap, list[bool]]:
    """RemoveUnusedSymbols / RemoveUnusedVars; the mask marks removed symbols (resp. dims++symbols)."""
    if m.is_undefined:
        return m, []
    n = m.num_dims
    first = n if symbols_only else 0
    used: set[int] = set()
    for r in m.results:
        used |= r.variables()
    removed = {i for i in range(first, m.num_vars) if i not in used}
    cons = list(m._constraints)
    changed = True
    while changed:
        changed = False
        for e, _ in cons:
            vs = e.variables()
            if vs & removed and not vs <= removed:
                removed -= vs
                changed = True
    if not removed:
        return m, []
    kept_cons = [(e, iv) for e, iv in cons if not (e.variables() and e.variables() <= removed)]
    order = [i for i in range(m.num_vars) if i not in removed]
    repl = {old: var(new) for new, old in enumerate(order)}
    all_vars = m.all_vars()
    r0, r1 = n, n + m.num_range_vars
    dims = tuple(all_vars[i] for i in order if i < r0)
    ranges = tuple(all_vars[i] for i in order if r0 <= i < r1)
    rts = tuple(all_vars[i] for i in order if i >= r1)
    results = tuple(r.replace_variables(repl) for r in m.results)
    new_cons = tuple((e.replace_variables(repl), iv) for e, iv in kept_cons)
    out = IndexingMap._make(results, dims, ranges, rts, new_cons, m.is_known_empty, False)
    return out, [i in removed for i in range(first, m.num_vars)]


def rescale_symbols(m: IndexingMap) -> tuple[IndexingMap, bool]:
    """RescaleSymbols: for ``s mod c in [k, k]`` substitute ``s -> s * c + k`` (spec §3.3).

    >>> m = IndexingMap.parse("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 9], s0 mod 6 in [3, 3]")
    >>> print(m.rescale_symbols())
    (d0)[s0] -> (s0 * 6 + 3), domain: d0 in [0, 3], s0 in [0, 1]
    """
    if m.is_undefined or m.is_known_empty:
        return m, False
    state = m._state()
    merge_mod_constraints(state)
    n = state.num_dims
    done: set[int] = set()
    rescaled = False
    for expr, iv in list(state.constraints.items()):
        if state.known_empty or expr not in state.constraints:
            continue
        if expr.kind != MOD or not iv.is_point or (c := _const_rhs(expr)) is None or c <= 0:
            continue
        s = expr.lhs
        assert s is not None
        if s.kind != VAR or s.value < n or s.value in done:
            continue
        done.add(s.value)
        k = iv.lower
        repl = {s.value: make(ADD, make(MUL, s, const(c)), const(k))}
        del state.constraints[expr]
        state.results = [r.replace_variables(repl) for r in state.results]
        old = state.constraints
        state.constraints = {}
        for e2, iv2 in old.items():
            state.add_constraint(e2.replace_variables(repl), iv2)
        b = state.get_bounds(s.value)
        new_b = Interval(_trunc_div(b.lower - k, c), _trunc_div(b.upper - k, c))
        state.set_bounds(s.value, new_b)
        if not new_b.is_feasible:
            state.reset_to_known_empty()
        rescaled = True
    return state.freeze(), rescaled


def get_used_parameters(exprs: Iterable[Expr], num_dims: int) -> tuple[list[int], list[int]]:
    """Sorted unique dim ids and symbol indices mentioned by ``exprs``.

    >>> from tensorlayout.indexing.parse import parse_expr
    >>> get_used_parameters([parse_expr("d0 + s1", num_dims=2)], 2)
    ([0], [1])
    """
    used: set[int] = set()
    for e in exprs:
        used |= e.variables()
    return sorted(i for i in used if i < num_dims), sorted(i - num_dims for i in used if i >= num_dims)

