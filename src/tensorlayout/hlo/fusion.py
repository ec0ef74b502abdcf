"""Indexing through fusions: composition along the fused computation with dedup (spec §4.1).

A :class:`FusionAdaptor` is a set of instructions analysed as one kernel (a fusion's body, a
producer–consumer pair, ...). :func:`group_by_producers` walks it from a target towards its
inputs, composing each op's output→input maps (given by the caller, normally
:func:`tensorlayout.hlo.analysis.output_to_input_indexing`) and keeping, per instruction, the
*set* of distinct maps (so diamonds do not multiply).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module('''HloModule m
... f {
...   p0 = f32[8] parameter(0)
...   s = f32[4] slice(p0), slice={[1:8:2]}
...   ROOT n = f32[4] negate(s)
... }
... ENTRY e {
...   p = f32[8] parameter(0)
...   ROOT fusion = f32[4] fusion(p), kind=kLoop, calls=f
... }''')
>>> from tensorlayout.hlo.analysis import output_to_input_indexing
>>> print(output_to_input_indexing(m.entry.root))
operand id = 0 (d0) -> (d0 * 2 + 1), domain: d0 in [0, 3]
<BLANKLINE>
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

from tensorlayout.errors import HloError
from tensorlayout.hlo.model import HloComputation, HloInstruction
from tensorlayout.hlo.operand_indexing import (
    HloInstructionIndexing,
    OperandIndexing,
    OrderedSet,
    compose_operand_indexing,
    compose_simplified,
)
from tensorlayout.hlo.ops._common import identity_map, output_shape

__all__ = [
    "FusionAdaptor",
    "epilogue_indexing",
    "fusion_output_to_input",
    "group_by_producers",
]

#: ``(instruction, output or operand id) -> per operand (or output) maps``: one op's analysis.
OpIndexing = Callable[[HloInstruction, int], HloInstructionIndexing]


def _post_order(roots: Sequence[HloInstruction], members: set[HloInstruction] | None) -> list[HloInstruction]:
    """Operands before users, restricted to ``members`` (all reachable if None); iterative DFS."""
    seen: set[int] = set()
    order: list[HloInstruction] = []
    for root in roots:
        if id(root) in seen:
            continue
        operands_of = root.graph.operands  # what ``.operands`` reads: one module, one graph
        # each entry: a node and where its operand walk stands (an iterator resumed in place)
        stack: list[tuple[HloInstruction, Iterator[HloInstruction]]] = [
            (root, iter(operands_of.get(root, ())))]
        seen.add(id(root))
        while stack:
            node, pending = stack[-1]
            for op in pending:
                if id(op) not in seen and (members is None or op in members):
                    seen.add(id(op))
                    stack.append((op, iter(operands_of.get(op, ()))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class FusionAdaptor:
    """Instructions analysed as one fusion, in post order, with their roots.

    ``parameters`` maps a fused parameter to the instruction outside that feeds it.
    """

    def __init__(self, post_order: Sequence[HloInstruction], roots: Sequence[HloInstruction],
                 parameters: dict[HloInstruction, HloInstruction] | None = None) -> None:
        self.post_order = tuple(post_order)
        self.roots = tuple(roots)
        self.parameters = dict(parameters or {})
        self._members = set(self.post_order)

    def __contains__(self, instr: object) -> bool:
        return instr in self._members

    @classmethod
    def for_computation(cls, comp: HloComputation,
                        caller: HloInstruction | None = None) -> FusionAdaptor:
        """The body of ``comp``; with ``caller`` its parameters resolve to the caller's operands."""
        root = comp.root
        roots = list(root.operands) if root.opcode == "tuple" else [root]
        members = set(comp.instructions)
        order = _post_order([root], members)
        params: dict[HloInstruction, HloInstruction] = {}
        if caller is not None:
            feeds = caller.operands
            for p in comp.parameters:
                if p.parameter_number is not None and p.parameter_number < len(feeds):
                    params[p] = feeds[p.parameter_number]
        return cls(order, roots, params)

    @classmethod
    def for_instruction(cls, instr: HloInstruction) -> FusionAdaptor:
        """A fusion's body (parameters resolve to the fusion operands), else the instruction alone."""
        if instr.opcode == "fusion":
            return cls.for_computation(instr.fused_computation, instr)
        return cls([instr], [instr])

    @classmethod
    def for_producer_consumer(cls, producer: HloInstruction, consumer: HloInstruction) -> FusionAdaptor:
        """``producer`` fused into ``consumer``: the consumer's roots, both bodies."""
        p, c = cls.for_instruction(producer), cls.for_instruction(consumer)
        params = {**p.parameters, **c.parameters}
        if producer.opcode == "fusion" and len(p.roots) == 1:
            params[producer] = p.roots[0]  # reading the producer fusion = reading its root
        return cls([*p.post_order, *c.post_order], c.roots, params)

    def resolve(self, instr: HloInstruction) -> HloInstruction:
        """The instruction a (fused) parameter stands for; itself otherwise."""
        seen = 0
        while instr in self.parameters and seen < 64:
            instr = self.parameters[instr]
            seen += 1
        return instr


