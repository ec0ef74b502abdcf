"""`show TARGET --as xla|cute|map`: the same layout in another notation.

`--as cute` of an XLA shape is the CuTe layout over its padded domain, and of a TLA format
its shape:stride (the origin shape is the map's domain); `--as xla` of a CuTe or TLA layout
is an XLA shape placing every element at the same offset, or says why none exists.
"""

from __future__ import annotations

from tensorlayout import convert
from tensorlayout.cli._target import Target
from tensorlayout.cute import Layout, tla
from tensorlayout.xla import Shape

__all__ = ["NOTATIONS", "converted"]

NOTATIONS = ("xla", "cute", "map")


def converted(target: Target, notation: str) -> str:
    """The text of `target` in `notation` (one of `NOTATIONS`)."""
    src = target.layout
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
