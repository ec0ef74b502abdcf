"""`show TARGET --as xla|cute|map`: the same layout in another notation.

`--as cute` of an XLA shape is the CuTe layout over its padded domain, and of a TLA format
its shape:stride (the origin shape is the map's domain); `--as xla` of a CuTe or TLA layout
is an XLA shape placing every element at the same offset, or says why none exists; `--as
triton` is Triton's shared linear layout (offset -> element) of an XLA or CuTe layout that
has one (power-of-two, no padding, one element per offset).
"""

from __future__ import annotations

from tensorlayout import convert
from tensorlayout.cli._target import Target
from tensorlayout.cute import ComposedLayout, Layout, tla
from tensorlayout.errors import UnsupportedError
from tensorlayout.triton import LinearLayout
from tensorlayout.triton.bridge import shared_layout
from tensorlayout.xla import Shape

__all__ = ["NOTATIONS", "converted"]

NOTATIONS = ("xla", "cute", "map", "triton")


def converted(target: Target, notation: str) -> str:
    """The text of `target` in `notation` (one of `NOTATIONS`)."""
    src = target.layout
    if notation == "triton":
        return str(_triton(src)).strip("\n")
    if notation == "map":
        return str(convert.to_indexing_map(src))
    if notation == "cute":
        if isinstance(src, Shape):
            return str(convert.xla_to_cute(src))
        return str(src.layout if isinstance(src, tla.TlaLayout) else src)
    if target.tla_format is not None:
        return str(convert.tla_to_xla(*target.tla_format))
    if isinstance(src, Layout):
        return str(convert.cute_to_xla(src))
    return str(src)  # already XLA: its canonical print


def _triton(src: object) -> LinearLayout:
    """The Triton shared layout (offset -> element) of an XLA, CuTe (swizzled too) or TLA layout."""
    lay = src.layout if isinstance(src, tla.TlaLayout) else src
    if not isinstance(lay, (Shape, Layout, ComposedLayout)):
        raise UnsupportedError(f"{src} has no Triton shared layout")
    return shared_layout(lay)