#: The output a walk reads of an op that is not read at output 0: an async op is consumed by
#: ``async-update`` / ``async-done``, which read its element 1 (the wrapped result).
_WALK_OUTPUT = {"async-start": 1, "async-update": 1}


def group_by_producers(adaptor: FusionAdaptor, target: HloInstruction,
                       output_to_input: OpIndexing) -> dict[HloInstruction, OrderedSet]:
    """Maps from ``target``'s output index to every instruction it (transitively) reads.

    Keys are the adaptor's instructions plus the outside instructions feeding it (fused
    parameters are replaced by the fusion operands); values are deduplicated sets.
    ``output_to_input`` gives each op's own maps.
    """
    shape = output_shape(target, 0)
    start = adaptor.resolve(target)
    groups = {start: OrderedSet([OperandIndexing(identity_map(shape.dimensions))])}
    parameters, resolve = adaptor.parameters, adaptor.resolve
    for instr in reversed(adaptor.post_order):
        consumers = groups.get(instr)
        if consumers is None or instr in parameters or (instr.opcode == "parameter" and instr is not start):
            continue
        consumers_now = list(consumers)
        producers = output_to_input(instr, _WALK_OUTPUT.get(instr.opcode, 0))
        for producer_maps, operand in zip(producers.indexing_maps, instr.operands):  # extra maps: none
            key = resolve(operand) if operand in parameters else operand
            bucket = groups.get(key)
            if bucket is None:
                bucket = groups[key] = OrderedSet()
            for p in producer_maps:
                for c in consumers_now:
                    bucket.add(compose_simplified(c, p))
    return groups


def fusion_output_to_input(instr: HloInstruction, output_id: int,
                           output_to_input: OpIndexing) -> list[list[OperandIndexing]]:
    """The ``fusion`` op rule: group from root ``output_id``, read off each fusion operand."""
    adaptor = FusionAdaptor.for_instruction(instr)
    if not 0 <= output_id < len(adaptor.roots):
        raise HloError(f"{instr.name} has no output {output_id}")
    groups = group_by_producers(adaptor, adaptor.roots[output_id], output_to_input)
    return [list(groups.get(op, ())) for op in instr.operands]


def _path_to(start: HloInstruction, root: HloInstruction) -> list[HloInstruction] | None:
    """A use chain ``start -> ... -> root`` (depth first over users)."""
    stack: list[tuple[HloInstruction, list[HloInstruction]]] = [(start, [start])]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is root:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        for u in reversed(node.users):
            stack.append((u, [*path, u]))
    return None


def epilogue_indexing(parent: HloInstruction, root: HloInstruction,
                      input_to_output: OpIndexing) -> OperandIndexing:
    """From ``parent``'s output index to ``root``'s along the use chain, composing ``input_to_output``."""
    path = _path_to(parent, root)
    if path is None:
        raise HloError(f"{root.name} does not use {parent.name}")
    current = OperandIndexing(identity_map(output_shape(parent, 0).dimensions))
    for prev, user in itertools.pairwise(path):
        k = list(user.operands).index(prev)
        step = input_to_output(user, k)
        first = next(iter(step.indexing_maps[0]), OperandIndexing.undefined())
        current = compose_operand_indexing(current, first).simplify()
    return current
