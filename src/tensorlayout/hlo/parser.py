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
from tensorlayout.hlo.attributes import (
    COMPUTATION_ATTRIBUTES,
    COMPUTATION_LIST_ATTRIBUTES,
    SKIPPED,
    parse_attribute,
)
from tensorlayout.hlo.model import (
    ComputationLayout,
    HloComputation,
    HloGraph,
    HloInstruction,
    HloModule,
)
from tensorlayout.xla.shape import Shape, parse_shape, read_shape

__all__ = ["parse_module"]

_NAME_RE = r"[A-Za-z_][\w.\-]*"
_NAME = re.compile(r"%?(" + _NAME_RE + r")")
_HEAD = re.compile(r"(?:(ROOT)[ \t]+)?%?(" + _NAME_RE + r")[ \t]*=[ \t]*")
_SHAPE_RE = r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[^{}\s,]*(?:,[^{}\s,]*)*\})?"
_SIMPLE_SHAPE = re.compile(_SHAPE_RE)
_PAREN = re.compile(r"[()\n]")
_SHAPED_ITEM = r"(?:" + _SHAPE_RE + r"[ \t]+)?%?[\w.\-]+"
_SHAPED_OPERANDS = re.compile(r"[ \t]*(" + _SHAPED_ITEM + r"(?:[ \t]*,[ \t]*" + _SHAPED_ITEM + r")*)[ \t]*\)")
_OPERAND_ITEM = re.compile(r"[ \t]*(?:(" + _SHAPE_RE + r")[ \t]+)?%?([\w.\-]+)[ \t]*,?")
_OPERAND_NAME = re.compile(r"%?([\w.\-]+)")
_OPCODE = re.compile(r"[ \t]*([a-z][a-z0-9\-]*)\(")
_OPCODE_CAREFUL = re.compile(r"[a-z][a-z0-9\-]*")
_SIMPLE_OPERANDS = re.compile(r"[ \t]*((?:%?[\w.\-]+[ \t]*(?:,[ \t]*%?[\w.\-]+[ \t]*)*)?)\)")
_ATTR = re.compile(r"[ \t]*,\s*([A-Za-z_][\w\-.]*)=")
_ATTR_NAME = re.compile(r"[A-Za-z_][\w\-.]*")
# Attribute values that need no bracket matching: a bare token, a one-line ``{...}`` without
# nested brackets outside its strings, or a string. Everything else takes scan_value's stack.
_SIMPLE_VALUE = re.compile(
    r'[^\s,{}()\[\]"/]+(?=[\s,})\]]|\Z)'
    r'|\{[^{}"\n/\[\]()]*\}'
    r'|\{(?:[^{}"\\\n\[\]()]|"(?:[^"\\\n]|\\.)*")*\}'
    r'|"(?:[^"\\\n]|\\.)*"'
)
_SCAN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[{(]|[\]})]|,|\s+|/\*.*?\*/|[^\[\]{}()"\s,]+', re.S)
_CLOSER = {"[": "]", "{": "}", "(": ")"}
_TABLE = re.compile(r"(FileNames|FunctionNames|FileLocations|StackFrames)[ \t]*(?=\n|\r|\Z)")
_TABLE_ROW = re.compile(r'\s*[0-9]+[ \t]+(?:"(?:[^"\\\n]|\\.)*"|\{[^{}\n]*\})[ \t]*(?=\n|\r|\Z)')
_WS = re.compile(r"\s*")
_MORE = re.compile(r"\s*[,/]")
_TYPE_START = re.compile(r"[a-z][a-z0-9]*\[")
_ROOT_KW = re.compile(r"ROOT(?=[ \t\n%])")
_LINE_END = re.compile(r"[ \t]*(?:/\*.*?\*/[ \t]*)*(?:[\n\r}]|//|\Z)")


def parse_module(text: str) -> HloModule:
    """Parse a whole HLO module (``HloModule name, ...`` then computations).

    Raises :class:`~tensorlayout.errors.ParseError` with line and column on malformed text.

    >>> parse_module("HloModule m\\nENTRY e {\\n ROOT c = s32[] constant(7)\\n}").entry.root.literal
    '7'
    """
    if not isinstance(text, str):
        raise ParseError(repr(text), 0, "HLO module text (a str)")
    enabled = gc.isenabled()
    gc.disable()  # the parse allocates many long-lived objects and no cycles worth collecting
    try:
        return _Parser(text).module()
    finally:
        if enabled:
            gc.enable()


def scan_value(text: str, pos: int) -> int:
    """End of the attribute value starting at ``pos``: balanced brackets, strings, bare tokens.

    >>> scan_value('backend_config={"a":{"b":[1,2]}}, x=1', 15)
    32
    """
    m = _SIMPLE_VALUE.match(text, pos)
    if m:
        return m.end()
    stack: list[str] = []
    start = pos
    while True:
        m = _SCAN.match(text, pos)
        if m is None:
            if pos >= len(text):
                if stack:
                    raise ParseError(text, pos, f"{stack[-1]!r} to close the attribute value")
                break
            raise ParseError(text, pos, "a closing '\"' on the same line")
        tok = m.group()
        c = tok[0]
        if c in "[{(":
            stack.append(_CLOSER[c])
        elif c in "]})":
            if not stack:
                break
            if stack.pop() != c:
                raise ParseError(text, pos, "a matching closing bracket")
        elif (c == "," or c.isspace()) and not stack:
            break
        pos = m.end()
    if pos == start:
        raise ParseError(text, pos, "an attribute value")
    return pos


class _Parser:
    """Recursive descent over the module text, with regex fast paths for instructions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cur = Cursor(text, comments=True)
        self.graph = HloGraph()

    # -- module ------------------------------------------------------------------------------
    def module(self) -> HloModule:
        cur, text = self.cur, self.text
        name = "_"
        attributes: dict[str, Any] = {}
        if cur.peek("HloModule") and not re.match(r"[\w.\-]", text[cur.pos + 9 : cur.pos + 10]):
            cur.pos += len("HloModule")
            name = self._name("a module name")
            while cur.accept(","):
                key, value, at = self._attribute()
                attributes[key] = self._module_attribute(key, value, at)
        computations: list[HloComputation] = []
        entry: HloComputation | None = None
        while not cur.at_end():
            m = _TABLE.match(text, cur.pos)
            if m:
                cur.pos = m.end()
                while True:
                    row = _TABLE_ROW.match(text, cur.pos)
                    if not row:
                        break
                    cur.pos = row.end()
                continue
            comp = self.computation()
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
        cur.expect("=", f"'=' after attribute {m.group()}")
        cur.skip()
        at = cur.pos
        cur.pos = scan_value(self.text, at)
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
        if text.startswith("ENTRY", start) and not re.match(r"[\w.\-]", text[start + 5 : start + 6]):
            is_entry = True
            cur.pos += 5
        name = self._name("a computation name (or ENTRY)")
        signature = None
        if cur.peek("("):
            signature = self._signature()
        cur.expect("{", "'{' to start the computation body")
        instructions: list[HloInstruction] = []
        ws = _WS.match
        while True:
            cur.pos = ws(text, cur.pos).end()
            if text.startswith("/", cur.pos):
                cur.skip()
            if text.startswith("}", cur.pos):
                cur.pos += 1
                break
            if cur.pos >= len(text):
                raise cur.error("'}' to end the computation")
            instructions.append(self.instruction())
        while cur.accept(","):  # e.g. `}, execution_thread="host"` (not needed: skipped)
            self._attribute()
        if not instructions:
            raise ParseError(text, cur.pos - 1, "at least one instruction in the computation")
        roots = [i for i in instructions if i.is_root]
        if len(roots) > 1:
            raise ParseError(text, roots[1].offset, "only one ROOT instruction per computation")
        root = roots[0] if roots else instructions[-1]
        by_name: dict[str, HloInstruction] = {}
        for inst in instructions:
            if inst.name in by_name:
                raise ParseError(text, inst.offset, f"a new instruction name (not {inst.name!r} again)")
            by_name[inst.name] = inst
        self._resolve_operands(name, instructions, by_name)
        return HloComputation(name, tuple(instructions), root, is_entry, start, signature,
                              self.graph, by_name)

    def _shape(self, pos: int) -> tuple[Shape, int]:
        """The shape at ``pos`` and where it ends: cached for plain text, careful otherwise."""
        text = self.text
        m = _SIMPLE_SHAPE.match(text, pos)
        end = m.end() if m else -1
        if not m and text.startswith("(", pos):
            depth = 0
            for p in _PAREN.finditer(text, pos):
                c = p.group()
                if c == "\n":
                    break
                depth += 1 if c == "(" else -1
                if depth == 0:
                    end = p.end()
                    break
        if end > 0:
            try:
                return parse_shape(text[pos:end]), end
            except TensorLayoutError:
                pass
        self.cur.pos = pos
        shape = read_shape(self.cur)
        return shape, self.cur.pos

    def _signature(self) -> tuple[tuple[tuple[str, Shape], ...], Shape]:
        cur = self.cur
        cur.expect("(")
        params: list[tuple[str, Shape]] = []
        if not cur.accept(")"):
            while True:
                pname = self._name("a parameter name")
                cur.expect(":", "':' after the parameter name")
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
        for comp in computations:
            for inst in comp.instructions:
                graph.parent[inst] = comp
                if inst.called_computation_names:
                    called = tuple(self._callee(by_name, inst, c) for c in inst.called_computation_names)
                    graph.called[inst] = called
                    for target in called:
                        callers.setdefault(target, []).append(inst)
                        if inst.opcode == "fusion":
                            graph.fusion_bodies.add(target)
        for comp, insts in callers.items():
            graph.callers[comp] = tuple(insts)
        module = HloModule(name, attributes, tuple(computations), entry, self.text, by_name, graph)
        graph.module = module
        return module

    def _callee(self, by_name: dict[str, HloComputation], inst: HloInstruction, cname: str) -> HloComputation:
        target = by_name.get(cname)
        if target is None:
            at = self.text.find(cname, inst.offset)
            raise ParseError(self.text, at if at >= 0 else inst.offset,
                             f"the name of a computation of the module ({cname!r} is not one)", repr(cname))
        return target

    # -- instructions ------------------------------------------------------------------------
    def instruction(self) -> HloInstruction:
        """One instruction at the cursor; leaves the cursor after its last attribute."""
        cur, text = self.cur, self.text
        start = pos = cur.pos
        m = _HEAD.match(text, pos)
        if m:
            is_root, name = m.group(1) is not None, m.group(2)
            pos = m.end()
        else:
            is_root = bool(cur.match(_ROOT_KW))
            name = self._name("an instruction name (or ROOT)")
            cur.expect("=", "'=' after the instruction name")
            cur.skip()
            pos = cur.pos
        shape, pos = self._shape(pos)
        m = _OPCODE.match(text, pos)
        if m:
            opcode = m.group(1)
            pos = m.end()
        else:
            cur.pos = pos
            om = cur.match(_OPCODE_CAREFUL)
            if not om:
                raise cur.error("an opcode")
            opcode = om.group()
            cur.expect("(", f"'(' after opcode {opcode}")
            pos = cur.pos
        literal: str | None = None
        parameter_number: int | None = None
        operand_names: tuple[str, ...] = ()
        operand_shapes: tuple[Shape | None, ...] = ()
        m = _SIMPLE_OPERANDS.match(text, pos)
        if m:
            items = m.group(1)
            pos = m.end()
            if opcode == "constant":
                literal = items.strip()
                if not literal:
                    raise ParseError(text, pos - 1, "a literal in constant(...)")
            elif opcode == "parameter":
                if not items.strip().isdigit():
                    raise ParseError(text, m.start(1), "a parameter number")
                parameter_number = int(items)
            elif items:
                operand_names = tuple(_OPERAND_NAME.findall(items))
        elif opcode not in ("constant", "parameter") and (m := _SHAPED_OPERANDS.match(text, pos)):
            try:
                items = [(parse_shape(s) if s else None, n) for s, n in _OPERAND_ITEM.findall(m.group(1))]
                operand_names = tuple([n for _, n in items])
                operand_shapes = tuple([s for s, _ in items])
                pos = m.end()
            except TensorLayoutError:
                cur.pos = pos
                operand_names, operand_shapes = self._operands()
                pos = cur.pos
        else:
            cur.pos = pos
            if opcode == "constant":
                pos = self._literal(pos)
                literal = text[cur.pos : pos].strip()
                cur.pos = pos
                cur.expect(")", "')' after the constant literal")
            elif opcode == "parameter":
                parameter_number = cur.integer("a parameter number")
                cur.expect(")", "')' after the parameter number")
            else:
                operand_names, operand_shapes = self._operands()
            pos = cur.pos
        attributes: dict[str, Any] = {}
        raw: dict[str, str] = {}
        called: list[str] = []
        while True:
            m = _ATTR.match(text, pos)
            if m:
                key = m.group(1)
                at = m.end()
                end = scan_value(text, at)
            else:
                if not _MORE.match(text, pos):
                    break
                cur.pos = pos
                if not cur.peek(","):
                    break
                cur.accept(",")
                key, _, at = self._attribute()
                end = cur.pos
            if key in raw:
                raise ParseError(text, at, f"attribute {key} only once")
            value = text[at:end]
            raw[key] = value
            if key in SKIPPED:
                attributes[key] = value
            else:
                try:
                    typed = parse_attribute(key, value)
                except ParseError:
                    typed = self._typed(key, value, at)
                attributes[key] = typed
                if key in COMPUTATION_ATTRIBUTES or key == "calls":
                    called.extend((typed,) if isinstance(typed, str) else typed)
                elif key in COMPUTATION_LIST_ATTRIBUTES:
                    called.extend(typed)
            pos = end
        cur.pos = pos
        if not _LINE_END.match(text, pos):
            cur.skip()
            raise cur.error("',' and an attribute, or the end of the instruction's line")
        if opcode == "constant" and literal is not None:
            attributes["literal"] = literal
        return HloInstruction(name, opcode, shape, operand_names, attributes, raw, tuple(called),
                              is_root, literal, parameter_number, operand_shapes, start, self.graph)

    def _literal(self, pos: int) -> int:
        """End of a constant payload (balanced brackets) that starts at ``pos``."""
        text = self.text
        stack: list[str] = []
        while True:
            m = _SCAN.match(text, pos)
            if m is None:
                raise ParseError(text, pos, "')' to end the constant literal")
            c = m.group()[0]
            if c in "[{(":
                stack.append(_CLOSER[c])
            elif c in "]})":
                if not stack:
                    return pos
                if stack.pop() != c:
                    raise ParseError(text, pos, "a matching closing bracket in the literal")
            pos = m.end()

    def _operands(self) -> tuple[tuple[str, ...], tuple[Shape | None, ...]]:
        """Careful operand list: ``[shape] name`` items; the cursor is after ``(``."""
        cur, text = self.cur, self.text
        names: list[str] = []
        shapes: list[Shape | None] = []
        if cur.accept(")"):
            return (), ()
        while True:
            cur.skip()
            shape = None
            if text.startswith("(", cur.pos) or _TYPE_START.match(text, cur.pos):
                shape = read_shape(cur)
            names.append(self._name("an operand name"))
            shapes.append(shape)
            if cur.accept(")"):
                break
            cur.expect(",", "',' or ')' in the operand list")
        if not any(s is not None for s in shapes):
            return tuple(names), ()
        return tuple(names), tuple(shapes)
