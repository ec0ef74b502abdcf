"""XLA's tiling analysis for its Triton-based GPU emitter: symbolic tiles, constraints, tiled HLO.

Names follow XLA's C++ (``SymbolicTile::FromIndexingMap`` -> ``SymbolicTile.from_indexing_map``).

>>> from tensorlayout.indexing import IndexingMap
>>> t = SymbolicTile.from_indexing_map(IndexingMap.parse(
...     "(d0, d1) -> (d0 * 6 + d1), domain: d0 in [0, 7], d1 in [0, 5]"))
>>> print(t.constraints.to_string(2))
d0 in [1, 1] || d1 in [1, 1] || d1 in [6, 6]
"""

from tensorlayout.tiling.affine_map_evaluator import evaluate_affine_map
from tensorlayout.tiling.constraint_expression import Constraint, ConstraintExpression
from tensorlayout.tiling.size_and_stride import SizeAndStrideExpression, extract_size_and_stride
from tensorlayout.tiling.symbolic_tile import (
    SymbolicTile,
    evaluate_tile_offsets,
    evaluate_tile_sizes,
    evaluate_tile_strides,
)

__all__ = [
    "Constraint",
    "ConstraintExpression",
    "SizeAndStrideExpression",
    "SymbolicTile",
    "evaluate_affine_map",
    "evaluate_tile_offsets",
    "evaluate_tile_sizes",
    "evaluate_tile_strides",
    "extract_size_and_stride",
]
