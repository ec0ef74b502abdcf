"""Pure algebraic canonicalization of expressions (spec §3.2, "Canonicalize").

Bottom-up: constants fold, the smaller operand (by :func:`~tensorlayout.indexing.expr.compare`)
goes left in ``+ * min max``, sums are flattened into sorted ``base * coeff`` terms with the
constant last, products distribute over sums, and division/mod by constants apply the gcd
and known-multiple rules.

>>> from tensorlayout.indexing.expr import var
>>> v0, v1 = var(0), var(1)
>>> print(canonicalize((v1 * 2 + 5) + (v0 - v1) * 3))
v0 * 3 - v1 + 5
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import gcd
from typing import Any

from tensorlayout.core.intmath import ceil_div
from tensorlayout.indexing._guard import guarded
from tensorlayout.indexing.expr import (
    ADD,
    CEILDIV,
    CONST,
    FLOORDIV,
    MAX,
    MIN,
    MOD,
    MUL,
    VAR,
    Expr,
    const,
    largest_known_divisor,
    make,
)
from tensorlayout.indexing.expr import _compare as compare

__all__ = [
    "build_sum",
    "canonicalize",
    "const_rhs",
    "largest_known_divisor",
    "sort_key",
    "split_multiplier",
    "split_sum_by_gcd",
    "summands",
]

_CACHE: dict[Expr, Expr] = {}


class _Key:
    """Wraps an expression so ``sorted`` uses XLA's total order."""

    __slots__ = ("e",)

    def __init__(self, e: Expr) -> None:
        self.e = e

    def __lt__(self, other: _Key) -> bool:
        return compare(self.e, other.e) < 0


def clear_cache() -> None:
    """Forget memoised canonical forms (results are unaffected, only speed)."""
    _CACHE.clear()


def sort_key(e: Expr) -> _Key:
    """A key for ``sorted`` that follows :func:`compare`."""
    return _Key(e)


