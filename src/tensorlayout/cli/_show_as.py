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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tensorlayout import convert, cute, triton
from tensorlayout.cli._target import AS_NOTATIONS, Target
from tensorlayout.errors import UnsupportedError
from tensorlayout.lowering import notation_of
from tensorlayout.xla import Shape

if TYPE_CHECKING:  # Triton's modules load when `--as triton` asks for them
    from tensorlayout.triton import LinearLayout

__all__ = ["NOTATIONS", "converted"]

#: the notations `show --as` prints a layout in (one table: `show` offers them without loading this module)
NOTATIONS = AS_NOTATIONS

#: notations that cannot say where the elements of a swizzled layout live, and why
_NO_SWIZZLE = {
    "xla": "no XLA layout: its swizzle XORs offset bits, which no XLA tiling or dim order does",
    "map": "no indexing map: its swizzle XORs offset bits, and an indexing map has + * / mod, no XOR",
}


def _xla_as_cute(target: Target) -> str:
    """An XLA shape's CuTe layout over its padded domain."""
    assert isinstance(target.layout, Shape)
    return str(convert.xla_to_cute(target.layout))


def _tla_as_cute(target: Target) -> str:
    """A TLA format's shape:stride (its origin shape is the map's domain)."""
    assert isinstance(target.layout, cute.TlaLayout)
    return str(target.layout.layout)


def _own_text(target: Target) -> str:
    """A layout already in the notation asked for: its canonical print."""
    return str(target.layout)


def _tla_as_xla(target: Target) -> str:
    assert target.tla_format is not None
    return str(convert.tla_to_xla(*target.tla_format))


def _cute_as_xla(target: Target) -> str:
    """A plain CuTe layout's XLA shape, where one places every element at the same offset."""
    if not isinstance(target.layout, cute.Layout):
        raise UnsupportedError(f"{target.text} ({type(target.layout).__name__}) has no XLA layout")
    return str(convert.cute_to_xla(target.layout))


#: Per (notation of the target, as :func:`tensorlayout.lowering.notation_of` names it;
#: notation asked for), its text there.
_CONVERSIONS: dict[tuple[str | None, str], Callable[[Target], str]] = {
    ("xla", "cute"): _xla_as_cute, ("tla", "cute"): _tla_as_cute, ("cute", "cute"): _own_text,
    ("xla", "xla"): _own_text, ("tla", "xla"): _tla_as_xla, ("cute", "xla"): _cute_as_xla,
}


#: How the messages name a notation asked for.
_NAMES = {"xla": "XLA", "cute": "CuTe"}


def converted(target: Target, notation: str) -> str:
    """The text of `target` in `notation` (one of :data:`NOTATIONS`)."""
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
    conversion = _CONVERSIONS.get((notation_of(src), notation))
    if conversion is None:
        name = _NAMES.get(notation, notation)
        raise UnsupportedError(f"{target.text} ({type(src).__name__}) has no {name} layout")
    return conversion(target)


def _triton(src: Any) -> LinearLayout:
    """The Triton shared layout (offset -> element) of an XLA, CuTe (swizzled too) or TLA layout
    (its shape:stride, the origin shape aside)."""
    return triton.shared_layout(src.layout if isinstance(src, cute.TlaLayout) else src)
