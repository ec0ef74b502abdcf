"""Parsers for expressions, symbolic maps and indexing maps (spec §2.2).

Grammar (left-associative)::

    expr   ::= term (('+' | '-') term)*
    term   ::= factor (('*' | '/' | 'floordiv' | 'ceildiv' | 'mod') factor)*
    factor ::= '-' factor | ('max' | 'min') '(' expr ',' expr ')' | '(' expr ')' | name | integer

``a - b`` is ``a + canonical(b * -1)`` and ``-f`` is ``canonical(f * -1)``; everything else is
built with the creation-time rules only.

>>> print(parse_expr("-(v0 + 1)"))
-v0 - 1
>>> print(parse_indexing_map("(d0)[s0] -> (d0 floordiv 2 + s0), domain: d0 in [0, 9], s0 in [0, 1]"))
(d0)[s0] -> (d0 / 2 + s0), domain: d0 in [0, 9], s0 in [0, 1]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from tensorlayout._cursor import Cursor
from tensorlayout.core.intmath import INT64_MAX
from tensorlayout.errors import IndexingError, ParseError
from tensorlayout.indexing._guard import TOO_DEEP
from tensorlayout.indexing.canonical import _canon as canonicalize
from tensorlayout.indexing.expr import (
    ADD,
    CEILDIV,
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
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import ConstraintsLike, IndexingMap
from tensorlayout.indexing.variables import Variable

__all__ = [
    "SymbolicMap",
    "indexing_map_from_symbolic_map",
    "parse_expr",
    "parse_indexing_map",
    "parse_symbolic_expr",
    "parse_symbolic_expr_and_advance",
    "parse_symbolic_map",
    "parse_symbolic_map_and_advance",
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
    value = sign * int(m.group())
    if not -INT64_MAX - 1 <= value <= INT64_MAX + negated:
        raise ParseError(cur.text, m.start(), "an integer that fits in int64", m.group())
    return const(value)


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
                e = make(ADD, e, self.term())
            elif self.cur.peek("-") and not self.cur.peek("->"):
                self.cur.accept("-")
                self.negated_literal = True  # "x - 9223372036854775808" is x + INT64_MIN
                e = make(ADD, e, canonicalize(make(MUL, self.term(), const(-1))))
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
            e = make(op, e, self.factor())
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
    if not isinstance(text, str):
        raise ParseError(str(text), 0, "expression text")
    cur = Cursor(text)
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


def _name_list(cur: Cursor, close: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    if cur.accept(close):
        return out
    while True:
        cur.skip()
        at = cur.pos
        m = cur.match(_NAME)
        if not m or m.group() in _KEYWORDS:
            raise cur.error("a variable name")
        out.append((m.group(), at))
        if cur.accept(close):
            return out
        cur.expect(",", f"',' or '{close}'")


def _bound(cur: Cursor, what: str) -> int:
    cur.skip()
    at = cur.pos
    value = cur.integer(what)
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise ParseError(cur.text, at, f"{what} that fits in int64", str(value))
    return value


# interval ::= '[' integer ',' integer ']'
def _interval(cur: Cursor) -> tuple[int, int]:
    cur.expect("[", "'[' to start an interval")
    lo = _bound(cur, "the interval's lower bound")
    cur.expect(",", "',' in the interval")
    hi = _bound(cur, "the interval's upper bound")
    cur.expect("]", "']' to close the interval")
    return lo, hi


def _keyword(cur: Cursor, word: str) -> None:
    cur.skip()
    m = _NAME.match(cur.text, cur.pos)
    if not m or m.group() != word:
        raise cur.error(repr(word))
    cur.pos = m.end()


@dataclass(frozen=True)
class SymbolicMap:
    """A plain map ``(d...)[s...] -> (exprs)`` with no domain; symbols are ids ``num_dims + j``.

    >>> sm = SymbolicMap.parse("(d0)[s0] -> (d0 * 2 + s0 - 5)")
    >>> [str(r) for r in sm.results]
    ['v0 * 2 + v1 - 5']
    """

    num_dims: int
    num_symbols: int
    results: tuple[Expr, ...]

    @classmethod
    def parse(cls, text: str) -> SymbolicMap:
        """Parse ``(d...)[s...]{rt...} -> (exprs)`` with nothing after it."""
        sm, rest = parse_symbolic_map_and_advance(text)
        Cursor(text, len(text) - len(rest)).expect_end()
        return sm

    def to_string(self, dims: Sequence[str] | None = None, ranges: Sequence[str] | None = None,
                  rts: Sequence[str] = ()) -> str:
        """Print with names; symbols beyond ``len(ranges)`` are printed in ``{...}`` as runtime vars.

        >>> SymbolicMap(1, 1, (parse_expr("v0 + v1"),)).to_string()
        '(d0)[s0] -> (d0 + s0)'
        """
        dn = list(dims) if dims is not None else [f"d{i}" for i in range(self.num_dims)]
        if ranges is None:
            ranges = [f"s{j}" for j in range(self.num_symbols - len(rts))]
        names = [*dn, *ranges, *rts]
        text = "(" + ", ".join(dn) + ")"
        if ranges:
            text += "[" + ", ".join(ranges) + "]"
        if rts:
            text += "{" + ", ".join(rts) + "}"
        return text + " -> (" + ", ".join(r.to_string(names) for r in self.results) + ")"

    def __str__(self) -> str:
        return self.to_string()


_Names = list[tuple[str, int]]


def _header(cur: Cursor) -> tuple[_Names, _Names, _Names, list[Expr]]:
    cur.expect("(", "'(' to start the dimension list")
    dims = _name_list(cur, ")")
    syms = _name_list(cur, "]") if cur.accept("[") else []
    rts = _name_list(cur, "}") if cur.accept("{") else []
    table: dict[str, Expr] = {}
    for i, (name, at) in enumerate([*dims, *syms, *rts]):
        if name in table:
            raise ParseError(cur.text, at, "a variable name not declared before", repr(name))
        table[name] = var(i)
    cur.expect("->", "'->'")
    cur.expect("(", "'(' to start the results")
    results: list[Expr] = []
    parser = _ExprParser(cur, table, None)
    if not cur.accept(")"):
        while True:
            results.append(parser.expr())
            if cur.accept(")"):
                break
            cur.expect(",", "',' or ')' after a result")
    return dims, syms, rts, results


def parse_symbolic_map_and_advance(text: str) -> tuple[SymbolicMap, str]:
    """Parse a symbolic map at the start of ``text``; returns it and the unparsed rest.

    >>> sm, rest = parse_symbolic_map_and_advance("(d0) -> (d0) domain: d0 in [0, 1]")
    >>> str(sm), rest.strip()
    ('(d0) -> (d0)', 'domain: d0 in [0, 1]')
    """
    if not isinstance(text, str):
        raise ParseError(str(text), 0, "symbolic map text")
    cur = Cursor(text)
    dims, syms, rts, results = _run(cur, lambda: _header(cur))
    return SymbolicMap(len(dims), len(syms) + len(rts), tuple(results)), text[cur.pos:]


def parse_symbolic_map(text: str) -> SymbolicMap:
    """XLA's ``ParseSymbolicMap``: :meth:`SymbolicMap.parse`."""
    return SymbolicMap.parse(text)


