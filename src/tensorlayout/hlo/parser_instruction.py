"""The instruction-level half of the HLO text parser: one instruction, its operands and attributes.

:class:`InstructionReader` is the base of :mod:`tensorlayout.hlo.parser`'s module parser.
Instructions take a regex fast path for the common line shape (``name = f32[..]{..} op(a, b),
k=v``) and fall back to the careful :class:`Cursor` parser for anything else (tuple shapes,
inline operand shapes, constants with braces, comments), so every error carries a line and
column.

>>> i = InstructionReader("t = f32[3,2]{1,0} transpose(f32[2,3]{1,0} p), dimensions={1,0}").instruction()
>>> i.name, i.opcode, i.operand_names, i.attributes["dimensions"]
('t', 'transpose', ('p',), (1, 0))
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensorlayout._cursor import Cursor
from tensorlayout.errors import ParseError, TensorLayoutError, expect_text
from tensorlayout.hlo._checks import check_scalar_constant
from tensorlayout.hlo._scan import literal_end
from tensorlayout.hlo.attributes import (
    COMPUTATION_ATTRIBUTES,
    COMPUTATION_LIST_ATTRIBUTES,
    SKIPPED,
    common_metadata_end,
    parse_attribute,
    value_end,
)
from tensorlayout.hlo.model import HloGraph, HloInstruction
from tensorlayout.hlo.opcodes import XLA_OPCODE_ARITY, XLA_OPCODES, async_shorthand
from tensorlayout.xla.shape import Shape, _parse_shape_cached, parse_shape, read_shape
from tensorlayout.xla.types import ELEMENT_TYPES

__all__ = ["MAX_TUPLE_DEPTH", "RESERVED_NAMES", "InstructionReader", "literal_shape"]

#: Words XLA's lexer reads as types or keywords, so they cannot name an instruction
#: (checked against jaxlib's parser: ``s1 = f32[] ...`` is "expects name"; ``tuple`` is allowed).
RESERVED_NAMES = (frozenset(ELEMENT_TYPES) - {"tuple"}) | frozenset({
    "true", "false", "inf", "nan", "ENTRY", "HloModule", "ROOT", "maximal", "replicated", "manual",
    "last_tile_dim_replicate", "unknown", "shard_as", "shard_like", "unreduced",
})

#: How deep tuple shapes may nest in module text (deeper input is refused with a ParseError
#: before the recursive shape parser sees it).
MAX_TUPLE_DEPTH = 64

#: ``(attribute name, text, value offset) -> where the value ends``, or None if it cannot say
_FastEnd = Callable[[str, str, int], "int | None"]

#: A parsed operand list: constant literal, parameter number, operand names, inline operand shapes.
_Operands = tuple[str | None, int | None, tuple[str, ...], tuple[Shape | None, ...]]

_NAME_RE = r"[A-Za-z_][\w.\-]*"
_DIGITS = re.compile(r"[0-9]+")
_NAME = re.compile(r"%?(" + _NAME_RE + r")", re.A)
_HEAD = re.compile(r"(?:(ROOT)[ \t]+)?%?(" + _NAME_RE + r")[ \t]+=[ \t]*", re.A)
_SHAPE_RE = r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[^{}\s,]*(?:,[^{}\s,]*)*\})?"
_SIMPLE_SHAPE = re.compile(_SHAPE_RE, re.A)
_BRACE_AHEAD = re.compile(r"\s*\{", re.A)
#: A ``{`` that opens a computation body, not a layout (XLA reads a layout after ``]`` only when
#: an integer or ``:`` follows the ``{``)
_BODY_AHEAD = re.compile(r"\s*\{\s*[%A-Za-z_}]", re.A)
_PAREN = re.compile(r"[()\n]")
_SHAPED_ITEM = r"(?:" + _SHAPE_RE + r"[ \t]+)?%?[\w.\-]+"
_SHAPED_OPERANDS = re.compile(
    r"[ \t]*(" + _SHAPED_ITEM + r"(?:[ \t]*,[ \t]*" + _SHAPED_ITEM + r")*)[ \t]*\)", re.A)
_OPERAND_ITEM = re.compile(r"[ \t]*(?:(" + _SHAPE_RE + r")[ \t]+)?%?([\w.\-]+)[ \t]*,?", re.A)
#: The comment XLA prints before every fifth item of a long tuple shape or operand list
_INDEX_COMMENT = r"/\*index=[0-9]+\*/"
#: One name of a plain operand list (after its index comment, if any)
_OPERAND_NAME = re.compile(r"(?:" + _INDEX_COMMENT + r")?%?([\w.\-]+)", re.A)
_OPCODE_RE = r"[ \t]*([a-z][a-z0-9\-]*)\("
_OPCODE_CAREFUL = re.compile(r"[a-z][a-z0-9\-]*")
_SIMPLE_OPERANDS_RE = (r"[ \t]*((?:%?[\w.\-]+[ \t]*(?:,[ \t]*(?:" + _INDEX_COMMENT
                       + r")?%?[\w.\-]+[ \t]*)*)?)\)")
_ATTR = re.compile(r"[ \t]*,\s*([A-Za-z_][\w\-.]*)=\s*", re.A)
_ATTR_NAME = re.compile(r"[A-Za-z_][\w\-.]*", re.A)
_MORE = re.compile(r"\s*[,/]", re.A)
_TYPE_START = re.compile(r"[a-z][a-z0-9]*\[")
#: A one-line tuple of simple shapes as XLA prints it (``(f32[2]{0}, s32[])``): the text the
#: careful reader would hand to the cached shape parser too.
_FLAT_TUPLE_RE = r"\((?:" + _SHAPE_RE + r"(?:, (?:" + _INDEX_COMMENT + ")?" + _SHAPE_RE + r")*)?\)"
#: ``_HEAD``, a simple shape (or a flat tuple of them), the opcode and ``(`` (group 5 marks where
#: the operands start), then, if they are plain names, the operands and ``)`` (group 6): the
#: fast path in one match.
_LINE = re.compile(_HEAD.pattern + "(" + _SHAPE_RE + "|" + _FLAT_TUPLE_RE + ")" + _OPCODE_RE
                   + "()(?:" + _SIMPLE_OPERANDS_RE + ")?", re.A)
_ROOT_KW = re.compile(r"ROOT(?=[ \t\r\n%/])")


def _known_opcode(opcode: str) -> bool:
    """An XLA opcode, or XLA's shorthand for an async one (``slice-start``)."""
    return opcode in XLA_OPCODES or async_shorthand(opcode) is not None


