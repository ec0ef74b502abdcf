"""tensorlayout.cute: CuTe's shape:stride layout algebra (C++ semantics) and CATLASS TLA formats.

>>> from tensorlayout.cute import Layout, composition, logical_divide
>>> A = Layout.parse("(6,8):(8,1)")
>>> str(logical_divide(A, (3, 4))), A(1, 2)
('((3,2),(4,2)):((8,24),(1,4))', 10)
"""

from tensorlayout.cute import int_tuple, tla
from tensorlayout.cute.algebra import (
    blocked_product,
    clear_caches,
    complement,
    composition,
    flat_divide,
    flat_product,
    left_inverse,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    max_common_layout,
    max_common_vector,
    nullspace,
    raked_product,
    right_inverse,
    tile_to_shape,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from tensorlayout.cute.grid import format_grid, grid_values
from tensorlayout.cute.int_tuple import (
    Int,
    IntTuple,
    _,
    ceil_div,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    elem_less,
    idx2crd,
    inner_product,
    parse_int_tuple,
    prefix_product,
    product,
    shape_div,
    shape_mod,
    suffix_product,
    weakly_congruent,
)
from tensorlayout.cute.layout import (
    Layout,
    append,
    as_layout,
    coalesce,
    compact_col_major,
    compact_row_major,
    cosize,
    depth,
    dice,
    filter,
    filter_zeros,
    flatten,
    get,
    group,
    group_modes,
    make_layout,
    make_layout_like,
    make_ordered_layout,
    prepend,
    rank,
    select,
    size,
    slice,
    slice_and_offset,
    take,
    unflatten,
    zip_layouts,
)
from tensorlayout.cute.recast import downcast, recast_layout, upcast
from tensorlayout.cute.swizzle import ComposedLayout, Swizzle, make_swizzle
from tensorlayout.cute.tla import TlaLayout

print_layout = format_grid
product = int_tuple._require(product)  # the public one checks its argument

__all__ = [
    "ComposedLayout", "Int", "IntTuple", "Layout", "Swizzle", "TlaLayout", "_", "append", "as_layout",
    "blocked_product", "ceil_div", "clear_caches", "coalesce", "compact_col_major",
    "compact_row_major", "compatible",
    "complement", "composition", "congruent", "cosize", "crd2crd", "crd2idx", "depth", "dice",
    "downcast", "elem_less", "filter", "filter_zeros", "flat_divide", "flat_product", "flatten",
    "format_grid", "get", "grid_values", "group", "group_modes", "idx2crd", "inner_product",
    "left_inverse", "local_partition", "local_tile", "logical_divide", "logical_product",
    "make_layout", "make_layout_like", "make_ordered_layout", "make_swizzle", "max_common_layout",
    "max_common_vector", "nullspace", "parse_int_tuple", "prefix_product", "prepend", "print_layout",
    "product", "raked_product", "rank", "recast_layout", "right_inverse", "select", "shape_div",
    "shape_mod", "size", "slice", "slice_and_offset", "suffix_product", "take", "tile_to_shape",
    "tiled_divide", "tiled_product", "tla", "unflatten", "upcast", "weakly_congruent", "zip_layouts",
    "zipped_divide", "zipped_product",
]
