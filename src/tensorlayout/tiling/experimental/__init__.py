"""XLA's experimental tiler (``xla/codegen/tiling/experimental``): tiling spaces, tiles, tile
propagation per opcode, tiled computations with regions, and the tile schedule, printed as XLA
prints them.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[16,8] parameter(0)\\n"
...                  " ROOT t = f32[8,16] transpose(p0), dimensions={1,0}\\n}")
>>> space = TilingSpace.create(m.entry.root).assign_tile_sizes([4, 8])
>>> print(TiledHloComputation.tile(m.entry.root, space).simplify().sort_instructions_post_order())
... # doctest: +NORMALIZE_WHITESPACE
Dimensions:
0 type: parallel size: 8 tile size: 4 dim ID:0 hlo: %t = f32[8,16]{1,0} transpose(%p0), dimensions={1,0}
1 type: parallel size: 16 tile size: 8 dim ID:1 hlo: %t = f32[8,16]{1,0} transpose(%p0), dimensions={1,0}
Root tiles:
0 root tile:  offsets [tid_0 * 4, tid_1 * 8] sizes [4, 8] strides [1, 1] upper bounds [8, 16]
<BLANKLINE>
Tiled HLO:
  p0.tile_0 = parameter(0)  offsets [tid_1 * 8, tid_0 * 4] sizes [8, 4] strides [1, 1] upper bounds [16, 8]
  t.tile_0 = transpose(p0.tile_0)  offsets [tid_0 * 4, tid_1 * 8] sizes [4, 8] strides [1, 1]
    upper bounds [8, 16]
<BLANKLINE>
"""

from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.reshape import MinimalReshape, get_minimal_reshapes
from tensorlayout.tiling.experimental.scheduling import Schedule, get_schedule
from tensorlayout.tiling.experimental.tile import DimTile, Tile, tiles_to_string
from tensorlayout.tiling.experimental.tile_propagation import (
    propagate_tile_to_input,
    propagate_tile_to_output,
)
from tensorlayout.tiling.experimental.tiled_hlo import (
    TiledHloComputation,
    TiledHloInstruction,
    TiledHloRegion,
)
from tensorlayout.tiling.experimental.tiling_space import DimensionInfo, RTVarInfo, TilingSpace
from tensorlayout.tiling.experimental.tiling_space_utils import get_flat_tilings_for_input_space

__all__ = [
    "DimTile",
    "DimensionInfo",
    "MinimalReshape",
    "RTVarInfo",
    "Schedule",
    "Tile",
    "TiledHloComputation",
    "TiledHloInstruction",
    "TiledHloRegion",
    "TilingSpace",
    "TilingStatusError",
    "get_flat_tilings_for_input_space",
    "get_minimal_reshapes",
    "get_schedule",
    "propagate_tile_to_input",
    "propagate_tile_to_output",
    "tiles_to_string",
]
