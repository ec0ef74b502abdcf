"""XLA's shorthand async ops: ``slice-start`` / ``slice-done``, ``call-start`` and the like.

XLA's parser reads ``x = ((f32[8]), f32[4], s32[]) slice-start(p), slice={[0:4]}`` as an
``async-start`` that calls a new computation ``async_wrapped`` holding one ``parameter`` per
operand and the wrapped ``slice``; ``slice-update`` and ``slice-done`` become ``async-update``
and ``async-done``. The parser builds the same model here, so maps go through async pairs.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module('''HloModule m
... ENTRY e {
...   p = f32[8] parameter(0)
...   ss = ((f32[8]), f32[4], s32[]) slice-start(p), slice={[0:4]}
...   ROOT sd = f32[4] slice-done(ss)
... }''')
>>> start = m.entry.instruction("ss")
>>> start.opcode, [i.opcode for i in start.called_computations[0].instructions]
('async-start', ['parameter', 'slice'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tensorlayout.errors import ParseError
from tensorlayout.hlo.model import HloComputation, HloGraph, HloInstruction
from tensorlayout.hlo.opcodes import async_shorthand

__all__ = ["expand_async_shorthand"]

#: Attributes that stay on the ``async-start``; all others belong to the wrapped instruction.
_ASYNC_ATTRIBUTES = frozenset({"async_execution_thread", "async_group_id", "metadata", "frontend_attributes",
                               "backend_config", "control-predecessors", "sharding"})


def expand_async_shorthand(instr: HloInstruction, text: str, graph: HloGraph,
                           fresh: Callable[[str], str]) -> tuple[HloInstruction, HloComputation | None]:
    """``instr`` in XLA's model: the async op, and for a ``-start`` its new wrapped computation.

    ``fresh(base)`` gives module-unique names as XLA does (``async_param``, ``async_param.1``…).
    Returns ``(instr, None)`` unchanged when ``instr.opcode`` is not shorthand.
    """
    found = async_shorthand(instr.opcode)
    if found is None:
        return instr, None
    wrapped_opcode, async_opcode = found
    if async_opcode != "async-start":
        return _replace(instr, async_opcode, instr.attributes, instr.raw_attributes, ()), None
    wrapped_name = fresh("async_wrapped")
    wrapped = _wrapped_computation(instr, wrapped_opcode, text, graph, wrapped_name, fresh)
    keep: dict[str, Any] = {k: v for k, v in instr.attributes.items() if k in _ASYNC_ATTRIBUTES}
    raw = {k: v for k, v in instr.raw_attributes.items() if k in _ASYNC_ATTRIBUTES}
    keep["calls"] = raw["calls"] = wrapped_name
    return _replace(instr, async_opcode, keep, raw, (wrapped_name,)), wrapped


def _replace(instr: HloInstruction, opcode: str, attributes: Mapping[str, Any], raw: Mapping[str, str],
             called: tuple[str, ...]) -> HloInstruction:
    return HloInstruction(instr.name, opcode, instr.shape, instr.operand_names, attributes, raw, called,
                          instr.is_root, instr.literal, instr.parameter_number, instr.operand_shapes,
                          instr.offset, instr.graph)


def _wrapped_computation(instr: HloInstruction, opcode: str, text: str, graph: HloGraph,
                         name: str, fresh: Callable[[str], str]) -> HloComputation:
    """``name { async_param... = parameter(i); ROOT <opcode> = <opcode>(async_param...) }``."""
    shape = instr.shape
    n = len(instr.operand_names)
    if (not shape.is_tuple or len(shape.tuple_shapes) < 2 or not shape.tuple_shapes[0].is_tuple
            or len(shape.tuple_shapes[0].tuple_shapes) != n):
        raise ParseError(text, instr.offset, f"an {instr.opcode} shape ((operand shapes), result, "
                         f"context...) with {n} operand shapes", str(shape))
    params = [HloInstruction(fresh("async_param"), "parameter", s, parameter_number=i,
                             offset=instr.offset, graph=graph)
              for i, s in enumerate(shape.tuple_shapes[0].tuple_shapes)]
    attributes = {k: v for k, v in instr.attributes.items() if k not in _ASYNC_ATTRIBUTES}
    raw = {k: v for k, v in instr.raw_attributes.items() if k not in _ASYNC_ATTRIBUTES}
    op = HloInstruction(fresh(opcode), opcode, shape.tuple_shapes[1], tuple(p.name for p in params),
                        attributes, raw, instr.called_computation_names, True, offset=instr.offset,
                        graph=graph)
    graph.operands[op] = tuple(params)
    for p in dict.fromkeys(params):
        graph.users[p] = (op,)
    by_name = {i.name: i for i in (*params, op)}
    return HloComputation(name, (*params, op), op, False, instr.offset, None, graph, by_name)
