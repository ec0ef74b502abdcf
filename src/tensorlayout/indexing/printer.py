"""Printing expressions and maps in XLA's current text format (spec §2.1).

Precedence: ``+`` is 1; ``*``, ``/`` (floordiv), ``ceildiv`` and ``mod`` are 2; the rest 3.
``x * -1`` prints as ``-x`` and ``a + (x * -k)`` as ``a - x * k``.

>>> from tensorlayout.indexing.expr import var
>>> print((var(0) % 2) * 4 + var(1) // 128 // 128 - 3)
(v0 mod 2) * 4 + v1 / 128 / 128 - 3
"""

from __future__ import annotations

from collections.abc import Callable

from tensorlayout.core.intmath import INT64_MAX, INT64_MIN
from tensorlayout.indexing.canonical import _canon
from tensorlayout.indexing.expr import ADD, CEILDIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, VAR, Expr, Names

__all__ = ["expr_to_string", "name_function"]

_OP_TEXT = {ADD: " + ", MUL: " * ", FLOORDIV: " / ", CEILDIV: " ceildiv ", MOD: " mod "}
#: The spelling of XLA before June 2026 and of MLIR (``floordiv`` instead of ``/``).
_OP_TEXT_FLOORDIV = {**_OP_TEXT, FLOORDIV: " floordiv "}


def name_function(names: Names) -> Callable[[int], str]:
    """An id -> name function from a name list, a callable, a dim count or None (``v<i>``).

    >>> [name_function(1)(i) for i in range(3)]
    ['d0', 's0', 's1']
    """
    if names is None:
        return lambda i: f"v{i}"
    if isinstance(names, int):
        n = int(names)
        return lambda i: f"d{i}" if i < n else f"s{i - n}"
    if callable(names):
        return names
    seq = list(names)

    def lookup(i: int) -> str:
        return seq[i] if i < len(seq) else f"v{i}"

    return lookup


def _is_neg(e: Expr) -> bool:
    """``x * -1``, printed as ``-x``."""
    return e.kind == MUL and e.rhs is not None and e.rhs.kind == CONST and e.rhs.value == -1


def _prec(e: Expr) -> int:
    if e.kind == ADD:
        return 1
    if e.kind in (MUL, FLOORDIV, CEILDIV, MOD):
        return 3 if _is_neg(e) else 2
    return 3


def _negative_mul(e: Expr) -> bool:
    if e.kind != MUL:
        return False
    assert e.lhs is not None and e.rhs is not None
    return (e.rhs.kind == CONST and e.rhs.value < 0) or (e.lhs.kind == CONST and e.lhs.value < 0)


def _has_negative_factor(e: Expr) -> bool:
    """A Mul by a negative constant, or a sum whose leftmost summand is one."""
    while e.kind == ADD:
        assert e.lhs is not None
        e = e.lhs
    return _negative_mul(e)


def _literals_fit(e: Expr) -> bool:
    """Every constant of ``e`` is an int64 (``x - y * 9223372036854775808`` would not re-parse)."""
    stack = [e]
    while stack:
        e = stack.pop()
        if e.kind == CONST and not INT64_MIN <= e.value <= INT64_MAX:
            return False
        stack.extend(c for c in (e.lhs, e.rhs) if c is not None)
    return True


def expr_to_string(e: Expr, names: Names = None, *, floordiv: bool = False, verbatim: bool = False) -> str:
    """The XLA text of ``e``; ``names`` gives variable names (default ``v<id>``).

    ``floordiv=True`` prints floor division as ``floordiv`` (older XLA, MLIR) instead of ``/``.
    ``verbatim=True`` prints every negated summand as ``a - (...)`` exactly as XLA does, even
    where that text would read back as another tree (the default keeps such a summand).

    >>> from tensorlayout.indexing.expr import var
    >>> expr_to_string(var(0) // 4, ["d0"], floordiv=True)
    'd0 floordiv 4'
    """
    return _Printer(name_function(names), _OP_TEXT_FLOORDIV if floordiv else _OP_TEXT, verbatim).print(e)

def _needs_parens(c: Expr, parent: int, is_rhs: bool) -> bool:
    """A child is parenthesized below a tighter parent, or beside a different op of equal precedence."""
    cp = _prec(c)
    pp = 1 if parent == ADD else 2
    if cp != pp:
        return cp < pp
    return c.kind != parent or (parent in (FLOORDIV, CEILDIV, MOD) and is_rhs)


class _Printer:
    """One printing run: variable names and the operator spellings."""

    def __init__(self, name: Callable[[int], str], ops: dict[int, str], verbatim: bool = False) -> None:
        self.name = name
        self.ops = ops
        self.verbatim = verbatim

    def child(self, c: Expr, parent: int, is_rhs: bool) -> str:
        text = self.print(c)
        return f"({text})" if _needs_parens(c, parent, is_rhs) else text

    def print(self, e: Expr) -> str:
        k = e.kind
        if k == CONST:
            return str(e.value)
        if k == VAR:
            return self.name(e.value)
        lhs, rhs = e.lhs, e.rhs
        assert lhs is not None and rhs is not None
        if k in (MIN, MAX):
            fn = "min" if k == MIN else "max"
            return f"{fn}({self.print(lhs)}, {self.print(rhs)})"
        if _is_neg(e) and lhs.kind != ADD:
            return "-" + self.child(lhs, MUL, False)
        if _is_neg(e):  # `-(a - b)` reads back as the sum `-a + b`, another tree: keep this one
            return f"({self.print(lhs)}) * -1"
        if k == ADD:
            return self.sum(lhs, rhs)
        return f"{self.child(lhs, k, False)}{self.ops[k]}{self.child(rhs, k, True)}"

    def sum(self, lhs: Expr, rhs: Expr) -> str:
        """``a + b``, or ``a - c`` when ``b`` is a negative constant or has a negative factor."""
        left = self.child(lhs, ADD, False)
        if rhs.kind == CONST and rhs.value < 0:
            return f"{left} - {-rhs.value}"
        negated = _canon(rhs * -1) if rhs.kind in (MUL, ADD) and _has_negative_factor(rhs) else None
        reads_back = negated is not None and (self.verbatim or _canon(negated * -1) == rhs)
        if negated is not None and _literals_fit(negated) and reads_back:
            text = self.print(negated)
            if negated.kind == ADD:
                text = f"({text})"
            return f"{left} - {text}"
        if negated is not None:  # `- (...)` would read back as another tree: keep this one
            return f"{left} + ({self.print(rhs)})"
        return f"{left} + {self.child(rhs, ADD, True)}"
