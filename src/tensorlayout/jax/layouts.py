"""Layout assignment explained: the copies, transposes and layout-changing bitcasts of an
optimized module, what forced each, and the bytes each moves.

:func:`layout_changes` walks the optimized module (its entry, control-flow bodies and fused
computations): a ``copy`` whose result layout differs from its operand's (a relayout, or a
move to another memory space), a ``copy-start`` (an asynchronous move between memory
spaces), a ``transpose`` (physical), a fusion whose root is one of those, and a ``bitcast``
that permutes dims (free: the layout absorbed a transpose). For each: the instruction that
consumes it (whose operand layout forced it; the entry result layout for an output), whether
the unoptimized module already had it (written by the program) or XLA inserted it, and the
bytes read and written.

>>> from tensorlayout.hlo import parse_module
>>> after = parse_module("HloModule m\\nENTRY e {\\n  p = f32[8,128]{1,0} parameter(0)\\n"
...                      "  ROOT c = f32[8,128]{0,1} copy(p)\\n}")
>>> [(c.name, c.kind, c.forced_by, c.bytes_moved) for c in layout_changes(after)]
[('c', 'relayout', 'the entry result layout', 8192)]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo.model import HloInstruction, HloModule
from tensorlayout.jax.memory import source_info
from tensorlayout.xla.shape import Shape
from tensorlayout.xla.sizes import array_size

__all__ = ["LayoutChange", "layout_changes"]

#: Ops that hand a buffer on unchanged: the consumer that forced a layout is behind them.
_PASS_ON = frozenset({"copy-done", "get-tuple-element", "bitcast"})


@dataclass(frozen=True, slots=True)
class LayoutChange:
    """One relayout: ``kind`` is relayout, memory-space, transpose or bitcast."""

    name: str
    opcode: str
    kind: str
    computation: str
    operand: str
    result: str
    forced_by: str
    inserted: bool
    op_name: str
    bytes_moved: int

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "opcode": self.opcode, "kind": self.kind,
                "computation": self.computation, "operand_shape": self.operand,
                "result_shape": self.result, "forced_by": self.forced_by,
                "inserted_by_xla": self.inserted, "op_name": self.op_name,
                "bytes_moved": self.bytes_moved}


def _text(shape: Shape) -> str:
    return shape.to_string(with_layout=True)


def _layout_key(shape: Shape) -> tuple[Any, ...]:
    layout = shape.layout
    if layout is None:
        return ()
    return (layout.minor_to_major, layout.tiles)


def _space(shape: Shape) -> int:
    return shape.layout.memory_space if shape.layout is not None else 0


def _size(shape: Shape) -> int:
    try:
        return array_size(shape) if shape.is_array else 0
    except TensorLayoutError:
        return 0


def _kind(instr: HloInstruction, operand: Shape, result: Shape) -> str | None:
    """What relayout ``instr`` does (None: it moves nothing between layouts or spaces)."""
    op = instr.opcode
    if op == "transpose":
        return "transpose"
    if op in ("copy", "copy-start"):
        if _layout_key(operand) != _layout_key(result):
            return "relayout"
        return "memory-space" if _space(operand) != _space(result) else None
    if op == "bitcast" and operand.is_array and result.is_array and operand.rank == result.rank \
            and operand.dimensions != result.dimensions \
            and sorted(operand.dimensions) == sorted(result.dimensions):
        return "bitcast"
    return None


def _result(instr: HloInstruction) -> Shape:
    """The moved array: a copy-start's first tuple element (its destination)."""
    shape = instr.shape
    return shape.tuple_shapes[0] if instr.opcode == "copy-start" and shape.is_tuple else shape


def _consumers(instr: HloInstruction, fusions: dict[int, HloInstruction]) -> list[HloInstruction]:
    """Who reads ``instr``'s buffer, looking through ops that pass it on and out of a fusion
    whose result it is."""
    users, here = list(instr.users), instr
    for _ in range(8):
        if any(u.opcode in _PASS_ON for u in users):
            users = [v for u in users for v in (u.users if u.opcode in _PASS_ON else (u,))]
            continue
        parent = here.parent
        if users or parent is None or id(parent) not in fusions:
            break
        here = fusions[id(parent)]  # the fusion's result: its users read it
        users = list(here.users)
    return users


def _forced_by(instr: HloInstruction, module: HloModule, fusions: dict[int, HloInstruction]) -> str:
    """Who needs the new layout: the consumers, or the entry result layout."""
    users = _consumers(instr, fusions)
    if not users:
        return "the entry result layout" if module.entry.root is instr else "nothing (an unused result)"
    parts = []
    for u in users[:3]:
        if u.opcode == "tuple" and u is module.entry.root:
            parts.append("the entry result layout")
            continue
        k = next((i for i, op in enumerate(u.operands) if op in (instr, *instr.users)), 0)
        parts.append(f"{u.name} ({u.opcode}, operand {k})")
    return ", ".join(dict.fromkeys(parts)) + (f" and {len(users) - 3} more" if len(users) > 3 else "")


def _fusions(module: HloModule) -> dict[int, HloInstruction]:
    """The fusion instruction calling each fused computation (by the computation's id)."""
    return {id(c): instr for comp in module.computations for instr in comp.instructions
            if instr.opcode == "fusion" for c in instr.called_computations}


def _candidates(module: HloModule) -> Iterator[HloInstruction]:
    for comp in module.computations:
        for instr in comp.instructions:
            if instr.opcode in ("copy", "copy-start", "transpose", "bitcast"):
                yield instr


def layout_changes(after: HloModule, before: HloModule | None = None) -> tuple[LayoutChange, ...]:
    """Every relayout of the optimized module ``after`` (see the module docstring); with the
    unoptimized ``before``, which of them the program already had."""
    written = {(i.name, i.opcode) for i in before.instructions()} if before is not None else set()
    sources = source_info(after)
    fusions = _fusions(after)
    out = []
    for instr in _candidates(after):
        if not instr.operands:
            continue
        operand, result = instr.operands[0].shape, _result(instr)
        kind = _kind(instr, operand, result)
        if kind is None:
            continue
        moved = 0 if kind == "bitcast" else _size(operand) + _size(result)
        src = sources.get(instr.name)
        out.append(LayoutChange(instr.name, instr.opcode, kind, instr.parent.name if instr.parent else "",
                                _text(operand), _text(result), _forced_by(instr, after, fusions),
                                before is not None and (instr.name, instr.opcode) not in written,
                                src.op_name if src else "", moved))
    out.sort(key=lambda c: (-c.bytes_moved, c.name))
    return tuple(out)
