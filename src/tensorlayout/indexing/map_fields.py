"""The stored fields of an ``IndexingMap`` and XLA's read-only accessors on them.

:class:`~tensorlayout.indexing.map.IndexingMap` derives from :class:`MapFields`; the
accessors here only read fields (XLA's ``Get*`` methods, counts and predicates), so they sit
below the map's constructors and rewrites.

>>> from tensorlayout.indexing import IndexingMap
>>> m = IndexingMap.parse("(d0)[s0]{rt0} -> (d0 + s0 + rt0), "
...                       "domain: d0 in [0, 3], s0 in [0, 5], rt0 in [0, 9]")
>>> m.num_dims, m.num_symbols, m.get_symbol_bounds(), m.is_rt_var_symbol(m.symbol(1))
(1, 2, [Interval(0, 5), Interval(0, 9)], True)
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.expr import VAR, Expr, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.variables import Variable

__all__ = ["MapFields"]


def _checked(i: int, count: int, what: str) -> int:
    """``i`` if it is a valid index of ``count`` items (XLA CHECK-fails otherwise)."""
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < count:
        raise IndexingError(f"{what} index {i!r} out of range [0, {count})")
    return i


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MapFields:
    """The fields of an indexing map (a frozen record; build maps with ``IndexingMap``)."""

    _results: tuple[Expr, ...]
    _dims: tuple[Variable, ...]
    _ranges: tuple[Variable, ...]
    _rts: tuple[Variable, ...]
    _constraints: tuple[tuple[Expr, Interval], ...]
    _known_empty: bool
    _undefined: bool

    # ---- kind --------------------------------------------------------------------------
    @property
    def is_undefined(self) -> bool:
        """``IsUndefined``: the map stands for unknown indexing (printed ``UNDEFINED``)."""
        return self._undefined

    @property
    def is_known_empty(self) -> bool:
        """``IsKnownEmpty``: the domain is known to be empty (printed ``KNOWN EMPTY``)."""
        return self._known_empty

    # ---- results and variables -----------------------------------------------------------
    @property
    def results(self) -> tuple[Expr, ...]:
        """The result expressions (``GetAffineMap().getResults()``)."""
        return self._results

    @property
    def num_results(self) -> int:
        """``GetNumResults``: the number of result expressions."""
        return len(self._results)

    @property
    def dim_vars(self) -> tuple[Variable, ...]:
        """``GetDimVars``: the dimension variables ``d_i`` (bounds and names)."""
        return self._dims

    @property
    def range_vars(self) -> tuple[Variable, ...]:
        """``GetRangeVars``: the range variables, the first symbols ``s_j``."""
        return self._ranges

    @property
    def rt_vars(self) -> tuple[Variable, ...]:
        """``GetRTVars``: the runtime variables, the symbols after the range variables."""
        return self._rts

    def dim_var(self, i: int) -> Variable:
        """``GetDimVar``: dimension variable ``i`` (``dim(i)`` is its expression instead)."""
        return self._dims[_checked(i, len(self._dims), "dimension variable")]

    def range_var(self, i: int) -> Variable:
        """``GetRangeVar``: range variable ``i``."""
        return self._ranges[_checked(i, len(self._ranges), "range variable")]

    def rt_var(self, i: int) -> Variable:
        """``GetRTVar``: runtime variable ``i``."""
        return self._rts[_checked(i, len(self._rts), "runtime variable")]

    @property
    def num_dims(self) -> int:
        """``GetDimVarsCount`` / ``GetDimensionCount``: the number of dimension variables."""
        return len(self._dims)

    @property
    def num_range_vars(self) -> int:
        """``GetRangeVarsCount``: the number of range variables."""
        return len(self._ranges)

    @property
    def num_rt_vars(self) -> int:
        """``GetRTVarsCount``: the number of runtime variables."""
        return len(self._rts)

    @property
    def num_symbols(self) -> int:
        """``GetSymbolCount``: range variables plus runtime variables."""
        return len(self._ranges) + len(self._rts)

    @property
    def num_vars(self) -> int:
        """Dimensions plus symbols: variable ids run over ``[0, num_vars)``."""
        return len(self._dims) + self.num_symbols

    def all_vars(self) -> tuple[Variable, ...]:
        """Every variable by id: dimensions, then range variables, then runtime variables."""
        return (*self._dims, *self._ranges, *self._rts)

    def dim(self, i: int) -> Expr:
        """The expression of dim ``d_i``."""
        return var(i)

    def symbol(self, j: int) -> Expr:
        """The expression of symbol ``s_j`` (range variables first, then runtime variables)."""
        return var(self.num_dims + j)

    # ---- bounds ----------------------------------------------------------------------------
    def get_dimension_bound(self, i: int) -> Interval:
        """``GetDimensionBound``: the bounds of dimension ``i``."""
        return self.dim_var(i).bounds

    def get_dimension_bounds(self) -> list[Interval]:
        """``GetDimensionBounds``: the bounds of every dimension."""
        return [v.bounds for v in self._dims]

    def get_symbol_bound(self, j: int) -> Interval:
        """``GetSymbolBound``: the bounds of symbol ``j`` (range, then runtime variables)."""
        symbols = (*self._ranges, *self._rts)
        return symbols[_checked(j, len(symbols), "symbol")].bounds

    def get_symbol_bounds(self) -> list[Interval]:
        """``GetSymbolBounds``: the bounds of every symbol."""
        return [v.bounds for v in (*self._ranges, *self._rts)]

    # ---- constraints -------------------------------------------------------------------------
    @property
    def constraints(self) -> dict[Expr, Interval]:
        """``GetConstraints``: ``expr -> interval`` in insertion order (a fresh dict)."""
        return dict(self._constraints)

    @property
    def num_constraints(self) -> int:
        """``GetConstraintsCount``: the number of constraints."""
        return len(self._constraints)

    def is_symbol_constrained(self, symbol: int) -> bool:
        """``IsSymbolConstrained``: some constraint mentions symbol ``symbol``."""
        return any(self.num_dims + symbol in e.variables() for e, _ in self._constraints)

    # ---- symbols -----------------------------------------------------------------------------
    def _symbol_position(self, symbol: Expr) -> int:
        if not isinstance(symbol, Expr) or symbol.kind != VAR or symbol.value < self.num_dims:
            raise IndexingError(f"expected a symbol expression such as map.symbol(0), got {symbol!r}")
        return _checked(symbol.value - self.num_dims, self.num_symbols, "symbol")

    def is_range_var_symbol(self, symbol: Expr) -> bool:
        """``IsRangeVarSymbol``: the symbol expression stands for a range variable."""
        return self._symbol_position(symbol) < len(self._ranges)

    def is_rt_var_symbol(self, symbol: Expr) -> bool:
        """``IsRTVarSymbol``: the symbol expression stands for a runtime variable."""
        return self._symbol_position(symbol) >= len(self._ranges)
