"""XLA shapes and layouts: HLO shape text, tiled layouts, offsets and byte sizes.

>>> from tensorlayout.xla import parse_shape, linear_index
>>> linear_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3))
17
"""

from typing import TYPE_CHECKING

from tensorlayout._lazy import lazy_names

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
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
    from tensorlayout.xla.index_math import linear_index, multi_index
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
    from tensorlayout.xla.tiling import allocated_elements, linear_indices, tiled_shape
    from tensorlayout.xla.tiling_recipe import TilingPlan, TilingStep, layout_util_linear_index, tiling_plan
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

#: name -> (module, attribute; None: the module itself): where each public name lives
_LAZY: dict[str, tuple[str, str | None]] = {
    "index_util": ("tensorlayout.xla.index_util", None),
    "layout_util": ("tensorlayout.xla.layout_util", None),
    "shape_dims": ("tensorlayout.xla.shape_dims", None),
    "shape_index": ("tensorlayout.xla.shape_index", None),
    "shape_make": ("tensorlayout.xla.shape_make", None),
    "shape_query": ("tensorlayout.xla.shape_query", None),
    "shape_util": ("tensorlayout.xla.shape_util", None),
    "tpu": ("tensorlayout.xla.tpu", None),
    "COMBINE_DIMENSION": ("tensorlayout.xla.layout", "COMBINE_DIMENSION"),
    "MEMORY_SPACE_NAMES": ("tensorlayout.xla.layout", "MEMORY_SPACE_NAMES"),
    "Layout": ("tensorlayout.xla.layout", "Layout"),
    "SplitConfig": ("tensorlayout.xla.layout", "SplitConfig"),
    "Tile": ("tensorlayout.xla.layout", "Tile"),
    "memory_space_name": ("tensorlayout.xla.layout", "memory_space_name"),
    "parse_layout": ("tensorlayout.xla.layout", "parse_layout"),
    "read_layout": ("tensorlayout.xla.layout", "read_layout"),
    "UNBOUNDED_SIZE": ("tensorlayout.xla.shape", "UNBOUNDED_SIZE"),
    "Shape": ("tensorlayout.xla.shape", "Shape"),
    "parse_shape": ("tensorlayout.xla.shape", "parse_shape"),
    "read_shape": ("tensorlayout.xla.shape", "read_shape"),
    "is_reshape_or_transpose_bitcast": ("tensorlayout.xla.shape_util", "is_reshape_or_transpose_bitcast"),
    "reshape_is_bitcast": ("tensorlayout.xla.shape_util", "reshape_is_bitcast"),
    "transpose_is_bitcast": ("tensorlayout.xla.shape_util", "transpose_is_bitcast"),
    "array_data_size": ("tensorlayout.xla.sizes", "array_data_size"),
    "array_size": ("tensorlayout.xla.sizes", "array_size"),
    "byte_size": ("tensorlayout.xla.sizes", "byte_size"),
    "byte_size_of_elements": ("tensorlayout.xla.sizes", "byte_size_of_elements"),
    "byte_strides": ("tensorlayout.xla.strides", "byte_strides"),
    "padding_overhead": ("tensorlayout.xla.sizes", "padding_overhead"),
    "layout_warnings": ("tensorlayout.xla.advice", "layout_warnings"),
    "TilingPlan": ("tensorlayout.xla.tiling_recipe", "TilingPlan"),
    "TilingStep": ("tensorlayout.xla.tiling_recipe", "TilingStep"),
    "allocated_elements": ("tensorlayout.xla.tiling", "allocated_elements"),
    "layout_util_linear_index": ("tensorlayout.xla.tiling_recipe", "layout_util_linear_index"),
    "linear_index": ("tensorlayout.xla.index_math", "linear_index"),
    "linear_indices": ("tensorlayout.xla.tiling", "linear_indices"),
    "multi_index": ("tensorlayout.xla.index_math", "multi_index"),
    "tiled_shape": ("tensorlayout.xla.tiling", "tiled_shape"),
    "tiling_plan": ("tensorlayout.xla.tiling_recipe", "tiling_plan"),
    "ELEMENT_TYPES": ("tensorlayout.xla.types", "ELEMENT_TYPES"),
    "PrimitiveType": ("tensorlayout.xla.types", "PrimitiveType"),
    "element_type": ("tensorlayout.xla.types", "element_type"),
    "parse_element_type": ("tensorlayout.xla.types", "parse_element_type"),
    "problems": ("tensorlayout.xla.validate", "problems"),
    "validate_layout": ("tensorlayout.xla.validate", "validate_layout"),
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