def parse_indexing_map(text: str) -> IndexingMap:
    """Parse XLA's indexing-map text (also ``UNDEFINED``).

    >>> parse_indexing_map("(d0) -> (d0), domain: d0 in [3, 2]").is_known_empty
    True
    """
    if not isinstance(text, str):
        raise ParseError(str(text), 0, "indexing map text")
    cur = Cursor(text)
    if cur.accept("UNDEFINED"):
        cur.expect_end()
        return IndexingMap.undefined()
    if cur.accept("KNOWN"):
        _keyword(cur, "EMPTY")
        cur.expect_end()
        return IndexingMap.known_empty(0)
    dims, syms, rts, results = _run(cur, lambda: _header(cur))
    declared = [*dims, *syms, *rts]
    if not declared:
        if results:
            raise cur.error("'()' results for a map without variables")
        cur.expect_end()
        return IndexingMap([], [])
    cur.expect(",", "', domain:'")
    _keyword(cur, "domain")
    cur.expect(":", "':' after 'domain'")
    defaults = [f"d{i}" for i in range(len(dims))] + [f"s{j}" for j in range(len(syms))]
    defaults += [f"rt{k}" for k in range(len(rts))]
    variables: list[Variable] = []
    for i, (name, _) in enumerate(declared):
        if i:
            cur.expect(",", "',' before the next variable's bounds")
        cur.skip()
        at = cur.pos
        m = cur.match(_NAME)
        if not m or m.group() != name:
            raise ParseError(text, at, f"the bounds of {name!r}")
        _keyword(cur, "in")
        lo, hi = _interval(cur)
        variables.append(Variable(Interval(lo, hi), "" if name == defaults[i] else name))
    parser = _ExprParser(cur, {n: var(i) for i, (n, _) in enumerate(declared)}, None)
    constraints: list[tuple[Expr, tuple[int, int]]] = []
    while cur.accept(","):
        e = _run(cur, parser.expr)
        _keyword(cur, "in")
        constraints.append((e, _interval(cur)))
    cur.expect_end("',' or the end of the map")
    nd, ns = len(dims), len(syms)
    return IndexingMap(results, variables[:nd], variables[nd:nd + ns], variables[nd + ns:], constraints)



def indexing_map_from_symbolic_map(
    symbolic_map: object,
    dim_vars: Sequence[object],
    range_vars: Sequence[object] = (),
    rt_vars: Sequence[object] = (),
    constraints: ConstraintsLike = (),
) -> IndexingMap:
    """``IndexingMap.from_symbolic_map``: a map from a :class:`SymbolicMap` (or its text) and variables.

    The counts are checked with the messages of XLA's ``Verify``.

    >>> print(indexing_map_from_symbolic_map("(d0)[s0] -> (d0 + s0)", [(0, 3)], [(0, 1)]))
    (d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]
    """
    sm = symbolic_map if isinstance(symbolic_map, SymbolicMap) else SymbolicMap.parse(str(symbolic_map))
    if len(dim_vars) != sm.num_dims:
        raise IndexingError(
            f"number of dim vars ({len(dim_vars)}) must match the number of dimensions in the "
            f"symbolic map ({sm.num_dims})"
        )
    if len(range_vars) + len(rt_vars) != sm.num_symbols:
        raise IndexingError(
            f"number of range ({len(range_vars)}) + runtime ({len(rt_vars)}) variables must match "
            f"the number of symbols in the symbolic map ({sm.num_symbols})"
        )
    return IndexingMap(sm.results, dim_vars, range_vars, rt_vars, constraints)
