"""XLA's ``SymbolicTile``: a tile's offsets, sizes and strides as functions of the output tile sizes.

``SymbolicTile.from_indexing_map(m)`` reads an indexing map (output index -> operand index)
as a tile map ``(tile sizes)[rt vars] -> (offsets, sizes, strides)`` plus the constraints on
the tile sizes under which that reading holds; None where XLA cannot derive one.

>>> from tensorlayout.indexing import IndexingMap
>>> t = SymbolicTile.from_indexing_map(IndexingMap.parse(
...     "(d0, d1) -> (d1 * 2 + 40, d0), domain: d0 in [0, 9], d1 in [0, 20]"))
>>> print(t)
Symbolic tile with
offset_map: (d0, d1) -> (40, 0)
size_map: (d0, d1) -> (d1, d0)
stride_map: (d0, d1) -> (2, 1)
>>> evaluate_tile_sizes(t, [4, 8]), evaluate_tile_strides(t, [4, 8])
([8, 4], [2, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tensorlayout.errors import IndexingError
from tensorlayout.indexing import Expr, IndexingMap, Interval, SymbolicMap, Variable, const, expr_to_string
from tensorlayout.tiling.constraint_expression import ConstraintExpression
from tensorlayout.tiling.size_and_stride import extract_size_and_stride

__all__ = [
    "SymbolicTile",
    "evaluate_tile_offsets",
    "evaluate_tile_sizes",
    "evaluate_tile_strides",
    "symbolic_map_to_string",
]


def symbolic_map_to_string(sm: SymbolicMap) -> str:
    """A plain map as XLA prints a tile component: ``(d0, ...)[s0, ...] -> (...)``, verbatim."""
    names = [f"d{i}" for i in range(sm.num_dims)]
    symbols = [f"s{j}" for j in range(sm.num_symbols)]
    head = "(" + ", ".join(names) + ")" + ("[" + ", ".join(symbols) + "]" if symbols else "")
    results = ", ".join(expr_to_string(r, [*names, *symbols], verbatim=True) for r in sm.results)
    return f"{head} -> ({results})"


def _simplify_in(expr: Expr, reference: IndexingMap) -> Expr:
    """``expr`` simplified with the bounds and constraints of ``reference`` (points preserved)."""
    tmp = IndexingMap([expr], reference.dim_vars, reference.range_vars, reference.rt_vars,
                      reference.constraints)
    return tmp.simplify("preserve").results[0]


def _constraints_can_be_ignored(m: IndexingMap) -> bool:
    """Every constraint bounds a result from above only (high padding a tile may overhang)."""
    return all(iv.lower == 0 and expr in m.results for expr, iv in m.constraints.items())


def _offsets(m: IndexingMap) -> list[Expr]:
    """The results with every dimension and range variable set to 0 (runtime variables kept)."""
    zero = const(0)
    table: list[Expr | None] = [zero] * (m.num_dims + m.num_range_vars) + [None] * m.num_rt_vars
    return [_simplify_in(r.replace_variables(table), m) for r in m.results]


@dataclass(frozen=True, slots=True)
class SymbolicTile:
    """``SymbolicTile``: ``tile_map`` ``(sizes)[rt] -> (offsets, sizes, strides)`` and constraints."""

    tile_map: IndexingMap
    constraints: ConstraintExpression

    @property
    def is_satisfiable(self) -> bool:
        """False when the constraints can never hold."""
        return self.constraints.is_satisfiable

    @classmethod
    def from_indexing_map(cls, indexing_map: IndexingMap) -> SymbolicTile | None:
        """``SymbolicTile::FromIndexingMap``: the tile, or None where XLA bails out."""
        if indexing_map.is_undefined:
            return None
        m = indexing_map.simplify("preserve")
        if not _constraints_can_be_ignored(m):
            return None
        offsets = _offsets(m)
        dims, symbols = m.get_dimension_bounds(), m.get_symbol_bounds()
        constraints = ConstraintExpression.get_always_satisfied()
        sizes, strides = [], []
        for r, off in zip(m.results, offsets, strict=True):
            part = extract_size_and_stride(_simplify_in(r - off, m), dims, symbols)
            if part is None:
                return None
            sizes.append(part.size)
            strides.append(part.stride)
            constraints = constraints & part.constraints
        tile_sizes = [Variable(Interval(v.bounds.lower + 1, v.bounds.upper + 1), v.name) for v in m.dim_vars]
        tile_map = IndexingMap([*offsets, *sizes, *strides], tile_sizes, m.range_vars, m.rt_vars)
        tile_map = tile_map.remove_unused_symbols()
        return cls(tile_map, constraints.simplify())

    # ---- the three components ----------------------------------------------------------
    def _component(self, k: int, with_rt: bool) -> SymbolicMap:
        n = self.tile_map.num_results // 3
        num_symbols = self.tile_map.num_symbols - (0 if with_rt else self.tile_map.num_rt_vars)
        return SymbolicMap.get(self.tile_map.num_dims, num_symbols, self.tile_map.results[k * n:(k + 1) * n])

    @property
    def offset_map(self) -> SymbolicMap:
        """``offset_map``: tile sizes (and runtime variables as symbols) -> offsets."""
        return self._component(0, True)

    @property
    def size_map(self) -> SymbolicMap:
        """``size_map``: tile sizes -> sizes."""
        return self._component(1, False)

    @property
    def stride_map(self) -> SymbolicMap:
        """``stride_map``: tile sizes -> strides (exact while sizes stay within their bounds)."""
        return self._component(2, False)

    def to_string(self, separator: str = "\n") -> str:
        """XLA's ``ToString``: ``Symbolic tile with``, the maps, rt_vars and constraints."""
        parts = [
            "Symbolic tile with",
            "offset_map: " + symbolic_map_to_string(self.offset_map),
            "size_map: " + symbolic_map_to_string(self.size_map),
            "stride_map: " + symbolic_map_to_string(self.stride_map),
        ]
        if self.tile_map.rt_vars:
            rts = self.tile_map.rt_vars
            parts.append("rt_vars: " + "".join(f"s{i} in {v.bounds}, " for i, v in enumerate(rts)))
        if not self.constraints.is_always_satisfied():
            parts.append("constraints: " + self.constraints.to_string(self.tile_map.num_dims))
        return separator.join(parts)

    def __str__(self) -> str:
        return self.to_string()


