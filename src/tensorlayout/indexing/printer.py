"""Printing expressions and maps in XLA's current text format (spec §2.1).

Precedence: ``+`` is 1; ``*``, ``/`` (floordiv), ``ceildiv`` and ``mod`` are 2; the rest 3.
``x * -1`` prints as ``-x`` and ``a + (x * -k)`` as ``a - x * k``.

>>> from tensorlayout.indexing.expr import var
>>> print((var(0) % 2) * 4 + var(1) // 128 // 128 - 3)
(v0 mod 2) * 4 + v1 / 128 / 128 - 3
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tensorlayout.indexing.expr import ADD, CEILDIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, VAR, Expr

__all__ = ["expr_to_string", "name_function"]

_OP_TEXT = {ADD: " + ", MUL: " * ", FLOORDIV: " / ", CEILDIV: " ceildiv ", MOD: " mod "}
Names = Sequence[str] | Callable[[int], str] | int | None


def name_function(names: Names) -> Callable[[int], str]:
    """An id -> name function from a name list, a callable, a dim count or None (``v<i>``).

    >>> [name_function(1)(i) for i in range(3)]
    ['d0', 's0', 's1']
    """
    if names is None:
        return lambda i: f"v{i}"
    if isinstance(names, int) and not isinstance(names, bool):
        n = names
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


def expr_to_string(e: Expr, names: Names = None) -> str:
    """The XLA text of ``e``; ``names`` gives variable names (default ``v<id>``)."""
    return _print(e, name_function(names))


def _child(c: Expr, parent: int, is_rhs: bool, name: Callable[[int], str]) -> str:
    text = _print(c, name)
    cp = _prec(c)
    pp = 1 if parent == ADD else 2
    if cp < pp:
        return f"({text})"
    if cp == pp:
        if c.kind != parent:
            return f"({text})"
        if parent in (FLOORDIV, CEILDIV, MOD) and is_rhs:
            return f"({text})"
    return text


def _print(e: Expr, name: Callable[[int], str]) -> str:
    k = e.kind
    if k == CONST:
        return str(e.value)
    if k == VAR:
        return name(e.value)
    lhs, rhs = e.lhs, e.rhs
    assert lhs is not None and rhs is not None
    if k in (MIN, MAX):
        fn = "min" if k == MIN else "max"
        return f"{fn}({_print(lhs, name)}, {_print(rhs, name)})"
    if _is_neg(e):
        return "-" + _child(lhs, MUL, False, name)
    if k == ADD:
        left = _child(lhs, ADD, False, name)
        if rhs.kind == CONST and rhs.value < 0:
            return f"{left} - {-rhs.value}"
        if rhs.kind in (MUL, ADD) and _has_negative_factor(rhs):
            from tensorlayout.indexing.canonical import _canon

            negated = _canon(rhs * -1)
            text = _print(negated, name)
            if negated.kind == ADD:
                text = f"({text})"
            return f"{left} - {text}"
        return f"{left} + {_child(rhs, ADD, True, name)}"
    return f"{_child(lhs, k, False, name)}{_OP_TEXT[k]}{_child(rhs, k, True, name)}"
