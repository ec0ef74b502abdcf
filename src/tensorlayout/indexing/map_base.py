"""The data of an indexing map and its structural methods, below the rewrites that build on it.

:class:`IndexingMapBase` holds the fields (see :mod:`~tensorlayout.indexing.map_fields`) and the
methods that only restructure them (constraints, names, evaluation, equality, printing). The
modules of the operations (simplify, compose, transforms, ranges, parsing) take and return maps
of this base; :class:`~tensorlayout.indexing.map.IndexingMap`, defined above them, adds the
methods that delegate to them. Maps are built with ``type(m)._make``, so every operation returns
the class it was given.

>>> from tensorlayout.indexing import IndexingMap
>>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1), domain: d0 in [0, 6], d1 in [0, 14]")
>>> isinstance(m, IndexingMapBase), m.add_constraint(m.dim(0), (1, 2)).dim_var(0).bounds
(True, Interval(1, 2))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Generic, TextIO, TypeVar

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.expr import CONST, VAR, Expr, ExprLike, const, out_of_int64
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_fields import MapFields
from tensorlayout.indexing.variables import Variable

__all__ = ["IndexingMapBase", "SimplifyPointDimensions"]

BoundsLike = Interval | tuple[int, int] | list[int]
ConstraintsLike = Mapping[Expr, BoundsLike] | Iterable[tuple[Expr, BoundsLike]]


class SimplifyPointDimensions(str, Enum):
    """XLA's ``SimplifyPointDimensions``: replace single-point ranges by constants, or keep them."""

    REPLACE = "replace"
    PRESERVE = "preserve"


SimplifyMode = str | SimplifyPointDimensions
#: The class of map an operation builds: the class of the map it was given.
M = TypeVar("M", bound="IndexingMapBase")


class _State(Generic[M]):
    """The mutable working copy used while building or rewriting a map (XLA's in-place ops).

    ``cls`` is the class :meth:`freeze` builds (the class of the map being rewritten).
    """

    __slots__ = ("cls", "constraints", "dims", "known_empty", "ranges", "results", "rts")

    def __init__(
        self,
        cls: type[M],
        results: list[Expr],
        dims: list[Variable],
        ranges: list[Variable],
        rts: list[Variable],
        constraints: dict[Expr, Interval] | None = None,
        known_empty: bool = False,
    ) -> None:
        self.cls = cls
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

    def freeze(self) -> M:
        return self.cls._make(
            tuple(self.results),
            tuple(self.dims),
            tuple(self.ranges),
            tuple(self.rts),
            tuple(self.constraints.items()),
            self.known_empty,
            False,
        )


def _check_vars(exprs: Iterable[Expr], count: int, what: str) -> None:
    """Every variable id is below ``count`` and every constant fits in int64 (as in XLA)."""
    for e in exprs:
        for v in e.variables():
            if v >= count:
                raise IndexingError(f"{what} mentions variable v{v} but the map has only {count} variables")
        big = out_of_int64(e)
        if big is not None:
            raise IndexingError(f"{what} has the constant {big}, which does not fit in int64")


