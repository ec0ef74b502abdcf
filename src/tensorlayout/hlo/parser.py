"""Parse HLO module text as XLA and JAX print it.

Instructions take a regex fast path for the common line shape (``name = f32[..]{..} op(a, b),
k=v``) and fall back to the careful :class:`Cursor` parser for anything else (tuple shapes,
inline operand shapes, constants with braces, comments), so every error carries a line and
column. Metadata, shardings, backend configs and the stack-frame tables are skipped.

>>> m = parse_module('''HloModule m, is_scheduled=true
... ENTRY %e (p: f32[2,3]) -> f32[3,2] {
...   %p = f32[2,3]{1,0} parameter(0), metadata={op_name="x"}
...   ROOT %t = f32[3,2]{1,0} transpose(f32[2,3]{1,0} %p), dimensions={1,0}
... }''')
>>> m.entry.root.attributes["dimensions"], m.attributes["is_scheduled"]
((1, 0), True)
"""

from __future__ import annotations

import dataclasses
import gc
import re
from typing import Any

from tensorlayout._cursor import Cursor
from tensorlayout.errors import ParseError, TensorLayoutError
from tensorlayout.hlo._checks import (
    check_operand_shapes,
    check_parameter_numbers,
    check_reshapes,
    check_scalar_constant,
)
from tensorlayout.hlo._scan import literal_end
from tensorlayout.hlo.async_ops import expand_async_shorthand
from tensorlayout.hlo.attributes import (
    COMPUTATION_ATTRIBUTES,
    COMPUTATION_LIST_ATTRIBUTES,
    MODULE_ATTRIBUTES,
    SKIPPED,
    parse_attribute,
    value_end,
)
from tensorlayout.hlo.model import (
    ComputationLayout,
    HloComputation,
    HloGraph,
    HloInstruction,
    HloModule,
)
from tensorlayout.hlo.opcodes import XLA_OPCODE_ARITY, XLA_OPCODES, async_shorthand
from tensorlayout.hlo.stack_frames import read_stack_frame_tables
from tensorlayout.xla.shape import Shape, parse_shape, read_shape
from tensorlayout.xla.types import ELEMENT_TYPES

__all__ = ["MAX_TUPLE_DEPTH", "RESERVED_NAMES", "parse_module"]

#: Words XLA's lexer reads as types or keywords, so they cannot name an instruction
#: (checked against jaxlib's parser: ``s1 = f32[] ...`` is "expects name"; ``tuple`` is allowed).
RESERVED_NAMES = (frozenset(ELEMENT_TYPES) - {"tuple"}) | frozenset({
    "true", "false", "inf", "nan", "ENTRY", "HloModule", "ROOT", "maximal", "replicated", "manual",
    "last_tile_dim_replicate", "unknown", "shard_as", "shard_like", "unreduced",
})

#: How deep tuple shapes may nest in module text (deeper input is refused with a ParseError
#: before the recursive shape parser sees it).
MAX_TUPLE_DEPTH = 64

#: A parsed operand list: constant literal, parameter number, operand names, inline operand shapes.
_Operands = tuple[str | None, int | None, tuple[str, ...], tuple[Shape | None, ...]]

_NAME_RE = r"[A-Za-z_][\w.\-]*"
_DIGITS = re.compile(r"[0-9]+")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_.\-]")
_NAME = re.compile(r"%?(" + _NAME_RE + r")", re.A)
_HEAD = re.compile(r"(?:(ROOT)[ \t]+)?%?(" + _NAME_RE + r")[ \t]+=[ \t]*", re.A)
_SHAPE_RE = r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[^{}\s,]*(?:,[^{}\s,]*)*\})?"
_SIMPLE_SHAPE = re.compile(_SHAPE_RE, re.A)
_BRACE_AHEAD = re.compile(r"\s*\{", re.A)
_PAREN = re.compile(r"[()\n]")
_SHAPED_ITEM = r"(?:" + _SHAPE_RE + r"[ \t]+)?%?[\w.\-]+"
_SHAPED_OPERANDS = re.compile(
    r"[ \t]*(" + _SHAPED_ITEM + r"(?:[ \t]*,[ \t]*" + _SHAPED_ITEM + r")*)[ \t]*\)", re.A)
