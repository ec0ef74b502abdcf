"""CuTe's layout algebra with C++ semantics, in one namespace: composition (:mod:`.compose`),
complement and inverses (:mod:`.inverses`), divides and products (:mod:`.tiling`).

Where C++ rejects an input with a static assertion, we raise :class:`AlgebraError` naming the
condition and the modes involved (pycute asserts, the DSL may return a wrong layout).

>>> A = Layout.parse("(6,2):(8,2)")
>>> str(composition(A, Layout.parse("(4,3):(3,1)")))
'((2,2),3):((24,2),8)'
>>> str(complement(Layout.parse("4:2"), 24)), str(logical_divide(Layout.parse("(4,2,3):(2,1,8)"), "4:2"))
('(2,3):(1,8)', '((2,2),(2,3)):((4,1),(2,8))')
"""

from __future__ import annotations

from tensorlayout.cute.compose import Tiler, clear_caches, composition
from tensorlayout.cute.inverses import (
    complement,
    left_inverse,
    max_common_layout,
    max_common_vector,
    nullspace,
    right_inverse,
)
from tensorlayout.cute.layout import Layout
from tensorlayout.cute.tiling import (
    blocked_product,
    flat_divide,
    flat_product,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    raked_product,
    tile_to_shape,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)

__all__ = [
    "Layout", "Tiler", "blocked_product", "clear_caches", "complement", "composition", "flat_divide",
    "flat_product", "left_inverse", "local_partition", "local_tile", "logical_divide", "logical_product",
    "max_common_layout", "max_common_vector", "nullspace", "raked_product", "right_inverse",
    "tile_to_shape", "tiled_divide", "tiled_product", "zipped_divide", "zipped_product",
]