class IndexingMapBase(MapFields):
    """An immutable indexing map's data and structural methods; build maps with ``IndexingMap``.

    >>> from tensorlayout.indexing import IndexingMap
    >>> from tensorlayout.indexing.expr import var
    >>> m = IndexingMap([var(1), var(0)], [(0, 3), (0, 7)])
    >>> m.evaluate([2, 5]), m.get_sub_map(0).results
    ((5, 2), (Expr('v1'),))
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
        state = _State(type(self), res, dims, ranges, rts)
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
        cls: type[M],
        results: tuple[Expr, ...],
        dims: tuple[Variable, ...],
        ranges: tuple[Variable, ...],
        rts: tuple[Variable, ...],
        constraints: tuple[tuple[Expr, Interval], ...],
        known_empty: bool,
        undefined: bool,
    ) -> M:
        """A map from fields that are already normalized (no constraint folding)."""
        m = cls.__new__(cls)
        MapFields.__init__(m, results, dims, ranges, rts, constraints, known_empty, undefined)
        return m

    def _state(self: M) -> _State[M]:
        return _State(
            type(self),
            list(self._results),
            list(self._dims),
            list(self._ranges),
            list(self._rts),
            dict(self._constraints),
            self._known_empty,
        )

    # ---- constructors ----------------------------------------------------------------
    @classmethod
    def undefined(cls: type[M]) -> M:
        """The undefined map ("unknown indexing"), printed ``UNDEFINED``."""
        return cls._make((), (), (), (), (), False, True)

    get_undefined = undefined

    @classmethod
    def known_empty(cls: type[M], num_dims: int, num_range_vars: int = 0, num_results: int = 0,
                    num_rt_vars: int = 0) -> M:
        """A map whose domain is known to be empty, printed ``KNOWN EMPTY``."""
        empty = Variable(Interval(0, -1))
        state = _State(cls, [const(0)] * num_results, [empty] * num_dims, [empty] * num_range_vars,
                       [empty] * num_rt_vars)
        state.reset_to_known_empty()
        return state.freeze()

    # ---- accessors (the read-only ones are in map_fields.MapFields) -------------------
    def get_sub_map(self: M, result: int) -> M:
        """The map with only result ``result`` (same variables and constraints)."""
        if not 0 <= result < self.num_results:
            raise IndexingError(f"result index {result} out of range [0, {self.num_results})")
        return type(self)._make((self._results[result],), self._dims, self._ranges, self._rts,
                                 self._constraints, self._known_empty, self._undefined)

    def clear_constraints(self: M) -> M:
        """A copy without constraints (bounds kept)."""
        return type(self)._make(self._results, self._dims, self._ranges, self._rts, (),
                                 self._known_empty, self._undefined)

    def variable_names(self) -> list[str]:
        """Printed names by variable id: a custom name, else ``d<i>``, ``s<j>`` or ``rt<k>``."""
        out = [v.name or f"d{i}" for i, v in enumerate(self._dims)]
        out += [v.name or f"s{j}" for j, v in enumerate(self._ranges)]
        out += [v.name or f"rt{k}" for k, v in enumerate(self._rts)]
        return out

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
    def add_constraint(self: M, expr: Expr, bounds: BoundsLike) -> M:
        """A copy with ``expr in bounds`` added (AddConstraint: folds var bounds, checks constants).

        >>> from tensorlayout.indexing import IndexingMap
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

    def with_names(self: M, dims: Sequence[str] = (), ranges: Sequence[str] = (),
                   rts: Sequence[str] = ()) -> M:
        """A copy with the given variable names ("" keeps the default)."""
        def rename(vs: tuple[Variable, ...], names: Sequence[str]) -> tuple[Variable, ...]:
            return tuple(Variable(v.bounds, names[i] if i < len(names) else v.name) for i, v in enumerate(vs))

        return type(self)._make(self._results, rename(self._dims, dims), rename(self._ranges, ranges),
                                 rename(self._rts, rts), self._constraints, self._known_empty,
                                 self._undefined)

    def rename_dim_var(self: M, i: int, name: str) -> M:
        """``RenameDimVar``: a copy whose dimension ``i`` prints as ``name``.

        >>> from tensorlayout.indexing import IndexingMap
        >>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 7]")
        >>> print(m.rename_dim_var(1, "th_x"))
        (d0, th_x) -> (d0 + th_x), domain: d0 in [0, 3], th_x in [0, 7]
        """
        old = self.dim_var(i)
        dims = (*self._dims[:i], Variable(old.bounds, name), *self._dims[i + 1:])
        return type(self)._make(self._results, dims, self._ranges, self._rts, self._constraints,
                                 self._known_empty, self._undefined)

    def erase_constraint(self: M, expr: Expr) -> M:
        """``EraseConstraint``: a copy without the constraint on ``expr`` (if there is one)."""
        kept = tuple((e, iv) for e, iv in self._constraints if e is not expr)
        return type(self)._make(self._results, self._dims, self._ranges, self._rts, kept,
                                 self._known_empty, self._undefined)

    def verify(self, out: TextIO | None = None) -> bool:
        """``Verify``: every expression names only the map's variables; the reason goes to ``out``.

        XLA checks the affine map's dimension and symbol counts against the variables; here the
        counts are the variables, so the check is on the variable ids the expressions use.

        >>> from tensorlayout.indexing import IndexingMap
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

    def convert_symbols_to_dimensions(self: M) -> M:
        """All range then runtime variables become trailing dims (their names are dropped).

        >>> from tensorlayout.indexing import IndexingMap
        >>> m = IndexingMap.parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]")
        >>> print(m.convert_symbols_to_dimensions())
        (d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 1]
        """
        if self._undefined:
            return self
        dims = (*self._dims, *(Variable(v.bounds) for v in (*self._ranges, *self._rts)))
        return type(self)._make(self._results, dims, (), (), self._constraints, self._known_empty, False)

    # ---- identity, printing ----------------------------------------------------------
    def structural_key(self) -> tuple[object, ...]:
        """The whole structure as a hashable value, names and constraint order included: maps with
        equal keys (and of one class) are the same map to every operation, so results may be
        remembered by it (``==`` is coarser: it ignores names and constraint order).

        >>> from tensorlayout.indexing import IndexingMap
        >>> a = IndexingMap.parse("(d0) -> (d0 * 2), domain: d0 in [0, 3]")
        >>> b = IndexingMap.parse("(d0) -> (d0 * 2), domain: d0 in [0, 3]")
        >>> a is b, a.structural_key() == b.structural_key()
        (False, True)
        """
        return (self._results, self._dims, self._ranges, self._rts, self._constraints,
                self._known_empty, self._undefined)

    _struct_key = structural_key

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
        if not isinstance(other, IndexingMapBase):
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

        >>> from tensorlayout.indexing import IndexingMap
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
        return f"{type(self).__name__}.parse({self.to_string()!r})"
