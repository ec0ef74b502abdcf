"""Legal layouts that are probably mistakes: checks XLA does not make but a user may want.

>>> from tensorlayout.xla.shape import parse_shape
>>> layout_warnings(parse_shape("s8[]{:E(4)}"))
["E(4) is narrower than s8's 8 bits"]
"""

from __future__ import annotations

from collections.abc import Callable

from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.xla.lowering import lower_shape
from tensorlayout.xla.shape import Shape
from tensorlayout.xla.sizes import array_size

__all__ = ["layout_warnings"]

#: Up to this many elements the sub-tile check finds the largest offset exactly (else it
#: compares the tiled buffer's slots, an upper bound).
EXACT_ELEMENTS = 1 << 16


def layout_warnings(shape: Shape) -> list[str]:
    """What XLA accepts but is probably a mistake, one sentence each (the rules in ``RULES``):
    ``E(n)`` below the type's width; sub-tiles whose padding puts offsets past the bytes
    XLA's ``ShapeUtil::ArraySize`` allocates (it assumes sub-tiles add no padding).

    >>> from tensorlayout.xla.shape import parse_shape
    >>> layout_warnings(parse_shape("f32[4]{0:T(4)(2,2,2)}"))  # doctest: +NORMALIZE_WHITESPACE
    ["sub-tiles pad: offsets reach 9, past the 4 elements (16 bytes) XLA's ArraySize
    allocates, which assumes sub-tiles add no padding"]
    """
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA Shape, but got {type(shape).__name__}")
    if shape.is_tuple or shape.is_buffer:
        return [w for sub in shape.tuple_shapes for w in layout_warnings(sub)]
    if not shape.is_array or shape.layout is None:
        return []
    return [w for rule in RULES if (w := rule(shape)) is not None]


def narrow_element_size(shape: Shape) -> str | None:
    """``E(n)`` narrower than the element type (XLA packs nothing into fewer bits)."""
    assert shape.layout is not None
    e, et = shape.layout.element_size_in_bits, shape.element_type
    if 0 < e < et.bit_width:
        return f"E({e}) is narrower than {et.name}'s {et.bit_width} bits"
    return None


def subtile_padding(shape: Shape) -> str | None:
    """Offsets past ``ArraySize``: XLA sizes a tiled array by its first tile only, so sub-tiles
    that pad (``T(4)(2,2,2)`` on 4 elements) put elements where XLA allocates nothing."""
    assert shape.layout is not None
    if len(shape.layout.tiles) < 2:
        return None
    try:
        lay = lower_shape(shape)
        allotted = array_size(shape)
    except TensorLayoutError:
        return None  # refused elsewhere (problems(), the size functions) with its reason
    bits = shape.layout.element_size_in_bits or shape.element_type.bit_width
    elements = allotted * 8 // bits if bits else lay.size
    if lay.size <= elements:
        return None
    where = f"the {elements} elements ({allotted} bytes) XLA's ArraySize allocates, which assumes " \
            "sub-tiles add no padding"
    if lay.elements > EXACT_ELEMENTS:
        return f"sub-tiles pad the buffer to {lay.size} element slots, past {where}"
    top = int(lay.offsets().max()) if lay.elements else -1
    return f"sub-tiles pad: offsets reach {top}, past {where}" if top >= elements else None


#: The warnings, in the order they are reported.
RULES: tuple[Callable[[Shape], str | None], ...] = (narrow_element_size, subtile_padding)
