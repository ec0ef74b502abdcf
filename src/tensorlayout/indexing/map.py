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

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.expr import CONST, VAR, Expr, ExprLike, const, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.variables import Variable

if TYPE_CHECKING:
    from tensorlayout.indexing.simplify import SimplifyPointDimensions

__all__ = ["IndexingMap", "Variable"]

BoundsLike = Interval | tuple[int, int] | list[int]


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


def _check_vars(exprs: Iterable[Expr], count: int, what: str) -> None:
    for e in exprs:
        for v in e.variables():
            if v >= count:
                raise IndexingError(f"{what} mentions variable v{v} but the map has only {count} variables")


class IndexingMap:
    """An immutable XLA indexing map; operations return new maps.

    >>> from tensorlayout.indexing.expr import var
    >>> m = IndexingMap([var(1), var(0)], [(0, 3), (0, 7)])
    >>> str(m)
    '(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]'
    >>> m.evaluate([2, 5])
    (5, 2)
    """

    __slots__ = (
        "_constraints",
        "_dims",
        "_hash",
        "_known_empty",
        "_ranges",
        "_results",
        "_rts",
        "_simplified",
        "_undefined",
    )

    def __init__(
        self,
        results: Sequence[ExprLike],
        dim_vars: Sequence[object] = (),
        range_vars: Sequence[object] = (),
        rt_vars: Sequence[object] = (),
        constraints: Mapping[Expr, BoundsLike] | Iterable[tuple[Expr, BoundsLike]] = (),
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
        self._init_from(state.freeze())

    def _init_from(self, other: IndexingMap) -> None:
        for slot in IndexingMap.__slots__:
            object.__setattr__(self, slot, getattr(other, slot))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("IndexingMap is immutable")

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
        m = object.__new__(cls)
        s = object.__setattr__
        s(m, "_results", results)
        s(m, "_dims", dims)
        s(m, "_ranges", ranges)
        s(m, "_rts", rts)
        s(m, "_constraints", constraints)
        s(m, "_known_empty", known_empty)
        s(m, "_undefined", undefined)
        s(m, "_hash", None)
        s(m, "_simplified", None)
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
        """Parse XLA's text format (``floordiv``, ``floorDiv`` and ``/`` all mean floor division)."""
        from tensorlayout.indexing.parse import parse_indexing_map

        return parse_indexing_map(text)

    @classmethod
    def from_symbolic_map(
        cls,
        symbolic_map: object,
        dim_vars: Sequence[object],
        range_vars: Sequence[object] = (),
        rt_vars: Sequence[object] = (),
        constraints: Mapping[Expr, BoundsLike] | Iterable[tuple[Expr, BoundsLike]] = (),
    ) -> IndexingMap:
        """Build from a :class:`SymbolicMap` (or its text) and variables.

        The counts are checked with the messages of XLA's ``Verify``.
        """
        from tensorlayout.indexing.parse import SymbolicMap

        sm = symbolic_map if isinstance(symbolic_map, SymbolicMap) else SymbolicMap.parse(str(symbolic_map))
        if len(dim_vars) != sm.num_dims:
            raise IndexingError(
                f"number of dim vars ({len(dim_vars)}) must match the number of dimensions in the "
                f"symbolic map ({sm.num_dims})"
            )
        if len(range_vars) + len(rt_vars) != sm.num_symbols:
            raise IndexingError(
                f"number of range ({len(range_vars)}) + runtime ({len(rt_vars)}) variables must match "
                f"the number of symbols in the symbolic map ({sm.num_symbols})"
            )
        return cls(sm.results, dim_vars, range_vars, rt_vars, constraints)

    @classmethod
    def from_tensor_sizes(cls, symbolic_map: object, dim_sizes: Sequence[int],
                          symbol_sizes: Sequence[int] = ()) -> IndexingMap:
        """Dims ``[0, n-1]`` and range vars ``[0, m-1]`` from tensor sizes.

        >>> print(IndexingMap.from_tensor_sizes("(d0) -> (d0)", [10]))
        (d0) -> (d0), domain: d0 in [0, 9]
        """
        return cls.from_symbolic_map(symbolic_map, [(0, n - 1) for n in dim_sizes],
                                     [(0, n - 1) for n in symbol_sizes])

    # ---- accessors -------------------------------------------------------------------
    @property
    def is_undefined(self) -> bool:
        return self._undefined

    @property
    def is_known_empty(self) -> bool:
        return self._known_empty

    @property
    def results(self) -> tuple[Expr, ...]:
        return self._results

    @property
    def num_results(self) -> int:
        return len(self._results)

    @property
    def dim_vars(self) -> tuple[Variable, ...]:
        return self._dims

    @property
    def range_vars(self) -> tuple[Variable, ...]:
        return self._ranges

    @property
    def rt_vars(self) -> tuple[Variable, ...]:
        return self._rts

    @property
    def num_dims(self) -> int:
        return len(self._dims)

    @property
    def num_range_vars(self) -> int:
        return len(self._ranges)

    @property
    def num_rt_vars(self) -> int:
        return len(self._rts)

    @property
    def num_symbols(self) -> int:
        return len(self._ranges) + len(self._rts)

    @property
    def num_vars(self) -> int:
        return len(self._dims) + self.num_symbols

    @property
    def constraints(self) -> dict[Expr, Interval]:
        """The constraints ``expr -> interval`` in insertion order (a fresh dict)."""
        return dict(self._constraints)

    @property
    def num_constraints(self) -> int:
        return len(self._constraints)

    def all_vars(self) -> tuple[Variable, ...]:
        return (*self._dims, *self._ranges, *self._rts)

    def is_symbol_constrained(self, symbol: int) -> bool:
        """True if some constraint mentions symbol ``symbol`` (a range or runtime variable)."""
        return any(self.num_dims + symbol in e.variables() for e, _ in self._constraints)

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
        from tensorlayout.indexing.ranges import RangeEvaluator

        ev = RangeEvaluator.for_map(self)
        return [ev.range(r) for r in self._results]

    def dim(self, i: int) -> Expr:
        """The expression of dim ``d_i``."""
        return var(i)

    def symbol(self, j: int) -> Expr:
        """The expression of symbol ``s_j`` (range variables first, then runtime variables)."""
        return var(self.num_dims + j)

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
        from tensorlayout.indexing.parse import parse_expr

        return parse_expr(text, names=self.variable_names())

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

    # ---- rewrites (implemented in simplify.py / compose.py) ---------------------------
    def simplify(self, mode: str | SimplifyPointDimensions = "replace", *,
                 exact: bool = False) -> IndexingMap:
        """XLA's ``Simplify``: the simplified map (cached). See :func:`~.simplify.simplify_with_status`.

        ``mode="preserve"`` keeps single-point variables; ``exact=True`` replaces XLA's two
        unsound constraint rewrites (negative divisors, MergeModConstraints on negative bounds)
        by exact ones; XLA's are the default, for parity.
        """
        from tensorlayout.indexing.simplify import simplify

        return simplify(self, mode, exact=exact)

    def simplify_with_status(self, mode: str | SimplifyPointDimensions = "replace", *,
                             exact: bool = False) -> tuple[IndexingMap, bool]:
        """``(simplified map, changed)`` where ``changed`` is XLA's return value of Simplify()."""
        from tensorlayout.indexing.simplify import simplify_with_status

        return simplify_with_status(self, mode, exact=exact)

    def remove_unused_symbols(self) -> IndexingMap:
        """Drop range/runtime variables used by no result (and constraints only about them)."""
        return self.remove_unused_symbols_with_mask()[0]

    def remove_unused_symbols_with_mask(self) -> tuple[IndexingMap, list[bool]]:
        from tensorlayout.indexing.transforms import remove_unused

        return remove_unused(self, symbols_only=True)

    def remove_unused_vars(self) -> IndexingMap:
        """Drop dims and symbols used by no result (and constraints only about them)."""
        return self.remove_unused_vars_with_mask()[0]

    def remove_unused_vars_with_mask(self) -> tuple[IndexingMap, list[bool]]:
        from tensorlayout.indexing.transforms import remove_unused

        return remove_unused(self, symbols_only=False)

    def rescale_symbols(self) -> IndexingMap:
        """Replace ``s`` by ``s * c + k`` for each constraint ``s mod c in [k, k]``."""
        return self.rescale_symbols_with_status()[0]

    def rescale_symbols_with_status(self) -> tuple[IndexingMap, bool]:
        from tensorlayout.indexing.transforms import rescale_symbols

        return rescale_symbols(self)

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
        from tensorlayout.indexing.transforms import convert_range_variables_to_dimensions

        return convert_range_variables_to_dimensions(self, indices)

    def __mul__(self, other: IndexingMap) -> IndexingMap:
        """``a * b`` is ``compose(a, b)`` (XLA's operator*)."""
        from tensorlayout.indexing.compose import compose

        if not isinstance(other, IndexingMap):
            return NotImplemented
        return compose(self, other)

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
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(self._key()))
        return self._hash  # type: ignore[return-value]

    def to_string(self) -> str:
        """XLA's one-line text: ``(dims)[ranges]{rts} -> (results), domain: ...``."""
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
        text += " -> (" + ", ".join(e.to_string(names) for e in self._results) + ")"
        if not names:
            return text
        parts = [f"{name} in {v.bounds}" for name, v in zip(names, self.all_vars())]
        parts += sorted(f"{e.to_string(names)} in {iv}" for e, iv in self._constraints)
        return text + ", domain: " + ", ".join(parts)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"IndexingMap.parse({self.to_string()!r})"
