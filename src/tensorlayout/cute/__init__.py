"""tensorlayout.cute: CuTe's shape:stride layout algebra (C++ semantics) and CATLASS TLA formats.

>>> from tensorlayout.cute import Layout, composition, logical_divide
>>> A = Layout.parse("(6,8):(8,1)")
>>> str(logical_divide(A, (3, 4))), A(1, 2)
('((3,2),(4,2)):((8,24),(1,4))', 10)

As in C++, the mode accessors (``get``, ``take``, ``select``, ``group``, ``flatten``,
``unflatten``, ``append``, ``prepend``, ``zip_layouts``, ``slice``, ``dice``) and ``ceil_div``
take an IntTuple as well as a Layout:

>>> flatten(((1, 2), 3)), take((2, 3, 4), 1, -1), ceil_div((7, 9), 2)
((1, 2, 3), (3, 4), (4, 9))

CuTe's ``filter``, ``max``, ``min``, ``slice`` and ``sum`` are here under those names
(``cute.filter(layout)``, ``cute.max(shape)``), but not in ``__all__``: ``from tensorlayout.cute
import *`` leaves Python's builtins of those names alone (they are listed in ``BUILTIN_NAMES``).

>>> namespace: dict = {}
>>> exec("from tensorlayout.cute import *", namespace)
>>> [n for n in BUILTIN_NAMES if n in namespace], str(filter(Layout.parse("(2,3):(0,1)")))
([], '3:1')

An IntTuple, and so a layout, nests at most ``int_tuple.MAX_DEPTH`` (100) levels, the limit of
the text parser: ``Layout()`` and every IntTuple function refuse deeper values with a LayoutError.
"""

from tensorlayout.cute import int_tuple, int_tuple_ops, layout, layout_ops, tla
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
from tensorlayout.cute.basis import (
    ArithmeticTuple,
    CoordLayout,
    CountingTensor,
    E,
    ScaledBasis,
    make_basis_like,
    make_counting_tensor,
    make_identity_tensor,
)
from tensorlayout.cute.grid import format_grid, grid_values, print_layout
from tensorlayout.cute.int_tuple import (
    Int,
    IntTuple,
    _,
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
from tensorlayout.cute.int_tuple_ops import (
    colex_geq,
    colex_gtr,
    colex_leq,
    colex_less,
    elem_geq,
    elem_gtr,
    elem_leq,
    elem_scale,
    evenly_divides,
    gcd,
    lex_geq,
    lex_gtr,
    lex_leq,
    lex_less,
    make_int_tuple,
    product_each,
    product_like,
    round_up,
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
    slice_and_offset,
    take,
    unflatten,
    zip_layouts,
)
from tensorlayout.cute.layout_ops import (
    compact_major,
    compact_order,
    coprofile,
    coshape,
    domain_distribute,
    domain_offset,
    make_coord_iterator,
    make_fragment_like,
    make_identity_layout,
    max_alignment,
    replace,
    tile_unzip,
    transform_layout,
    with_shape,
)
from tensorlayout.cute.recast import downcast, recast_layout, upcast
from tensorlayout.cute.swizzle import ComposedLayout, SmemPtrFlag, Swizzle, make_swizzle, parse_layout
from tensorlayout.cute.tla import TlaLayout

# CuTe's names for these shadow Python's builtins: public as cute.<name>, kept out of __all__
filter = layout.filter
slice = layout.slice
max = int_tuple_ops.max
min = int_tuple_ops.min
sum = int_tuple_ops.sum

product = int_tuple._require(product)  # the public one checks its argument
ceil_div = int_tuple_ops.tuple_ceil_div  # C++'s: ints and IntTuples, rounding as (a + b - 1) / b

#: The public CuTe functions named like Python builtins, kept out of ``__all__`` (see above).
BUILTIN_NAMES = ("filter", "max", "min", "slice", "sum")

__all__ = [
    "BUILTIN_NAMES",
    "ArithmeticTuple",
    "ComposedLayout",
    "CoordLayout",
    "CountingTensor",
    "E",
    "Int",
    "IntTuple",
    "Layout",
    "ScaledBasis",
    "SmemPtrFlag",
    "Swizzle",
    "TlaLayout",
    "_",
    "append",
    "as_layout",
    "blocked_product",
    "ceil_div",
    "clear_caches",
    "coalesce",
    "colex_geq",
    "colex_gtr",
    "colex_leq",
    "colex_less",
    "compact_col_major",
    "compact_major",
    "compact_order",
    "compact_row_major",
    "compatible",
    "complement",
    "composition",
    "congruent",
    "coprofile",
    "coshape",
    "cosize",
    "crd2crd",
    "crd2idx",
    "depth",
    "dice",
    "domain_distribute",
    "domain_offset",
    "downcast",
    "elem_geq",
    "elem_gtr",
    "elem_leq",
    "elem_less",
    "elem_scale",
    "evenly_divides",
    "filter_zeros",
    "flat_divide",
    "flat_product",
    "flatten",
    "format_grid",
    "gcd",
    "get",
    "grid_values",
    "group",
    "group_modes",
    "idx2crd",
    "inner_product",
    "int_tuple_ops",
    "layout_ops",
    "left_inverse",
    "lex_geq",
    "lex_gtr",
    "lex_leq",
    "lex_less",
    "local_partition",
    "local_tile",
    "logical_divide",
    "logical_product",
    "make_basis_like",
    "make_coord_iterator",
    "make_counting_tensor",
    "make_fragment_like",
    "make_identity_layout",
    "make_identity_tensor",
    "make_int_tuple",
    "make_layout",
    "make_layout_like",
    "make_ordered_layout",
    "make_swizzle",
    "max_alignment",
    "max_common_layout",
    "max_common_vector",
    "nullspace",
    "parse_int_tuple",
    "parse_layout",
    "prefix_product",
    "prepend",
    "print_layout",
    "product",
    "product_each",
    "product_like",
    "raked_product",
    "rank",
    "recast_layout",
    "replace",
    "right_inverse",
    "round_up",
    "select",
    "shape_div",
    "shape_mod",
    "size",
    "slice_and_offset",
    "suffix_product",
    "take",
    "tile_to_shape",
    "tile_unzip",
    "tiled_divide",
    "tiled_product",
    "tla",
    "transform_layout",
    "unflatten",
    "upcast",
    "weakly_congruent",
    "with_shape",
    "zip_layouts",
    "zipped_divide",
    "zipped_product",
]
