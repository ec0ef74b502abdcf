"""Shape questions with XLA's names (``ShapeUtil``): ranks, element types, compatibility, counts.

Each function follows the ``ShapeUtil`` function of the same name (``xla/shape_util.{h,cc}``).

>>> from tensorlayout.xla.shape import parse_shape
>>> same_rank(parse_shape("f32[2,3]"), parse_shape("s8[7,1]")), true_rank(parse_shape("f32[1,4,1,5]"))
(True, 2)
>>> higher_precision_element_type(parse_shape("bf16[2]"), parse_shape("f16[2]")).name
'bf16'
"""

from __future__ import annotations

from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape
from tensorlayout.xla.shape_index import for_each_subshape, index_is_valid, try_get_subshape
from tensorlayout.xla.types import PrimitiveType, element_type, overflow_exponent

__all__ = [
    "are_all_leaves_integers",
    "compatible_kind",
    "dimensions_minor",
    "dynamic_array_shape_is_compatible",
    "dynamic_shape_is_compatible",
    "element_can_upcast",
    "element_is_integral_with_bits",
    "element_is_signed",
    "elements_in_recursive",
    "equal_structure",
    "has_primitive_type",
    "higher_precision_element_type",
    "is_bounded_dynamic",
    "is_bounded_dynamic_dimension",
    "is_effective_scalar",
    "is_scalar_with_element_type",
    "is_static",
    "is_static_dimension",
    "is_unbounded_dynamic",
    "is_unbounded_dynamic_dimension",
    "same_element_type",
    "same_element_type_ignoring_fp_precision",
    "same_rank",
    "true_rank",
]


def same_rank(a: Shape, b: Shape) -> bool:
    """``SameRank``: the same number of dimensions (non-arrays have none)."""
    return a.rank == b.rank


def same_element_type(a: Shape, b: Shape) -> bool:
    """``SameElementType``: the same element type (tuples have the type ``tuple``)."""
    return a.element_type == b.element_type


def same_element_type_ignoring_fp_precision(a: Shape, b: Shape) -> bool:
    """``SameElementTypeIgnoringFpPrecision``: two floating-point types always match.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> same_element_type_ignoring_fp_precision(parse_shape("f32[2]"), parse_shape("bf16[9]"))
    True
    """
    if a.element_type.is_float and b.element_type.is_float:
        return True
    return same_element_type(a, b)


def _precision_key(t: PrimitiveType) -> tuple[bool, int, int, int, bool]:
    """XLA's ``HigherPrecisionType`` order: complex, float range, float precision, bits, signed."""
    component = element_type({"c64": "f32", "c128": "f64"}[t.name]) if t.is_complex else t
    is_float = component.is_float
    return (t.is_complex, overflow_exponent(component) if is_float else -1,
            component.significand_width if is_float else -1, component.bit_width,
            component.kind == "signed")


def higher_precision_element_type(a: Shape, b: Shape) -> PrimitiveType:
    """``HigherPrecisionElementType``: the element type that is more precise.

    Two different types that rank the same (``pred`` and ``u1``) are an error, as XLA's CHECK is.
    """
    ka, kb = _precision_key(a.element_type), _precision_key(b.element_type)
    if ka != kb:
        return a.element_type if ka > kb else b.element_type
    if a.element_type != b.element_type:
        raise LayoutError(f"{a.element_type} and {b.element_type} have no precision order")
    return a.element_type


def element_can_upcast(from_shape: Shape, to_shape: Shape) -> bool:
    """``ElementCanUpcast``: ``to_shape``'s type is the higher-precision one of the two."""
    return higher_precision_element_type(from_shape, to_shape) == to_shape.element_type


def element_is_integral_with_bits(shape: Shape, bits: int) -> bool:
    """``ElementIsIntegralWithBits``: an integer element type of exactly ``bits`` bits."""
    return shape.element_type.is_integral and shape.is_array and shape.element_type.bit_width == bits


def element_is_signed(shape: Shape) -> bool:
    """``ElementIsSigned``: a signed integer or a floating-point type (not complex, not pred)."""
    return shape.element_type.kind == "signed" or shape.element_type.is_float


def compatible_kind(a: Shape, b: Shape, *, ignore_buffer: bool = False) -> bool:
    """``CompatibleKind``: same structure and ranks; types, sizes and layouts ignored.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> compatible_kind(parse_shape("(f32[2], s8[])"), parse_shape("(u4[9], f64[])"))
    True
    """
    return a.equal(b, ignore_element_type=True, ignore_layout=True, ignore_dimensions=True,
                   ignore_dynamic_dimension=True, ignore_buffer=ignore_buffer)


def equal_structure(a: Shape, b: Shape) -> bool:
    """``EqualStructure``: every tuple index valid in one shape is valid in the other."""
    return _indices_valid_in(a, b) and _indices_valid_in(b, a)


def _indices_valid_in(source: Shape, target: Shape) -> bool:
    """Every subshape index of ``source`` is a valid index of ``target``."""
    indices: list[tuple[int, ...]] = []
    for_each_subshape(source, lambda _s, index: indices.append(index))
    return all(index_is_valid(target, index) for index in indices)


def true_rank(shape: Shape) -> int:
    """``TrueNumDimensions`` (``TrueRank``): dimensions whose size is not 1 (arrays only)."""
    if not shape.is_array:
        raise LayoutError(f"true_rank needs an array shape, but got {shape}")
    return sum(1 for d in shape.dimensions if d != 1)


