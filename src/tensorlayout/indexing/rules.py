"""The range-aware rewrite rules of XLA's expression simplifier (``SimplifyOnce``, spec §3.2).

Each rule is a small function with a one-line contract ``before -> after when condition``; it
returns the rewritten expression, or None when it does not apply. :func:`rewrite_once` applies
them from ordered tables, one table per node kind, to an already canonical expression whose
operands have been rewritten once. The names follow XLA's ``RewriteMod``, ``RewriteFloorDiv``
(``SimplifyModDiv``, ``SimplifyDivDiv``, ``SimplifySumDiv``) and ``RewriteSum``.

>>> from tensorlayout.indexing.expr import var
>>> from tensorlayout.indexing.interval import Interval
>>> from tensorlayout.indexing.simplify import ExprSimplifier
>>> from tensorlayout.indexing.ranges import RangeEvaluator
>>> s = ExprSimplifier(RangeEvaluator([Interval(0, 99)]), fired=[])
>>> print(s.simplify((var(0) % 32) // 8))
(v0 / 8) mod 4
>>> s.fired
['simplify_mod_div']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import gcd
from typing import Protocol

from tensorlayout.indexing.canonical import build_sum, const_rhs, split_multiplier, split_sum_by_gcd, summands
from tensorlayout.indexing.expr import ADD, CONST, FLOORDIV, MAX, MIN, MOD, MUL, Expr, const, make
from tensorlayout.indexing.interval import Interval

__all__ = [
    "DIV_RULES",
    "DIV_SUM_STEPS",
    "MOD_RULES",
    "MOD_SUM_RULES",
    "MUL_RULES",
    "SUM_RULES",
    "RewriteContext",
    "rewrite_once",
]


class RewriteContext(Protocol):
    """What a rule may ask: ranges over the domain, rewriting operands, and a log of fired rules."""

    replace: bool
    fired: list[str] | None

    def range(self, e: Expr) -> Interval: ...

    def once(self, e: Expr) -> Expr: ...

    def simplify(self, e: Expr) -> Expr: ...


def _point(ctx: RewriteContext, e: Expr) -> int | None:
    r = ctx.range(e)
    return r.lower if r.is_point else None


def _log(ctx: RewriteContext, rule: Callable[..., object]) -> None:
    if ctx.fired is not None:
        ctx.fired.append(rule.__name__)


# ---- multiplication by a constant (x * c, c the point range of the right operand) ----------
def mul_by_one(ctx: RewriteContext, x: Expr, c: int) -> Expr | None:
    """``x * 1 -> x``."""
    return x if c == 1 else None


def distribute_constant(ctx: RewriteContext, x: Expr, c: int) -> Expr | None:
    """``(a + b) * c -> a * c + b * c`` (summands kept in order, so later rounds can cancel them)."""
    if x.kind != ADD:
        return None
    out: Expr | None = None
    for t in summands(x):
        term = make(MUL, t, const(c))
        out = term if out is None else make(ADD, out, term)
    return out


MUL_RULES = (mul_by_one, distribute_constant)


def rewrite_mul(ctx: RewriteContext, e: Expr) -> Expr:
    assert e.lhs is not None and e.rhs is not None
    c = _point(ctx, e.rhs)
    if c is None:
        return make(MUL, ctx.once(e.lhs), ctx.once(e.rhs))
    x = ctx.once(e.lhs)
    return _first(ctx, MUL_RULES, x, c) or make(MUL, x, const(c))


# ---- x mod m (RewriteMod) ---------------------------------------------------------------------
def mod_by_zero(ctx: RewriteContext, x: Expr, m: int) -> Expr | None:
    """``x mod 0 -> 0`` (XLA's RewriteMod; ``mod 0`` has no value, XLA picks 0)."""
    return const(0) if m == 0 else None


def mod_by_negative(ctx: RewriteContext, x: Expr, m: int) -> Expr | None:
    """``x mod m`` stays when ``m < 0`` (the rules below assume a positive modulus)."""
    return make(MOD, x, const(m)) if m < 0 else None


def mod_within_one_period(ctx: RewriteContext, x: Expr, m: int) -> Expr | None:
    """``x mod m -> x + k*m`` when ``x + k*m`` stays in ``[0, m-1]`` over the domain (no wrap-around).

    ``k = -floor(lower(x) / m)``: ``d0 mod 42`` on ``[53, 71]`` is ``d0 - 42``.
    """
    r = ctx.range(x)
    off = -(r.lower // m) * m
    return make(ADD, x, const(off)) if r.upper + off < m else None


def mod_of_scaled(ctx: RewriteContext, x: Expr, m: int) -> Expr | None:
    """``(a * k) mod m -> (a mod (m/k)) * k when k > 0 and k divides m``.

    ``a*k - (a*k mod m)`` is a multiple of ``m = (m/k)*k``, so ``a*k mod m = (a mod (m/k))*k``;
    with ``k < 0`` the right side would be ``<= 0`` where the left is ``>= 0``.
    """
    if x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
        k = x.rhs.value
        assert x.lhs is not None
        if k > 0 and m % k == 0:
            return make(MUL, make(MOD, x.lhs, const(m // k)), const(k))
    return None


@dataclass
class ModSum:
    """``x mod m`` with ``x``'s summands split: ``terms`` (multiples of ``m`` dropped), the
    constant reduced mod ``m``, and ``terms + constant = a*g + b`` (XLA's SplitSumByGcd)."""

    unchanged: Expr
    m: int
    terms: list[Expr]
    constant: int
    a: Expr
    g: int
    b: Expr

    @classmethod
    def of(cls, x: Expr, m: int) -> ModSum:
        terms: list[Expr] = []
        constant = 0
        for t in summands(x):
            if t.kind == CONST:
                constant += t.value
            elif split_multiplier(t)[1] % m != 0:
                terms.append(t)
        constant %= m
        a, g, b = split_sum_by_gcd(terms)
        if constant:
            b = make(ADD, b, const(constant)) if not (b.kind == CONST and b.value == 0) else const(constant)
        return cls(make(MOD, x, const(m)), m, terms, constant, a, g, b)


def mod_of_gcd_multiple(ctx: RewriteContext, s: ModSum) -> Expr | None:
    """``(a * g) mod m -> (a mod (m/g)) * g when g > 1 divides m`` (after dropping multiples of m)."""
    if s.g > 1 and s.m % s.g == 0 and ctx.range(s.b) == Interval(0, 0):
        return make(MUL, make(MOD, s.a, const(s.m // s.g)), const(s.g))
    return None


def mod_split_small_remainder(ctx: RewriteContext, s: ModSum) -> Expr | None:
    """``(a*g + b) mod m -> (a*g) mod m + b when g > 1 divides m and 0 <= b <= g-1``.

    ``a*g mod m`` is a multiple of ``g`` in ``[0, m-g]``, so adding ``b < g`` never wraps.
    """
    if s.g > 1 and s.m % s.g == 0:
        rb = ctx.range(s.b)
        if rb.lower >= 0 and rb.upper <= s.g - 1:
            return make(ADD, make(MOD, make(MUL, s.a, const(s.g)), const(s.m)), s.b)
    return None


def mod_drop_multiples(ctx: RewriteContext, s: ModSum) -> Expr | None:
    """``(a + k*m*y + c) mod m -> (a + (c mod m)) mod m`` (summands that are multiples of m vanish)."""
    out = make(MOD, build_sum(s.terms + ([const(s.constant)] if s.constant else [])), const(s.m))
    return None if out is s.unchanged else out


#: ``x mod 0`` is handled first (:func:`mod_by_zero`, before the operand is rewritten).
MOD_RULES = (mod_by_negative, mod_within_one_period, mod_of_scaled)
MOD_SUM_RULES = (mod_of_gcd_multiple, mod_split_small_remainder, mod_drop_multiples)


def rewrite_mod(ctx: RewriteContext, e: Expr) -> Expr:
    assert e.lhs is not None and e.rhs is not None
    m = _point(ctx, e.rhs)
    if m is None:
        return make(MOD, ctx.once(e.lhs), ctx.once(e.rhs))
    if m == 0:  # before rewriting the operand, as XLA
        _log(ctx, mod_by_zero)
        return const(0)
    x = ctx.once(e.lhs)
    out = _first(ctx, MOD_RULES, x, m)
    if out is None:
        s = ModSum.of(x, m)
        out = _first(ctx, MOD_SUM_RULES, s) or s.unchanged
    return out


# ---- x floordiv d (RewriteFloorDiv), d > 1 ----------------------------------------------------
def simplify_mod_div(ctx: RewriteContext, x: Expr, d: int) -> Expr | None:
    """``(c mod ab) floordiv a -> (c floordiv a) mod b when ab > 0 and a divides ab`` (SimplifyModDiv).

    With ``c = q*ab + r``, ``0 <= r < ab``: ``r / a = (c/a) - q*b`` lies in ``[0, b-1]``, so it
    is ``(c / a) mod b``. A negative ``ab`` breaks ``0 <= r``.
    """
    if x.kind == MOD and (ab := const_rhs(x)) is not None and ab > 0 and ab % d == 0:
        assert x.lhs is not None
        return make(MOD, make(FLOORDIV, x.lhs, const(d)), const(ab // d))
    return None


def simplify_div_div(ctx: RewriteContext, x: Expr, d: int) -> Expr | None:
    """``(c floordiv a) floordiv b -> c floordiv (a*b) when a != 0 and b > 1`` (SimplifyDivDiv).

    ``floor(floor(y) / b) = floor(y / b)`` for every real ``y`` and integer ``b > 0``; take
    ``y = c / a`` (any sign of ``a``).
    """
    if x.kind == FLOORDIV and (a := const_rhs(x)) is not None and a != 0:
        assert x.lhs is not None
        return make(FLOORDIV, x.lhs, const(a * d))
    return None


DIV_RULES = (simplify_mod_div, simplify_div_div)


@dataclass
class DivSum:
    """The working state of SimplifySumDiv on ``x floordiv d``: ``numer floordiv d + sum(outside)``."""

    x: Expr
    d: int
    rest: list[Expr] = field(default_factory=list)
    outside: list[Expr] = field(default_factory=list)
    numer: Expr = field(default_factory=lambda: const(0))
    changed: bool = False


def div_extract_multiples(ctx: RewriteContext, s: DivSum) -> bool:
    """``(y * (k*d) + q*d + r + z) floordiv d -> y * k + q + (r + z) floordiv d`` (0 <= r < d)."""
    for t in summands(s.x):
        if t.kind == CONST:
            q, r = divmod(t.value, s.d)
            if q:
                s.outside.append(const(q))
                s.changed = True
            if r:
                s.rest.append(const(r))
            continue
        base, k = split_multiplier(t)
        if t.kind == MUL and k % s.d == 0:
            s.outside.append(make(MUL, base, const(k // s.d)))
            s.changed = True
        else:
            s.rest.append(t)
    s.numer = build_sum(s.rest)
    return s.changed


def div_by_common_gcd(ctx: RewriteContext, s: DivSum) -> bool:
    """``(a*g + b) floordiv d -> (a*(g/h)) floordiv (d/h) when h = gcd(g, d) > 1 and 0 <= b < h``.

    ``a*g + b = h*(a*(g/h)) + b`` and ``b < h`` cannot carry into the quotient by ``h``.
    """
    a, g, b = split_sum_by_gcd(s.rest)
    h = gcd(s.d, g)
    if g > 1 and h != 1:
        rb = ctx.range(b)
        if rb.lower >= 0 and rb.upper <= h - 1:
            s.numer, s.d, s.changed = make(MUL, a, const(g // h)), s.d // h, True
            return True
    return False


def div_by_point_remainder_gcd(ctx: RewriteContext, s: DivSum) -> bool:
    """``(a*g + b) floordiv d -> (a*(g/h) + b/h) floordiv (d/h) when b is a point != 0, h = gcd(b,g,d) > 1``.

    Numerator and divisor share the factor ``h`` exactly, so the quotient is unchanged.
    """
    a, g, b = split_sum_by_gcd(s.rest)
    if g <= 1:
        return False
    rb = ctx.range(b)
    h = gcd(rb.lower, gcd(s.d, g))
    if rb.is_point and rb.lower != 0 and h != 1:
        s.numer = make(ADD, make(MUL, a, const(g // h)), const(rb.lower // h))
        s.d, s.changed = s.d // h, True
        return True
    return False


def div_nest_inner_div(ctx: RewriteContext, s: DivSum) -> bool:
    """``(y floordiv c + z) floordiv d -> (y + z*c) floordiv (c*d) when c > 0`` and exactly one such term.

    ``floor((floor(y/c) + z) / d) = floor(floor((y + z*c)/c) / d) = floor((y + z*c) / (c*d))``.
    XLA leaves two or more inner divisions alone (``(s0 / 3 + s1 / 3) / 6`` stays, test DivSumDiv),
    and needs a non-constant summand.
    """
    parts = summands(s.numer)
    inner = [p for p in parts if p.kind == FLOORDIV and (const_rhs(p) or 0) > 0]
    if len(inner) != 1 or all(t.kind == CONST for t in s.rest):
        return False
    y = inner[0]
    c0 = const_rhs(y)
    assert c0 is not None and y.lhs is not None
    s.numer = build_sum([*(make(MUL, p, const(c0)) for p in parts if p is not y), y.lhs])
    s.d *= c0
    s.changed = True
    return True


#: SimplifySumDiv: each group is tried in order and stops at its first step that applies.
DIV_SUM_STEPS: tuple[tuple[Callable[[RewriteContext, DivSum], bool], ...], ...] = (
    (div_extract_multiples,),
    (div_by_common_gcd, div_by_point_remainder_gcd),
    (div_nest_inner_div,),
)


def simplify_sum_div(ctx: RewriteContext, x: Expr, d: int) -> Expr:
    """SimplifySumDiv: the steps of :data:`DIV_SUM_STEPS`; ``x floordiv d`` if none applied."""
    s = DivSum(x, d)
    for group in DIV_SUM_STEPS:
        for step in group:
            if step(ctx, s):
                _log(ctx, step)
                break
    if not s.changed:
        return make(FLOORDIV, x, const(d))
    return build_sum([make(FLOORDIV, s.numer, const(s.d)), *s.outside])


def rewrite_floordiv(ctx: RewriteContext, e: Expr) -> Expr:
    assert e.lhs is not None and e.rhs is not None
    d = _point(ctx, e.rhs)
    if d is None or d <= 1:  # negative divisors are never rewritten (test NegativeDiv)
        return make(FLOORDIV, ctx.once(e.lhs), ctx.once(e.rhs) if d is None else const(d))
    x = ctx.once(e.lhs)
    return _first(ctx, DIV_RULES, x, d) or simplify_sum_div(ctx, x, d)


# ---- sums (RewriteSum) ------------------------------------------------------------------------
@dataclass
class SumTerms:
    """A sum's summands as ``(base, multiplier)``, which rules may remove or add to."""

    flat: list[Expr]
    terms: list[tuple[Expr, int]]
    mods: list[int]
    divs: list[int]
    removed: set[int] = field(default_factory=set)
    extra: list[Expr] = field(default_factory=list)

    @classmethod
    def of(cls, ctx: RewriteContext, e: Expr) -> SumTerms:
        flat: list[Expr] = []
        for t in summands(e):
            flat.extend(summands(ctx.once(t)))
        terms = [split_multiplier(t) if t.kind != CONST else (t, 1) for t in flat]
        mods = [i for i, (b, _) in enumerate(terms) if b.kind == MOD and const_rhs(b) is not None]
        divs = [i for i, (b, _) in enumerate(terms) if b.kind == FLOORDIV and const_rhs(b) is not None]
        return cls(flat, terms, mods, divs)


def sum_recombine_div_mod(ctx: RewriteContext, s: SumTerms) -> bool:
    """``(x mod c) * k + (x floordiv c) * (c*k) -> x * k`` (the div term may be any form equal to it)."""
    fired = False
    for i in s.mods:
        base, k = s.terms[i]
        c = const_rhs(base)
        assert c is not None and base.lhs is not None
        x = base.lhs
        want = {make(FLOORDIV, x, const(c))}
        for j in s.divs:
            if j in s.removed or s.terms[j][1] != c * k:
                continue
            if len(want) == 1:
                want.add(ctx.simplify(make(FLOORDIV, x, const(c))))
            if s.terms[j][0] in want:
                s.removed.update((i, j))
                s.extra.append(make(MUL, x, const(k)))
                fired = True
                break
    return fired


def sum_expand_negative_div(ctx: RewriteContext, s: SumTerms) -> bool:
    """``(y floordiv c) * (b*c) -> y * b + (y mod c) * -b when c > 0 and b <= 0`` (summand-wise in y).

    ``(y / c) * c = y - y mod c``; written out, ``y`` can cancel against other summands.
    """
    fired = False
    for j in s.divs:
        if j in s.removed:
            continue
        base, m = s.terms[j]
        c = const_rhs(base)
        assert c is not None and base.lhs is not None
        if m <= 0 and c > 0 and m % c == 0:
            b = m // c
            y = base.lhs
            s.removed.add(j)
            s.extra.extend(make(MUL, t, const(b)) for t in summands(y))
            s.extra.append(make(MUL, make(MOD, y, const(c)), const(-b)))
            fired = True
    return fired


SUM_RULES = (sum_recombine_div_mod, sum_expand_negative_div)


def rewrite_sum(ctx: RewriteContext, e: Expr) -> Expr:
    s = SumTerms.of(ctx, e)
    for rule in SUM_RULES:
        if rule(ctx, s):
            _log(ctx, rule)
    if not s.removed:
        rebuilt = build_sum(s.flat)
        return e if rebuilt is e else rebuilt
    kept = [s.flat[i] for i in range(len(s.flat)) if i not in s.removed]
    return build_sum(kept + s.extra)


# ---- min / max --------------------------------------------------------------------------------
def min_max_by_ranges(ctx: RewriteContext, kind: int, a: Expr, b: Expr) -> Expr | None:
    """``min(a, b) -> a when a <= b over the domain`` (``max`` picks the other side)."""
    ra, rb = ctx.range(a), ctx.range(b)
    if ra.upper <= rb.lower:
        return a if kind == MIN else b
    if rb.upper <= ra.lower:
        return b if kind == MIN else a
    return None


def rewrite_min_max(ctx: RewriteContext, e: Expr) -> Expr:
    assert e.lhs is not None and e.rhs is not None
    a, b = ctx.once(e.lhs), ctx.once(e.rhs)
    return _first(ctx, (min_max_by_ranges,), e.kind, a, b) or make(e.kind, a, b)


# ---- dispatch ---------------------------------------------------------------------------------
def fold_point_range(ctx: RewriteContext, e: Expr) -> Expr | None:
    """``e -> c when range(e) = [c, c]`` (kReplace only; kPreserve keeps single-point dims)."""
    if ctx.replace:
        r = ctx.range(e)
        if r.is_point:
            return const(r.lower)
    return None


_BY_KIND: dict[int, Callable[[RewriteContext, Expr], Expr]] = {
    MUL: rewrite_mul,
    ADD: rewrite_sum,
    MOD: rewrite_mod,
    FLOORDIV: rewrite_floordiv,
    MIN: rewrite_min_max,
    MAX: rewrite_min_max,
}


def rewrite_once(ctx: RewriteContext, e: Expr) -> Expr:
    """XLA's ``SimplifyOnce``: one range-aware rewrite of ``e`` (a constant or variable stays)."""
    if e.kind == CONST:
        return e
    folded = fold_point_range(ctx, e)
    if folded is not None:
        _log(ctx, fold_point_range)
        return folded
    rewrite = _BY_KIND.get(e.kind)
    return e if rewrite is None else rewrite(ctx, e)


def _first(ctx: RewriteContext, rules: Sequence[Callable[..., Expr | None]], *args: object) -> Expr | None:
    """The result of the first rule that applies (logged), else None."""
    for rule in rules:
        out = rule(ctx, *args)
        if out is not None:
            _log(ctx, rule)
            return out
    return None