_OPERAND_ITEM = re.compile(r"[ \t]*(?:(" + _SHAPE_RE + r")[ \t]+)?%?([\w.\-]+)[ \t]*,?", re.A)
_OPERAND_NAME = re.compile(r"%?([\w.\-]+)", re.A)
_OPCODE = re.compile(r"[ \t]*([a-z][a-z0-9\-]*)\(")
_OPCODE_CAREFUL = re.compile(r"[a-z][a-z0-9\-]*")
_SIMPLE_OPERANDS = re.compile(r"[ \t]*((?:%?[\w.\-]+[ \t]*(?:,[ \t]*%?[\w.\-]+[ \t]*)*)?)\)", re.A)
_ATTR = re.compile(r"[ \t]*,\s*([A-Za-z_][\w\-.]*)=\s*", re.A)
_ATTR_NAME = re.compile(r"[A-Za-z_][\w\-.]*", re.A)
_WS = re.compile(r"\s*", re.A)
_MORE = re.compile(r"\s*[,/]", re.A)
_TYPE_START = re.compile(r"[a-z][a-z0-9]*\[")
_ROOT_KW = re.compile(r"ROOT(?=[ \t\r\n%/])")


def _known_opcode(opcode: str) -> bool:
    """An XLA opcode, or XLA's shorthand for an async one (``slice-start``)."""
    return opcode in XLA_OPCODES or async_shorthand(opcode) is not None


def parse_module(text: str) -> HloModule:
    """Parse a whole HLO module (``HloModule name, ...`` then computations).

    Raises :class:`~tensorlayout.errors.ParseError` with line and column on malformed text.

    >>> parse_module("HloModule m\\nENTRY e {\\n ROOT c = s32[] constant(7)\\n}").entry.root.literal
    '7'
    """
    if not isinstance(text, str):
        raise ParseError(repr(text), 0, "HLO module text (a str)")
    _refuse_stablehlo(text)
    enabled = gc.isenabled()
    gc.disable()  # the parse allocates many long-lived objects and no cycles worth collecting
    try:
        return _Parser(text).module()
    finally:
        if enabled:
            gc.enable()


#: The start of MLIR text (what ``jax.jit(f).lower(...).as_text()`` prints by default).
_MLIR_START = re.compile(r"\s*(?:(?://|#loc)[^\n]*\n\s*)*(?:module\b|func\.func\b|\"?builtin\.module)")
#: How to get HLO text from JAX instead.
HLO_FROM_JAX = ("print HLO with jax.jit(f).lower(*args).as_text(dialect='hlo') (or "
                ".compiler_ir('hlo').as_hlo_text()), or after optimizations with "
                ".lower(*args).compile().as_text()")


def _refuse_stablehlo(text: str) -> None:
    """A one-line ParseError for StableHLO/MLIR text, saying how to get HLO from JAX.

    >>> _refuse_stablehlo("module @jit_f attributes {} {\\n  func.func public @main() {")
    Traceback (most recent call last):
    tensorlayout.errors.ParseError: expected HLO module text ('HloModule name, ...') at line 1, \
column 1, but got StableHLO (MLIR) text; print HLO with jax.jit(f).lower(*args).as_text(dialect='hlo') \
(or .compiler_ir('hlo').as_hlo_text()), or after optimizations with .lower(*args).compile().as_text()
    """
    if _MLIR_START.match(text):
        raise ParseError(text, 0, "HLO module text ('HloModule name, ...')",
                         f"StableHLO (MLIR) text; {HLO_FROM_JAX}")


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


