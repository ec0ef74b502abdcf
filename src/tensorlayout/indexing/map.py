"""``IndexingMap``: an affine map with a domain (XLA's HLO indexing analysis, spec §1.3).

Notation ``(d...)[s...]{rt...} -> (f(d, s, rt))``: dims ``d`` index the "from" tensor, range
variables ``s`` are enumerated (e.g. a reduced dimension) and runtime variables ``rt`` are
values only known at run time. The domain is the box of all variable bounds intersected
with every constraint ``expr in [lo, hi]``.

>>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
>>> print(m.simplify())
(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from typing import NamedTuple, TextIO

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.expr import CONST, VAR, Expr, ExprLike, const, out_of_int64
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_fields import MapFields
from tensorlayout.indexing.variables import (
    Variable,
    dim_vars_from_tensor_sizes,
    range_vars_from_tensor_sizes,
)

__all__ = ["IndexingMap", "MapOperations", "SimplifyPointDimensions", "Variable", "install_operations"]

BoundsLike = Interval | tuple[int, int] | list[int]
ConstraintsLike = Mapping[Expr, BoundsLike] | Iterable[tuple[Expr, BoundsLike]]


class SimplifyPointDimensions(str, Enum):
    """XLA's ``SimplifyPointDimensions``: replace single-point ranges by constants, or keep them."""

    REPLACE = "replace"
    PRESERVE = "preserve"


SimplifyMode = str | SimplifyPointDimensions


class _State:
    """The mutable working copy used while building or rewriting a map (XLA's in-place ops)."""

    __slots__ = ("constraints", "dims", "known_empty", "ranges", "results", "rts")

    def __init__(
        self,
        results: list[Expr],
        dims: list[Variable],
        ranges: list[Variable],
        rts: list[Variable],
        constraints: dict[Expr, Interval] | None = None,
        known_empty: bool = False,
    ) -> None:
        self.results = results
        self.dims = dims
        self.ranges = ranges
        self.rts = rts
        self.constraints: dict[Expr, Interval] = dict(constraints or {})
        self.known_empty = known_empty

    @property
    def num_dims(self) -> int:
        return len(self.dims)

    def all_vars(self) -> list[Variable]:
        return [*self.dims, *self.ranges, *self.rts]

    def bounds(self) -> list[Interval]:
        return [v.bounds for v in self.all_vars()]

    def set_bounds(self, index: int, bounds: Interval) -> None:
        n, r = len(self.dims), len(self.ranges)
        if index < n:
            self.dims[index] = Variable(bounds, self.dims[index].name)
        elif index < n + r:
            self.ranges[index - n] = Variable(bounds, self.ranges[index - n].name)
        else:
            self.rts[index - n - r] = Variable(bounds, self.rts[index - n - r].name)

    def get_bounds(self, index: int) -> Interval:
        return self.all_vars()[index].bounds

    def reset_to_known_empty(self) -> None:
        self.results = [const(0)] * len(self.results)
        empty = Interval(0, -1)
        self.dims = [Variable(empty, v.name) for v in self.dims]
        self.ranges = [Variable(empty, v.name) for v in self.ranges]
        self.constraints = {}
        self.known_empty = True

    def check_feasible(self) -> None:
        if not self.known_empty and any(not v.bounds.is_feasible for v in self.all_vars()):
            self.reset_to_known_empty()

    def add_constraint(self, expr: Expr, interval: Interval) -> None:
        """XLA's AddConstraint: fold into var bounds, check constants, intersect duplicates."""
        if self.known_empty:
            return
        if not interval.is_feasible:
            self.reset_to_known_empty()
            return
        if expr.kind == VAR:
            if expr.value >= len(self.all_vars()):
                raise IndexingError(f"constraint mentions variable v{expr.value}, which the map lacks")
            b = self.get_bounds(expr.value).intersect(interval)
            self.set_bounds(expr.value, b)
            if not b.is_feasible:
                self.reset_to_known_empty()
            return
        if expr.kind == CONST:
            if not interval.contains(expr.value):
                self.reset_to_known_empty()
            return
        old = self.constraints.get(expr)
        new = interval if old is None else old.intersect(interval)
        self.constraints[expr] = new
        if not new.is_feasible:
            self.reset_to_known_empty()

    def freeze(self) -> IndexingMap:
        return IndexingMap._make(
            tuple(self.results),
            tuple(self.dims),
            tuple(self.ranges),
            tuple(self.rts),
            tuple(self.constraints.items()),
            self.known_empty,
            False,
        )


