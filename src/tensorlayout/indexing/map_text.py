"""The indexing-map text parser, building maps of a given class (spec §2.2).

The public parsers are in :mod:`~tensorlayout.indexing.parse` (they build ``IndexingMap``);
this module sits below :mod:`~tensorlayout.indexing.map` so that ``IndexingMap.parse`` can use it.

Besides XLA's current one-line form this reads the forms older XLA releases and other tools
print: the newline-separated domain (before September 2024), the ``is_simplified: true|false``
trailer (September 2024, ignored: the flag no longer exists), the MLIR attribute
``#xla.indexing_map<"...">`` (also ``#xla_gpu.`` and unquoted), ``HloInstructionIndexing``'s
``operand id = N`` blocks (:func:`parse_instruction_indexing`), maps with no variables but
constant results (``() -> (0, 0, 0)``) and maps without a domain (unbounded variables).

Grammar (``sep`` is ``,`` or a line break)::

    text     ::= attr | block+ | map
    attr     ::= ['#' name '='] '#xla' ['_gpu'] '.indexing_map' '<' ('"' map '"' | map) '>'
    block    ::= 'operand' 'id' '=' integer (('unknown' 'indexing') | map [rts] [replica])*
    rts      ::= 'runtime' 'variables' ':' (name ':' instruction ';' map)*
    replica  ::= 'replica' 'id' ':' map
    map      ::= 'UNDEFINED' | 'KNOWN' 'EMPTY' | header [[','] domain] [sep trailer]
    header   ::= '(' names ')' ['[' names ']'] ['{' names '}'] '->' '(' [expr (',' expr)*] ')'
    domain   ::= 'domain' ':' (name 'in' interval) (sep name 'in' interval)* (sep expr 'in' interval)*
    trailer  ::= 'is_simplified' ':' ('true' | 'false')

>>> from tensorlayout.indexing import IndexingMap
>>> print(parse_map_as(IndexingMap, '#xla.indexing_map<"(d0) -> (d0 floordiv 2), domain: d0 in [0, 9]">'))
(d0) -> (d0 / 2), domain: d0 in [0, 9]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Generic

from tensorlayout._cursor import Cursor
from tensorlayout.core.intmath import INT64_MAX, INT64_MIN
from tensorlayout.errors import ParseError, expect_text
from tensorlayout.indexing.expr import Expr, var
from tensorlayout.indexing.exprparse import (
    _NAME,
    _ExprParser,
    _run,
)
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_base import M
from tensorlayout.indexing.symbolic_map import (
    _checked,
    _header,
    _Names,
)
from tensorlayout.indexing.variables import Variable

__all__ = ["ParsedOperandIndexing", "instruction_indexing_as", "parse_map_as"]

_ATTR = re.compile(r'\s*(?:#[A-Za-z_][A-Za-z0-9_.$-]*\s*=\s*)?#xla(?:_gpu)?\.indexing_map\s*<')
_IDS = r"\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*(?:,\s*[A-Za-z_][A-Za-z0-9_]*\s*)*)?"
#: The start of a map: its variable lists and the arrow.
_HEADER = re.compile(rf"\({_IDS}\)\s*(?:\[{_IDS}\]\s*)?(?:\{{{_IDS}\}}\s*)?->")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*:")
_INSTRUCTION = re.compile(r"[^;\n]+")
_STOP_WORDS = ("operand", "runtime", "replica", "unknown", "UNDEFINED", "KNOWN", "is_simplified")


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


# ---- indexing maps ------------------------------------------------------------------------
def _separator(cur: Cursor) -> bool:
    """Consume a ``,`` or note a line break before the next item; False if neither."""
    start = cur.pos
    if cur.accept(","):
        return True
    return "\n" in cur.text[start:cur.pos] and not cur.at_end()


def _at_stop(cur: Cursor) -> bool:
    """True where a map's domain ends: the end, a keyword of an enclosing form, or a new map."""
    if cur.at_end():
        return True
    word = _NAME.match(cur.text, cur.pos)
    if word and (word.group() in _STOP_WORDS or _LABEL.match(cur.text, cur.pos)):
        return True
    return cur.peek("(") and _HEADER.match(cur.text, cur.pos) is not None