class _Parser:
    """Recursive descent over the module text, with regex fast paths for instructions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cur = Cursor(text, comments=True)
        self.graph = HloGraph()
        self.wrapped: list[HloComputation] = []
        self.names: dict[str, int] = {}

    # -- module ------------------------------------------------------------------------------
    def module(self) -> HloModule:
        cur, text = self.cur, self.text
        name = "_"
        attributes: dict[str, Any] = {}
        if cur.peek("HloModule") and not _NAME_CHAR.match(text[cur.pos + 9 : cur.pos + 10]):
            cur.pos += len("HloModule")
            name = self._name("a module name")
            while cur.accept(","):
                key, value, at = self._attribute()
                if key not in MODULE_ATTRIBUTES or key in attributes:
                    raise ParseError(text, text.rfind(key, 0, at), "a module attribute XLA allows, once: "
                                     + ", ".join(sorted(MODULE_ATTRIBUTES)), repr(key))
                attributes[key] = self._module_attribute(key, value, at)
        computations: list[HloComputation] = []
        entry: HloComputation | None = None
        read_stack_frame_tables(cur)  # once, before the computations, as XLA reads them
        while not cur.at_end():
            comp = self.computation()
            computations += self.wrapped  # async_wrapped computations come before their callers
            self.wrapped.clear()
            if comp.is_entry:
                if entry is not None:
                    raise ParseError(text, comp.offset, "only one ENTRY computation")
                entry = comp
            computations.append(comp)
        if not computations:
            raise cur.error("a computation")
        if entry is None:
            entry = computations[-1] = dataclasses.replace(computations[-1], is_entry=True)
        return self._link(name, attributes, computations, entry)

    def _name(self, what: str) -> str:
        m = self.cur.match(_NAME)
        if not m:
            raise self.cur.error(what)
        return m.group(1)

    def _attribute(self) -> tuple[str, str, int]:
        """``name=value`` at the cursor: the name, the raw value text and its offset."""
        cur = self.cur
        m = cur.match(_ATTR_NAME)
        if not m:
            raise cur.error("an attribute name")
        if not self.text.startswith("=", cur.pos):  # XLA lexes `name=` as one token
            raise cur.error(f"'=' right after attribute name {m.group()}")
        cur.pos += 1
        cur.skip()
        at = cur.pos
        cur.pos = value_end(m.group(), self.text, at)
        return m.group(), self.text[at : cur.pos], at

    def _module_attribute(self, key: str, value: str, at: int) -> Any:
        if key in ("entry_computation_layout", "host_entry_computation_layout"):
            cur = Cursor(self.text, at, comments=True)
            cur.expect("{", "'{' to start the computation layout")
            cur.expect("(", "'(' to start the parameter layouts")
            params: list[Shape] = []
            if not cur.accept(")"):
                while True:
                    params.append(read_shape(cur))
                    if cur.accept(")"):
                        break
                    cur.expect(",", "',' or ')' in the parameter layouts")
            cur.expect("->", "'->' before the result layout")
            result = read_shape(cur)
            cur.expect("}", "'}' to end the computation layout")
            return ComputationLayout(tuple(params), result)
        return self._typed(key, value, at)

    def _typed(self, key: str, value: str, at: int) -> Any:
        try:
            return parse_attribute(key, value)
        except ParseError as err:
            raise ParseError(self.text, at + err.offset, err.expected, err.found,
                             context=f"attribute {key}") from None

    # -- computations ------------------------------------------------------------------------
    def computation(self) -> HloComputation:
        cur, text = self.cur, self.text
        cur.skip()
        start = cur.pos
        is_entry = False
        if text.startswith("ENTRY", start) and not _NAME_CHAR.match(text[start + 5 : start + 6]):
            is_entry = True
            cur.pos += 5
        name = self._name("a computation name (or ENTRY)")
        signature = None
        if cur.peek("("):
            signature = self._signature()
        cur.expect("{", "'{' to start the computation body")
        instructions: list[HloInstruction] = []
        while True:
            ws = _WS.match(text, cur.pos)
            cur.pos = ws.end() if ws else cur.pos
            if text.startswith("/", cur.pos):
                cur.skip()
            if text.startswith("}", cur.pos):
                cur.pos += 1
                break
            if cur.pos >= len(text):
                raise cur.error("'}' to end the computation")
            instructions.append(self._expand_async(self.instruction()))
        while cur.accept(","):  # e.g. `}, execution_thread="host"` (not needed: skipped)
            self._attribute()
        if not instructions:
            raise ParseError(text, cur.pos - 1, "at least one instruction in the computation")
        roots = [i for i in instructions if i.is_root]
        if len(roots) > 1:
            raise ParseError(text, roots[1].offset, "only one ROOT instruction per computation")
        root = roots[0] if roots else instructions[-1]
        if signature is not None and not signature[1].compatible(root.shape):
            raise ParseError(text, root.offset, f"a root whose shape {root.shape} is compatible with the "
                             f"result {signature[1]} of computation {name}", repr(root.name))
        by_name: dict[str, HloInstruction] = {}
        for inst in instructions:
            if inst.name in by_name:
                raise ParseError(text, inst.offset, f"a new instruction name (not {inst.name!r} again)")
            by_name[inst.name] = inst
        check_parameter_numbers(text, name, instructions)
        self._resolve_operands(name, instructions, by_name)
        check_reshapes(text, instructions, by_name)
        check_operand_shapes(text, instructions, by_name)
        return HloComputation(name, tuple(instructions), root, is_entry, start, signature,
                              self.graph, by_name)

    def _expand_async(self, instr: HloInstruction) -> HloInstruction:
        """XLA's model of a shorthand async op (see :mod:`tensorlayout.hlo.async_ops`)."""
        instr, wrapped = expand_async_shorthand(instr, self.text, self.graph, self._fresh)
        if wrapped is not None:
            self.wrapped.append(wrapped)
        return instr

    def _fresh(self, base: str) -> str:
        """``base``, then ``base.1``, ``base.2``… (names the parser makes up, as XLA does)."""
        n = self.names.get(base, 0)
        self.names[base] = n + 1
        return f"{base}.{n}" if n else base

    def _shape(self, pos: int) -> tuple[Shape, int]:
        """The shape at ``pos`` and where it ends: cached for plain text, careful otherwise."""
        text = self.text
        m = _SIMPLE_SHAPE.match(text, pos)
        end = m.end() if m else -1
        if m and not m.group().endswith("}") and _BRACE_AHEAD.match(text, end):
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

    def _signature(self) -> tuple[tuple[tuple[str, Shape], ...], Shape]:
        cur = self.cur
        cur.expect("(")
        params: list[tuple[str, Shape]] = []
        if not cur.accept(")"):
            while True:
                pname = self._name("a parameter name")
                if self.text.startswith(":", cur.pos):  # XLA lexes `name:` as one token; optional
                    cur.pos += 1
                cur.skip()
                shape, cur.pos = self._shape(cur.pos)
                params.append((pname, shape))
                if cur.accept(")"):
                    break
                cur.expect(",", "',' or ')' in the parameter list")
        cur.expect("->", "'->' before the result shape")
        cur.skip()
        shape, cur.pos = self._shape(cur.pos)
        return tuple(params), shape

    def _resolve_operands(self, comp_name: str, instructions: list[HloInstruction],
                          by_name: dict[str, HloInstruction]) -> None:
        """Record each instruction's operands and users; an operand must be defined before use."""
        graph = self.graph
        users: dict[HloInstruction, list[HloInstruction]] = {}
        defined: set[str] = set()
        for inst in instructions:
            for n in inst.operand_names:
                if n not in defined:
                    self._undefined_operand(comp_name, inst, n, n in by_name)
            defined.add(inst.name)
            if not inst.operand_names:
                continue
            operands = tuple([by_name[n] for n in inst.operand_names])
            graph.operands[inst] = operands
            for op in dict.fromkeys(operands):
                users.setdefault(op, []).append(inst)
        for inst, us in users.items():
            graph.users[inst] = tuple(us)

    def _undefined_operand(self, comp_name: str, inst: HloInstruction, missing: str, later: bool) -> None:
        at = self.text.find(missing, inst.offset + len(inst.name) + 1)
        why = "is defined only after its use" if later else "is not defined"
        raise ParseError(self.text, at if at >= 0 else inst.offset,
                         f"an instruction of computation {comp_name} defined before this one "
                         f"(operand {missing!r} {why})", repr(missing))

    def _link(self, name: str, attributes: dict[str, Any], computations: list[HloComputation],
              entry: HloComputation) -> HloModule:
        graph = self.graph
        by_name: dict[str, HloComputation] = {}
        for comp in computations:
            if comp.name in by_name:
                raise ParseError(self.text, comp.offset, f"a new computation name (not {comp.name!r} again)")
            by_name[comp.name] = comp
        callers: dict[HloComputation, list[HloInstruction]] = {}
        defined: dict[str, HloComputation] = {}
        for comp in computations:
            for inst in comp.instructions:
                graph.parent[inst] = comp
                if inst.called_computation_names:
                    called = tuple(self._callee(defined, by_name, inst, c)
                                   for c in inst.called_computation_names)
                    graph.called[inst] = called
                    for target in called:
                        callers.setdefault(target, []).append(inst)
                        if inst.opcode == "fusion":
                            graph.fusion_bodies.add(target)
            defined[comp.name] = comp
        for comp, insts in callers.items():
            graph.callers[comp] = tuple(insts)
        module = HloModule(name, attributes, tuple(computations), entry, self.text, by_name, graph)
        graph.module = module
        return module

    def _callee(self, defined: dict[str, HloComputation], by_name: dict[str, HloComputation],
                inst: HloInstruction, cname: str) -> HloComputation:
        """The computation ``cname`` that ``inst`` calls: defined earlier in the text, as XLA requires
        (so the call graph has no cycles: a computation cannot call itself)."""
        target = defined.get(cname)
        if target is None:
            at = self.text.find(cname, inst.offset)
            why = "is defined only after this call" if cname in by_name else "is not one"
            raise ParseError(self.text, at if at >= 0 else inst.offset,
                             f"the name of a computation defined before this one ({cname!r} {why})",
                             repr(cname))
        return target

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
        text = self.text
        m = _HEAD.match(text, pos)
        if m is None or m.group(2) in RESERVED_NAMES:
            return None
        head = (m.group(1) is not None, m.group(2))
        s = _SIMPLE_SHAPE.match(text, m.end())
        if s is None:
            return None
        try:
            shape = parse_shape(s.group())
        except TensorLayoutError:
            return None
        o = _OPCODE.match(text, s.end())
        if o is None or not _known_opcode(o.group(1)):
            return None
        opcode = o.group(1)
        operands = self._operands_fast(opcode, o.end())
        return None if operands is None else (head, shape, opcode, operands[0], operands[1])

    def _operands_fast(self, opcode: str, pos: int) -> tuple[_Operands, int] | None:
        """A one-line operand list by regex (names, or shaped names), and where it ends."""
        text = self.text
        ops = _SIMPLE_OPERANDS.match(text, pos)
        if ops is not None:
            items = ops.group(1).strip()
            if opcode == "constant":
                return ((items, None, (), ()), ops.end()) if items else None
            if opcode == "parameter":
                return ((None, int(items), (), ()), ops.end()) \
                    if _DIGITS.fullmatch(items) and len(items) <= 20 else None  # else the careful path
            return (None, None, tuple(_OPERAND_NAME.findall(items)), ()), ops.end()
        if opcode in ("constant", "parameter"):
            return None
        ops = _SHAPED_OPERANDS.match(text, pos)
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
            m = _ATTR.match(text, pos)
            if m:
                key, at = m.group(1), m.end()
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