class MapOperations(NamedTuple):
    """The map operations that live in modules above this one, for :class:`IndexingMap`'s methods.

    Parsing, simplification, composition and the transforms import this module, so the methods
    that delegate to them cannot import them back; ``tensorlayout.indexing`` installs this table
    once (see :func:`install_operations`). The free functions are the primary API.
    """

    parse: Callable[[str], IndexingMap]
    from_symbolic_map: Callable[
        [object, Sequence[object], Sequence[object], Sequence[object], ConstraintsLike], IndexingMap
    ]
    parse_expr: Callable[[str, Sequence[str]], Expr]
    result_ranges: Callable[[IndexingMap], list[Interval]]
    simplify: Callable[[IndexingMap, SimplifyMode, bool], tuple[IndexingMap, bool]]
    cached_simplification: Callable[[IndexingMap], IndexingMap | None]
    remove_unused: Callable[[IndexingMap, bool], tuple[IndexingMap, list[bool]]]
    rescale_symbols: Callable[[IndexingMap], tuple[IndexingMap, bool]]
    convert_range_variables_to_dimensions: Callable[[IndexingMap, Iterable[int]], IndexingMap]
    compose: Callable[[IndexingMap, IndexingMap], IndexingMap]


_OPERATIONS: list[MapOperations] = []


def install_operations(operations: MapOperations) -> None:
    """Set the table behind :class:`IndexingMap`'s delegating methods (done by ``tensorlayout.indexing``)."""
    _OPERATIONS[:] = [operations]


def _ops() -> MapOperations:
    if not _OPERATIONS:
        raise IndexingError("the indexing-map operations are not installed (import tensorlayout.indexing)")
    return _OPERATIONS[0]


def _check_vars(exprs: Iterable[Expr], count: int, what: str) -> None:
    """Every variable id is below ``count`` and every constant fits in int64 (as in XLA)."""
    for e in exprs:
        for v in e.variables():
            if v >= count:
                raise IndexingError(f"{what} mentions variable v{v} but the map has only {count} variables")
        big = out_of_int64(e)
        if big is not None:
            raise IndexingError(f"{what} has the constant {big}, which does not fit in int64")


