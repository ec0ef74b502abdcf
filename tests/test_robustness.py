"""No input crashes the public API with a non-library exception (hypothesis over junk values)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlayout import convert, cute, relayout, render
from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.indexing import IndexingMap, parse_expr
from tensorlayout.xla import (
    array_size,
    byte_size,
    linear_index,
    linear_indices,
    multi_index,
    parse_layout,
    parse_shape,
    tpu,
    validate_layout,
)

JUNK = st.sampled_from([
    None, 0, -1, 3, 2**70, "x", "", "(4,2):(1,", "f32[3,5]{1,0:T(2,2)}", "(4,2):(1,4)", (1, 2),
    ((1,),), [1, 2], 1.5, True, np.arange(3), np.int64(4), (None,), ("a", 1), b"f32[2]",
    cute.Layout.parse("(4,2):(1,4)"), parse_shape("f32[3,5]{1,0:T(2,2)}"),
    parse_shape("(f32[2], s4[8]{0:E(4)})"), cute.tla.make_format("zN", 8, 12),
])

API: dict[str, tuple[Callable[..., Any], int]] = {
    "cute.composition": (cute.composition, 2), "cute.complement": (cute.complement, 2),
    "cute.logical_divide": (cute.logical_divide, 2), "cute.zipped_divide": (cute.zipped_divide, 2),
    "cute.logical_product": (cute.logical_product, 2), "cute.blocked_product": (cute.blocked_product, 2),
    "cute.raked_product": (cute.raked_product, 2), "cute.right_inverse": (cute.right_inverse, 1),
    "cute.left_inverse": (cute.left_inverse, 1), "cute.coalesce": (cute.coalesce, 1),
    "cute.filter": (cute.filter, 1), "cute.crd2idx": (cute.crd2idx, 2), "cute.idx2crd": (cute.idx2crd, 2),
    "cute.shape_div": (cute.shape_div, 2), "cute.make_layout": (cute.make_layout, 2),
    "cute.Layout": (cute.Layout, 2), "cute.Layout.parse": (cute.Layout.parse, 1),
    "cute.upcast": (cute.upcast, 2), "cute.tile_to_shape": (cute.tile_to_shape, 2),
    "cute.size": (cute.size, 1), "cute.cosize": (cute.cosize, 1), "cute.product": (cute.product, 1),
    "cute.format_grid": (cute.format_grid, 1), "tla.make_format": (cute.tla.make_format, 3),
    "tla.crd2offset": (cute.tla.crd2offset, 2), "tla.get_tile_layout": (cute.tla.get_tile_layout, 3),
    "xla.parse_shape": (parse_shape, 1), "xla.parse_layout": (parse_layout, 1),
    "xla.validate_layout": (validate_layout, 1), "xla.linear_index": (linear_index, 2),
    "xla.multi_index": (multi_index, 2), "xla.linear_indices": (linear_indices, 1),
    "xla.byte_size": (byte_size, 1), "xla.array_size": (array_size, 1),
    "xla.tpu.default_layout": (tpu.default_layout, 2), "convert.xla_to_cute": (convert.xla_to_cute, 1),
    "convert.cute_to_xla": (convert.cute_to_xla, 1), "convert.to_indexing_map": (convert.to_indexing_map, 1),
    "relayout.to_physical": (relayout.to_physical, 2), "relayout.from_physical": (relayout.from_physical, 2),
    "render.to_svg": (render.to_svg, 1), "indexing.IndexingMap.parse": (IndexingMap.parse, 1),
    "indexing.parse_expr": (parse_expr, 1), "hlo.parse_module": (parse_module, 1),
}


@pytest.mark.parametrize("name", sorted(API))
@given(data=st.data())
def test_junk_raises_only_library_errors(name: str, data: st.DataObject) -> None:
    fn, arity = API[name]
    args = [data.draw(JUNK) for _ in range(arity)]
    with contextlib.suppress(TensorLayoutError):
        fn(*args)
