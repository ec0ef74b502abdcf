"""CuTe and TLA layouts as relayout targets (the strided fast path, via per-dim digits).

>>> from tensorlayout.cute import tla
>>> t = from_cute(tla.make_format("zN", 20, 40, "f16"))
>>> t.logical_shape, t.physical_elements, t.tile_elements
((20, 40), 1536, 256)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorlayout.cute import Layout
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.relayout._target import PhysicalTarget

__all__ = ["from_cute"]


def from_cute(x: Layout | TlaLayout | str, *, element_bits: int = 0, name: str = "") -> PhysicalTarget:
    """A :class:`PhysicalTarget` for a CuTe layout (domain: its mode sizes) or a TLA layout
    (domain: its origin shape; the rest of each mode is padding)."""
    if isinstance(x, str):
        x = Layout.parse(x)
    if isinstance(x, TlaLayout):
        layout, logical = x.layout, tuple(x.origin_shape)
    elif isinstance(x, Layout):
        layout = x
        logical = tuple(m.size() for m in layout.modes())
    else:
        raise LayoutError(f"expected a CuTe or TLA layout, got {type(x).__name__}")
    digits = []
    tile = 1
    for mode in layout.modes():
        flat = [(s, d) for s, d in mode.flat_modes() if s != 1] or [(1, 0)]
        if any(d < 0 for _, d in flat):
            raise UnsupportedError(f"{layout} has a negative stride; a buffer target needs strides >= 0")
        if len(flat) > 1:
            tile *= flat[0][0]
        digits.append(list(reversed(flat)))
    if not _nested_strides(layout):  # cheap proof of injectivity failed: check by enumeration
        offsets = layout.offsets()
        if layout.size() and len(np.unique(offsets)) != offsets.size:
            raise UnsupportedError(f"{layout} maps two coordinates to one offset, so data cannot be "
                                   "stored under it")
    return PhysicalTarget.from_digits(logical, digits, physical_elements=layout.cosize(),
                                      element_bits=element_bits,
                                      tile_elements=tile if tile > 1 else None,
                                      name=name or str(x))


def _nested_strides(layout: Layout) -> bool:
    """Sorted by stride, each mode starts past the span of the smaller ones (so it is injective)."""
    span = 0
    modes = sorted(((d, s) for s, d in layout.flat_modes() if s > 1))
    for d, s in modes:
        if d <= span:
            return False
        span = d * (s - 1) + span
    return True


def to_target_or_none(obj: Any) -> PhysicalTarget | None:
    """The CuTe/TLA target for ``obj`` if it is one, else None."""
    if isinstance(obj, (Layout, TlaLayout)):
        return from_cute(obj)
    return None