class IndexingMap(MapFields):
    """An immutable XLA indexing map; operations return new maps.

    >>> from tensorlayout.indexing.expr import var
    >>> m = IndexingMap([var(1), var(0)], [(0, 3), (0, 7)])
    >>> str(m)
    '(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]'
    >>> m.evaluate([2, 5])
    (5, 2)
    """

    __slots__ = ()

    def __init__(
        self,
        results: Sequence[ExprLike],
        dim_vars: Sequence[object] = (),
        range_vars: Sequence[object] = (),
        rt_vars: Sequence[object] = (),
        constraints: ConstraintsLike = (),
    ) -> None:
        res = [r if isinstance(r, Expr) else const(r) for r in results]
        dims = [Variable.of(v) for v in dim_vars]
        ranges = [Variable.of(v) for v in range_vars]
        rts = [Variable.of(v) for v in rt_vars]
        total = len(dims) + len(ranges) + len(rts)
        _check_vars(res, total, "a result")
        state = _State(res, dims, ranges, rts)
        state.check_feasible()
        items = constraints.items() if isinstance(constraints, Mapping) else constraints
        for expr, bounds in items:
            if not isinstance(expr, Expr):
                raise IndexingError(f"a constraint must be an expression, got {expr!r}")
            _check_vars([expr], total, "a constraint")
            state.add_constraint(expr, Interval.of(bounds))
        super().__init__(tuple(state.results), tuple(state.dims), tuple(state.ranges),
                         tuple(state.rts), tuple(state.constraints.items()), state.known_empty, False)

    @classmethod
    def _make(
        cls,
        results: tuple[Expr, ...],
        dims: tuple[Variable, ...],
        ranges: tuple[Variable, ...],
        rts: tuple[Variable, ...],
        constraints: tuple[tuple[Expr, Interval], ...],
        known_empty: bool,
        undefined: bool,
    ) -> IndexingMap:
        """A map from fields that are already normalized (no constraint folding)."""
        m = cls.__new__(cls)
        MapFields.__init__(m, results, dims, ranges, rts, constraints, known_empty, undefined)
        return m

    def _state(self) -> _State:
        return _State(
            list(self._results),
            list(self._dims),
            list(self._ranges),
            list(self._rts),
            dict(self._constraints),
            self._known_empty,
        )

    # ---- constructors ----------------------------------------------------------------
    @classmethod
    def undefined(cls) -> IndexingMap:
        """The undefined map ("unknown indexing"), printed ``UNDEFINED``."""
        return cls._make((), (), (), (), (), False, True)

    get_undefined = undefined

    @classmethod
    def known_empty(cls, num_dims: int, num_range_vars: int = 0, num_results: int = 0,
                    num_rt_vars: int = 0) -> IndexingMap:
        """A map whose domain is known to be empty, printed ``KNOWN EMPTY``."""
        empty = Variable(Interval(0, -1))
        state = _State([const(0)] * num_results, [empty] * num_dims, [empty] * num_range_vars,
                       [empty] * num_rt_vars)
        state.reset_to_known_empty()
        return state.freeze()

    @classmethod
    def parse(cls, text: str) -> IndexingMap:
        """XLA's text format, see :func:`~tensorlayout.indexing.parse.parse_indexing_map`."""
        return _ops().parse(text)

    @classmethod
    def from_symbolic_map(
        cls,
        symbolic_map: object,
        dim_vars: Sequence[object],
        range_vars: Sequence[object] = (),
        rt_vars: Sequence[object] = (),
        constraints: ConstraintsLike = (),
    ) -> IndexingMap:
        """Build from a :class:`SymbolicMap` (or its text) and variables.

        The counts are checked with the messages of XLA's ``Verify``.
        """
        return _ops().from_symbolic_map(symbolic_map, dim_vars, range_vars, rt_vars, constraints)

    @classmethod
    def from_tensor_sizes(cls, symbolic_map: object, dim_sizes: Sequence[int],
                          symbol_sizes: Sequence[int] = ()) -> IndexingMap:
        """Dims ``[0, n-1]`` and range vars ``[0, m-1]`` from tensor sizes.

        >>> print(IndexingMap.from_tensor_sizes("(d0) -> (d0)", [10]))
        (d0) -> (d0), domain: d0 in [0, 9]
        """
        return cls.from_symbolic_map(symbolic_map, dim_vars_from_tensor_sizes(dim_sizes),
                                     range_vars_from_tensor_sizes(symbol_sizes))

    # ---- accessors (the read-only ones are in map_fields.MapFields) -------------------
    def get_sub_map(self, result: int) -> IndexingMap:
        """The map with only result ``result`` (same variables and constraints)."""
        if not 0 <= result < self.num_results:
            raise IndexingError(f"result index {result} out of range [0, {self.num_results})")
        return IndexingMap._make((self._results[result],), self._dims, self._ranges, self._rts,
                                 self._constraints, self._known_empty, self._undefined)

    def clear_constraints(self) -> IndexingMap:
        """A copy without constraints (bounds kept)."""
        return IndexingMap._make(self._results, self._dims, self._ranges, self._rts, (),
                                 self._known_empty, self._undefined)

    def compute_result_ranges(self) -> list[Interval]:
        """The range of every result over the domain box, using the constraints.

        >>> m = IndexingMap.parse("(d0) -> (d0 / 4, d0 mod 4), domain: d0 in [0, 99], d0 in [0, 9]")
        >>> m.compute_result_ranges()
        [Interval(0, 2), Interval(0, 3)]
        """
        return _ops().result_ranges(self)

    def variable_names(self) -> list[str]:
        """Printed names by variable id: a custom name, else ``d<i>``, ``s<j>`` or ``rt<k>``."""
        out = [v.name or f"d{i}" for i, v in enumerate(self._dims)]
        out += [v.name or f"s{j}" for j, v in enumerate(self._ranges)]
        out += [v.name or f"rt{k}" for k, v in enumerate(self._rts)]
        return out

    def parse_expr(self, text: str) -> Expr:
        """Parse an expression using this map's variable names.

        >>> m = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 1]")
        >>> m.parse_expr("d0 + s0 * 2")
        Expr('v0 + v1 * 2')
        """
        return _ops().parse_expr(text, self.variable_names())

    # ---- evaluation ------------------------------------------------------------------
    def _point(self, dims: Sequence[int], symbols: Sequence[int]) -> list[int]:
        if len(dims) != self.num_dims or len(symbols) != self.num_symbols:
            raise IndexingError(
                f"expected {self.num_dims} dim and {self.num_symbols} symbol values, "
                f"got {len(dims)} and {len(symbols)}"
            )
        return [*dims, *symbols]

    def evaluate(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> tuple[int, ...]:
        """The results at a point (the domain is ignored, as in XLA)."""
        point = self._point(dims, symbols)
        return tuple(r.evaluate(point) for r in self._results)

    def constraints_satisfied(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> bool:
        """True if every constraint holds at the point (variable bounds are not checked)."""
        point = self._point(dims, symbols)
        for e, iv in self._constraints:
            v = e.safe_evaluate(point)
            if v is None or not iv.contains(v):
                return False
        return True

    def contains(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> bool:
        """True if the point lies in the domain (bounds and constraints)."""
        if self._known_empty or self._undefined:
            return False
        point = self._point(dims, symbols)
        if any(not v.bounds.contains(x) for v, x in zip(self.all_vars(), point)):
            return False
        return self.constraints_satisfied(dims, symbols)

    # ---- building --------------------------------------------------------------------
    def add_constraint(self, expr: Expr, bounds: BoundsLike) -> IndexingMap:
        """A copy with ``expr in bounds`` added (AddConstraint: folds var bounds, checks constants).

        >>> m = IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 99]")
        >>> print(m.add_constraint(m.dim(0), (10, 200)))
        (d0) -> (d0), domain: d0 in [10, 99]
        """
        if self._undefined:
            raise IndexingError("cannot add a constraint to an undefined map")
        _check_vars([expr], self.num_vars, "a constraint")
        state = self._state()
        state.add_constraint(expr, Interval.of(bounds))
        return state.freeze()

    def with_names(self, dims: Sequence[str] = (), ranges: Sequence[str] = (),
                   rts: Sequence[str] = ()) -> IndexingMap:
        """A copy with the given variable names ("" keeps the default)."""
        def rename(vs: tuple[Variable, ...], names: Sequence[str]) -> tuple[Variable, ...]:
            return tuple(Variable(v.bounds, names[i] if i < len(names) else v.name) for i, v in enumerate(vs))

        return IndexingMap._make(self._results, rename(self._dims, dims), rename(self._ranges, ranges),
                                 rename(self._rts, rts), self._constraints, self._known_empty,
                                 self._undefined)

    def rename_dim_var(self, i: int, name: str) -> IndexingMap:
        """``RenameDimVar``: a copy whose dimension ``i`` prints as ``name``.

        >>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 7]")
        >>> print(m.rename_dim_var(1, "th_x"))
        (d0, th_x) -> (d0 + th_x), domain: d0 in [0, 3], th_x in [0, 7]
        """
        old = self.dim_var(i)
        dims = (*self._dims[:i], Variable(old.bounds, name), *self._dims[i + 1:])
        return IndexingMap._make(self._results, dims, self._ranges, self._rts, self._constraints,
                                 self._known_empty, self._undefined)

    def erase_constraint(self, expr: Expr) -> IndexingMap:
        """``EraseConstraint``: a copy without the constraint on ``expr`` (if there is one)."""
        kept = tuple((e, iv) for e, iv in self._constraints if e is not expr)
        return IndexingMap._make(self._results, self._dims, self._ranges, self._rts, kept,
                                 self._known_empty, self._undefined)

    def verify(self, out: TextIO | None = None) -> bool:
        """``Verify``: every expression names only the map's variables; the reason goes to ``out``.

        XLA checks the affine map's dimension and symbol counts against the variables; here the
        counts are the variables, so the check is on the variable ids the expressions use.

        >>> IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]").verify()
        True
        """
        if self._undefined:
            return True
        exprs = (*self._results, *(e for e, _ in self._constraints))
        used = max((v for e in exprs for v in e.variables()), default=-1)
        if used < self.num_vars:
            return True
        if out is not None:
            out.write(f"the expressions use variable v{used} but the map has {self.num_dims} "
                      f"dims, {self.num_range_vars} range and {self.num_rt_vars} runtime variables")
        return False

    # ---- rewrites (free functions in simplify.py, transforms.py, compose.py) ----------
    def simplify(self, mode: SimplifyMode = "replace", *, exact: bool = False) -> IndexingMap:
        """XLA's ``Simplify``: :func:`~tensorlayout.indexing.simplify.simplify` (cached).

        ``mode="preserve"`` keeps single-point variables; ``exact=True`` replaces XLA's
        unsound constraint rewrites (negative divisors, MergeModConstraints on negative bounds)
        by exact ones; XLA's are the default, for parity.
        """
        return _ops().simplify(self, mode, exact)[0]

    def simplify_with_status(self, mode: SimplifyMode = "replace", *,
                             exact: bool = False) -> tuple[IndexingMap, bool]:
        """``(simplified map, changed)`` where ``changed`` is XLA's return value of Simplify()."""
        return _ops().simplify(self, mode, exact)

    @property
    def _simplified(self) -> tuple[tuple[bool, bool], IndexingMap] | None:
        """``((True, False), s)`` if ``simplify(self)`` is known (cached) to be ``s``, else None.

        Kept for callers of the former cache slot; use
        :func:`~tensorlayout.indexing.simplify.cached_simplification`.
        """
        out = _ops().cached_simplification(self)
        return None if out is None else ((True, False), out)

    def remove_unused_symbols(self) -> IndexingMap:
        """Drop range/runtime variables used by no result (and constraints only about them)."""
        return self.remove_unused_symbols_with_mask()[0]

    def remove_unused_symbols_with_mask(self) -> tuple[IndexingMap, list[bool]]:
        return _ops().remove_unused(self, True)

    def remove_unused_vars(self) -> IndexingMap:
        """Drop dims and symbols used by no result (and constraints only about them)."""
        return self.remove_unused_vars_with_mask()[0]

    def remove_unused_vars_with_mask(self) -> tuple[IndexingMap, list[bool]]:
        return _ops().remove_unused(self, False)

    def rescale_symbols(self) -> IndexingMap:
        """Replace ``s`` by ``s * c + k`` for each constraint ``s mod c in [k, k]``."""
        return self.rescale_symbols_with_status()[0]

    def rescale_symbols_with_status(self) -> tuple[IndexingMap, bool]:
        return _ops().rescale_symbols(self)

    def convert_symbols_to_dimensions(self) -> IndexingMap:
        """All range then runtime variables become trailing dims (their names are dropped).

        >>> m = IndexingMap.parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]")
        >>> print(m.convert_symbols_to_dimensions())
        (d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 1]
        """
        if self._undefined:
            return self
        dims = (*self._dims, *(Variable(v.bounds) for v in (*self._ranges, *self._rts)))
        return IndexingMap._make(self._results, dims, (), (), self._constraints, self._known_empty, False)

    def convert_range_variables_to_dimensions(self, indices: Iterable[int]) -> IndexingMap:
        """Move the selected range variables (by index) to the end of the dims, keeping names."""
        return _ops().convert_range_variables_to_dimensions(self, indices)

    def __mul__(self, other: IndexingMap) -> IndexingMap:
        """``a * b`` is ``compose(a, b)`` (XLA's operator*)."""
        if not isinstance(other, IndexingMap):
            return NotImplemented
        return _ops().compose(self, other)

    # ---- identity, printing ----------------------------------------------------------
    def _struct_key(self) -> tuple[object, ...]:
        """The whole structure, names and constraint order included: equal keys simplify identically."""
        return (self._results, self._dims, self._ranges, self._rts, self._constraints,
                self._known_empty, self._undefined)

    def _key(self) -> tuple[object, ...]:
        return (
            self._undefined,
            self._known_empty,
            self._results,
            tuple(v.bounds for v in self._dims),
            tuple(v.bounds for v in self._ranges),
            tuple(v.bounds for v in self._rts),
            frozenset(self._constraints),
        )

    def __eq__(self, other: object) -> bool:
        """Same results, same bounds, same constraint set; names are ignored."""
        if not isinstance(other, IndexingMap):
            return NotImplemented
        return self is other or self._key() == other._key()

    def __hash__(self) -> int:
        # a part of _key (equal maps agree on it), cheap enough not to need caching
        return hash((self._results, len(self._ranges), len(self._rts), len(self._constraints),
                     tuple(v.bounds for v in self._dims), self._known_empty, self._undefined))

    def to_string(self, *, floordiv: bool = False) -> str:
        """XLA's one-line text: ``(dims)[ranges]{rts} -> (results), domain: ...``.

        ``floordiv=True`` spells floor division ``floordiv``, as XLA before June 2026 and MLIR
        print it (the default is current XLA's ``/``).

        >>> m = IndexingMap.parse("(d0) -> (d0 / 4), domain: d0 in [0, 15]")
        >>> m.to_string(floordiv=True)
        '(d0) -> (d0 floordiv 4), domain: d0 in [0, 15]'
        """
        if self._undefined:
            return "UNDEFINED"
        if self._known_empty:
            return "KNOWN EMPTY"
        names = self.variable_names()
        n, r = self.num_dims, self.num_range_vars
        text = "(" + ", ".join(names[:n]) + ")"
        if self._ranges:
            text += "[" + ", ".join(names[n:n + r]) + "]"
        if self._rts:
            text += "{" + ", ".join(names[n + r:]) + "}"
        text += " -> (" + ", ".join(e.to_string(names, floordiv=floordiv) for e in self._results) + ")"
        if not names:
            return text
        parts = [f"{name} in {v.bounds}" for name, v in zip(names, self.all_vars())]
        parts += sorted(f"{e.to_string(names, floordiv=floordiv)} in {iv}" for e, iv in self._constraints)
        return text + ", domain: " + ", ".join(parts)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"IndexingMap.parse({self.to_string()!r})"
