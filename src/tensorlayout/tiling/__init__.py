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
from tensorlayout.tiling.symbolic_tile_analysis import (
    FusionDecision,
    SymbolicTileAnalysis,
    get_flat_tilings_for_input_space,
)
from tensorlayout.tiling.symbolic_tiled_hlo import SymbolicTiledHloInstruction
from tensorlayout.tiling.tiled_hlo import TiledHloComputation, TiledHloInstruction
from tensorlayout.tiling.tiled_hlo_schedule import (
    DimensionInfo,
    MajorToMinorTiledHloSchedule,
    TiledHloSchedule,
    TransposedDotTiledHloSchedule,
    create_major_to_minor_tiled_hlo_schedule,
)
from tensorlayout.tiling.tiling_specification import FlatTiling, Tiling, TilingSpecification
from tensorlayout.tiling.tiling_util import is_same_shape_multi_output_fusion

__all__ = [
    "Constraint",
    "ConstraintExpression",
    "DimensionInfo",
    "FlatTiling",
    "FusionDecision",
    "MajorToMinorTiledHloSchedule",
    "SizeAndStrideExpression",
    "SymbolicTile",
    "SymbolicTileAnalysis",
    "SymbolicTiledHloInstruction",
    "TiledHloComputation",
    "TiledHloInstruction",
    "TiledHloSchedule",
    "Tiling",
    "TilingSpecification",
    "TransposedDotTiledHloSchedule",
    "create_major_to_minor_tiled_hlo_schedule",
    "evaluate_affine_map",
    "evaluate_tile_offsets",
    "evaluate_tile_sizes",
    "evaluate_tile_strides",
    "extract_size_and_stride",
    "get_flat_tilings_for_input_space",
    "is_same_shape_multi_output_fusion",
]