def _trailer(cur: Cursor) -> None:
    """``is_simplified: true|false`` (XLA, September 2024); the flag has no meaning now."""
    _keyword(cur, "is_simplified")
    cur.expect(":", "':' after 'is_simplified'")
    cur.skip()
    if not (cur.match(re.compile("true\\b")) or cur.match(re.compile("false\\b"))):
        raise cur.error("'true' or 'false'")


def _peek_word(cur: Cursor, word: str) -> bool:
    cur.skip()
    m = _NAME.match(cur.text, cur.pos)
    return m is not None and m.group() == word


def _variable_bounds(cur: Cursor, declared: _Names, defaults: list[str]) -> list[Variable]:
    """``name in [lo, hi]`` for every declared variable, in order (a default name is stored as "")."""
    variables: list[Variable] = []
    for i, (name, _) in enumerate(declared):
        if i and not _separator(cur):
            raise cur.error("',' before the next variable's bounds")
        cur.skip()
        at = cur.pos
        m = cur.match(_NAME)
        if not m or m.group() != name:
            raise ParseError(cur.text, at, f"the bounds of {name!r}")
        _keyword(cur, "in")
        lo, hi = _interval(cur)
        variables.append(Variable(Interval(lo, hi), "" if name == defaults[i] else name))
    return variables


def _constraints(cur: Cursor, declared: _Names) -> list[tuple[Expr, tuple[int, int]]]:
    """``expr in [lo, hi]`` items after the bounds, up to the end of the map (and its trailer)."""
    parser = _ExprParser(cur, {n: var(i) for i, (n, _) in enumerate(declared)}, None)
    out: list[tuple[Expr, tuple[int, int]]] = []
    while True:
        here = cur.pos
        sep = _separator(cur)
        if sep and _peek_word(cur, "is_simplified"):
            _trailer(cur)
            return out
        if not sep or _at_stop(cur):
            cur.pos = here
            return out
        e = _checked(cur, parser.expr)
        _keyword(cur, "in")
        out.append((e, _interval(cur)))


def _defaults(dims: _Names, syms: _Names, rts: _Names) -> list[str]:
    names = [f"d{i}" for i in range(len(dims))] + [f"s{j}" for j in range(len(syms))]
    return names + [f"rt{k}" for k in range(len(rts))]


def _map_at(cls: type[M], cur: Cursor) -> M:
    """One indexing map at the cursor; stops before whatever follows it."""
    if cur.accept("UNDEFINED"):
        return cls.undefined()
    if cur.accept("KNOWN"):
        _keyword(cur, "EMPTY")
        return cls.known_empty(0)
    dims, syms, rts, results = _run(cur, lambda: _header(cur))
    declared = [*dims, *syms, *rts]
    here = cur.pos
    has_sep = _separator(cur)
    if not _peek_word(cur, "domain"):
        cur.pos = here
        if declared and not (has_sep or _at_stop(cur)):
            raise cur.error("', domain:'")
        # no domain (a map without variables, or one printed without bounds): unbounded
        unbounded = [Variable(Interval(INT64_MIN, INT64_MAX))] * len(declared)
        _constraints(cur, [])
        nd, ns = len(dims), len(syms)
        return cls(results, unbounded[:nd], unbounded[nd:nd + ns], unbounded[nd + ns:])
    _keyword(cur, "domain")
    cur.expect(":", "':' after 'domain'")
    variables = _variable_bounds(cur, declared, _defaults(dims, syms, rts))
    constraints = _constraints(cur, declared)
    nd, ns = len(dims), len(syms)
    return cls(results, variables[:nd], variables[nd:nd + ns], variables[nd + ns:], constraints)


def _unwrap_attribute(text: str) -> str | None:
    """The map text inside ``#xla.indexing_map<"...">`` (MLIR's attribute form), else None."""
    m = _ATTR.match(text)
    if not m:
        return None
    body = text[m.end():].rstrip()
    if not body.endswith(">"):
        raise ParseError(text, len(text.rstrip()), "'>' to close the indexing_map attribute")
    body = body[:-1].strip()
    if body.startswith('"'):
        if len(body) < 2 or not body.endswith('"'):
            raise ParseError(text, m.end(), "a quoted map text")
        body = body[1:-1].replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    return body


