"""Layout validation (``LayoutUtil::ValidateLayoutForShape``) with readable reasons.

>>> from tensorlayout.xla.shape import parse_shape
>>> problems(parse_shape("f32[2,3]{0,0}"))
['layout minor_to_major field has duplicate values: {0,0}']
>>> validate_layout(parse_shape("f32[2,3]{0,1:T(8,128)}"))
"""

from __future__ import annotations

from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import COMBINE_DIMENSION
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape

__all__ = ["problems", "validate_layout"]

_INT64_MAX = 2**63 - 1


def problems(shape: Shape, *, allow_missing_layouts: bool = False) -> list[str]:
    """Every rule of spec §6 the shape's layouts break, as sentences (empty if valid)."""
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA Shape, but got {type(shape).__name__}")
    out: list[str] = []
    if shape.is_tuple or shape.is_buffer:
        for sub in shape.tuple_shapes:
            out += problems(sub, allow_missing_layouts=allow_missing_layouts)
        return out
    if not shape.is_array:
        return out
    for i, d in enumerate(shape.dimensions):
        if d < 0 and not (d == UNBOUNDED_SIZE and shape.dynamic_dimensions[i]):
            out.append(f"Negative dimension at index {i}")
    size = shape.element_type.byte_width
    for d in shape.dimensions:
        size *= max(d, 1)
        if size > _INT64_MAX:
            out.append(f"Shape {shape.to_string()} size may overflow int64_t")
            break
    layout = shape.layout
    if layout is None:
        if not allow_missing_layouts:
            out.append(f"shape {shape.to_string()} does not have a layout")
        return out
    rank = shape.rank
    m2m = layout.minor_to_major
    if len(m2m) != rank:
        out.append(f"layout minor_to_major field contains {len(m2m)} elements, "
                   f"but shape has {rank} dimensions")
        return out
    text = "{" + ",".join(map(str, m2m)) + "}"
    if any(not 0 <= d < rank for d in m2m):
        out.append(f"layout minor_to_major field has out-of-bounds value: {text}")
    elif len(set(m2m)) != rank:
        out.append(f"layout minor_to_major field has duplicate values: {text}")
    if layout.tail_padding_alignment_in_elements < 1:
        out.append("layout tail_padding_alignment_in_elements must be >= 1")
    if layout.index_primitive_type is not None or layout.pointer_primitive_type is not None:
        out.append("layout has an index or pointer primitive type, but is not a sparse array")
    if layout.physical_shape is not None:
        out.append("layout has a physical shape, but is not a sparse array")
    for t in layout.tiles:
        if not t.dims or any(d == 0 or (d < 0 and d != COMBINE_DIMENSION) for d in t.dims):
            out.append(f"layout has invalid tiles: {t} (tiles need sizes >= 1 or '*')")
            break
    e = layout.element_size_in_bits
    if e < 0:
        out.append(f"layout element_size_in_bits must be >= 0, but got {e}")
    elif e and e < shape.element_type.bit_width:
        out.append(f"E({e}) is narrower than {shape.element_type.name}'s "
                   f"{shape.element_type.bit_width} bits")
    return out


def validate_layout(shape: Shape, *, allow_missing_layouts: bool = False) -> None:
    """Raise :class:`LayoutError` with the first problem, if any."""
    found = problems(shape, allow_missing_layouts=allow_missing_layouts)
    if found:
        raise LayoutError(found[0])
