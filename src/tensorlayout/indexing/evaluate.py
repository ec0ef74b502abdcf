"""Expressions and maps evaluated at many points at once (exact Python ints in numpy arrays).

One walk of the expression tree per batch instead of one per point; each operation runs over
object arrays, so values are exact ints with the same semantics as :meth:`Expr.evaluate`
(floor division, XLA's mod) and :meth:`Expr.safe_evaluate` (undefined points flagged).

>>> import numpy as np
>>> from tensorlayout.indexing.expr import var
>>> values, undefined = evaluate_columns(var(0) // 2 + var(1) % 3, columns(np.array([[5, 7], [2, -1]])))
>>> values.tolist(), undefined.tolist()
([3, 3], [False, False])
"""

from __future__ import annotations

import numpy as np

from tensorlayout.core.intmath import INT64_MAX, INT64_MIN
from tensorlayout.indexing.expr import ADD, CEILDIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, VAR, Expr, _cxx_mod

__all__ = ["columns", "evaluate_columns"]

_MOD = np.frompyfunc(_cxx_mod, 2, 1)


def columns(points: np.ndarray) -> list[np.ndarray]:
    """The variable columns of an ``(n, vars)`` integer array, as exact-int object arrays."""
    pts = np.asarray(points, dtype=object)
    return [pts[:, k] for k in range(pts.shape[1])] if pts.ndim == 2 else []


def evaluate_columns(e: Expr, cols: list[np.ndarray], safe: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``e`` at every row of ``cols`` (one array per variable: exact-int object arrays, or int64
    where the caller knows values fit) and, per row, whether
    the value is undefined: a division or mod by zero and, when ``safe``, what
    :meth:`Expr.safe_evaluate` also refuses (mod by a negative, int64 overflow)."""
    n = max((len(c) for c in cols), default=1)  # a column of one value broadcasts
    undefined = np.zeros(n, dtype=bool)
    dtype = cols[0].dtype if cols else np.dtype(object)
    out = _Walk(cols, dtype, safe, undefined).value(e)
    return np.broadcast_to(out, (n,)), undefined


class _Walk:
    """One evaluation: each distinct subexpression is computed once."""

    def __init__(self, cols: list[np.ndarray], dtype: np.dtype, safe: bool, undefined: np.ndarray) -> None:
        self.cols, self.dtype, self.safe, self.undefined = cols, dtype, safe, undefined
        self.seen: dict[Expr, np.ndarray] = {}

    def value(self, e: Expr) -> np.ndarray:
        got = self.seen.get(e)
        if got is not None:
            return got
        if e.kind == CONST:
            out = np.asarray(e.value, dtype=self.dtype)
        elif e.kind == VAR:
            out = self.cols[e.value]
        else:
            assert e.lhs is not None and e.rhs is not None
            out = _BINARY[e.kind](self.value(e.lhs), self.value(e.rhs), self.safe, self.undefined)
            if self.safe and self.dtype == object:
                self.undefined |= (out < INT64_MIN) | (out > INT64_MAX)
        self.seen[e] = out
        return out


def _divisor(b: np.ndarray, undefined: np.ndarray) -> np.ndarray:
    """``b`` with zeros flagged undefined and replaced by 1 (the row's value is discarded)."""
    zero = b == 0
    if zero.any():
        undefined |= zero
        b = np.where(zero, 1, b)
    return b


def _floordiv(a: np.ndarray, b: np.ndarray, safe: bool, undefined: np.ndarray) -> np.ndarray:
    b = _divisor(b, undefined)
    if safe:
        undefined |= (a == INT64_MIN) & (b == -1)
    return a // b


def _ceildiv(a: np.ndarray, b: np.ndarray, safe: bool, undefined: np.ndarray) -> np.ndarray:
    return -((-a) // _divisor(b, undefined))


def _mod(a: np.ndarray, b: np.ndarray, safe: bool, undefined: np.ndarray) -> np.ndarray:
    b = _divisor(b, undefined)
    if safe:
        undefined |= b < 0
    # XLA's mod is Python's for d > 0; the ufunc of _cxx_mod gives a bare int on 0-d operands
    return a % b if np.all(b > 0) else np.asarray(_MOD(a, b), dtype=object)


_BINARY = {
    ADD: lambda a, b, safe, undefined: a + b,
    MUL: lambda a, b, safe, undefined: a * b,
    MIN: lambda a, b, safe, undefined: np.minimum(a, b),
    MAX: lambda a, b, safe, undefined: np.maximum(a, b),
    FLOORDIV: _floordiv,
    CEILDIV: _ceildiv,
    MOD: _mod,
}
