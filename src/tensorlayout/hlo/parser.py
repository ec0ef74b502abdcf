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
import re
from typing import Any

from tensorlayout._cursor import Cursor
from tensorlayout.errors import ParseError, TensorLayoutError, expect_text
from tensorlayout.hlo._checks import check_operand_shapes, check_parameter_numbers, check_reshapes
from tensorlayout.hlo.async_ops import expand_async_shorthand
from tensorlayout.hlo.attributes import MODULE_ATTRIBUTES
from tensorlayout.hlo.model import (
    ComputationLayout,
    HloComputation,
    HloInstruction,
    HloModule,
)
from tensorlayout.hlo.opcodes import XLA_OPCODES
from tensorlayout.hlo.parser_instruction import (
    _NAME_RE,
    _SHAPE_RE,
    MAX_TUPLE_DEPTH,
    RESERVED_NAMES,
    InstructionReader,
)
from tensorlayout.hlo.stack_frames import read_stack_frame_tables
from tensorlayout.xla.shape import Shape, parse_shape, read_shape

__all__ = ["MAX_TUPLE_DEPTH", "RESERVED_NAMES", "parse_module"]

_NAME_CHAR = re.compile(r"[A-Za-z0-9_.\-]")
_WS = re.compile(r"\s*", re.A)


_SHAPES = "(?:" + _SHAPE_RE + ")(?:, " + _SHAPE_RE + ")*"
#: ``{(shape, shape)->shape}`` of plain array shapes (the result maybe a tuple of them), one space
#: after each comma, as XLA prints it.
_COMPUTATION_LAYOUT = re.compile(
    r"\{\((" + _SHAPES + r")?\)->(" + _SHAPE_RE + r"|\(" + _SHAPES + r"\))\}", re.A)


_NAMED = r"%?(" + _NAME_RE + r"): (" + _SHAPE_RE + r"|\((?:" + _SHAPES + r")?\))"
#: ``(name: shape, ...) -> shape`` of plain (or tuple of plain) shapes, as XLA prints a
#: computation's signature, followed by the ``{`` of the body (not of a layout).
_SIGNATURE = re.compile(r"\(((?:" + _NAMED + r")(?:, " + _NAMED + r")*)?\) -> (" + _SHAPE_RE + r"|\((?:"
                        + _SHAPES + r")?\))(?=\s*\{\s*[%A-Za-z_}])", re.A)
_SIGNATURE_PARAM = re.compile(_NAMED, re.A)


def _simple_signature(text: str, at: int) -> tuple[tuple[tuple[tuple[str, Shape], ...], Shape], int] | None:
    """The signature at ``at`` in its common form (plain or tuple shapes, XLA's spacing), read
    with the cached shape parser, and where it ends; None for any other form (the careful reader
    then reads it)."""
    m = _SIGNATURE.match(text, at)
    if m is None:
        return None
    try:
        params = tuple([(name, parse_shape(shape)) for name, shape in _SIGNATURE_PARAM.findall(m.group(1))]) \
            if m.group(1) else ()
        return (params, parse_shape(m.group(6))), m.end()
    except TensorLayoutError:
        return None


def _simple_computation_layout(text: str, at: int) -> ComputationLayout | None:
    """The computation layout at ``at`` in its common form (plain array shapes), read with the
    cached shape parser; None for any other form (the careful reader then reads it)."""
    m = _COMPUTATION_LAYOUT.match(text, at)
    if m is None:
        return None
    try:
        params = tuple(parse_shape(s) for s in m.group(1).split(", ")) if m.group(1) else ()
        return ComputationLayout(params, parse_shape(m.group(2)))
    except TensorLayoutError:
        return None


def _layout_end(key: str, text: str, at: int) -> int | None:
    """Where a computation layout in its common form ends (its shapes read with the cached
    parser: then its text is bracket-balanced and holds no string, so this is where the careful
    scanner ends it too); None otherwise."""
    if key not in ("entry_computation_layout", "host_entry_computation_layout") \
            or _simple_computation_layout(text, at) is None:
        return None
    m = _COMPUTATION_LAYOUT.match(text, at)
    return None if m is None else m.end()


#: ``(id(result), id(root shape)) -> (result, root shape)`` of the pairs found compatible (the
#: parser's shapes come from the shape cache, so equal texts give the same objects); the value
#: holds both, so their ids stay theirs while the entry lives.
_COMPATIBLE: dict[tuple[int, int], tuple[Shape, Shape]] = {}
_COMPATIBLE_LIMIT = 1 << 12


