"""XLA shapes and layouts: HLO shape text, tiled layouts, offsets and byte sizes.

>>> from tensorlayout.xla import parse_shape, linear_index
>>> linear_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3))
17
"""

from tensorlayout.xla import (
    index_util,
    layout_util,
    shape_dims,
    shape_index,
    shape_make,
    shape_query,
    shape_util,
    tpu,
)
from tensorlayout.xla.advice import layout_warnings
from tensorlayout.xla.layout import (
    COMBINE_DIMENSION,
    MEMORY_SPACE_NAMES,
    Layout,
    SplitConfig,
    Tile,
    memory_space_name,
    parse_layout,
    read_layout,
)
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape, parse_shape, read_shape
from tensorlayout.xla.shape_util import (
    is_reshape_or_transpose_bitcast,
    reshape_is_bitcast,
    transpose_is_bitcast,
)
from tensorlayout.xla.sizes import (
    array_data_size,
    array_size,
    byte_size,
    byte_size_of_elements,
    byte_strides,
    padding_overhead,
)
from tensorlayout.xla.tiling import (
    TilingPlan,
    TilingStep,
    allocated_elements,
    layout_util_linear_index,
    linear_index,
    linear_indices,
    multi_index,
    tiled_shape,
    tiling_plan,
)
from tensorlayout.xla.types import ELEMENT_TYPES, PrimitiveType, element_type, parse_element_type
from tensorlayout.xla.validate import problems, validate_layout

__all__ = [
    "COMBINE_DIMENSION",
    "ELEMENT_TYPES",
    "MEMORY_SPACE_NAMES",
    "UNBOUNDED_SIZE",
    "Layout",
    "PrimitiveType",
    "Shape",
    "SplitConfig",
    "Tile",
    "TilingPlan",
    "TilingStep",
    "allocated_elements",
    "array_data_size",
    "array_size",
    "byte_size",
    "byte_size_of_elements",
    "byte_strides",
    "element_type",
    "index_util",
    "is_reshape_or_transpose_bitcast",
    "layout_util",
    "layout_util_linear_index",
    "layout_warnings",
    "linear_index",
    "linear_indices",
    "memory_space_name",
    "multi_index",
    "padding_overhead",
    "parse_element_type",
    "parse_layout",
    "parse_shape",
    "problems",
    "read_layout",
    "read_shape",
    "reshape_is_bitcast",
    "shape_dims",
    "shape_index",
    "shape_make",
    "shape_query",
    "shape_util",
    "tiled_shape",
    "tiling_plan",
    "tpu",
    "transpose_is_bitcast",
    "validate_layout",
]