def _evaluate(exprs: Sequence[Expr], values: Sequence[int]) -> list[int]:
    return [e.evaluate(values) for e in exprs]


def _checked(tile: SymbolicTile, parameters: Sequence[int]) -> Sequence[int]:
    if len(parameters) != tile.tile_map.num_dims:
        raise IndexingError(f"expected {tile.tile_map.num_dims} tile sizes, got {len(parameters)}")
    return parameters


def evaluate_tile_offsets(tile: SymbolicTile, parameters: Sequence[int]) -> list[int]:
    """``EvaluateTileOffsets``: the offsets at these tile sizes (tiles without runtime variables)."""
    return _evaluate(tile.offset_map.results, _checked(tile, parameters))


def evaluate_tile_sizes(tile: SymbolicTile, parameters: Sequence[int]) -> list[int]:
    """``EvaluateTileSizes``: the sizes at these tile sizes."""
    return _evaluate(tile.size_map.results, _checked(tile, parameters))


def evaluate_tile_strides(tile: SymbolicTile, parameters: Sequence[int]) -> list[int]:
    """``EvaluateTileStrides``: the strides, each tile size first clamped to its upper bound."""
    bounds = tile.tile_map.dim_vars
    clamped = [min(p, v.bounds.upper) for p, v in zip(_checked(tile, parameters), bounds, strict=True)]
    return _evaluate(tile.stride_map.results, clamped)
