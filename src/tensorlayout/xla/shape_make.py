"""Shape constructors and validation with XLA's names (``ShapeUtil::Make*``, ``Validate*``).

>>> str(make_shape_with_dense_layout("f32", [2, 3], [0, 1]))
'f32[2,3]{0,1}'
>>> str(make_validated_shape("s8", [4, UNBOUNDED_SIZE]))
's8[4,?]{1,0}'
>>> str(make_maybe_tuple_shape([make_token_shape(), make_opaque_shape()]))
'(token[], opaque[])'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tensorlayout.core.intmath import INT64_MAX
from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import Layout, SplitConfig, Tile
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape
from tensorlayout.xla.shape_util import change_element_type
from tensorlayout.xla.types import ELEMENT_TYPES, PrimitiveType, element_type
from tensorlayout.xla.validate import validate_layout

__all__ = [
    "complex_component_shape",
    "make_maybe_tuple_shape",
    "make_nil",
    "make_opaque_shape",
    "make_scalar_shape",
    "make_shape_with_dense_layout",
    "make_shape_with_descending_layout",
    "make_shape_with_static_dimensions",
    "make_static_shape",
    "make_token_shape",
    "make_validated_shape",
    "validate_shape_with_optional_layout",
]


def make_opaque_shape() -> Shape:
    """``MakeOpaqueShape``: ``opaque[]``."""
    return Shape(ELEMENT_TYPES["opaque"])


def make_token_shape() -> Shape:
    """``MakeTokenShape``: ``token[]``."""
    return Shape(ELEMENT_TYPES["token"])


def make_nil() -> Shape:
    """``MakeNil``: the empty tuple ``()``."""
    return Shape.tuple_of()


def make_maybe_tuple_shape(shapes: Sequence[Shape]) -> Shape:
    """``MakeMaybeTupleShape``: a single shape as itself, otherwise the tuple of the shapes."""
    return shapes[0] if len(shapes) == 1 else Shape.tuple_of(*shapes)


def make_scalar_shape(t: str | PrimitiveType) -> Shape:
    """``MakeScalarShape``: a rank-0 array of type ``t`` (``f32[]``)."""
    return Shape.array(element_type(t), ())


def _valid_dimension_size(d: int, dynamic: bool) -> bool:
    """``Shape::IsValidDimensionSize``: non-negative, or ``?`` (INT64_MIN) when dynamic."""
    return d >= 0 or (dynamic and d == UNBOUNDED_SIZE)


def make_validated_shape(t: str | PrimitiveType, dimensions: Sequence[int],
                         dynamic_dimensions: Sequence[bool] | None = None) -> Shape:
    """``MakeValidatedShape``: an array with the default layout, or a LayoutError.

    Without ``dynamic_dimensions``, exactly the ``?`` sizes (``UNBOUNDED_SIZE``) are dynamic;
    the static sizes times the byte width must fit in int64.
    """
    et, dims = element_type(t), tuple(dimensions)
    dyn = (tuple(dynamic_dimensions) if dynamic_dimensions is not None
           else tuple(d == UNBOUNDED_SIZE for d in dims))
    if len(dyn) != len(dims):
        raise LayoutError(f"dynamic dimensions size {len(dyn)} did not match number of "
                          f"dimensions {len(dims)}")
    if not et.is_array:
        if dims:
            raise LayoutError(f"Invalid dimensions size {len(dims)} for non-array shape of "
                              f"type {et.name}")
        return Shape.tuple_of() if et.name == "tuple" else Shape(et)
    product = et.byte_width
    for d, is_dynamic in zip(dims, dyn):
        if not _valid_dimension_size(d, is_dynamic):
            raise LayoutError(f"Invalid dimension size {d}, is_dynamic={str(is_dynamic).lower()}")
        product *= 1 if d == UNBOUNDED_SIZE else d
    if product > INT64_MAX:
        raise LayoutError(f"overflow in static extent product: dimensions=[{', '.join(map(str, dims))}].")
    return Shape(et, dims, dyn, Layout(tuple(range(len(dims) - 1, -1, -1))))


def validate_shape_with_optional_layout(shape: Shape) -> None:
    """``ValidateShapeWithOptionalLayout``: XLA's shape and layout rules; no layout is fine."""
    validate_layout(shape, allow_missing_layouts=True)


