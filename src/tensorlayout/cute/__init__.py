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

from importlib import import_module
from typing import TYPE_CHECKING, Any

from tensorlayout._lazy import lazy_names

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
    from tensorlayout.cute import int_tuple as int_tuple
    from tensorlayout.cute import int_tuple_ops, layout_ops, tla
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
    from tensorlayout.cute.coalescing import (
        coalesce,
        filter_zeros,
    )
    from tensorlayout.cute.coalescing import (
        filter as filter,
    )
    from tensorlayout.cute.coords import crd2crd, crd2idx, idx2crd
    from tensorlayout.cute.grid import format_grid, grid_values, print_layout
    from tensorlayout.cute.int_tuple import (
        Int,
        IntTuple,
        _,
        compatible,
        congruent,
        elem_less,
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
    from tensorlayout.cute.int_tuple_ops import (
        max as max,
    )
    from tensorlayout.cute.int_tuple_ops import (
        min as min,
    )
    from tensorlayout.cute.int_tuple_ops import (
        sum as sum,
    )
    from tensorlayout.cute.int_tuple_ops import tuple_ceil_div as ceil_div
    from tensorlayout.cute.layout import (
        Layout,
        as_layout,
        compact_col_major,
        compact_row_major,
        cosize,
        depth,
        get,
        make_layout,
        make_layout_like,
        make_ordered_layout,
        rank,
        size,
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
    from tensorlayout.cute.modes import (
        append,
        dice,
        flatten,
        group,
        group_modes,
        prepend,
        select,
        slice_and_offset,
        take,
        unflatten,
        zip_layouts,
    )
    from tensorlayout.cute.modes import (
        slice as slice,
    )
    from tensorlayout.cute.recast import downcast, recast_layout, upcast
    from tensorlayout.cute.swizzle import ComposedLayout, SmemPtrFlag, Swizzle, make_swizzle, parse_layout
    from tensorlayout.cute.tla import TlaLayout

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

#: name -> (module, attribute; None: the module itself): where each public name lives
_LAZY: dict[str, tuple[str, str | None]] = {
    "int_tuple": ("tensorlayout.cute.int_tuple", None),
    "int_tuple_ops": ("tensorlayout.cute.int_tuple_ops", None),
    "layout_ops": ("tensorlayout.cute.layout_ops", None),
    "tla": ("tensorlayout.cute.tla", None),
    "blocked_product": ("tensorlayout.cute.algebra", "blocked_product"),
    "clear_caches": ("tensorlayout.cute.algebra", "clear_caches"),
    "complement": ("tensorlayout.cute.algebra", "complement"),
    "composition": ("tensorlayout.cute.algebra", "composition"),
    "flat_divide": ("tensorlayout.cute.algebra", "flat_divide"),
    "flat_product": ("tensorlayout.cute.algebra", "flat_product"),
    "left_inverse": ("tensorlayout.cute.algebra", "left_inverse"),
    "local_partition": ("tensorlayout.cute.algebra", "local_partition"),
    "local_tile": ("tensorlayout.cute.algebra", "local_tile"),
    "logical_divide": ("tensorlayout.cute.algebra", "logical_divide"),
    "logical_product": ("tensorlayout.cute.algebra", "logical_product"),
    "max_common_layout": ("tensorlayout.cute.algebra", "max_common_layout"),
    "max_common_vector": ("tensorlayout.cute.algebra", "max_common_vector"),
    "nullspace": ("tensorlayout.cute.algebra", "nullspace"),
    "raked_product": ("tensorlayout.cute.algebra", "raked_product"),
    "right_inverse": ("tensorlayout.cute.algebra", "right_inverse"),
    "tile_to_shape": ("tensorlayout.cute.algebra", "tile_to_shape"),
    "tiled_divide": ("tensorlayout.cute.algebra", "tiled_divide"),
    "tiled_product": ("tensorlayout.cute.algebra", "tiled_product"),
    "zipped_divide": ("tensorlayout.cute.algebra", "zipped_divide"),
    "zipped_product": ("tensorlayout.cute.algebra", "zipped_product"),
    "ArithmeticTuple": ("tensorlayout.cute.basis", "ArithmeticTuple"),
    "CoordLayout": ("tensorlayout.cute.basis", "CoordLayout"),
    "CountingTensor": ("tensorlayout.cute.basis", "CountingTensor"),
    "E": ("tensorlayout.cute.basis", "E"),
    "ScaledBasis": ("tensorlayout.cute.basis", "ScaledBasis"),
    "make_basis_like": ("tensorlayout.cute.basis", "make_basis_like"),
    "make_counting_tensor": ("tensorlayout.cute.basis", "make_counting_tensor"),
    "make_identity_tensor": ("tensorlayout.cute.basis", "make_identity_tensor"),
    "format_grid": ("tensorlayout.cute.grid", "format_grid"),
    "grid_values": ("tensorlayout.cute.grid", "grid_values"),
    "print_layout": ("tensorlayout.cute.grid", "print_layout"),
    "Int": ("tensorlayout.cute.int_tuple", "Int"),
    "IntTuple": ("tensorlayout.cute.int_tuple", "IntTuple"),
    "_": ("tensorlayout.cute.int_tuple", "_"),
    "compatible": ("tensorlayout.cute.int_tuple", "compatible"),
    "congruent": ("tensorlayout.cute.int_tuple", "congruent"),
    "crd2crd": ("tensorlayout.cute.coords", "crd2crd"),
    "crd2idx": ("tensorlayout.cute.coords", "crd2idx"),
    "elem_less": ("tensorlayout.cute.int_tuple", "elem_less"),
    "idx2crd": ("tensorlayout.cute.coords", "idx2crd"),
    "inner_product": ("tensorlayout.cute.int_tuple", "inner_product"),
    "parse_int_tuple": ("tensorlayout.cute.int_tuple", "parse_int_tuple"),
    "prefix_product": ("tensorlayout.cute.int_tuple", "prefix_product"),
    "product": ("tensorlayout.cute.int_tuple", "product"),  # checked by __getattr__, below
    # C++'s: ints and IntTuples, rounding as (a + b - 1) / b
    "ceil_div": ("tensorlayout.cute.int_tuple_ops", "tuple_ceil_div"),
    "shape_div": ("tensorlayout.cute.int_tuple", "shape_div"),
    "shape_mod": ("tensorlayout.cute.int_tuple", "shape_mod"),
    "suffix_product": ("tensorlayout.cute.int_tuple", "suffix_product"),
    "weakly_congruent": ("tensorlayout.cute.int_tuple", "weakly_congruent"),
    "colex_geq": ("tensorlayout.cute.int_tuple_ops", "colex_geq"),
    "colex_gtr": ("tensorlayout.cute.int_tuple_ops", "colex_gtr"),
    "colex_leq": ("tensorlayout.cute.int_tuple_ops", "colex_leq"),
    "colex_less": ("tensorlayout.cute.int_tuple_ops", "colex_less"),
    "elem_geq": ("tensorlayout.cute.int_tuple_ops", "elem_geq"),
    "elem_gtr": ("tensorlayout.cute.int_tuple_ops", "elem_gtr"),
    "elem_leq": ("tensorlayout.cute.int_tuple_ops", "elem_leq"),
    "elem_scale": ("tensorlayout.cute.int_tuple_ops", "elem_scale"),
    "evenly_divides": ("tensorlayout.cute.int_tuple_ops", "evenly_divides"),
    "gcd": ("tensorlayout.cute.int_tuple_ops", "gcd"),
    "lex_geq": ("tensorlayout.cute.int_tuple_ops", "lex_geq"),
    "lex_gtr": ("tensorlayout.cute.int_tuple_ops", "lex_gtr"),
    "lex_leq": ("tensorlayout.cute.int_tuple_ops", "lex_leq"),
    "lex_less": ("tensorlayout.cute.int_tuple_ops", "lex_less"),
    "make_int_tuple": ("tensorlayout.cute.int_tuple_ops", "make_int_tuple"),
    "max": ("tensorlayout.cute.int_tuple_ops", "max"),
    "min": ("tensorlayout.cute.int_tuple_ops", "min"),
    "product_each": ("tensorlayout.cute.int_tuple_ops", "product_each"),
    "product_like": ("tensorlayout.cute.int_tuple_ops", "product_like"),
    "round_up": ("tensorlayout.cute.int_tuple_ops", "round_up"),
    "sum": ("tensorlayout.cute.int_tuple_ops", "sum"),
    "Layout": ("tensorlayout.cute.layout", "Layout"),
    "append": ("tensorlayout.cute.modes", "append"),
    "as_layout": ("tensorlayout.cute.layout", "as_layout"),
    "coalesce": ("tensorlayout.cute.coalescing", "coalesce"),
    "compact_col_major": ("tensorlayout.cute.layout", "compact_col_major"),
    "compact_row_major": ("tensorlayout.cute.layout", "compact_row_major"),
    "cosize": ("tensorlayout.cute.layout", "cosize"),
    "depth": ("tensorlayout.cute.layout", "depth"),
    "dice": ("tensorlayout.cute.modes", "dice"),
    "filter": ("tensorlayout.cute.coalescing", "filter"),
    "filter_zeros": ("tensorlayout.cute.coalescing", "filter_zeros"),
    "flatten": ("tensorlayout.cute.modes", "flatten"),
    "get": ("tensorlayout.cute.layout", "get"),
    "group": ("tensorlayout.cute.modes", "group"),
    "group_modes": ("tensorlayout.cute.modes", "group_modes"),
    "make_layout": ("tensorlayout.cute.layout", "make_layout"),
    "make_layout_like": ("tensorlayout.cute.layout", "make_layout_like"),
    "make_ordered_layout": ("tensorlayout.cute.layout", "make_ordered_layout"),
    "prepend": ("tensorlayout.cute.modes", "prepend"),
    "rank": ("tensorlayout.cute.layout", "rank"),
    "select": ("tensorlayout.cute.modes", "select"),
    "size": ("tensorlayout.cute.layout", "size"),
    "slice": ("tensorlayout.cute.modes", "slice"),
    "slice_and_offset": ("tensorlayout.cute.modes", "slice_and_offset"),
    "take": ("tensorlayout.cute.modes", "take"),
    "unflatten": ("tensorlayout.cute.modes", "unflatten"),
    "zip_layouts": ("tensorlayout.cute.modes", "zip_layouts"),
    "compact_major": ("tensorlayout.cute.layout_ops", "compact_major"),
    "compact_order": ("tensorlayout.cute.layout_ops", "compact_order"),
    "coprofile": ("tensorlayout.cute.layout_ops", "coprofile"),
    "coshape": ("tensorlayout.cute.layout_ops", "coshape"),
    "domain_distribute": ("tensorlayout.cute.layout_ops", "domain_distribute"),
    "domain_offset": ("tensorlayout.cute.layout_ops", "domain_offset"),
    "make_coord_iterator": ("tensorlayout.cute.layout_ops", "make_coord_iterator"),
    "make_fragment_like": ("tensorlayout.cute.layout_ops", "make_fragment_like"),
    "make_identity_layout": ("tensorlayout.cute.layout_ops", "make_identity_layout"),
    "max_alignment": ("tensorlayout.cute.layout_ops", "max_alignment"),
    "replace": ("tensorlayout.cute.layout_ops", "replace"),
    "tile_unzip": ("tensorlayout.cute.layout_ops", "tile_unzip"),
    "transform_layout": ("tensorlayout.cute.layout_ops", "transform_layout"),
    "with_shape": ("tensorlayout.cute.layout_ops", "with_shape"),
    "downcast": ("tensorlayout.cute.recast", "downcast"),
    "recast_layout": ("tensorlayout.cute.recast", "recast_layout"),
    "upcast": ("tensorlayout.cute.recast", "upcast"),
    "ComposedLayout": ("tensorlayout.cute.swizzle", "ComposedLayout"),
    "SmemPtrFlag": ("tensorlayout.cute.swizzle", "SmemPtrFlag"),
    "Swizzle": ("tensorlayout.cute.swizzle", "Swizzle"),
    "make_swizzle": ("tensorlayout.cute.swizzle", "make_swizzle"),
    "parse_layout": ("tensorlayout.cute.swizzle", "parse_layout"),
    "TlaLayout": ("tensorlayout.cute.tla", "TlaLayout"),
}

_load, __dir__ = lazy_names(__name__, _LAZY, [*__all__, *BUILTIN_NAMES])


def __getattr__(name: str) -> Any:
    """``name`` from its module on first use; the public ``product`` checks its argument."""
    value = _load(name)
    if name == "product":
        value = import_module("tensorlayout.cute.int_tuple")._require(value)
        globals()[name] = value
    return value
