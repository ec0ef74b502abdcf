"""HLO indexing analysis: which input elements each output element reads (XLA spec §4–§6).

``output_to_input_indexing(instr)`` gives, per operand, the set of indexing maps from the
output index to that operand's index; ``input_to_output_indexing(instr, k)`` the maps from
operand ``k``'s index to each output's index. An op without a rule gets an undefined map
("unknown indexing"), never an exception.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[4,8] parameter(0)\\n"
...                  " ROOT t = f32[8,4] transpose(p), dimensions={1,0}\\n}")
>>> print(output_to_input_indexing(m.entry.root))
operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from tensorlayout.errors import HloError, TensorLayoutError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import IndexingMap, RangeEvaluator, compose
from tensorlayout.xla.shape import Shape

__all__ = [
    "ELEMENTWISE_OPCODES",
    "HloInstructionIndexing",
    "OperandIndexing",
    "RuntimeVar",
    "group_indexing_maps_by_producers",
    "input_to_output_indexing",
    "output_to_input_indexing",
    "runtime_var_label",
]

#: Opcodes XLA treats as elementwise (``HloInstruction::IsOpElementwise``) plus map / all-reduce.
ELEMENTWISE_OPCODES = frozenset({
    # unary
    "abs", "cbrt", "ceil", "clz", "convert", "bitcast-convert", "copy", "cosine", "erf", "exponential",
    "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "not",
    "negate", "popcnt", "real", "reduce-precision", "round-nearest-afz", "round-nearest-even", "rsqrt",
    "sign", "sine", "sqrt", "tan", "tanh",
    # binary
    "add", "atan2", "compare", "complex", "divide", "maximum", "minimum", "multiply", "power",
    "remainder", "subtract", "and", "or", "xor", "shift-left", "shift-right-arithmetic",
    "shift-right-logical", "stochastic-convert",
    # ternary
    "select", "clamp",
    # treated the same way by the analysis
    "map", "all-reduce",
})


def runtime_var_label(instr: HloInstruction) -> str:
    """How XLA names the instruction behind a runtime variable: ``parameter(1)``, ``constant(99)``…"""
    if instr.opcode == "parameter":
        return f"parameter({instr.parameter_number})"
    if instr.opcode == "constant":
        if instr.shape.is_array and instr.shape.rank == 0 and instr.literal is not None:
            return f"constant({instr.literal})"
        return "constant"
    return instr.name


class RuntimeVar:
    """A runtime variable: the instruction whose value it is and the map to the element read."""

    __slots__ = ("instruction", "map")

    def __init__(self, instruction: HloInstruction, map: IndexingMap) -> None:
        self.instruction = instruction
        self.map = map

    def _key(self) -> tuple[int, IndexingMap]:
        return (id(self.instruction), self.map)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuntimeVar) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"RuntimeVar({self.instruction.name}, {self.map})"


class OperandIndexing:
    """One indexing map of an operand plus its runtime variables and optional replica-id map.

    >>> from tensorlayout.indexing import IndexingMap
    >>> str(OperandIndexing(IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]")))
    '(d0) -> (d0), domain: d0 in [0, 3]'
    """

    __slots__ = ("_hash", "map", "replica_map", "runtime_vars")

    def __init__(self, map: IndexingMap, runtime_vars: Sequence[RuntimeVar] = (),
                 replica_map: IndexingMap | None = None) -> None:
        self.map = map
        self.runtime_vars = tuple(runtime_vars)
        self.replica_map = replica_map
        self._hash: int | None = None

    @classmethod
    def undefined(cls) -> OperandIndexing:
        return cls(IndexingMap.undefined())

    @property
    def is_undefined(self) -> bool:
        return self.map.is_undefined

    def __eq__(self, other: object) -> bool:
        """Equal maps and equal runtime-variable lists (the replica map is not compared, as in XLA)."""
        if not isinstance(other, OperandIndexing):
            return NotImplemented
        return self.map == other.map and self.runtime_vars == other.runtime_vars

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.map, tuple(rt.map for rt in self.runtime_vars)))
        return self._hash

    def simplify(self) -> OperandIndexing:
        """Simplify the map, drop unused symbols and the runtime variables that went with them."""
        if self.map.is_undefined:
            return self
        m = self.map.simplify()
        m, mask = m.remove_unused_symbols_with_mask()
        rts = self.runtime_vars
        if mask:
            offset = self.map.num_range_vars
            rts = tuple(rt for i, rt in enumerate(rts) if not mask[offset + i])
        return OperandIndexing(m, rts, self.replica_map)

    def to_string(self) -> str:
        """XLA's ``OperandIndexing`` text: the map, runtime variables, replica id map."""
        text = str(self.map)
        if self.runtime_vars:
            text += "\nruntime variables:\n"
            for i, rt in enumerate(self.runtime_vars):
                text += f"\nrt{i}: {runtime_var_label(rt.instruction)}; {rt.map}"
        if self.replica_map is not None:
            text += f"\nreplica id:\n{self.replica_map}"
        return text

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"OperandIndexing({self.to_string()!r})"


def compose_operand_indexing(first: OperandIndexing, second: OperandIndexing) -> OperandIndexing:
    """XLA's ``ComposeOperandIndexing``: ``second ∘ first`` with runtime variables and replica maps."""
    if first.replica_map is not None and second.replica_map is not None:
        return OperandIndexing.undefined()
    m = _compose_fast(first.map, second.map)
    rts = list(first.runtime_vars)
    rts += [RuntimeVar(rt.instruction, compose(first.map, rt.map)) for rt in second.runtime_vars]
    replica = first.replica_map
    if replica is None and second.replica_map is not None:
        replica = compose(first.map, second.replica_map)
    return OperandIndexing(m, rts, replica)


def _same_bounds(a: IndexingMap, b: IndexingMap) -> bool:
    return all(x.bounds == y.bounds for x, y in zip(a.dim_vars, b.dim_vars))


def _compose_fast(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    """``compose`` with two exact shortcuts for identity maps (the common elementwise case).

    ``identity ∘ x`` is ``x`` when ``x``'s dims have the identity's bounds; ``y ∘ identity``
    equals ``y`` up to constraints ``y.result_i in [0, n_i - 1]`` that a simplified ``y``
    already satisfies (checked with the range evaluator), so simplification gives ``y`` back.
    """
    from tensorlayout.hlo.ops._common import is_identity

    if not (first.is_undefined or second.is_undefined) and first.num_results == second.num_dims:
        if is_identity(first) and first.num_dims == second.num_dims and _same_bounds(first, second):
            return second
        cached = first._simplified
        if is_identity(second) and cached is not None and cached[1] is first and cached[0][0]:
            ev = RangeEvaluator.for_map(first, use_constraints=False)
            if all(ev.range(r).lower >= v.bounds.lower and ev.range(r).upper <= v.bounds.upper
                   for r, v in zip(first.results, second.dim_vars)):
                return first
    return compose(first, second)


class OrderedSet:
    """An insertion-ordered set of OperandIndexing (XLA's set semantics; order only for printing)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[OperandIndexing] = ()) -> None:
        self._items: dict[OperandIndexing, None] = dict.fromkeys(items)

    def add(self, item: OperandIndexing) -> None:
        self._items.setdefault(item, None)

    def update(self, items: Iterable[OperandIndexing]) -> None:
        for it in items:
            self._items.setdefault(it, None)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __repr__(self) -> str:
        return f"OrderedSet({list(self._items)!r})"


class HloInstructionIndexing:
    """Per operand (o→i) or per output (i→o), a set of :class:`OperandIndexing`.

    >>> from tensorlayout.indexing import IndexingMap
    >>> idx = HloInstructionIndexing([[OperandIndexing(IndexingMap.undefined())]])
    >>> str(idx)
    'operand id = 0 unknown indexing\\n'
    """

    __slots__ = ("indexing_maps",)

    def __init__(self, maps: Iterable[Iterable[OperandIndexing | IndexingMap]]) -> None:
        self.indexing_maps: list[OrderedSet] = [
            OrderedSet(m if isinstance(m, OperandIndexing) else OperandIndexing(m) for m in group)
            for group in maps
        ]

    @classmethod
    def unknown(cls, count: int) -> HloInstructionIndexing:
        """``count`` operands (or outputs), each with one undefined map."""
        return cls([[OperandIndexing.undefined()] for _ in range(count)])

    def __len__(self) -> int:
        return len(self.indexing_maps)

    def __getitem__(self, k: int) -> OrderedSet:
        return self.indexing_maps[k]

    def maps(self, k: int) -> list[IndexingMap]:
        """The plain indexing maps of operand (or output) ``k``."""
        return [oi.map for oi in self.indexing_maps[k]]

    @property
    def is_unknown(self) -> bool:
        """True if some map is undefined."""
        return any(oi.is_undefined for group in self.indexing_maps for oi in group)

    def simplify(self) -> HloInstructionIndexing:
        """``HloInstructionIndexing::Simplify``: simplify each map and drop undefined ones."""
        return HloInstructionIndexing(
            [[oi.simplify() for oi in group if not oi.is_undefined] for group in self.indexing_maps])

    def to_string(self) -> str:
        """XLA's text: ``operand id = <k> <maps>`` per line (undefined maps as ``unknown indexing``)."""
        out = []
        for k, group in enumerate(self.indexing_maps):
            body = "".join("unknown indexing" if oi.is_undefined else oi.to_string() for oi in group)
            out.append(f"operand id = {k} {body}\n")
        return "".join(out)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"HloInstructionIndexing({self.to_string()!r})"


def group_indexing_maps_by_producers(indexing: HloInstructionIndexing,
                                     instr: HloInstruction) -> dict[HloInstruction, OrderedSet]:
    """XLA's ``GroupIndexingMapsByProducers``: union the operand sets keyed by operand instruction."""
    out: dict[HloInstruction, OrderedSet] = {}
    for k, group in enumerate(indexing.indexing_maps):
        out.setdefault(instr.operands[k], OrderedSet()).update(group)
    return out


# ---------------------------------------------------------------------------- dispatch

Rule = Callable[[HloInstruction, int], list[list[OperandIndexing]]]
_O2I: dict[str, Rule] = {}
_I2O: dict[str, Rule] = {}
_RECOVERABLE = (TensorLayoutError, LookupError, TypeError, ValueError, ArithmeticError, AttributeError)


def _tables() -> tuple[dict[str, Rule], dict[str, Rule]]:
    if not _O2I:
        from tensorlayout.hlo.ops import compute, data, shape

        for module in (shape, data, compute):
            _O2I.update(module.OUTPUT_TO_INPUT)
            _I2O.update(module.INPUT_TO_OUTPUT)
        from tensorlayout.hlo import fusion

        _O2I["fusion"] = fusion.fusion_output_to_input
    return _O2I, _I2O


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


def output_to_input_indexing(instr: HloInstruction, output_id: int = 0, *,
                             physical: bool = False) -> HloInstructionIndexing:
    """Per operand, the maps from ``instr``'s output ``output_id`` index to the operand index.

    ``physical=True`` expresses both sides in physical (layout) dimension order, as XLA's
    physical-layout test mode does.
    """
    _check_id(instr, output_id, max(1, _output_count(instr)), "output")
    rule = _tables()[0].get(instr.opcode)
    count = len(instr.operands)
    if rule is None:
        return HloInstructionIndexing.unknown(count)
    try:
        result = HloInstructionIndexing(rule(instr, output_id))
        out_shape = instr.shape.tuple_shapes[output_id] if instr.shape.is_tuple else instr.shape
        if not _arity_ok(result, _rank(out_shape), [_rank(op.shape) for op in instr.operands]):
            return HloInstructionIndexing.unknown(count)
        if physical:
            from tensorlayout.hlo.physical import to_physical_output_to_input

            result = to_physical_output_to_input(result, instr, output_id)
    except _RECOVERABLE:
        return HloInstructionIndexing.unknown(count)
    return result


def input_to_output_indexing(instr: HloInstruction, input_id: int, *,
                             physical: bool = False) -> HloInstructionIndexing:
    """Per output, the maps from operand ``input_id``'s index to the output index."""
    _check_id(instr, input_id, len(instr.operands), "operand")
    rule = _tables()[1].get(instr.opcode)
    count = _output_count(instr)
    if rule is None:
        return HloInstructionIndexing.unknown(count)
    try:
        result = HloInstructionIndexing(rule(instr, input_id))
        outs = instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,)
        if instr.opcode == "tuple":  # one map, to the tuple element fed by this operand
            outs = (instr.operands[input_id].shape,)
        if not _arity_ok(result, _rank(instr.operands[input_id].shape), [_rank(s) for s in outs]):
            return HloInstructionIndexing.unknown(count)
        if physical:
            from tensorlayout.hlo.physical import to_physical_input_to_output

            result = to_physical_input_to_output(result, instr, input_id)
    except _RECOVERABLE:
        return HloInstructionIndexing.unknown(count)
    return result


def _check_id(instr: HloInstruction, k: object, count: int, what: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < count:
        raise HloError(f"expected an {what} id in [0, {count - 1}] of {instr.name}, but got {k!r}")
