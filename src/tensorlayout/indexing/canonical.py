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

from math import gcd

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
    if e.kind in (CONST, VAR):
        return e
    assert e.lhs is not None and e.rhs is not None
    l, r = _canon(e.lhs), _canon(e.rhs)
    k = e.kind
    if k == ADD:
        out = _add([l, r])
    elif k == MUL:
        out = _mul(l, r)
    elif k in (MIN, MAX):
        out = _minmax(k, l, r)
    elif k == FLOORDIV:
        out = _floordiv(l, r)
    elif k == CEILDIV:
        out = _ceildiv(l, r)
    else:
        out = _mod(l, r)
    _CACHE[e] = out
    _CACHE[out] = out
    return out


def _add(parts: list[Expr]) -> Expr:
    """Canonical sum of already canonical parts."""
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
    coeffs = {b: c for b, c in coeffs.items() if c != 0}
    # (X / C) * (C * k) + (X mod C) * k -> X * k
    changed = True
    while changed:
        changed = False
        for base, c in list(coeffs.items()):
            if base.kind != MOD or base not in coeffs:
                continue
            assert base.lhs is not None and base.rhs is not None
            if base.rhs.kind != CONST or base.rhs.value <= 0:
                continue
            div = make(FLOORDIV, base.lhs, base.rhs)
            if coeffs.get(div) == c * base.rhs.value:
                del coeffs[base]
                del coeffs[div]
                rest = [base_ * k if k != 1 else base_ for base_, k in coeffs.items()]
                return _add([*rest, _mul(base.lhs, const(c)), const(constant)])
    terms = [b if c == 1 else make(MUL, b, const(c)) for b, c in coeffs.items()]
    if constant:
        terms.append(const(constant))
    return build_sum(terms)


def _mul(l: Expr, r: Expr) -> Expr:
    if l.kind == CONST and r.kind == CONST:
        return make(MUL, l, r)
    if compare(l, r) > 0:
        l, r = r, l
    if r.kind == CONST:
        c = r.value
        if c == 0:
            return r
        if c == 1:
            return l
        if l.kind == ADD:
            return _add([_mul(t, r) for t in summands(l)])
        return make(MUL, l, r)
    if l.kind == ADD:
        return _add([_mul(t, r) for t in summands(l)])
    if r.kind == ADD:
        return _add([_mul(l, t) for t in summands(r)])
    for a, b in ((l, r), (r, l)):
        if a.kind == MUL and a.rhs is not None and a.rhs.kind == CONST:
            assert a.lhs is not None
            return _mul(_mul(a.lhs, b), a.rhs)
    return make(MUL, l, r)


def _minmax(k: int, l: Expr, r: Expr) -> Expr:
    if compare(l, r) > 0:
        l, r = r, l
    diff = _add([l, _mul(r, const(-1))])
    if diff.kind == CONST:
        if k == MIN:
            return l if diff.value <= 0 else r
        return l if diff.value >= 0 else r
    return make(k, l, r)


def _gcd_reduce(x: Expr, d: int) -> tuple[Expr, int]:
    """``(A * c) / d`` -> ``(A * (c/g)) / (d/g)`` with ``g = gcd(c, d)``."""
    if x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
        assert x.lhs is not None
        c = x.rhs.value
        g = gcd(c, d)
        if g > 1:
            return _mul(x.lhs, const(c // g)), d // g
    return x, d


def _floordiv(x: Expr, r: Expr) -> Expr:
    if r.kind != CONST or r.value == 0:
        return make(FLOORDIV, x, r)
    d = r.value
    if x.kind == CONST:
        return const(x.value // d)
    x, d = _gcd_reduce(x, d)
    if d == 1:
        return x
    if d == -1:
        return _mul(x, const(-1))
    if x.kind == ADD:
        outside: list[Expr] = []
        rest: list[Expr] = []
        for t in summands(x):
            base, k = split_multiplier(t)
            if k % d == 0 and (t.kind == CONST or (t.kind == MUL and k != 1)):
                outside.append(_mul(base, const(k // d)))
            else:
                rest.append(t)
        if outside:
            inner = _add(rest) if rest else const(0)
            return _add([*outside, _floordiv(inner, const(d))])
    return make(FLOORDIV, x, const(d))


def _ceildiv(x: Expr, r: Expr) -> Expr:
    if r.kind != CONST or r.value == 0:
        return make(CEILDIV, x, r)
    d = r.value
    if x.kind == CONST:
        return const(-((-x.value) // d))
    x, d = _gcd_reduce(x, d)
    if d == 1:
        return x
    if d > 0:
        return _floordiv(_add([x, const(d - 1)]), const(d))
    return _mul(_floordiv(x, const(-d)), const(-1))


def _mod(x: Expr, r: Expr) -> Expr:
    if r.kind != CONST or r.value == 0:
        return make(MOD, x, r) if x is not r else const(0)
    m = r.value
    if x.kind == CONST:
        return make(MOD, x, r)
    if m in (1, -1):
        return const(0)
    if m < 0:
        return make(MOD, x, r)
    if largest_known_divisor(x) % m == 0:
        return const(0)
    if x.kind == MUL and x.rhs is not None and x.rhs.kind == CONST:
        assert x.lhs is not None
        c = x.rhs.value
        g = gcd(c, m)
        if g > 1:
            return _mul(_mod(_mul(x.lhs, const(c // g)), const(m // g)), const(g))
    if x.kind == MOD and x.rhs is not None and x.rhs.kind == CONST and x.rhs.value % m == 0:
        assert x.lhs is not None
        return _mod(x.lhs, r)
    if x.kind == ADD:
        parts = summands(x)
        kept = [t for t in parts if largest_known_divisor(t) % m != 0]
        if len(kept) < len(parts):
            return _mod(_add(kept), r) if kept else const(0)
    return make(MOD, x, r)
