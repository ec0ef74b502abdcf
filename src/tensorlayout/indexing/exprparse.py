"""The expression parser (XLA's ``ParseSymbolicExpr``, spec §2.2).

Grammar (left-associative)::

    expr   ::= term (('+' | '-') term)*
    term   ::= factor (('*' | '/' | 'floordiv' | 'ceildiv' | 'mod') factor)*
    factor ::= '-' factor | ('max' | 'min') '(' expr ',' expr ')' | '(' expr ')' | name | integer

``a - b`` is ``a + canonical(b * -1)`` and ``-f`` is ``canonical(f * -1)``; everything else is
built with the creation-time rules only.

>>> print(parse_expr("-(v0 + 1)"))
-v0 - 1
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from tensorlayout._cursor import Cursor
from tensorlayout.core.intmath import INT64_MAX
from tensorlayout.errors import ParseError, expect_text
from tensorlayout.indexing._guard import TOO_DEEP
from tensorlayout.indexing.canonical import _canon as canonicalize
from tensorlayout.indexing.expr import (
    ADD,
    CEILDIV,
    CONST,
    FLOORDIV,
    MAX,
    MIN,
    MOD,
    MUL,
    Expr,
    const,
    make,
    var,
)

__all__ = [
    "VariableMap",
    "parse_expr",
    "parse_symbolic_expr",
    "parse_symbolic_expr_and_advance",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UINT = re.compile(r"[0-9]+")
_DEFAULT = re.compile(r"([dsv])([0-9]+)$")
_TERM_OPS = {"mod": MOD, "floordiv": FLOORDIV, "floorDiv": FLOORDIV, "ceildiv": CEILDIV, "ceilDiv": CEILDIV}
_KEYWORDS = {"in", "domain", "max", "min", *_TERM_OPS}
T = TypeVar("T")
VariableMap = Sequence[str] | Mapping[str, "Expr | int"]


def _run(cur: Cursor, parse: Callable[[], T]) -> T:
    """Run a parse step; too-deep nesting becomes a ParseError at the cursor."""
    try:
        return parse()
    except RecursionError:
        raise ParseError(cur.text, cur.pos, "an expression nested less deeply", context=TOO_DEEP) from None


def _literal(cur: Cursor, m: re.Match[str], sign: int, negated: bool = False) -> Expr:
    """An integer literal (``sign`` -1 after a unary minus), checked to fit in int64.

    ``negated``: the literal follows a binary minus, so ``2**63`` is allowed (it becomes INT64_MIN).
    """
    if len(m.group()) > 20:  # longer than any int64 (and than Python's int() limit allows)
        raise ParseError(cur.text, m.start(), "an integer that fits in int64", m.group()[:24])
    value = sign * int(m.group())
    if not -INT64_MAX - 1 <= value <= INT64_MAX + negated:
        raise ParseError(cur.text, m.start(), "an integer that fits in int64", m.group())
    return const(value)


def _left_chain(kind: int, lhs: Expr, rhs: Expr) -> Expr:
    """``lhs op (b op c)`` read as ``(lhs op b) op c`` for ``+`` and ``*``: the printer leaves
    those parentheses out (as XLA's does), so keeping them would make ``parse(print(m))`` a
    different (equivalent) tree than ``m``."""
    if kind not in (ADD, MUL) or rhs.kind != kind or _is_negation(rhs) or _leads_negative(rhs):
        return make(kind, lhs, rhs)
    assert rhs.lhs is not None and rhs.rhs is not None
    return _left_chain(kind, _left_chain(kind, lhs, rhs.lhs), rhs.rhs)


def _leads_negative(e: Expr) -> bool:
    """A sum whose leftmost summand has a negative factor: printed ``x - (...)``, parenthesized."""
    while e.kind == ADD:
        assert e.lhs is not None
        e = e.lhs
    return e.kind == MUL and any(c is not None and c.kind == CONST and c.value < 0 for c in (e.lhs, e.rhs))


def _is_negation(e: Expr) -> bool:
    """``x * -1``, which prints as ``-x`` (with its own parentheses)."""
    return e.kind == MUL and e.rhs is not None and e.rhs.kind == CONST and e.rhs.value == -1


class _ExprParser:
    """Recursive descent over a shared :class:`Cursor`; ``names`` maps a name to a variable id."""

    def __init__(self, cur: Cursor, names: Mapping[str, Expr] | None, num_dims: int | None) -> None:
        self.cur = cur
        self.names = names
        self.num_dims = num_dims
        self.negated_literal = False

    def expr(self) -> Expr:
        e = self.term()
        while True:
            if self.cur.accept("+"):
                e = _left_chain(ADD, e, self.term())
            elif self.cur.peek("-") and not self.cur.peek("->"):
                self.cur.accept("-")
                self.negated_literal = True  # "x - 9223372036854775808" is x + INT64_MIN
                e = _left_chain(ADD, e, canonicalize(make(MUL, self.term(), const(-1))))
            else:
                return e

    def _term_op(self) -> int | None:
        cur = self.cur
        if cur.peek("*"):
            cur.accept("*")
            return MUL
        if cur.peek("/"):
            cur.accept("/")
            return FLOORDIV
        cur.skip()
        m = _NAME.match(cur.text, cur.pos)
        if m and m.group() in _TERM_OPS:
            cur.pos = m.end()
            return _TERM_OPS[m.group()]
        return None

    def term(self) -> Expr:
        e = self.factor()
        while (op := self._term_op()) is not None:
            e = _left_chain(op, e, self.factor())
        return e

    def factor(self) -> Expr:
        cur = self.cur
        cur.skip()
        start = cur.pos
        if cur.at_end():
            raise cur.error("an expression")
        if not cur.text.startswith(tuple("0123456789"), cur.pos):
            self.negated_literal = False
        if cur.peek("-") and not cur.peek("->"):
            cur.accept("-")
            m = _UINT.match(cur.text, cur.pos)
            if m:  # '-' right before digits is one negative literal, as in XLA's tokenizer
                cur.pos = m.end()
                return _literal(cur, m, -1)
            return canonicalize(make(MUL, self.factor(), const(-1)))
        if cur.accept("("):
            e = self.expr()
            cur.expect(")", "')' to close the parenthesis")
            return e
        m = cur.match(_UINT)
        if m:
            slack, self.negated_literal = self.negated_literal, False
            return _literal(cur, m, 1, slack)
        m = cur.match(_NAME)
        if not m:
            raise cur.error("an expression")
        word = m.group()
        if word in ("max", "min") and cur.peek("("):
            cur.accept("(")
            a = self.expr()
            cur.expect(",", "',' between the arguments of " + word)
            b = self.expr()
            cur.expect(")", f"')' to close {word}(")
            return make(MAX if word == "max" else MIN, a, b)
        return self._variable(word, start)

    def _variable(self, word: str, start: int) -> Expr:
        if self.names is not None:
            if word in self.names:
                return self.names[word]
            raise ParseError(self.cur.text, start, "a declared variable name", repr(word))
        m = _DEFAULT.match(word)
        if not m:
            raise ParseError(self.cur.text, start, "a variable (d<N>, s<N> or v<N>) or a number", repr(word))
        kind, n = m.group(1), int(m.group(2))
        if kind == "s":
            if self.num_dims is None:
                raise ParseError(self.cur.text, start + 1, "a dimension count to place the symbol",
                                 context="symbol cannot be parsed because number of dimensions is not set")
            return var(self.num_dims + n)
        return var(n)


def _table(names: VariableMap | None) -> dict[str, Expr] | None:
    if names is None:
        return None
    if isinstance(names, Mapping):
        return {str(k): v if isinstance(v, Expr) else var(v) for k, v in names.items()}
    return {n: var(i) for i, n in enumerate(names)}


def parse_symbolic_expr_and_advance(
    text: str, num_dims: int | None = None, names: VariableMap | None = None
) -> tuple[Expr, str]:
    """Parse one expression at the start of ``text``; returns it and the unparsed rest.

    >>> parse_symbolic_expr_and_advance("d0 + 1 in [0, 3]")
    (Expr('v0 + 1'), 'in [0, 3]')
    """
    cur = Cursor(expect_text(text, "expression text"))
    e = _run(cur, _ExprParser(cur, _table(names), num_dims).expr)
    return e, text[cur.pos:]


def parse_expr(text: str, num_dims: int | None = None, names: VariableMap | None = None) -> Expr:
    """Parse one expression (XLA's ``ParseSymbolicExpr``).

    Variables are ``d<N>``/``v<N>`` (id N) and ``s<N>`` (id ``num_dims + N``), unless ``names``
    is given: a list naming ids ``0, 1, ...`` or a mapping from name to variable (or id).

    >>> parse_expr("s0 * 2", num_dims=1), parse_expr("foo + dim_bar", names={"foo": 0, "dim_bar": 1})
    (Expr('v1 * 2'), Expr('v0 + v1'))
    """
    e, rest = parse_symbolic_expr_and_advance(text, num_dims, names)
    Cursor(text, len(text) - len(rest)).expect_end("an operator or the end of the expression")
    return e


parse_symbolic_expr = parse_expr


