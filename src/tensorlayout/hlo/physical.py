"""Physical views of the analysis: maps over layout-ordered dims, and maps to tiled offsets.

XLA's ``GetIndexingMapFromLogicalToPhysicalLayout`` permutes the logical dims by the
layout's major-to-minor order; the physical-layout mode (``physical=True`` of
:func:`physical_output_to_input_indexing` and :func:`physical_input_to_output_indexing`)
composes the output's physical→logical map before, and each operand's logical→physical map
after, every map of :mod:`tensorlayout.hlo.analysis`. Tiling is not part
of that mode; :func:`linearized_output_to_input` gives element offsets with tiling included.

>>> from tensorlayout.xla.shape import Shape
>>> print(logical_to_physical(Shape.parse("f32[10,20,30]{1,0,2}")))
(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
"""

from __future__ import annotations

from collections.abc import Callable

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import analysis
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.operand_indexing import HloInstructionIndexing, OperandIndexing, RuntimeVar
from tensorlayout.hlo.ops._common import bounds, major_to_minor, output_shape
from tensorlayout.indexing import IndexingMap, compose, var
from tensorlayout.indexing.layouts import layout_map
from tensorlayout.lowering import lower
from tensorlayout.xla.shape import Shape

__all__ = [
    "input_to_output_indexing",
    "linearized_output_to_input",
    "logical_to_physical",
    "output_to_input_indexing",
    "physical_input_to_output_indexing",
    "physical_output_to_input_indexing",
    "physical_to_logical",
    "to_physical_input_to_output",
    "to_physical_output_to_input",
]


def _perm(shape: Shape) -> tuple[int, ...] | None:
    if not shape.is_array:
        return None
    perm = major_to_minor(shape)
    return None if perm == tuple(range(len(perm))) else perm


def logical_to_physical(shape: Shape) -> IndexingMap:
    """Logical index → physical index (dims permuted to major-to-minor order)."""
    perm = major_to_minor(shape)
    return IndexingMap([var(p) for p in perm], bounds(shape.dimensions))


def physical_to_logical(shape: Shape) -> IndexingMap:
    """Physical index → logical index (the inverse permutation, over the physical dims)."""
    perm = major_to_minor(shape)
    results = [var(0)] * len(perm)
    for p, logical in enumerate(perm):
        results[logical] = var(p)
    return IndexingMap(results, bounds([shape.dimensions[k] for k in perm]))


def _before(m: OperandIndexing, pre: IndexingMap) -> OperandIndexing:
    rts = [RuntimeVar(rt.instruction, compose(pre, rt.map)) for rt in m.runtime_vars]
    replica = None if m.replica_map is None else compose(pre, m.replica_map)
    return OperandIndexing(compose(pre, m.map), rts, replica)


def _after(m: OperandIndexing, post: IndexingMap) -> OperandIndexing:
    return OperandIndexing(compose(m.map, post), m.runtime_vars, m.replica_map)


def _convert(indexing: HloInstructionIndexing, from_shape: Shape,
             to_shapes: list[Shape | None]) -> HloInstructionIndexing:
    pre = physical_to_logical(from_shape) if _perm(from_shape) else None
    groups = []
    for k, group in enumerate(indexing.indexing_maps):
        to = to_shapes[k] if k < len(to_shapes) else None
        post = logical_to_physical(to) if to is not None and _perm(to) else None
        out = []
        for oi in group:
            if oi.is_undefined:
                out.append(oi)
                continue
            if pre is not None:
                oi = _before(oi, pre)
            if post is not None:
                oi = _after(oi, post)
            out.append(oi)
        groups.append(out)
    return HloInstructionIndexing(groups)


def to_physical_output_to_input(indexing: HloInstructionIndexing, instr: HloInstruction,
                                output_id: int) -> HloInstructionIndexing:
    """Output physical index → each operand's physical index."""
    out = output_shape(instr, output_id)
    if not out.is_array:
        return indexing
    return _convert(indexing, out, [op.shape if op.shape.is_array else None for op in instr.operands])


def to_physical_input_to_output(indexing: HloInstructionIndexing, instr: HloInstruction,
                                input_id: int) -> HloInstructionIndexing:
    """Operand ``input_id``'s physical index → each output's physical index."""
    operand = instr.operands[input_id].shape
    if not operand.is_array:
        return indexing
    outs: list[Shape | None] = []
    for k in range(len(indexing)):
        s = output_shape(instr, k) if instr.shape.is_tuple else instr.shape
        outs.append(s if s.is_array else None)
    return _convert(indexing, operand, outs)


