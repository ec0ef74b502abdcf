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
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import UnsupportedError
from tensorlayout.triton import LinearLayout, from_cute, from_xla
from tensorlayout.triton.bridge import shared_from_offsets
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
    """The Triton shared layout (offset -> element) of an XLA or CuTe layout."""
    if isinstance(src, Shape):
        return from_xla(src)
    lay = src.layout if isinstance(src, tla.TlaLayout) else src
    if not isinstance(lay, Layout):
        raise UnsupportedError(f"{src} has no Triton linear layout (a swizzle composed with a layout "
                               "is not read here)")
    rank = len(lay.shape) if isinstance(lay.shape, tuple) else 1
    dims = [f"dim{k}" for k in range(rank)]
    if lay.cosize() != lay.size():
        raise UnsupportedError(f"{lay} has no Triton shared layout: its {lay.cosize()} offsets do not "
                               f"hold its {lay.size()} elements one each")
    try:
        return shared_from_offsets(from_cute(lay, dims, [("offset", max(lay.cosize(), 1))]))
    except UnsupportedError as err:
        raise UnsupportedError(f"{lay} has no Triton shared layout: {err}") from None
