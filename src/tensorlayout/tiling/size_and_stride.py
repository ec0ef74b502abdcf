"""XLA's ``ExtractSizeAndStride``: the (size, stride, constraints) of one strided result.

A result expression of an indexing map, minus its offset, is read as a function of the tile
sizes ``d_k``: how many distinct values it takes over a tile (its size), how far apart they
are (its stride), and under which tile sizes that reading is exact (the constraints).

>>> from tensorlayout.indexing import var, Interval
>>> s = extract_size_and_stride(var(0) * 6 + var(1), [Interval(0, 7), Interval(0, 5)], [])
>>> print(s.size.to_string(2), "|", s.constraints.to_string(2))
d0 * d1 | d0 in [1, 1] || d1 in [1, 1] || d1 in [6, 6]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tensorlayout.indexing import Expr, Interval, const
from tensorlayout.indexing.expr import ADD, CONST, FLOORDIV, MOD, MUL, VAR
from tensorlayout.indexing.symbolic_map import get_dimension_index, get_symbol_index, is_dimension
from tensorlayout.tiling.constraint_expression import Constraint, ConstraintExpression

__all__ = ["SizeAndStrideExpression", "extract_size_and_stride"]


@dataclass(frozen=True, slots=True)
class SizeAndStrideExpression:
    """``SizeAndStrideExpression``: size and stride over the tile sizes, with constraints."""

    size: Expr
    stride: Expr
    constraints: ConstraintExpression = field(default_factory=ConstraintExpression.get_always_satisfied)


def _mod_result(dividend: Expr, modulus: Expr) -> SizeAndStrideExpression:
    """``dividend mod c``: size ``n - ((n - 1) / c) * c`` when ``c | n`` or ``n | c``."""
    size = dividend - ((dividend - 1).floor_div(modulus)) * modulus
    zero = Interval(0, 0)
    constraints = Constraint(modulus % dividend, zero) | Constraint(dividend % modulus, zero)
    return SizeAndStrideExpression(size, const(1), constraints)


def _from_mod(lhs: Expr, modulus: Expr, num_dims: int) -> SizeAndStrideExpression | None:
    """``d mod c`` or ``(d / k) mod c`` (unit inner stride only)."""
    if not modulus.is_const:
        return None
    if is_dimension(lhs, num_dims):
        return _mod_result(lhs, modulus)
    if lhs.kind != FLOORDIV:
        return None
    dim, den = lhs.lhs, lhs.rhs
    assert dim is not None and den is not None
    if not is_dimension(dim, num_dims) or not den.is_const:
        return None
    return _mod_result((dim + (den - 1)).floor_div(den), modulus)


def _from_floordiv(num: Expr, den: Expr, num_dims: int) -> SizeAndStrideExpression | None:
    """``d / c``: size ``ceildiv(d, c)`` written ``(d + c - 1) / c``, stride 1."""
    if not den.is_const or not is_dimension(num, num_dims):
        return None
    return SizeAndStrideExpression((num + (den - 1)).floor_div(den), const(1))


def _summands(e: Expr) -> list[Expr]:
    """The operands of a (nested) sum, left to right."""
    if e.kind != ADD:
        return [e]
    assert e.lhs is not None and e.rhs is not None
    return _summands(e.lhs) + _summands(e.rhs)


def _range_size(size: Expr, dims: Sequence[Interval]) -> int | None:
    """How many values a size (a constant or a dimension with lower bound 0) can capture."""
    if size.is_const:
        return size.value
    iv = dims[get_dimension_index(size, len(dims))]
    return iv.upper + 1 if iv.lower == 0 else None


def _if_neq_one(param: Expr, true_expr: Expr, false_expr: Expr, bound: int) -> Expr:
    """``param != 1 ? true_expr : false_expr`` for ``1 <= param <= bound``, as an affine expression."""
    b = const(bound)
    condition = (b + 1 - param).floor_div(b)
    return condition * false_expr + (-condition + 1) * true_expr


def _by_stride(parts: Sequence[SizeAndStrideExpression]) -> list[SizeAndStrideExpression]:
    return sorted(parts, key=lambda p: -abs(p.stride.value))


def _combine_strides(parts: Sequence[SizeAndStrideExpression], dims: Sequence[Interval]) -> Expr | None:
    """The stride of the minor-most summand whose size is not 1, as nested ifs (0 if all are 1)."""
    for p in parts:
        if not p.stride.is_const or not (p.size.is_const or is_dimension(p.size, len(dims))):
            return None
    ordered = _by_stride(parts)
    for prev, cur in itertools.pairwise(ordered):
        n = _range_size(cur.size, dims)
        if n is None or n * abs(cur.stride.value) != abs(prev.stride.value):
            return None
    nested = const(0)
    for p in ordered:
        n = _range_size(p.size, dims)
        if n is None:
            return None
        nested = _if_neq_one(p.size, p.stride, nested, n)
    return nested


def _one_pattern(ordered: Sequence[SizeAndStrideExpression], dims: Sequence[Interval], partial: int,
                 full: int) -> ConstraintExpression | None:
    """Sizes ``1* partial full{full} 1*``: ones before, the partial free, full dims at their bound."""
    out = ConstraintExpression.get_always_satisfied()
    for i, p in enumerate(ordered):
        if partial < i <= partial + full:
            n = _range_size(p.size, dims)
            if n is None:
                return None
            out = out & Constraint(p.size, Interval(n, n))
        elif i != partial:
            out = out & Constraint(p.size, Interval(1, 1))
    return out


def _summation_constraints(parts: Sequence[SizeAndStrideExpression],
                           dims: Sequence[Interval]) -> ConstraintExpression:
    """The disjunction of every ``1* partial? full* 1*`` pattern of the sizes (major to minor)."""
    ordered = _by_stride(parts)
    result = ConstraintExpression.get_unsatisfiable()
    for partial in range(len(ordered)):
        for full in range(len(ordered) - partial):
            one = _one_pattern(ordered, dims, partial, full)
            if one is not None:
                result = result | one
    return result


def _from_sum(e: Expr, dims: Sequence[Interval],
              symbols: Sequence[Interval]) -> SizeAndStrideExpression | None:
    """A sum of strided summands (collapsed dimensions): product of sizes, one combined stride."""
    parts = []
    for s in _summands(e):
        p = extract_size_and_stride(s, dims, symbols)
        if p is None:
            return None
        parts.append(p)
    constraints = ConstraintExpression.get_always_satisfied()
    size = const(1)
    for p in parts:
        constraints = constraints & p.constraints
        size = size * p.size
    stride = _combine_strides(parts, dims)
    if stride is None:
        return None
    return SizeAndStrideExpression(size, stride, constraints & _summation_constraints(parts, dims))


def _from_var(e: Expr, dims: Sequence[Interval],
              symbols: Sequence[Interval]) -> SizeAndStrideExpression | None:
    if is_dimension(e, len(dims)):
        return SizeAndStrideExpression(e, const(1))
    iv = symbols[get_symbol_index(e, len(dims))]
    return SizeAndStrideExpression(const(iv.upper + 1), const(1)) if iv.lower == 0 else None


def _from_mul(e: Expr, dims: Sequence[Interval],
              symbols: Sequence[Interval]) -> SizeAndStrideExpression | None:
    assert e.lhs is not None and e.rhs is not None
    inner = extract_size_and_stride(e.lhs, dims, symbols)
    return None if inner is None else SizeAndStrideExpression(inner.size, inner.stride * e.rhs)


_Rule = Callable[[Expr, Sequence[Interval], Sequence[Interval]], SizeAndStrideExpression | None]
_RULES: dict[int, _Rule] = {
    VAR: _from_var,
    MUL: _from_mul,
    MOD: lambda e, d, s: _from_mod(e.lhs, e.rhs, len(d)),  # type: ignore[arg-type]
    FLOORDIV: lambda e, d, s: _from_floordiv(e.lhs, e.rhs, len(d)),  # type: ignore[arg-type]
    CONST: lambda e, d, s: SizeAndStrideExpression(const(1), const(0)),
    ADD: _from_sum,
}


def extract_size_and_stride(expr: Expr, dimension_intervals: Sequence[Interval],
                            symbol_intervals: Sequence[Interval]) -> SizeAndStrideExpression | None:
    """``ExtractSizeAndStride``: None for what XLA cannot read (ceildiv, min, max, products…)."""
    rule = _RULES.get(expr.kind)
    return None if rule is None else rule(expr, dimension_intervals, symbol_intervals)