def physical_output_to_input_indexing(instr: HloInstruction, output_id: int = 0, *,
                                      physical: bool = False) -> HloInstructionIndexing:
    """:func:`tensorlayout.hlo.analysis.output_to_input_indexing`, over physical dims if ``physical``.

    ``physical=True`` expresses both sides in physical (layout) dimension order, as XLA's
    physical-layout test mode does; a layout that does not permute the dims gives unknown.

    >>> from tensorlayout.hlo.parser import parse_module
    >>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[2,3]{0,1} parameter(0)\\n"
    ...                  " ROOT t = f32[3,2]{1,0} transpose(p), dimensions={1,0}\\n}")
    >>> print(physical_output_to_input_indexing(m.entry.root, physical=True))
    operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 1]
    <BLANKLINE>
    """
    result = analysis.output_to_input_indexing(instr, output_id)
    if not physical:
        return result
    return _or_unknown(lambda: to_physical_output_to_input(result, instr, output_id), len(instr.operands))


def physical_input_to_output_indexing(instr: HloInstruction, input_id: int, *,
                                      physical: bool = False) -> HloInstructionIndexing:
    """:func:`tensorlayout.hlo.analysis.input_to_output_indexing`, over physical dims if ``physical``.

    >>> from tensorlayout.hlo.parser import parse_module
    >>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[2,3]{0,1} parameter(0)\\n"
    ...                  " ROOT t = f32[3,2]{1,0} transpose(p), dimensions={1,0}\\n}")
    >>> print(physical_input_to_output_indexing(m.entry.root, 0, physical=True))
    operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 1]
    <BLANKLINE>
    """
    result = analysis.input_to_output_indexing(instr, input_id)
    if not physical:
        return result
    return _or_unknown(lambda: to_physical_input_to_output(result, instr, input_id), len(result))


def _or_unknown(convert: Callable[[], HloInstructionIndexing], count: int) -> HloInstructionIndexing:
    """``convert()``, or ``count`` unknown maps where a layout does not let it say (XLA's answer)."""
    try:
        return convert()
    except TensorLayoutError:
        return HloInstructionIndexing.unknown(count)


#: The former names of :func:`physical_output_to_input_indexing` and
#: :func:`physical_input_to_output_indexing`, kept as aliases (the same functions); they differ from
#: :mod:`tensorlayout.hlo.analysis`'s functions of those names by the ``physical`` option.
output_to_input_indexing = physical_output_to_input_indexing
input_to_output_indexing = physical_input_to_output_indexing


def _offset_map(shape: Shape) -> IndexingMap:
    """Logical index → element offset of ``shape``'s (tiled) layout, simplified: the shape's
    lowering into the layout core, written as an indexing map.

    >>> print(_offset_map(Shape.parse("f32[3,5]{1,0:T(2,2)}")).results[0])
    (v0 mod 2) * 2 + (v0 / 2) * 12 + (v1 / 2) * 4 + v1 mod 2
    """
    return layout_map(lower(shape))


def linearized_output_to_input(instr: HloInstruction, output_id: int = 0) -> HloInstructionIndexing:
    """Output logical index → each operand's physical *element offset*, tiling included.

    Each operand map is composed with the operand's offset map (XLA's
    ``MapLogicalToLinearizedPhysicalShape`` idea), then simplified.

    >>> from tensorlayout.hlo import parse_module
    >>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[4,8]{0,1} parameter(0)\\n"
    ...                  " ROOT n = f32[4,8] negate(p)\\n}")
    >>> print(linearized_output_to_input(m.entry.root))
    operand id = 0 (d0, d1) -> (d1 * 4 + d0), domain: d0 in [0, 3], d1 in [0, 7]
    <BLANKLINE>
    """
    base = analysis.output_to_input_indexing(instr, output_id)
    groups = []
    for k, group in enumerate(base.indexing_maps):
        shape = instr.operands[k].shape
        out = []
        for oi in group:
            if oi.is_undefined or not shape.is_array or not shape.dimensions:
                out.append(oi)
                continue
            offset = _offset_map(shape)
            out.append(OperandIndexing(compose(oi.map, offset), oi.runtime_vars, oi.replica_map).simplify())
        groups.append(out)
    return HloInstructionIndexing(groups)