def is_effective_scalar(shape: Shape) -> bool:
    """``IsEffectiveScalar``: an array with exactly one element (all dimensions 1)."""
    return shape.is_array and true_rank(shape) == 0


def is_scalar_with_element_type(shape: Shape, t: str | PrimitiveType) -> bool:
    """``IsScalarWithElementType``: a rank-0 array of type ``t``."""
    return shape.is_scalar and shape.element_type == element_type(t)


def has_primitive_type(shape: Shape, t: str | PrimitiveType) -> bool:
    """``HasPrimitiveType``: ``shape`` or any element of its tuples has element type ``t``.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> has_primitive_type(parse_shape("(f32[2], (s8[], u4[3]))"), "u4")
    True
    """
    t = element_type(t)
    if shape.element_type == t and not shape.is_buffer:
        return True
    return shape.is_tuple and any(has_primitive_type(s, t) for s in shape.tuple_shapes)


def elements_in_recursive(shape: Shape) -> int:
    """``ElementsInRecursive``: the elements of an array, summed over the arrays of a tuple."""
    if shape.is_array:
        return shape.elements_in()
    if shape.is_tuple:
        return sum(elements_in_recursive(s) for s in shape.tuple_shapes)
    raise LayoutError(f"elements_in_recursive needs an array or a tuple, but got {shape}")


def dynamic_array_shape_is_compatible(dynamic_shape: Shape, bounded_shape: Shape) -> bool:
    """``DynamicArrayShapeIsCompatible``: same rank, no dimension above the bound.

    As XLA compares the stored sizes, a ``?`` dimension (stored as INT64_MIN) fits any bound.
    """
    return dynamic_shape.rank == bounded_shape.rank and all(
        d <= b for d, b in zip(dynamic_shape.dimensions, bounded_shape.dimensions))


def dynamic_shape_is_compatible(dynamic_shape: Shape, bounded_shape: Shape) -> bool:
    """``DynamicShapeIsCompatible``: the same tuple tree; dynamic arrays fit their bounds.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> dynamic_shape_is_compatible(parse_shape("(f32[<=3])"), parse_shape("(f32[4])"))
    True
    """
    verdicts: list[bool] = []

    def visit(sub: Shape, index: tuple[int, ...]) -> None:
        bounded = try_get_subshape(bounded_shape, index)
        if bounded is None or sub.is_tuple != bounded.is_tuple:
            verdicts.append(False)
        elif not sub.is_tuple and sub.is_dynamic:
            verdicts.append(dynamic_array_shape_is_compatible(sub, bounded))

    for_each_subshape(dynamic_shape, visit)
    return all(verdicts)



# -- Shape's own dynamic-size questions (xla/shape.h), as functions ------------------------------

def _subshapes(shape: Shape) -> list[Shape]:
    """The arrays inside tuples and buffers, or ``[shape]``."""
    if shape.is_tuple or shape.is_buffer:
        return [leaf for s in shape.tuple_shapes for leaf in _subshapes(s)]
    return [shape]


def is_unbounded_dynamic_dimension(shape: Shape, d: int) -> bool:
    """``Shape::is_unbounded_dynamic_dimension``: dimension ``d`` is ``?`` (stored INT64_MIN)."""
    return shape.dimensions[shape.dim_index(d)] == UNBOUNDED_SIZE


def is_bounded_dynamic_dimension(shape: Shape, d: int) -> bool:
    """``Shape::is_bounded_dynamic_dimension``: dimension ``d`` is ``<=n``."""
    return shape.is_dynamic_dimension(d) and not is_unbounded_dynamic_dimension(shape, d)


def is_static_dimension(shape: Shape, d: int) -> bool:
    """``Shape::is_static_dimension``: dimension ``d`` has a fixed size."""
    return not shape.is_dynamic_dimension(d)


def is_static(shape: Shape) -> bool:
    """``Shape::is_static``: no dynamic dimension anywhere (tuples recurse)."""
    return not shape.is_dynamic


def is_unbounded_dynamic(shape: Shape) -> bool:
    """``Shape::is_unbounded_dynamic``: some array has a ``?`` dimension.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> is_unbounded_dynamic(parse_shape("(f32[2], s8[?,3])")), is_bounded_dynamic(parse_shape("f32[?]"))
    (True, False)
    """
    return any(UNBOUNDED_SIZE in s.dimensions for s in _subshapes(shape))


def is_bounded_dynamic(shape: Shape) -> bool:
    """``Shape::is_bounded_dynamic``: some array has a ``<=n`` dimension."""
    return any(is_bounded_dynamic_dimension(s, d) for s in _subshapes(shape) for d in range(s.rank))


def are_all_leaves_integers(shape: Shape) -> bool:
    """``Shape::AreAllLeavesIntegers``: every leaf has an integer element type (pred is not)."""
    if shape.is_tuple:
        return all(are_all_leaves_integers(s) for s in shape.tuple_shapes)
    return shape.element_type.is_integral


def dimensions_minor(shape: Shape, i: int) -> int:
    """``Shape::dimensions_minor``: the size of the ``i``-th most minor dimension."""
    if shape.layout is None:
        raise LayoutError(f"dimensions_minor needs a shape with a layout, but got {shape}")
    return shape.dimensions[shape.layout.minor(i)]