def make_shape_with_dense_layout(t: str | PrimitiveType, dimensions: Sequence[int],
                                 minor_to_major: Sequence[int],
                                 tiles: Sequence[Sequence[int]] = (),
                                 tail_padding_alignment_in_elements: int = 1,
                                 element_size_in_bits: int = 0, memory_space: int = 0,
                                 split_configs: Sequence[SplitConfig] = ()) -> Shape:
    """``MakeShapeWithDenseLayout``: a validated array with the given layout.

    As in XLA, an element size equal to the type's byte width in bits is stored as 0 (unset).
    """
    et = element_type(t)
    if len(dimensions) != len(minor_to_major):
        raise LayoutError(f"Dimensions size is {len(dimensions)}, but layout size is "
                          f"{len(minor_to_major)}.")
    if not et.is_array:
        raise LayoutError(f"Unsupported element type: {et.name}")
    shape = make_validated_shape(et, dimensions)
    if element_size_in_bits == et.byte_width * 8:
        element_size_in_bits = 0
    layout = Layout(tuple(minor_to_major), tuple(Tile(tuple(x)) for x in tiles),
                    tail_padding_alignment_in_elements, element_size_in_bits=element_size_in_bits,
                    memory_space=memory_space, split_configs=tuple(split_configs))
    out = shape.with_layout(layout)
    validate_layout(out)
    return out


def make_shape_with_descending_layout(t: str | PrimitiveType, dimensions: Sequence[int]) -> Shape:
    """``MakeShapeWithDescendingLayout``: dim 0 most major (``{n-1,...,0}``)."""
    return make_shape_with_dense_layout(t, dimensions, range(len(dimensions) - 1, -1, -1))


def make_shape_with_static_dimensions(shape: Shape) -> Shape:
    """``MakeShapeWithStaticDimensions``: every dimension marked static (tuples recurse).

    The sizes are kept: a bounded ``<=n`` becomes ``n``; a dynamic array loses ``M(n)``, as
    ``Shape::clear_dynamic_dimensions`` does.
    """
    if shape.is_tuple:
        return replace(shape, tuple_shapes=tuple(make_shape_with_static_dimensions(s)
                                                 for s in shape.tuple_shapes))
    if shape.is_buffer:
        return replace(shape, tuple_shapes=(make_shape_with_static_dimensions(shape.buffer_shape),))
    layout = shape.layout
    if shape.is_dynamic and layout is not None:  # XLA's clear_dynamic_dimensions drops M too
        layout = layout.replace(dynamic_shape_metadata_prefix_bytes=0)
    return replace(shape, dynamic_dimensions=(False,) * shape.rank, layout=layout)


def make_static_shape(shape: Shape) -> Shape:
    """``MakeStaticShape``: static dimensions, and no dynamic-shape metadata prefix (``M``).

    >>> from tensorlayout.xla.shape import parse_shape
    >>> str(make_static_shape(parse_shape("f32[<=4,3]{1,0:M(8)}")))
    'f32[4,3]{1,0}'
    """
    out = make_shape_with_static_dimensions(shape)
    if out.is_array and out.layout is not None:
        out = out.with_layout(out.layout.replace(dynamic_shape_metadata_prefix_bytes=0))
    return out


def complex_component_shape(shape: Shape) -> Shape:
    """``ComplexComponentShape``: the shape of the real (or imaginary) part: c64 → f32."""
    if not shape.element_type.is_complex or not shape.is_array:
        raise LayoutError(f"complex_component_shape needs a complex array, but got {shape}")
    return change_element_type(shape, "f32" if shape.element_type.name == "c64" else "f64")
