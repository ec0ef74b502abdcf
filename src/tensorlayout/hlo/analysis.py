"""HLO indexing analysis: which input elements each output element reads (XLA spec §4–§6).

``output_to_input_indexing(instr)`` gives, per operand, the set of indexing maps from the
output index to that operand's index; ``input_to_output_indexing(instr, k)`` the maps from
operand ``k``'s index to each output's index. An op without a rule, and malformed HLO (a rule
raising one of the library's errors), get an undefined map ("unknown indexing"); any other
exception is a bug and propagates. Fusions compose the maps of their bodies (see
:mod:`tensorlayout.hlo.fusion`); physical (layout-ordered) and tiled-offset maps wrap these
in :mod:`tensorlayout.hlo.physical`.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[4,8] parameter(0)\\n"
...                  " ROOT t = f32[8,4] transpose(p), dimensions={1,0}\\n}")
>>> print(output_to_input_indexing(m.entry.root))
operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter

from tensorlayout.errors import HloError, TensorLayoutError, UnsupportedError
from tensorlayout.hlo import fusion, operand_indexing
from tensorlayout.hlo.attributes import SKIPPED
from tensorlayout.hlo.fusion import FusionAdaptor
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.opcodes import ELEMENTWISE_OPCODES
from tensorlayout.hlo.operand_indexing import (
    HloInstructionIndexing,
    OperandIndexing,
    OrderedSet,
    Rule,
    RuntimeVar,
    group_indexing_maps_by_producers,
    runtime_var_label,
)
from tensorlayout.hlo.ops import compute, data, shape
from tensorlayout.xla.shape import Shape

__all__ = [
    "ELEMENTWISE_OPCODES",
    "HloInstructionIndexing",
    "OperandIndexing",
    "RuntimeVar",
    "clear_caches",
    "epilogue_input_to_output_indexing",
    "group_indexing_maps_by_producers",
    "grouped_output_to_input_indexing",
    "input_to_output_indexing",
    "output_to_input_indexing",
    "runtime_var_label",
]

def _fusion_o2i(instr: HloInstruction, output_id: int) -> list[list[OperandIndexing]]:
    """The ``fusion`` rule: the body's maps from root ``output_id`` to each fusion operand."""
    return fusion.fusion_output_to_input(instr, output_id, _shared_o2i)


def _async_start_o2i(instr: HloInstruction, output_id: int) -> list[list[OperandIndexing]]:
    """``async-start``: output 1 (the result) reads the operands through the wrapped computation.

    Output 0 (the operands) and 2 (the context) have no element-wise maps.
    """
    called = instr.called_computations
    if output_id != 1 or not called:
        raise HloError(f"async-start {instr.name}: only output 1 (the wrapped result) has maps")
    adaptor = FusionAdaptor.for_computation(called[0], instr)
    groups = fusion.group_by_producers(adaptor, called[0].root, _shared_o2i)
    return [list(groups.get(op, ())) for op in instr.operands]


OUTPUT_TO_INPUT: Mapping[str, Rule] = {
    **shape.OUTPUT_TO_INPUT, **data.OUTPUT_TO_INPUT, **compute.OUTPUT_TO_INPUT, "fusion": _fusion_o2i,
    "async-start": _async_start_o2i,
}
INPUT_TO_OUTPUT: Mapping[str, Rule] = {
    **shape.INPUT_TO_OUTPUT, **data.INPUT_TO_OUTPUT, **compute.INPUT_TO_OUTPUT,
}


def _output_count(instr: HloInstruction) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def _rank(shape: Shape) -> int | None:
    return shape.rank if shape.is_array else None


def _arity_ok(result: HloInstructionIndexing, from_rank: int | None,
              to_ranks: Sequence[int | None]) -> bool:
    """Every defined map reads ``from_rank`` dims and gives the rank of its target.

    Malformed HLO (a broadcast without ``dimensions``, operands of the wrong rank) makes a
    rule build maps of the wrong arity; those become "unknown indexing" instead of failing
    later in a consumer. Tuple-shaped sides (rank None) are not checked, and a map may have
    no results whatever the target's rank: XLA reads "one scalar" that way (scan carries,
    a fused scalar parameter fed by an array).
    """
    if len(result) != len(to_ranks):
        return False
    for group, to_rank in zip(result.indexing_maps, to_ranks):
        for oi in group:
            m = oi.map
            if m.is_undefined:
                continue
            if from_rank is not None and m.num_dims != from_rank:
                return False
            if to_rank is not None and m.num_results not in (to_rank, 0):
                return False
    return True