def literal_shape(shape: Shape) -> Shape:
    """A constant's shape as XLA reads it: its literal's, whose layouts keep no element size in
    bits (``s4[]{:T(1024)E(4)} constant(0)`` reads back as ``s4[]{:T(1024)}``).

    >>> literal_shape(parse_shape("(s4[2]{0:T(1024)E(4)S(1)}, s8[])")).to_string(with_layout=True)
    '(s4[2]{0:T(1024)S(1)}, s8[])'
    """
    if shape.is_tuple:
        return Shape.tuple_of(*(literal_shape(s) for s in shape.tuple_shapes))
    layout = shape.layout
    if layout is None or not layout.element_size_in_bits:
        return shape
    return shape.with_layout(layout.replace(element_size_in_bits=0))


def _named_operands(opcode: str, items: str, end: int) -> tuple[_Operands, int] | None:
    """The operand list ``items`` of names only (a literal for ``constant``, a number for
    ``parameter``) ending at ``end``; None where the careful path must read it."""
    if opcode == "constant":
        return ((items, None, (), ()), end) if items else None
    if opcode == "parameter":
        return ((None, int(items), (), ()), end) \
            if _DIGITS.fullmatch(items) and len(items) <= 20 else None  # else the careful path
    if "," not in items:  # one name (the common case): what the findall would give
        return (None, None, (items[1:] if items.startswith("%") else items,) if items else (), ()), end
    if "/" not in items and "\t" not in items:  # names, '%' and spaces only: what the findall gives
        return (None, None, tuple(items.replace("%", "").replace(" ", "").split(",")), ()), end
    return (None, None, tuple(_OPERAND_NAME.findall(items)), ()), end


