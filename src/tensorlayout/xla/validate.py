"""Layout validation (``LayoutUtil::ValidateLayoutForShape``) with readable reasons.

``problems`` and ``validate_layout`` apply exactly the rules XLA's validator applies;
``layout_warnings`` adds checks XLA does not make but a user may want (ask for them).

>>> from tensorlayout.xla.shape import parse_shape
>>> problems(parse_shape("f32[2,3]{0,0}"))
['layout minor_to_major field has duplicate values: {0,0}']
>>> validate_layout(parse_shape("f32[2,3]{0,1:T(8,128)}"))
>>> layout_warnings(parse_shape("s8[]{:E(4)}"))
["E(4) is narrower than s8's 8 bits"]
"""

from __future__ import annotations

from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import Shape, problems

__all__ = ["layout_warnings", "problems", "validate_layout"]


def validate_layout(shape: Shape, *, allow_missing_layouts: bool = False) -> None:
    """Raise :class:`LayoutError` with the first problem, if any."""
    found = problems(shape, allow_missing_layouts=allow_missing_layouts)
    if found:
        raise LayoutError(found[0])


def layout_warnings(shape: Shape) -> list[str]:
    """Legal layouts that are probably mistakes (XLA accepts them): ``E(n)`` below the type's width.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> layout_warnings(parse_shape("(f32[2]{0:E(3)}, s4[2]{0:E(4)})"))
    ["E(3) is narrower than f32's 32 bits"]
    """
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA Shape, but got {type(shape).__name__}")
    if shape.is_tuple or shape.is_buffer:
        return [w for sub in shape.tuple_shapes for w in layout_warnings(sub)]
    if not shape.is_array or shape.layout is None:
        return []
    e, et = shape.layout.element_size_in_bits, shape.element_type
    if 0 < e < et.bit_width:
        return [f"E({e}) is narrower than {et.name}'s {et.bit_width} bits"]
    return []