def _apply(rule: Rule, instr: HloInstruction, k: int, from_rank: int | None,
           to_ranks: Sequence[int | None]) -> HloInstructionIndexing:
    """Run ``rule``; malformed HLO (a library error, maps of the wrong arity) gives unknown."""
    try:
        result = HloInstructionIndexing(rule(instr, k))
    except TensorLayoutError:
        return HloInstructionIndexing.unknown(len(to_ranks))
    if not _arity_ok(result, from_rank, to_ranks):
        return HloInstructionIndexing.unknown(len(to_ranks))
    return result


def _no_physical(physical: bool) -> None:
    """``physical=True`` moved to :mod:`tensorlayout.hlo.physical`, which wraps this module."""
    if physical:
        raise UnsupportedError("physical-layout maps come from tensorlayout.hlo.output_to_input_indexing "
                               "and input_to_output_indexing (module tensorlayout.hlo.physical)")


def output_to_input_indexing(instr: HloInstruction, output_id: int = 0, *,
                             physical: bool = False) -> HloInstructionIndexing:
    """Per operand, the maps from ``instr``'s output ``output_id`` index to the operand index.

    Computed once per instruction of a parsed module (a fusion's walk reuses its body's maps);
    each call returns its own copy. ``physical`` is accepted (False only) while callers move to
    :mod:`tensorlayout.hlo.physical`.
    """
    if physical:
        _no_physical(physical)
    return _shared_o2i(instr, output_id).copy()


def _shared_o2i(instr: HloInstruction, output_id: int) -> HloInstructionIndexing:
    """:func:`output_to_input_indexing` without the copy, remembered in a parsed module's graph;
    callers only read the result (a fusion's walk)."""
    if output_id.__class__ is not int or output_id:  # every instruction has an output 0
        _check_id(instr, output_id, max(1, _output_count(instr)), "output")
    graph = instr.graph
    # output 0 (nearly every call) is keyed by the instruction alone: no key tuple to build,
    # nor one more container per instruction for the garbage collector to walk
    key: object = (instr, output_id) if output_id else instr
    hit: HloInstructionIndexing | None = graph.memo.get(key)
    if hit is None:
        hit = _compute_o2i(instr, output_id)
        if graph.module is not None:  # a parsed module: its links no longer change
            graph.memo[key] = hit
    return hit


#: Opcodes whose rule reads only the instruction's opcode, shapes (its own and its operands')
#: and attributes: never which instruction an operand is, nor its value. Their maps are
#: remembered by value, across instructions and modules.
_BY_VALUE = frozenset(shape.OUTPUT_TO_INPUT) | frozenset(compute.OUTPUT_TO_INPUT)
#: Attributes no rule reads (kept as raw text): left out of the key.
_NOT_READ = SKIPPED | {"metadata"}
#: The :data:`_BY_VALUE` opcodes whose rule reads layouts or element types (the bitcast's map
#: goes through the physical order); the others read only dimensions and ranks.
_READS_LAYOUT = frozenset({"bitcast"})


_NOT_ARRAYS = frozenset({"tuple", "token", "opaque"})


def _dims_or_id(shape: Shape) -> object:
    """What a rule that reads only dimensions sees of ``shape``: an array's dimensions (equal for
    ``f32[2,3]{1,0}`` and ``s8[2,3]{0,1}``), else the shape's id (tuples, tokens, buffers...).

    >>> _dims_or_id(Shape.parse("f32[2,3]{0,1}")) == _dims_or_id(Shape.parse("s8[2,3]"))
    True
    """
    if shape.tuple_shapes or shape.is_buffer or shape.element_type.name in _NOT_ARRAYS:
        return id(shape)  # (what Shape.kind tells apart, without building its table)
    return shape.dimensions