def summands(e: Expr) -> list[Expr]:
    """The summands of a (nested) sum, left to right; ``[e]`` if ``e`` is not a sum."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if x.kind == ADD:
            assert x.lhs is not None and x.rhs is not None
            stack.append(x.rhs)
            stack.append(x.lhs)
        else:
            out.append(x)
    return out


def split_multiplier(e: Expr) -> tuple[Expr, int]:
    """``x * c`` -> ``(x, c)``; a constant ``c`` -> ``(1, c)``; anything else -> ``(e, 1)``."""
    if e.kind == MUL and e.rhs is not None and e.rhs.kind == CONST:
        assert e.lhs is not None
        return e.lhs, e.rhs.value
    if e.kind == CONST:
        return const(1), e.value
    return e, 1


def build_sum(terms: list[Expr]) -> Expr:
    """Sort terms by the total order (constants last) and build a left-nested sum."""
    if not terms:
        return const(0)
    ordered = sorted(terms, key=_Key)
    out = ordered[0]
    for t in ordered[1:]:
        out = make(ADD, out, t)
    return out


def const_rhs(e: Expr) -> int | None:
    """The constant right operand of a binary node, else None."""
    if e.rhs is not None and e.rhs.kind == CONST:
        return e.rhs.value
    return None


def split_sum_by_gcd(terms: list[Expr]) -> tuple[Expr, int, Expr]:
    """XLA's SplitSumByGcd: ``sum = A * g + B``, g the gcd of the summands' constant multipliers.

    Summands without a multiplier go to ``B``; with no multipliers (or g = 1) the result is
    ``(0, 1, sum)``.

    >>> from tensorlayout.indexing.expr import var
    >>> a, g, b = split_sum_by_gcd([var(0) * 6, var(1) * 4, var(2)])
    >>> str(a), g, str(b)
    ('v0 * 3 + v1 * 2', 2, 'v2')
    """
    g = 0
    for t in terms:
        if t.kind == MUL and (c := const_rhs(t)) is not None:
            g = gcd(g, c)
    if g <= 1:
        return const(0), 1, build_sum(terms)
    a: list[Expr] = []
    b: list[Expr] = []
    for t in terms:
        if t.kind == MUL and (c := const_rhs(t)) is not None:
            assert t.lhs is not None
            a.append(t.lhs if c // g == 1 else make(MUL, t.lhs, const(c // g)))
        else:
            b.append(t)
    return build_sum(a), g, build_sum(b)


@guarded
def canonicalize(e: Expr) -> Expr:
    """The canonical form of ``e`` (pure algebra, no ranges); idempotent and cached.

    >>> from tensorlayout.indexing.expr import var
    >>> print(canonicalize((var(0) // 16) * 16 + var(0) % 16))
    v0
    """
    return _canon(e)


def _canon(e: Expr) -> Expr:
    got = _CACHE.get(e)
    if got is not None:
        return got
    k = e.kind
    if k in (CONST, VAR):
        return e
    if k == ADD:  # a whole sum at once: one merge of all its summands, not one per nested node
        out = _add([_canon(t) for t in summands(e)])
    else:
        assert e.lhs is not None and e.rhs is not None
        l, r = _canon(e.lhs), _canon(e.rhs)
        out = _minmax(k, l, r) if k in (MIN, MAX) else _BY_KIND[k](l, r)
    _CACHE[e] = out
    _CACHE[out] = out
    return out


# ---- sums ---------------------------------------------------------------------------------
def _terms(parts: list[Expr]) -> tuple[dict[Expr, int], int]:
    """Flatten a sum of canonical parts into ``{base: coefficient}`` (zeros dropped) and a constant."""
    coeffs: dict[Expr, int] = {}
    constant = 0
    stack = [(p, 1) for p in reversed(parts)]
    while stack:
        x, c = stack.pop()
        if x.kind == CONST:
            constant += x.value * c
        elif x.kind == ADD:
            assert x.lhs is not None and x.rhs is not None
            stack.append((x.rhs, c))
            stack.append((x.lhs, c))
        elif x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
            assert x.lhs is not None
            stack.append((x.lhs, c * x.rhs.value))
        else:
            coeffs[x] = coeffs.get(x, 0) + c
    return {b: c for b, c in coeffs.items() if c != 0}, constant


def fuse_div_mod(coeffs: dict[Expr, int], constant: int) -> Expr | None:
    """``(x floordiv c) * (c*k) + (x mod c) * k -> x * k when c > 0`` (``x = c*(x/c) + x mod c``)."""
    for base, c in coeffs.items():
        if base.kind != MOD:
            continue
        assert base.lhs is not None and base.rhs is not None
        if base.rhs.kind != CONST or base.rhs.value <= 0:
            continue
        div = make(FLOORDIV, base.lhs, base.rhs)
        if coeffs.get(div) == c * base.rhs.value:
            rest = [b * k if k != 1 else b for b, k in coeffs.items() if b is not base and b is not div]
            return _add([*rest, _mul(base.lhs, const(c)), const(constant)])
    return None


def _add(parts: list[Expr]) -> Expr:
    """Canonical sum of already canonical parts: merged coefficients, sorted, constant last."""
    coeffs, constant = _terms(parts)
    fused = fuse_div_mod(coeffs, constant)
    if fused is not None:
        return fused
    terms = [b if c == 1 else make(MUL, b, const(c)) for b, c in coeffs.items()]
    if constant:
        terms.append(const(constant))
    return build_sum(terms)


# ---- products -----------------------------------------------------------------------------
def mul_by_constant(l: Expr, r: Expr) -> Expr | None:
    """``x * 0 -> 0``, ``x * 1 -> x``, ``(a + b) * c -> a*c + b*c``, else ``x * c`` (``r`` constant)."""
    if r.kind != CONST:
        return None
    if r.value == 0:
        return r
    if r.value == 1:
        return l
    if l.kind == ADD:
        return _add([_mul(t, r) for t in summands(l)])
    return make(MUL, l, r)


def mul_distribute(l: Expr, r: Expr) -> Expr | None:
    """``(a + b) * y -> a*y + b*y`` and ``x * (a + b) -> x*a + x*b``."""
    if l.kind == ADD:
        return _add([_mul(t, r) for t in summands(l)])
    if r.kind == ADD:
        return _add([_mul(l, t) for t in summands(r)])
    return None


def mul_constant_outward(l: Expr, r: Expr) -> Expr | None:
    """``(a * c) * y -> (a * y) * c`` (either side), so the constant multiplier ends up outermost."""
    for a, b in ((l, r), (r, l)):
        if a.kind == MUL and a.rhs is not None and a.rhs.kind == CONST:
            assert a.lhs is not None
            return _mul(_mul(a.lhs, b), a.rhs)
    return None


MUL_RULES = (mul_by_constant, mul_distribute, mul_constant_outward)


def _mul(l: Expr, r: Expr) -> Expr:
    """Canonical product: constants fold, the smaller operand goes left, then :data:`MUL_RULES`."""
    if l.kind == CONST and r.kind == CONST:
        return make(MUL, l, r)
    if compare(l, r) > 0:
        l, r = r, l
    return _first(MUL_RULES, l, r) or make(MUL, l, r)


def _minmax(k: int, l: Expr, r: Expr) -> Expr:
    """``min(a, b) -> a when a - b is a constant <= 0`` (``max`` alike), else ordered operands."""
    if compare(l, r) > 0:
        l, r = r, l
    diff = _add([l, _mul(r, const(-1))])
    if diff.kind == CONST:
        if k == MIN:
            return l if diff.value <= 0 else r
        return l if diff.value >= 0 else r
    return make(k, l, r)


# ---- division and modulus by a constant ---------------------------------------------------
def _gcd_reduce(x: Expr, d: int) -> tuple[Expr, int] | None:
    """``(a * c, d) -> (a * (c/g), d/g)`` with ``g = gcd(c, d) > 1``, else None."""
    if x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
        assert x.lhs is not None
        c = x.rhs.value
        g = gcd(c, d)
        if g > 1:
            return _mul(x.lhs, const(c // g)), d // g
    return None


def floordiv_fold_constant(x: Expr, d: int) -> Expr | None:
    """``a floordiv d -> floor(a / d)`` for a constant ``a``."""
    return const(x.value // d) if x.kind == CONST else None


def floordiv_cancel_gcd(x: Expr, d: int) -> Expr | None:
    """``(a * c) floordiv d -> (a * (c/g)) floordiv (d/g) when g = gcd(c, d) > 1``."""
    reduced = _gcd_reduce(x, d)
    return None if reduced is None else _floordiv(reduced[0], const(reduced[1]))


def floordiv_by_unit(x: Expr, d: int) -> Expr | None:
    """``x floordiv 1 -> x`` and ``x floordiv -1 -> -x``."""
    return x if d == 1 else _mul(x, const(-1)) if d == -1 else None


def floordiv_extract_multiples(x: Expr, d: int) -> Expr | None:
    """``(a * (k*d) + b) floordiv d -> a * k + b floordiv d`` (also for a constant multiple of ``d``).

    A plain summand ``a`` (multiplier 1) is kept inside even when ``d = 1`` cannot occur here.
    """
    if x.kind != ADD:
        return None
    outside: list[Expr] = []
    rest: list[Expr] = []
    for t in summands(x):
        base, k = split_multiplier(t)
        if k % d == 0 and (t.kind == CONST or (t.kind == MUL and k != 1)):
            outside.append(_mul(base, const(k // d)))
        else:
            rest.append(t)
    if not outside:
        return None
    return _add([*outside, _floordiv(_add(rest) if rest else const(0), const(d))])


FLOORDIV_RULES = (floordiv_fold_constant, floordiv_cancel_gcd, floordiv_by_unit, floordiv_extract_multiples)


def _floordiv(x: Expr, r: Expr) -> Expr:
    """Canonical ``x floordiv r``: :data:`FLOORDIV_RULES` for a non-zero constant ``r``."""
    if r.kind != CONST or r.value == 0:
        return make(FLOORDIV, x, r)
    return _first(FLOORDIV_RULES, x, r.value) or make(FLOORDIV, x, r)


def ceildiv_fold_constant(x: Expr, d: int) -> Expr | None:
    """``a ceildiv d -> ceil(a / d)`` for a constant ``a``."""
    return const(ceil_div(x.value, d)) if x.kind == CONST else None


def ceildiv_cancel_gcd(x: Expr, d: int) -> Expr | None:
    """``(a * c) ceildiv d -> (a * (c/g)) ceildiv (d/g) when g = gcd(c, d) > 1``."""
    reduced = _gcd_reduce(x, d)
    return None if reduced is None else _ceildiv(reduced[0], const(reduced[1]))


def ceildiv_to_floordiv(x: Expr, d: int) -> Expr:
    """``x ceildiv d -> (x + d - 1) floordiv d`` for ``d > 0`` (``x`` if ``d = 1``), else ``-(x // -d)``."""
    if d == 1:
        return x
    if d > 0:
        return _floordiv(_add([x, const(d - 1)]), const(d))
    return _mul(_floordiv(x, const(-d)), const(-1))


CEILDIV_RULES = (ceildiv_fold_constant, ceildiv_cancel_gcd, ceildiv_to_floordiv)


def _ceildiv(x: Expr, r: Expr) -> Expr:
    """Canonical ``x ceildiv r``: :data:`CEILDIV_RULES` for a non-zero constant ``r``."""
    if r.kind != CONST or r.value == 0:
        return make(CEILDIV, x, r)
    out = _first(CEILDIV_RULES, x, r.value)
    assert out is not None  # ceildiv_to_floordiv always applies
    return out


def mod_by_unit(x: Expr, m: int) -> Expr | None:
    """``x mod 1 -> 0`` and ``x mod -1 -> 0``."""
    return const(0) if m in (1, -1) else None


def mod_by_negative(x: Expr, m: int) -> Expr | None:
    """``x mod m`` stays when ``m < 0`` (the rules below assume a positive modulus)."""
    return make(MOD, x, const(m)) if m < 0 else None


def mod_of_multiple(x: Expr, m: int) -> Expr | None:
    """``x mod m -> 0 when x is a known multiple of m`` (:func:`largest_known_divisor`)."""
    return const(0) if largest_known_divisor(x) % m == 0 else None


def mod_cancel_gcd(x: Expr, m: int) -> Expr | None:
    """``(a * c) mod m -> ((a * (c/g)) mod (m/g)) * g when g = gcd(c, m) > 1``."""
    if x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
        assert x.lhs is not None
        c = x.rhs.value
        g = gcd(c, m)
        if g > 1:
            return _mul(_mod(_mul(x.lhs, const(c // g)), const(m // g)), const(g))
    return None


def mod_of_mod(x: Expr, m: int) -> Expr | None:
    """``(x mod a) mod m -> x mod m when m divides a``."""
    if x.kind == MOD and x.rhs is not None and x.rhs.kind == CONST and x.rhs.value % m == 0:
        assert x.lhs is not None
        return _mod(x.lhs, const(m))
    return None


def mod_drop_multiples(x: Expr, m: int) -> Expr | None:
    """``(a + b) mod m -> a mod m when b is a known multiple of m`` (any summands)."""
    if x.kind != ADD:
        return None
    parts = summands(x)
    kept = [t for t in parts if largest_known_divisor(t) % m != 0]
    if len(kept) == len(parts):
        return None
    return _mod(_add(kept), const(m)) if kept else const(0)


MOD_RULES = (mod_by_unit, mod_by_negative, mod_of_multiple, mod_cancel_gcd, mod_of_mod, mod_drop_multiples)


def _mod(x: Expr, r: Expr) -> Expr:
    """Canonical ``x mod r``: ``x mod x -> 0``; :data:`MOD_RULES` for a non-zero constant ``r``."""
    if r.kind != CONST or r.value == 0:
        return make(MOD, x, r) if x is not r else const(0)
    if x.kind == CONST:
        return make(MOD, x, r)
    return _first(MOD_RULES, x, r.value) or make(MOD, x, r)


_BY_KIND: dict[int, Callable[[Expr, Expr], Expr]] = {
    MUL: _mul,
    FLOORDIV: _floordiv,
    CEILDIV: _ceildiv,
    MOD: _mod,
}


def _first(rules: Sequence[Callable[[Expr, Any], Expr | None]], x: Expr, arg: Any) -> Expr | None:
    """The result of the first rule that applies, else None."""
    for rule in rules:
        out = rule(x, arg)
        if out is not None:
            return out
    return None
