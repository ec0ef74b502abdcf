"""The results of HLO indexing analysis: operand indexing maps, their sets and runtime variables.

XLA's ``OperandIndexing`` (a map, its runtime variables, an optional replica-id map) and
``HloInstructionIndexing`` (per operand or output, a set of them) as plain values, with the
composition rule the fusion walk uses.

>>> from tensorlayout.indexing import IndexingMap
>>> m = IndexingMap.parse("(d0) -> (d0 + 1), domain: d0 in [0, 3]")
>>> print(HloInstructionIndexing([[OperandIndexing(m)]]))
operand id = 0 (d0) -> (d0 + 1), domain: d0 in [0, 3]
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.ops._common import is_identity
from tensorlayout.indexing import IndexingMap, RangeEvaluator, compose

__all__ = [
    "HloInstructionIndexing",
    "Maps",
    "OperandIndexing",
    "OrderedSet",
    "Rule",
    "RuntimeVar",
    "clear_caches",
    "compose_operand_indexing",
    "compose_simplified",
    "group_indexing_maps_by_producers",
    "runtime_var_label",
]


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
        """The undefined map ("unknown indexing"); one shared value, since values never change."""
        if cls is not OperandIndexing:
            return cls(IndexingMap.undefined())
        return _UNDEFINED

    @property
    def is_undefined(self) -> bool:
        return self.map.is_undefined

    def __eq__(self, other: object) -> bool:
        """Equal maps and equal runtime-variable lists (the replica map is not compared, as in XLA)."""
        if not isinstance(other, OperandIndexing):
            return NotImplemented
        return self.map == other.map and self.runtime_vars == other.runtime_vars

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            rts = self.runtime_vars
            h = self._hash = hash((self.map, tuple([rt.map for rt in rts]) if rts else ()))
        return h

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


_UNDEFINED = OperandIndexing(IndexingMap.undefined())


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


#: ``(id(first.map), id(second.map)) -> (first.map, second.map, result)`` of
#: :func:`compose_simplified` for operand indexings of plain maps; the value holds both maps, so
#: their ids stay theirs while the entry lives.
_COMPOSED: dict[tuple[int, int], tuple[IndexingMap, IndexingMap, OperandIndexing]] = {}
#: The same results by value: ``(class and structural key of each map) -> result``, for equal maps
#: that arrive as different objects.
_COMPOSED_BY_VALUE: dict[tuple[object, ...], OperandIndexing] = {}
_COMPOSED_LIMIT = 1 << 14


def compose_simplified(first: OperandIndexing, second: OperandIndexing) -> OperandIndexing:
    """``compose_operand_indexing(first, second).simplify()``, remembered per pair of maps (by
    object, then by :meth:`~tensorlayout.indexing.IndexingMap.structural_key`).

    Only indexings without runtime variables or replica maps are remembered (their result
    depends on the two maps alone); the fusion walk composes the same shared maps (identities,
    one rule result per instruction, interned simplifications) again and again.

    >>> from tensorlayout.indexing import IndexingMap
    >>> t = OperandIndexing(IndexingMap.parse("(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]"))
    >>> s = OperandIndexing(IndexingMap.parse("(d0, d1) -> (d0 * 2, d1), domain: d0 in [0, 7], d1 in [0, 3]"))
    >>> print(compose_simplified(t, s))
    (d0, d1) -> (d1 * 2, d0), domain: d0 in [0, 3], d1 in [0, 7]
    """
    if first.runtime_vars or second.runtime_vars or first.replica_map is not None \
            or second.replica_map is not None:
        return compose_operand_indexing(first, second).simplify()
    a, b = first.map, second.map
    key = (id(a), id(b))
    hit = _COMPOSED.get(key)
    if hit is not None and hit[0] is a and hit[1] is b:
        return hit[2]
    value_key = (type(a), a.structural_key(), type(b), b.structural_key())
    out = _COMPOSED_BY_VALUE.get(value_key)
    if out is None:
        out = compose_operand_indexing(first, second).simplify()
        if len(_COMPOSED_BY_VALUE) >= _COMPOSED_LIMIT:
            _COMPOSED_BY_VALUE.clear()
        _COMPOSED_BY_VALUE[value_key] = out
    if len(_COMPOSED) >= _COMPOSED_LIMIT:
        _COMPOSED.clear()
    _COMPOSED[key] = (a, b, out)
    return out


def clear_caches() -> None:
    """Forget remembered compositions (results are unaffected, only speed)."""
    _COMPOSED.clear()
    _COMPOSED_BY_VALUE.clear()


def _same_bounds(a: IndexingMap, b: IndexingMap) -> bool:
    return all(x.bounds == y.bounds for x, y in zip(a.dim_vars, b.dim_vars))


def _compose_fast(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    """``compose`` with two exact shortcuts for identity maps (the common elementwise case).

    ``identity ∘ x`` is ``x`` when ``x``'s dims have the identity's bounds; ``y ∘ identity``
    equals ``y`` up to constraints ``y.result_i in [0, n_i - 1]`` that a simplified ``y``
    already satisfies (checked with the range evaluator), so simplification gives ``y`` back.
    """
    if not (first.is_undefined or second.is_undefined) and first.num_results == second.num_dims:
        if is_identity(first) and first.num_dims == second.num_dims and _same_bounds(first, second):
            return second
        cached = getattr(first, "_simplified", None)
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

    def __iter__(self) -> Iterator[OperandIndexing]:
        return iter(self._items)

    def copy(self) -> OrderedSet:
        """A new set with the same items (the items themselves are shared: they are values)."""
        new = _new(OrderedSet)
        new._items = self._items.copy()
        return new

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __repr__(self) -> str:
        return f"OrderedSet({list(self._items)!r})"


#: ``copy``'s pieces, looked up once (every output_to_input_indexing call copies)
_new = object.__new__
_copy_set = OrderedSet.copy


def _ordered_set(group: Iterable[OperandIndexing | IndexingMap]) -> OrderedSet:
    """The set of ``group``'s items, plain maps wrapped (what ``OrderedSet(...)`` gives, in one
    loop: every rule result is made into sets this way; an equal later item keeps the first)."""
    new = _new(OrderedSet)
    items: dict[OperandIndexing, None] = {}
    for m in group:
        items[m if isinstance(m, OperandIndexing) else OperandIndexing(m)] = None
    new._items = items
    return new


class HloInstructionIndexing:
    """Per operand (o→i) or per output (i→o), a set of :class:`OperandIndexing`.

    >>> from tensorlayout.indexing import IndexingMap
    >>> idx = HloInstructionIndexing([[OperandIndexing(IndexingMap.undefined())]])
    >>> str(idx)
    'operand id = 0 unknown indexing\\n'
    """

    __slots__ = ("indexing_maps",)

    def __init__(self, maps: Iterable[Iterable[OperandIndexing | IndexingMap]]) -> None:
        self.indexing_maps: list[OrderedSet] = [_ordered_set(group) for group in maps]

    @classmethod
    def unknown(cls, count: int) -> HloInstructionIndexing:
        """``count`` operands (or outputs), each with one undefined map."""
        return cls([[_UNDEFINED] for _ in range(count)])

    def copy(self) -> HloInstructionIndexing:
        """A new indexing whose sets can be changed without touching this one's.

        >>> from tensorlayout.indexing import IndexingMap
        >>> a = HloInstructionIndexing([[IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]")]])
        >>> b = a.copy()
        >>> b.indexing_maps[0].add(OperandIndexing.undefined())
        >>> len(a[0]), len(b[0])
        (1, 2)
        """
        new = _new(HloInstructionIndexing)
        new.indexing_maps = [_copy_set(group) for group in self.indexing_maps]
        return new

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


#: What a per-op rule returns: per operand (or output), its list of maps.
Maps = list[list[OperandIndexing]]
#: A per-op rule: ``(instruction, output id | operand id) -> Maps``.
Rule = Callable[[HloInstruction, int], Maps]
