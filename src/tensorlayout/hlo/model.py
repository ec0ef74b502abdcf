"""The parsed HLO module: modules, computations and instructions (immutable once built).

Each instruction and computation is a frozen value; the links between them (operands, users,
called computations, callers, parents) live in one :class:`HloGraph` that the module owns and
the parser fills before it returns the module.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[4] parameter(0)\\n ROOT n = f32[4] negate(p)\\n}")
>>> root = m.entry.root
>>> root.opcode, root.operands[0].name, [u.name for u in root.operands[0].users]
('negate', 'p', ['n'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tensorlayout.errors import HloError
from tensorlayout.xla.shape import Shape

__all__ = ["ComputationLayout", "HloComputation", "HloGraph", "HloInstruction", "HloModule"]


class ComputationLayout(NamedTuple):
    """``entry_computation_layout={(p0, p1, ...)->result}`` of a module header."""

    parameters: tuple[Shape, ...]
    result: Shape


class HloGraph:
    """The links of one module, keyed by instruction or computation (identity).

    The parser creates one graph per module, hands it to every instruction and computation it
    builds, then records the links; after :func:`~tensorlayout.hlo.parse_module` returns,
    nothing changes them. ``memo`` remembers the output→input maps computed for the module's
    instructions (keyed by the instruction for output 0, else by instruction and output id), so
    each is computed once per module.

    >>> g = HloGraph()
    >>> g.fusion_bodies, g.module is None
    (set(), True)
    """

    __slots__ = ("_pending_users", "_users", "called", "callers", "fusion_bodies", "memo", "module",
                 "operands", "parent")

    def __init__(self) -> None:
        self.operands: dict[HloInstruction, tuple[HloInstruction, ...]] = {}
        self._users: dict[HloInstruction, tuple[HloInstruction, ...]] = {}
        self._pending_users: list[Sequence[HloInstruction]] = []
        self.called: dict[HloInstruction, tuple[HloComputation, ...]] = {}
        self.parent: dict[HloInstruction, HloComputation] = {}
        self.callers: dict[HloComputation, tuple[HloInstruction, ...]] = {}
        self.fusion_bodies: set[HloComputation] = set()
        self.module: HloModule | None = None
        self.memo: dict[object, Any] = {}


    @property
    def users(self) -> dict[HloInstruction, tuple[HloInstruction, ...]]:
        """Per instruction, the instructions of its computation that use it (each once, in text
        order); found from :attr:`operands` on first use for the computations the parser handed
        to :meth:`defer_users` (most analyses never ask, so the parse does not build them)."""
        pending = self._pending_users
        if pending:
            for instructions in pending:  # recording twice (two threads) writes equal tuples
                self._record_users(instructions)
            pending.clear()
        return self._users

    def defer_users(self, instructions: Sequence[HloInstruction]) -> None:
        """Find the users among ``instructions`` (one computation, in order) when first asked.

        >>> from tensorlayout.xla.shape import parse_shape
        >>> g, s = HloGraph(), parse_shape("f32[2]")
        >>> p = HloInstruction("p", "parameter", s, graph=g)
        >>> n = HloInstruction("n", "negate", s, ("p",), graph=g)
        >>> g.operands[n] = (p,)
        >>> g.defer_users([p, n])
        >>> p.users
        (<HloInstruction n = f32[2]{0} negate>,)
        """
        self._pending_users.append(instructions)

    def _record_users(self, instructions: Sequence[HloInstruction]) -> None:
        users: dict[HloInstruction, list[HloInstruction]] = {}
        operands_of = self.operands
        for inst in instructions:
            operands = operands_of.get(inst, ())
            for op in (operands if len(operands) == 1 else dict.fromkeys(operands)):
                users.setdefault(op, []).append(inst)
        for inst, us in users.items():
            self._users[inst] = tuple(us)


_NO_GRAPH = HloGraph()


@dataclass(frozen=True, slots=True, eq=False, init=False)
class HloInstruction:
    """One instruction: ``[ROOT] name = shape opcode(operands), attr=value, ...``.

    ``attributes`` holds typed values for the attributes the analysis reads (see
    :mod:`tensorlayout.hlo.attributes`) and the raw text for every other one;
    ``raw_attributes`` holds the raw text of all of them. ``literal`` is a constant's payload
    text, ``parameter_number`` a parameter's number. ``offset`` is where the instruction starts
    in the module text; ``graph`` the links of its module.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> HloInstruction("n", "negate", parse_shape("f32[4]"), ("p",))
    <HloInstruction n = f32[4]{0} negate>
    """

    name: str
    opcode: str
    shape: Shape
    operand_names: tuple[str, ...] = ()
    attributes: Mapping[str, Any] = field(default_factory=dict)
    raw_attributes: Mapping[str, str] = field(default_factory=dict)
    called_computation_names: tuple[str, ...] = ()
    is_root: bool = False
    literal: str | None = None
    parameter_number: int | None = None
    operand_shapes: tuple[Shape | None, ...] = ()
    offset: int = 0
    graph: HloGraph = field(default=_NO_GRAPH, repr=False)

    def __init__(self, name: str, opcode: str, shape: Shape, operand_names: tuple[str, ...] = (),
                 attributes: Mapping[str, Any] | None = None, raw_attributes: Mapping[str, str] | None = None,
                 called_computation_names: tuple[str, ...] = (), is_root: bool = False,
                 literal: str | None = None, parameter_number: int | None = None,
                 operand_shapes: tuple[Shape | None, ...] = (), offset: int = 0,
                 graph: HloGraph = _NO_GRAPH) -> None:
        # the fields are set once, here, through their slots (what the generated __init__ of a
        # frozen dataclass does through object.__setattr__, at half the cost: the parser makes
        # one instruction per line)
        _set_name(self, name)
        _set_opcode(self, opcode)
        _set_shape(self, shape)
        _set_operand_names(self, operand_names)
        _set_attributes(self, {} if attributes is None else attributes)
        _set_raw_attributes(self, {} if raw_attributes is None else raw_attributes)
        _set_called_computation_names(self, called_computation_names)
        _set_is_root(self, is_root)
        _set_literal(self, literal)
        _set_parameter_number(self, parameter_number)
        _set_operand_shapes(self, operand_shapes)
        _set_offset(self, offset)
        _set_graph(self, graph)

    @property
    def operands(self) -> tuple[HloInstruction, ...]:
        """The operand instructions, in order."""
        return self.graph.operands.get(self, ())

    def operand(self, i: int) -> HloInstruction:
        return self.operands[i]

    @property
    def operand_count(self) -> int:
        return len(self.operand_names)

    @property
    def users(self) -> tuple[HloInstruction, ...]:
        """Instructions of the same computation that use this one (each once, in text order)."""
        return self.graph.users.get(self, ())

    @property
    def called_computations(self) -> tuple[HloComputation, ...]:
        """Computations named by to_apply / calls / body / condition / branch_computations…"""
        return self.graph.called.get(self, ())

    @property
    def parent(self) -> HloComputation | None:
        """The computation this instruction belongs to."""
        return self.graph.parent.get(self)

    @property
    def fused_computation(self) -> HloComputation:
        """The computation a ``fusion`` instruction calls."""
        called = self.called_computations
        if self.opcode != "fusion" or not called:
            raise HloError(f"{self.name} is a {self.opcode}, not a fusion")
        return called[0]

    @property
    def fusion_kind(self) -> str | None:
        """``kLoop``, ``kInput``, ``kOutput``, ``kCustom``… for a fusion, else None."""
        return self.attributes.get("kind")

    def attribute(self, name: str, default: Any = None) -> Any:
        return self.attributes.get(name, default)

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape} {self.opcode}>"


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The setter of slot ``name`` of ``cls`` (for its own ``__init__``)."""
    setter: Callable[[Any, Any], None] = cls.__dict__[name].__set__
    return setter


