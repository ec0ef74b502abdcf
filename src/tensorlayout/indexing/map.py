"""``IndexingMap``: an affine map with a domain (XLA's HLO indexing analysis, spec §1.3).

Notation ``(d...)[s...]{rt...} -> (f(d, s, rt))``: dims ``d`` index the "from" tensor, range
variables ``s`` are enumerated (e.g. a reduced dimension) and runtime variables ``rt`` are
values only known at run time. The domain is the box of all variable bounds intersected
with every constraint ``expr in [lo, hi]``.

The data and the structural methods are in :class:`~tensorlayout.indexing.map_base.IndexingMapBase`;
the methods defined here delegate to the operations' modules, which sit between the two.

>>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
>>> print(m.simplify())
(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tensorlayout.errors import IndexingError, expect_text
from tensorlayout.indexing.compose import compose
from tensorlayout.indexing.expr import Expr
from tensorlayout.indexing.exprparse import parse_expr
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_base import (
    ConstraintsLike,
    IndexingMapBase,
    SimplifyMode,
    SimplifyPointDimensions,
)
from tensorlayout.indexing.map_text import parse_map_as
from tensorlayout.indexing.ranges import compute_result_ranges
from tensorlayout.indexing.simplify import cached_simplification, simplify_with_status
from tensorlayout.indexing.symbolic_map import SymbolicMap
from tensorlayout.indexing.transforms import (
    convert_range_variables_to_dimensions,
    remove_unused,
    rescale_symbols,
)
from tensorlayout.indexing.variables import (
    Variable,
    dim_vars_from_tensor_sizes,
    range_vars_from_tensor_sizes,
)

__all__ = ["IndexingMap", "SimplifyPointDimensions", "Variable"]


class IndexingMap(IndexingMapBase):
    """An immutable XLA indexing map; operations return new maps.

    >>> from tensorlayout.indexing.expr import var
    >>> m = IndexingMap([var(1), var(0)], [(0, 3), (0, 7)])
    >>> str(m)
    '(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]'
    >>> m.evaluate([2, 5])
    (5, 2)
    """

    __slots__ = ()

    # ---- constructors (the structural ones are in map_base.IndexingMapBase) --------------
    @classmethod
    def parse(cls, text: str) -> IndexingMap:
        """XLA's text format, see :func:`~tensorlayout.indexing.parse.parse_indexing_map`.

        >>> IndexingMap.parse("(d0) -> (d0 * 2), domain: d0 in [0, 3]").num_dims
        1
        """
        return parse_map_as(cls, text)

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

        >>> print(IndexingMap.from_symbolic_map("(d0)[s0] -> (d0 + s0)", [(0, 3)], [(0, 1)]))
        (d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]
        """
        sm = symbolic_map if isinstance(symbolic_map, SymbolicMap) else SymbolicMap.parse(
            expect_text(symbolic_map, "a SymbolicMap or its text"))
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
        return cls.from_symbolic_map(symbolic_map, dim_vars_from_tensor_sizes(dim_sizes),
                                     range_vars_from_tensor_sizes(symbol_sizes))

    # ---- questions answered by the operations' modules ------------------------------------
    def compute_result_ranges(self) -> list[Interval]:
        """The range of every result over the domain box, using the constraints.

        >>> m = IndexingMap.parse("(d0) -> (d0 / 4, d0 mod 4), domain: d0 in [0, 99], d0 in [0, 9]")
        >>> m.compute_result_ranges()
        [Interval(0, 2), Interval(0, 3)]
        """
        return compute_result_ranges(self)

    def parse_expr(self, text: str) -> Expr:
        """Parse an expression using this map's variable names.

        >>> m = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 1]")
        >>> m.parse_expr("d0 + s0 * 2")
        Expr('v0 + v1 * 2')
        """
        return parse_expr(text, names=self.variable_names())

    # ---- rewrites (free functions in simplify.py, transforms.py, compose.py) ----------
    def simplify(self, mode: SimplifyMode = "replace", *, exact: bool = False) -> IndexingMap:
        """XLA's ``Simplify``: :func:`~tensorlayout.indexing.simplify.simplify` (cached).

        ``mode="preserve"`` keeps single-point variables; ``exact=True`` replaces XLA's
        unsound constraint rewrites (negative divisors, MergeModConstraints on negative bounds)
        by exact ones; XLA's are the default, for parity.

        >>> print(IndexingMap.parse("(d0) -> (d0 mod 8), domain: d0 in [0, 7]").simplify())
        (d0) -> (d0), domain: d0 in [0, 7]
        """
        return simplify_with_status(self, mode, exact=exact)[0]

    def simplify_with_status(self, mode: SimplifyMode = "replace", *,
                             exact: bool = False) -> tuple[IndexingMap, bool]:
        """``(simplified map, changed)`` where ``changed`` is XLA's return value of Simplify()."""
        return simplify_with_status(self, mode, exact=exact)

    @property
    def _simplified(self) -> tuple[tuple[bool, bool], IndexingMap] | None:
        """``((True, False), s)`` if ``simplify(self)`` is known (cached) to be ``s``, else None.

        Kept for callers of the former cache slot; use
        :func:`~tensorlayout.indexing.simplify.cached_simplification`.
        """
        out = cached_simplification(self)
        return None if out is None else ((True, False), out)

    def remove_unused_symbols(self) -> IndexingMap:
        """Drop range/runtime variables used by no result (and constraints only about them)."""
        return self.remove_unused_symbols_with_mask()[0]

    def remove_unused_symbols_with_mask(self) -> tuple[IndexingMap, list[bool]]:
        """``RemoveUnusedSymbols`` and the mask of removed symbols: :func:`~.transforms.remove_unused`."""
        return remove_unused(self, symbols_only=True)

    def remove_unused_vars(self) -> IndexingMap:
        """Drop dims and symbols used by no result (and constraints only about them)."""
        return self.remove_unused_vars_with_mask()[0]

    def remove_unused_vars_with_mask(self) -> tuple[IndexingMap, list[bool]]:
        """``RemoveUnusedVars`` and the mask of removed variables: :func:`~.transforms.remove_unused`."""
        return remove_unused(self, symbols_only=False)

    def rescale_symbols(self) -> IndexingMap:
        """Replace ``s`` by ``s * c + k`` for each constraint ``s mod c in [k, k]``."""
        return self.rescale_symbols_with_status()[0]

    def rescale_symbols_with_status(self) -> tuple[IndexingMap, bool]:
        """``RescaleSymbols`` and whether it rescaled: :func:`~.transforms.rescale_symbols`."""
        return rescale_symbols(self)

    def convert_range_variables_to_dimensions(self, indices: Iterable[int]) -> IndexingMap:
        """Move the selected range variables (by index) to the end of the dims, keeping names."""
        return convert_range_variables_to_dimensions(self, indices)

    def __mul__(self, other: IndexingMap) -> IndexingMap:
        """``a * b`` is ``compose(a, b)`` (XLA's operator*)."""
        if not isinstance(other, IndexingMap):
            return NotImplemented
        return compose(self, other)
