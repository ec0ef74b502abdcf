"""XLA's ``EvaluateAffineMap``: the results of a plain map at given dimension and symbol values.

>>> from tensorlayout.indexing import SymbolicMap
>>> sm = SymbolicMap.parse("(d0, d1)[s0, s1] -> (d0 + d1 ceildiv 8, s0 + s1 mod 16)")
>>> evaluate_affine_map(sm, [1, 2], [3, 4])
[2, 7]
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import IndexingError
from tensorlayout.indexing import SymbolicMap

__all__ = ["evaluate_affine_map"]


def evaluate_affine_map(symbolic_map: SymbolicMap, dim_values: Sequence[int],
                        symbol_values: Sequence[int] = ()) -> list[int]:
    """Every result at ``(dim_values)[symbol_values]`` (floor division, XLA's mod)."""
    if len(dim_values) != symbolic_map.num_dims or len(symbol_values) != symbolic_map.num_symbols:
        raise IndexingError(f"expected {symbolic_map.num_dims} dim and {symbolic_map.num_symbols} symbol "
                            f"values, got {len(dim_values)} and {len(symbol_values)}")
    point = [*dim_values, *symbol_values]
    return [r.evaluate(point) for r in symbolic_map.results]
