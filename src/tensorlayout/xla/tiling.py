"""Tiled index math under XLA's names: where logical element (i, j, ...) of an XLA array lives.

The index math (``linear_index``, ``multi_index``, ``linear_indices``, ``tiled_shape``) reads
the shape's lowering into the layout core (:mod:`tensorlayout.xla.lowering`, where the tiling
walk is written once); the per-call ``linear_index``/``multi_index`` live in
:mod:`tensorlayout.xla.index_math`. :class:`TilingPlan` is XLA's documented recipe itself — pad,
reshape, transpose, once per tile — as numpy operations (:mod:`tensorlayout.xla.tiling_recipe`): an
independent statement of the same semantics that the tests and benchmarks check the core
against. Those names load from their modules on first use, so that reading a shape's offsets
(``tensorlayout show``) compiles none of them.

Seed Figure 1, ``f32[3,5]{1,0:T(2,2)}``: the 3x5 array pads to 4x6 and element (2,3) is
at offset 17:

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("f32[3,5]{1,0:T(2,2)}")
>>> linear_index(s, (2, 3)), tiled_shape(s)
(17, (2, 3, 2, 2))
>>> linear_indices(s).reshape(3, 5).tolist()
[[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tensorlayout._lazy import lazy_names
from tensorlayout.xla.lowering import allocated_elements, lower_shape, tiled_shape
from tensorlayout.xla.shape import Shape, takes_shape

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
    from tensorlayout.xla.index_math import linear_index, multi_index
    from tensorlayout.xla.tiling_recipe import TilingPlan, TilingStep, layout_util_linear_index, tiling_plan

__all__ = [
    "TilingPlan",
    "TilingStep",
    "allocated_elements",
    "layout_util_linear_index",
    "linear_index",
    "linear_indices",
    "multi_index",
    "tiled_shape",
    "tiling_plan",
]

#: name -> (module, attribute): the names that live in the modules only some uses need
_LAZY: dict[str, tuple[str, str | None]] = {
    "TilingPlan": ("tensorlayout.xla.tiling_recipe", "TilingPlan"),
    "TilingStep": ("tensorlayout.xla.tiling_recipe", "TilingStep"),
    "layout_util_linear_index": ("tensorlayout.xla.tiling_recipe", "layout_util_linear_index"),
    "tiling_plan": ("tensorlayout.xla.tiling_recipe", "tiling_plan"),
    "linear_index": ("tensorlayout.xla.index_math", "linear_index"),
    "multi_index": ("tensorlayout.xla.index_math", "multi_index"),
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)


@takes_shape
def linear_indices(shape: Shape) -> np.ndarray:
    """Offsets of every logical element, in logical (C) order, as an int64 array.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> linear_indices(parse_shape("f32[2,3]{0,1}")).tolist()
    [0, 2, 4, 1, 3, 5]
    """
    return lower_shape(shape).offsets()
