"""`show TARGET --as xla|cute|map`: the same layout in another notation.

`--as cute` of an XLA shape is the CuTe layout over its padded domain, and of a TLA format
its shape:stride (the origin shape is the map's domain); `--as xla` of a CuTe or TLA layout
is an XLA shape placing every element at the same offset, or says why none exists; `--as
triton` is Triton's shared linear layout (offset -> element) of an XLA or CuTe layout that
has one (power-of-two, no padding, one element per offset). What has no answer is refused
with the reason (an UnsupportedError): an XOR swizzle has no XLA layout and no indexing map,
and `--as cute-tv` is for Triton's distributed layouts only.

>>> from tensorlayout.cli._target import target_from
>>> converted(target_from("Sw<3,3,3> o _0 o (8,64):(64,1)"), "xla")  # doctest: +ELLIPSIS
Traceback (most recent call last):
tensorlayout.errors.UnsupportedError: Sw<3,3,3> o _0 o (8,64):(64,1) has no XLA layout: its swizzle ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensorlayout import convert, cute, triton
from tensorlayout.cli._target import Target
from tensorlayout.errors import UnsupportedError
from tensorlayout.xla import Shape

if TYPE_CHECKING:  # Triton's modules load when `--as triton` asks for them
    from tensorlayout.triton import LinearLayout

__all__ = ["NOTATIONS", "converted"]

NOTATIONS = ("xla", "cute", "map", "triton", "cute-tv")
#: notations that cannot say where the elements of a swizzled layout live, and why
_NO_SWIZZLE = {
    "xla": "no XLA layout: its swizzle XORs offset bits, which no XLA tiling or dim order does",
    "map": "no indexing map: its swizzle XORs offset bits, and an indexing map has + * / mod, no XOR",
}


def converted(target: Target, notation: str) -> str:
    """The text of `target` in `notation` (one of `NOTATIONS`)."""
    src = target.layout
    if notation == "cute-tv":
        raise UnsupportedError(f"--as cute-tv is the (thread, value) form of a Triton distributed layout; "
                               f"{target.text} maps elements to offsets (--as cute gives its CuTe layout)")
    if isinstance(src, cute.ComposedLayout) and notation in _NO_SWIZZLE:
        raise UnsupportedError(f"{target.text} has {_NO_SWIZZLE[notation]}")
    if notation == "triton":
        return str(_triton(src)).strip("\n")
    if notation == "map":
        return str(convert.to_indexing_map(src))
    if notation == "cute":
        if isinstance(src, Shape):
            return str(convert.xla_to_cute(src))
        return str(src.layout if isinstance(src, cute.TlaLayout) else src)
    if target.tla_format is not None:
        return str(convert.tla_to_xla(*target.tla_format))
    if isinstance(src, cute.Layout):
        return str(convert.cute_to_xla(src))
    if isinstance(src, Shape):
        return str(src)  # already XLA: its canonical print
    raise UnsupportedError(f"{target.text} ({type(src).__name__}) has no XLA layout")


def _triton(src: object) -> LinearLayout:
    """The Triton shared layout (offset -> element) of an XLA, CuTe (swizzled too) or TLA layout."""
    lay = src.layout if isinstance(src, cute.TlaLayout) else src
    if not isinstance(lay, (Shape, cute.Layout, cute.ComposedLayout)):
        raise UnsupportedError(f"{src} has no Triton shared layout")
    return triton.shared_layout(lay)