def _compatible(result: Shape, shape: Shape) -> bool:
    """``result.compatible(shape)``, remembered for pairs found compatible (a big tuple takes
    long to compare, and computations repeat their signatures).

    >>> _compatible(parse_shape("(f32[2], s8[])"), parse_shape("(f32[2]{0}, s8[])"))
    True
    """
    key = (id(result), id(shape))
    hit = _COMPATIBLE.get(key)
    if hit is not None and hit[0] is result and hit[1] is shape:
        return True
    if not result.compatible(shape):
        return False
    if len(_COMPATIBLE) >= _COMPATIBLE_LIMIT:
        _COMPATIBLE.clear()
    _COMPATIBLE[key] = (result, shape)
    return True


def parse_module(text: str) -> HloModule:
    """Parse a whole HLO module (``HloModule name, ...`` then computations).

    Raises :class:`~tensorlayout.errors.ParseError` with line and column on malformed text, and
    :class:`~tensorlayout.errors.ArgumentTypeError` for anything but a ``str``.

    >>> parse_module("HloModule m\\nENTRY e {\\n ROOT c = s32[] constant(7)\\n}").entry.root.literal
    '7'
    """
    expect_text(text, "HLO module text")
    _refuse_stablehlo(text)
    return _Parser(text).module()


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


def _refuse_repeated_name(text: str, instructions: list[HloInstruction]) -> None:
    """A ParseError at the first instruction whose name an earlier one of its computation has."""
    seen: set[str] = set()
    for inst in instructions:
        if inst.name in seen:
            raise ParseError(text, inst.offset, f"a new instruction name (not {inst.name!r} again)")
        seen.add(inst.name)


class _Parser(InstructionReader):
    """Recursive descent over the module text, with regex fast paths for instructions."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
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
                key, value, at = self._attribute(_layout_end)
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


    def _module_attribute(self, key: str, value: str, at: int) -> Any:
        if key in ("entry_computation_layout", "host_entry_computation_layout"):
            fast = _simple_computation_layout(self.text, at)
            if fast is not None:
                return fast
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
            cur.pos = pos = _WS.match(text, cur.pos).end()  # type: ignore[union-attr]  # (\s* always matches)
            c = text[pos : pos + 1]  # the next character ('' at the end)
            if c == "/":
                cur.skip()
                c = text[cur.pos : cur.pos + 1]
            if c == "}":
                cur.pos += 1
                break
            if not c:
                raise cur.error("'}' to end the computation")
            instr = self.instruction()
            # (an XLA opcode is never async shorthand: only the other ones need expanding)
            instructions.append(instr if instr.opcode in XLA_OPCODES else self._expand_async(instr))
        while cur.accept(","):  # e.g. `}, execution_thread="host"` (not needed: skipped)
            self._attribute()
        if not instructions:
            raise ParseError(text, cur.pos - 1, "at least one instruction in the computation")
        roots = [i for i in instructions if i.is_root]
        if len(roots) > 1:
            raise ParseError(text, roots[1].offset, "only one ROOT instruction per computation")
        root = roots[0] if roots else instructions[-1]
        if signature is not None and not _compatible(signature[1], root.shape):
            raise ParseError(text, root.offset, f"a root whose shape {root.shape} is compatible with the "
                             f"result {signature[1]} of computation {name}", repr(root.name))
        by_name = {inst.name: inst for inst in instructions}
        if len(by_name) != len(instructions):
            _refuse_repeated_name(text, instructions)
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


    def _signature(self) -> tuple[tuple[tuple[str, Shape], ...], Shape]:
        cur = self.cur
        cur.skip()
        fast = _simple_signature(self.text, cur.pos)
        if fast is not None:
            signature, cur.pos = fast
            return signature
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
        """Record each instruction's operands (its users when first asked); an operand must be
        defined before use."""
        operands_of = self.graph.operands
        defined: dict[str, HloInstruction] = {}  # the instructions before this one, by name
        take = defined.__getitem__
        for inst in instructions:
            names = inst.operand_names
            if names:
                try:
                    operands_of[inst] = tuple(map(take, names))
                except KeyError:
                    missing: str | None = next(n for n in names if n not in defined)
                else:
                    missing = None
                if missing is not None:  # raised here, not in the except: no KeyError chained to it
                    self._undefined_operand(comp_name, inst, missing, missing in by_name)
            defined[inst.name] = inst
        self.graph.defer_users(instructions)

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