class InstructionReader:
    """Reads instructions (and the names, shapes and attributes around them) from module text."""

    def __init__(self, text: str) -> None:
        self.text = expect_text(text, "HLO text")
        self.cur = Cursor(text, comments=True)
        self.graph = HloGraph()

    def _name(self, what: str) -> str:
        m = self.cur.match(_NAME)
        if not m:
            raise self.cur.error(what)
        return m.group(1)

    def _attribute(self, fast_end: _FastEnd | None = None) -> tuple[str, str, int]:
        """``name=value`` at the cursor: the name, the raw value text and its offset; ``fast_end``
        may say where a value ends (None: :func:`value_end` says)."""
        cur = self.cur
        m = cur.match(_ATTR_NAME)
        if not m:
            raise cur.error("an attribute name")
        if not self.text.startswith("=", cur.pos):  # XLA lexes `name=` as one token
            raise cur.error(f"'=' right after attribute name {m.group()}")
        cur.pos += 1
        cur.skip()
        at = cur.pos
        end = None if fast_end is None else fast_end(m.group(), self.text, at)
        cur.pos = value_end(m.group(), self.text, at) if end is None else end
        return m.group(), self.text[at : cur.pos], at

    def _typed(self, key: str, value: str, at: int) -> Any:
        try:
            return parse_attribute(key, value)
        except ParseError as err:
            raise ParseError(self.text, at + err.offset, err.expected, err.found,
                             context=f"attribute {key}") from None

    def _shape(self, pos: int) -> tuple[Shape, int]:
        """The shape at ``pos`` and where it ends: cached for plain text, careful otherwise."""
        text = self.text
        m = _SIMPLE_SHAPE.match(text, pos)
        end = m.end() if m else -1
        if m and not m.group().endswith("}") and _BRACE_AHEAD.match(text, end) \
                and not _BODY_AHEAD.match(text, end):
            end = -1  # a layout with spaces or line breaks inside ({1 ,0}, {1,\n0}): read carefully
        if not m and text.startswith("(", pos):
            end = self._tuple_end(pos)
        if end > 0:
            try:
                return parse_shape(text[pos:end]), end
            except TensorLayoutError:
                pass
        self.cur.pos = pos
        shape = read_shape(self.cur)
        return shape, self.cur.pos

    def _tuple_end(self, pos: int) -> int:
        """End of the one-line tuple shape at ``pos`` (-1 if it spans lines or is unbalanced).

        Raises a ParseError if the parentheses nest deeper than :data:`MAX_TUPLE_DEPTH`.
        """
        text = self.text
        depth, end = 0, -1
        for p in _PAREN.finditer(text, pos):
            c = p.group()
            if c == "\n":
                end = -2 if end == -1 else end
                continue
            depth += 1 if c == "(" else -1
            if depth > MAX_TUPLE_DEPTH:
                raise ParseError(text, p.start(), f"a tuple shape nested at most {MAX_TUPLE_DEPTH} deep")
            if depth == 0:
                return p.end() if end == -1 else -1
        return -1

    # -- instructions ------------------------------------------------------------------------
    # instruction ::= ['ROOT'] name '=' shape opcode '(' operands ')' (',' attribute)*
    def instruction(self) -> HloInstruction:
        """One instruction at the cursor; leaves the cursor after its last attribute."""
        start = self.cur.pos
        fast = self._instruction_fast(start)
        if fast is not None:
            head, shape, opcode, operands, pos = fast
        else:
            head, shape, opcode = self._instruction_head(), self._instruction_shape(), self._opcode()
            operands = self._operand_list(opcode)
            pos = self.cur.pos
        literal, number, names, shapes = operands
        arity = XLA_OPCODE_ARITY.get(opcode)
        if arity is not None and arity != len(names) and opcode not in ("constant", "parameter"):
            raise ParseError(self.text, start, f"{arity} operand(s) for {opcode} (XLA's arity), "
                             f"not {len(names)}")
        attributes, raw, called = self._attributes(pos)
        if opcode == "constant":
            shape = literal_shape(shape)
        if literal is not None:
            attributes["literal"] = literal
            if shape.is_scalar:
                check_scalar_constant(self.text, literal, shape, start)
        return HloInstruction(head[1], opcode, shape, names, attributes, raw, tuple(called),
                              head[0], literal, number, shapes, start, self.graph)

    def _instruction_fast(self, pos: int) -> tuple[tuple[bool, str], Shape, str, _Operands, int] | None:
        """The common one-line form (``name = f32[..]{..} op(a, b)``) by regex; None otherwise.

        Gives exactly what the recursive-descent path gives, or None (then that path runs).
        """
        m = _LINE.match(self.text, pos)
        if m is None or m.group(2) in RESERVED_NAMES:
            return None
        try:
            shape = _parse_shape_cached(m.group(3))  # a str: parse_shape's type check is not needed
        except TensorLayoutError:
            return None
        opcode = m.group(4)
        if opcode not in XLA_OPCODES and not _known_opcode(opcode):
            return None
        items = m.group(6)
        operands = self._shaped_operands(opcode, m.end(5)) if items is None \
            else _named_operands(opcode, items.strip(), m.end())
        return None if operands is None else ((m.group(1) is not None, m.group(2)), shape, opcode, *operands)

    def _shaped_operands(self, opcode: str, pos: int) -> tuple[_Operands, int] | None:
        """A one-line operand list with shapes by regex (``f32[2] a, b``), and where it ends."""
        if opcode in ("constant", "parameter"):
            return None
        ops = _SHAPED_OPERANDS.match(self.text, pos)
        if ops is None:
            return None
        try:
            items = [(parse_shape(s) if s else None, n) for s, n in _OPERAND_ITEM.findall(ops.group(1))]
        except TensorLayoutError:
            return None
        return (None, None, tuple([n for _, n in items]), tuple([s for s, _ in items])), ops.end()

    # head ::= ['ROOT'] ('%' name | name [':']) '='    (a bare name must not touch its '=')
    def _instruction_head(self) -> tuple[bool, str]:
        cur = self.cur
        is_root = bool(cur.match(_ROOT_KW))
        cur.skip()
        at = cur.pos
        name = self._name("an instruction name (or ROOT)")
        if name in RESERVED_NAMES:
            raise ParseError(self.text, at, f"an instruction name ({name!r} is a reserved word of HLO "
                             "text: a type or keyword)", repr(name))
        # XLA's lexer reads a bare `name:` as a name and a bare `name=` as an attribute name
        if not self.text.startswith("%", at) and self.text.startswith(":", cur.pos):
            cur.pos += 1
        elif not self.text.startswith("%", at) and self.text.startswith("=", cur.pos):
            raise ParseError(self.text, at, f"whitespace between instruction name {name} and '='",
                             repr(name + "="))
        cur.expect("=", "'=' after the instruction name")
        return is_root, name

    # shape ::= array_shape | '(' shape (',' shape)* ')'
    def _instruction_shape(self) -> Shape:
        self.cur.skip()
        shape, self.cur.pos = self._shape(self.cur.pos)
        return shape

    # opcode ::= [a-z][a-z0-9-]* '('
    def _opcode(self) -> str:
        cur = self.cur
        cur.skip()
        om = cur.match(_OPCODE_CAREFUL)
        if not om:
            raise cur.error("an opcode")
        opcode = om.group()
        if not _known_opcode(opcode):
            raise ParseError(self.text, om.start(), f"an opcode XLA knows ({opcode!r} is not one)",
                             repr(opcode))
        cur.expect("(", f"'(' after opcode {opcode}")
        return opcode

    # operands ::= literal ')'                        (constant)
    #            | integer ')'                        (parameter)
    #            | [operand (',' operand)*] ')'       operand ::= [shape] ['%'] name
    def _operand_list(self, opcode: str) -> _Operands:
        cur, text = self.cur, self.text
        if opcode == "constant":
            start = cur.pos
            end = literal_end(text, start)
            literal = text[start:end].strip()
            if not literal:
                raise ParseError(text, end, "a literal in constant(...)")
            cur.pos = end
            cur.expect(")", "')' after the constant literal")
            return literal, None, (), ()
        if opcode == "parameter":
            cur.skip()
            at = cur.pos
            digits = cur.match(_DIGITS)
            if digits is None:
                raise cur.error("a parameter number (ASCII digits)")
            if len(digits.group()) > 18:
                raise cur.error("a parameter number below 10**18", at=at)
            number = int(digits.group())
            cur.expect(")", "')' after the parameter number")
            return None, number, (), ()
        names, shapes = self._operands()
        return None, None, names, shapes

    # attributes ::= (',' name '=' value)*
    def _attributes(self, pos: int) -> tuple[dict[str, Any], dict[str, str], list[str]]:
        """The attributes from ``pos``: typed, raw text, and the computations they name."""
        cur, text = self.cur, self.text
        attributes: dict[str, Any] = {}
        raw: dict[str, str] = {}
        called: list[str] = []
        while True:
            m = None if text.startswith("\n", pos) else _ATTR.match(text, pos)  # (no ',' before the \n)
            if m:
                key, at = m.group(1), m.end()
                if key == "metadata" and key not in raw:  # the common form, in one regex
                    meta_end = common_metadata_end(text, at)
                    if meta_end is not None:
                        raw[key] = attributes[key] = text[at:meta_end]
                        pos = meta_end
                        continue
                end = value_end(key, text, at)
            else:
                cur.pos = pos
                if not _MORE.match(text, pos) or not cur.accept(","):
                    break
                key, _, at = self._attribute()
                end = cur.pos
            if key in raw:
                raise ParseError(text, at, f"attribute {key} only once")
            raw[key] = text[at:end]
            attributes[key] = self._attribute_value(key, raw[key], at, called)
            pos = end
        cur.pos = pos
        return attributes, raw, called

    def _attribute_value(self, key: str, value: str, at: int, called: list[str]) -> Any:
        """The typed value of one attribute; computation names it holds are added to ``called``."""
        if key in SKIPPED:
            return value
        try:
            typed = parse_attribute(key, value)
        except ParseError:
            typed = self._typed(key, value, at)
        if key in COMPUTATION_ATTRIBUTES or key == "calls":
            called.extend((typed,) if isinstance(typed, str) else typed)
        elif key in COMPUTATION_LIST_ATTRIBUTES:
            called.extend(typed)
        return typed

    def _operands(self) -> tuple[tuple[str, ...], tuple[Shape | None, ...]]:
        """Careful operand list: ``[shape] name`` items; the cursor is after ``(``.

        operand_list ::= (',' | [shape] ['%'] name)* ')'   (items separated by commas)
        """
        cur, text = self.cur, self.text
        names: list[str] = []
        shapes: list[Shape | None] = []
        while not cur.accept(")"):
            if cur.accept(","):  # XLA skips empty items: `f(,a)`, `f(a,,b)`, `f(a,)`
                continue
            cur.skip()
            shape = None
            if text.startswith("(", cur.pos) or _TYPE_START.match(text, cur.pos):
                shape, cur.pos = self._shape(cur.pos)
            cur.skip()
            bare = not text.startswith("%", cur.pos)
            names.append(self._name("an operand name"))
            if bare and text.startswith(":", cur.pos):  # XLA's lexer reads a bare `name:` as a name
                cur.pos += 1
            shapes.append(shape)
            if not cur.peek(")"):
                cur.expect(",", "',' or ')' in the operand list")
        if not any(s is not None for s in shapes):
            return tuple(names), ()
        return tuple(names), tuple(shapes)