@dataclass(frozen=True)
class ParsedOperandIndexing(Generic[M]):
    """One map of an ``operand id = N`` block (XLA's ``OperandIndexing`` text).

    ``runtime_vars`` are ``(instruction label, map)`` pairs (``parameter(1)``, ``constant(99)``,
    an instruction name); an ``unknown indexing`` entry has an undefined ``map``.
    """

    map: M
    runtime_vars: tuple[tuple[str, M], ...] = ()
    replica_map: M | None = None


def _operand_indexing(cls: type[M], cur: Cursor) -> ParsedOperandIndexing[M]:
    if _peek_word(cur, "unknown"):
        _keyword(cur, "unknown")
        _keyword(cur, "indexing")
        return ParsedOperandIndexing(cls.undefined())
    m = _map_at(cls, cur)
    rts: list[tuple[str, M]] = []
    if _peek_word(cur, "runtime"):
        _keyword(cur, "runtime")
        _keyword(cur, "variables")
        cur.expect(":", "':' after 'runtime variables'")
        while cur.match(re.compile(r"rt[0-9]+\s*:")):
            label = cur.match(_INSTRUCTION)
            cur.expect(";", "';' after the runtime variable's instruction")
            rts.append(((label.group().strip() if label else ""), _map_at(cls, cur)))
    replica = None
    if _peek_word(cur, "replica"):
        _keyword(cur, "replica")
        _keyword(cur, "id")
        cur.expect(":", "':' after 'replica id'")
        replica = _map_at(cls, cur)
    return ParsedOperandIndexing(m, tuple(rts), replica)


def _blocks(cls: type[M], cur: Cursor) -> dict[int, list[ParsedOperandIndexing[M]]]:
    out: dict[int, list[ParsedOperandIndexing[M]]] = {}
    while not cur.at_end():
        _keyword(cur, "operand")
        _keyword(cur, "id")
        cur.expect("=", "'=' after 'operand id'")
        k = _bound(cur, "an operand number")
        maps = out.setdefault(k, [])
        while not (cur.at_end() or _peek_word(cur, "operand")):
            maps.append(_operand_indexing(cls, cur))
    return out


def instruction_indexing_as(cls: type[M], text: str) -> dict[int, list[ParsedOperandIndexing[M]]]:
    """Parse ``HloInstructionIndexing::ToString`` text into ``cls`` maps, by operand number.

    >>> from tensorlayout.indexing import IndexingMap
    >>> blocks = instruction_indexing_as(IndexingMap,
    ...     "operand id = 0 (d0) -> (d0), domain: d0 in [0, 9]\\n"
    ...     "operand id = 1 unknown indexing\\n")
    >>> [(k, [str(p.map) for p in v]) for k, v in blocks.items()]
    [(0, ['(d0) -> (d0), domain: d0 in [0, 9]']), (1, ['UNDEFINED'])]
    """
    cur = Cursor(expect_text(text, "instruction indexing text"))
    return _blocks(cls, cur)


def parse_map_as(cls: type[M], text: str) -> M:
    """Parse a ``cls`` map in any form of the module docstring (also ``UNDEFINED``).

    An ``operand id = N`` block is accepted when it holds exactly one map, and so is one
    operand's text as printed (a map followed by its ``runtime variables:`` and ``replica
    id:`` sections); the runtime variables and replica map are dropped: use
    :func:`parse_instruction_indexing` for those.

    >>> from tensorlayout.indexing import IndexingMap
    >>> parse_map_as(IndexingMap, "(d0) -> (d0), domain: d0 in [3, 2]").is_known_empty
    True
    >>> print(parse_map_as(IndexingMap, "(d0) -> (d0)\\ndomain:\\nd0 in [0, 9]\\nis_simplified: false"))
    (d0) -> (d0), domain: d0 in [0, 9]
    """
    inner = _unwrap_attribute(expect_text(text, "indexing map text"))
    if inner is not None:
        return parse_map_as(cls, inner)
    cur = Cursor(text)
    if _peek_word(cur, "operand"):
        maps = [p.map for group in _blocks(cls, cur).values() for p in group]
        if len(maps) != 1:
            raise ParseError(text, 0, "an 'operand id' block with exactly one map",
                             context=f"it has {len(maps)}; use parse_instruction_indexing")
        return maps[0]
    m = _operand_indexing(cls, cur).map  # a map, maybe with the runtime variables printed after it
    cur.expect_end("',' or the end of the map")
    return m