_set_name = _slot_setter(HloInstruction, "name")
_set_opcode = _slot_setter(HloInstruction, "opcode")
_set_shape = _slot_setter(HloInstruction, "shape")
_set_operand_names = _slot_setter(HloInstruction, "operand_names")
_set_attributes = _slot_setter(HloInstruction, "attributes")
_set_raw_attributes = _slot_setter(HloInstruction, "raw_attributes")
_set_called_computation_names = _slot_setter(HloInstruction, "called_computation_names")
_set_is_root = _slot_setter(HloInstruction, "is_root")
_set_literal = _slot_setter(HloInstruction, "literal")
_set_parameter_number = _slot_setter(HloInstruction, "parameter_number")
_set_operand_shapes = _slot_setter(HloInstruction, "operand_shapes")
_set_offset = _slot_setter(HloInstruction, "offset")
_set_graph = _slot_setter(HloInstruction, "graph")


@dataclass(frozen=True, slots=True, eq=False)
class HloComputation:
    """A named list of instructions with one root; ``is_entry`` for the module's ENTRY."""

    name: str
    instructions: tuple[HloInstruction, ...]
    root: HloInstruction
    is_entry: bool = False
    offset: int = 0
    signature: tuple[tuple[tuple[str, Shape], ...], Shape] | None = field(default=None, repr=False)
    graph: HloGraph = field(default=_NO_GRAPH, repr=False)
    _by_name: Mapping[str, HloInstruction] = field(default_factory=dict, repr=False)

    @property
    def parameters(self) -> tuple[HloInstruction, ...]:
        """Parameter instructions ordered by parameter number."""
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return tuple(sorted(params, key=lambda i: i.parameter_number or 0))

    def parameter(self, number: int) -> HloInstruction:
        for inst in self.instructions:
            if inst.opcode == "parameter" and inst.parameter_number == number:
                return inst
        raise HloError(f"computation {self.name} has no parameter({number})")

    @property
    def is_fusion_computation(self) -> bool:
        """True if some ``fusion`` instruction calls this computation."""
        return self in self.graph.fusion_bodies

    @property
    def callers(self) -> tuple[HloInstruction, ...]:
        """Instructions (in any computation) that call this computation."""
        return self.graph.callers.get(self, ())

    @property
    def module(self) -> HloModule | None:
        return self.graph.module

    def instruction(self, name: str) -> HloInstruction:
        """The instruction called ``name`` (a leading ``%`` is ignored)."""
        try:
            return self._by_name[name.lstrip("%")]
        except KeyError:
            raise HloError(f"computation {self.name} has no instruction {name!r}") from None

    def __contains__(self, name: str) -> bool:
        return name.lstrip("%") in self._by_name

    def __iter__(self) -> Iterator[HloInstruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self.instructions)} instructions>"


@dataclass(frozen=True, slots=True, eq=False)
class HloModule:
    """A parsed module: header attributes, computations in text order, the entry and the links."""

    name: str
    attributes: Mapping[str, Any]
    computations: tuple[HloComputation, ...]
    entry: HloComputation
    text: str = field(default="", repr=False)
    _by_name: Mapping[str, HloComputation] = field(default_factory=dict, repr=False)
    graph: HloGraph = field(default=_NO_GRAPH, repr=False)

    def computation(self, name: str) -> HloComputation:
        """The computation called ``name`` (a leading ``%`` is ignored)."""
        try:
            return self._by_name[name.lstrip("%")]
        except KeyError:
            raise HloError(f"module {self.name} has no computation {name!r}") from None

    def instructions(self) -> Iterator[HloInstruction]:
        """Every instruction of every computation, in text order."""
        for comp in self.computations:
            yield from comp.instructions

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def find_instruction(self, name: str) -> HloInstruction:
        """The instruction called ``name``, searching the entry first, then every computation."""
        name = name.lstrip("%")
        for comp in (self.entry, *self.computations):
            if name in comp:
                return comp.instruction(name)
        raise HloError(f"module {self.name} has no instruction {name!r}")

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations>"