#: ``(opcode, output id, each shape's dimensions (or id), attributes) -> (the shapes, maps)``;
#: the value holds the shapes (the parser shares equal shapes), so the ids in keys stay theirs
#: while the entry lives.
_BY_VALUE_MEMO: dict[tuple[object, ...], tuple[tuple[Shape, ...], HloInstructionIndexing]] = {}
_BY_VALUE_LIMIT = 1 << 14
_SHAPE_OF = attrgetter("shape")
_NO_OPERANDS = HloInstructionIndexing([])


def _compute_o2i(instr: HloInstruction, output_id: int) -> HloInstructionIndexing:
    """Run the opcode's rule; for :data:`_BY_VALUE` opcodes, once per distinct value."""
    operands = instr.operands
    if not operands:  # no operand, no map: whatever the rule gives, or unknown(0), is empty
        return _NO_OPERANDS
    rule = OUTPUT_TO_INPUT.get(instr.opcode)
    if rule is None:
        return HloInstructionIndexing.unknown(len(operands))
    if instr.opcode not in _BY_VALUE:
        return _run(rule, instr, output_id)
    shapes = (instr.shape, *map(_SHAPE_OF, operands))
    key = (instr.opcode, output_id,
           *(map(id, shapes) if instr.opcode in _READS_LAYOUT else map(_dims_or_id, shapes)),
           *[(k, v) for k, v in instr.attributes.items() if k not in _NOT_READ])
    try:
        hit = _BY_VALUE_MEMO.get(key)
    except TypeError:  # an attribute value that cannot be a key
        return _run(rule, instr, output_id)
    if hit is None:
        if len(_BY_VALUE_MEMO) >= _BY_VALUE_LIMIT:
            _BY_VALUE_MEMO.clear()
        hit = _BY_VALUE_MEMO[key] = (shapes, _run(rule, instr, output_id))
    return hit[1]


def _run(rule: Rule, instr: HloInstruction, output_id: int) -> HloInstructionIndexing:
    # an empty tuple (``() parameter(0)`` of a switch branch) has output 0 only: itself
    tuple_out = instr.shape.is_tuple and bool(instr.shape.tuple_shapes)
    out_shape = instr.shape.tuple_shapes[output_id] if tuple_out else instr.shape
    return _apply(rule, instr, output_id, _rank(out_shape), [_rank(op.shape) for op in instr.operands])


def clear_caches() -> None:
    """Forget the maps remembered by value and the remembered compositions (results are
    unaffected, only speed; a parsed module's own memo goes with the module).

    >>> clear_caches()
    """
    _BY_VALUE_MEMO.clear()
    operand_indexing.clear_caches()


def input_to_output_indexing(instr: HloInstruction, input_id: int, *,
                             physical: bool = False) -> HloInstructionIndexing:
    """Per output, the maps from operand ``input_id``'s index to the output index (logical dims)."""
    _no_physical(physical)
    _check_id(instr, input_id, len(instr.operands), "operand")
    rule = INPUT_TO_OUTPUT.get(instr.opcode)
    if rule is None:
        return HloInstructionIndexing.unknown(_output_count(instr))
    outs = instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,)
    if instr.opcode == "tuple":  # one map, to the tuple element fed by this operand
        outs = (instr.operands[input_id].shape,)
    return _apply(rule, instr, input_id, _rank(instr.operands[input_id].shape), [_rank(s) for s in outs])


def grouped_output_to_input_indexing(adaptor: FusionAdaptor, target: HloInstruction
                                     ) -> dict[HloInstruction, OrderedSet]:
    """Maps from ``target``'s output index to every instruction it (transitively) reads.

    Keys are the adaptor's instructions plus the outside instructions feeding it (fused
    parameters are replaced by the fusion operands); values are deduplicated sets.
    """
    return fusion.group_by_producers(adaptor, target, _shared_o2i)


def epilogue_input_to_output_indexing(parent: HloInstruction, root: HloInstruction) -> OperandIndexing:
    """From ``parent``'s output index to ``root``'s, along the use chain (XLA's epilogue indexing)."""
    return fusion.epilogue_indexing(parent, root, input_to_output_indexing)


def _check_id(instr: HloInstruction, k: object, count: int, what: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < count:
        raise HloError(f"expected an {what} id in [0, {count - 1}] of {instr.name}, but got {k!r}")

