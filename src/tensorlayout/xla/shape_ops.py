"""What an XLA :class:`~tensorlayout.xla.shape.Shape` does beyond being read and printed: the
checks of its ``MakeShape`` constructor (:meth:`Shape.array`), equality under ``Shape::Equal``'s
``Ignore*`` options (:meth:`Shape.equal`) and ``ProgramShape::ToString``. The methods load this
module on first use: reading and showing a shape compiles none of it. It reads shapes by their
fields only and never imports :mod:`tensorlayout.xla.shape` at run time.

>>> from tensorlayout.xla.shape import parse_shape
>>> array_fields("f32", (3, 5), "{0,1}")[1], shape_equal(parse_shape("f32[2]"), parse_shape("f32[2]{0}"))
((3, 5), True)
>>> program_shape_to_string([parse_shape("f32[2]")], parse_shape("s32[]"), ["x"])
'(x: f32[2]) -> s32[]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensorlayout.core.intmath import INT64_MIN
from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import Layout
from tensorlayout.xla.types import ELEMENT_TYPES, PrimitiveType

if TYPE_CHECKING:
    from tensorlayout.xla.shape import Shape

__all__ = ["array_fields", "program_shape_to_string", "shape_equal"]

ArrayFields = tuple[PrimitiveType, tuple[int, ...], tuple[bool, ...], Layout | None]


def array_fields(element_type: str | PrimitiveType, dimensions: tuple[int, ...] | list[int],
                 layout: Layout | str | None = "default",
                 dynamic_dimensions: tuple[bool, ...] | None = None) -> ArrayFields:
    """``MakeShape``'s checks: the fields of the array :meth:`Shape.array` builds;
    ``layout="default"`` is ``{n-1,...,0}``.

    >>> str(array_fields("bf16", [2, 3])[3])
    '{1,0}'
    """
    et = element_type if isinstance(element_type, PrimitiveType) else _type(element_type)
    if not et.is_array:
        raise LayoutError(f"expected an array element type, but got {et.name}")
    dims = tuple(dimensions)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise LayoutError(f"expected non-negative integer dimensions, but got {dims}")
    dyn = tuple(dynamic_dimensions) if dynamic_dimensions else (False,) * len(dims)
    if isinstance(layout, str):
        layout = (Layout(tuple(range(len(dims) - 1, -1, -1))) if layout == "default"
                  else Layout.parse(layout))
    return et, dims, dyn, layout


def shape_equal(a: Shape, b: Shape, *, ignore_layout: bool = False, ignore_dynamic_dimension: bool = False,
                ignore_element_type: bool = False, ignore_fp_precision: bool = False,
                ignore_dimensions: bool = False, ignore_buffer: bool = False, **layout_options: bool) -> bool:
    """``Shape::Equal`` with its ``Ignore*`` options (:meth:`Shape.equal`).

    >>> from tensorlayout.xla.shape import Shape
    >>> shape_equal(Shape.parse("f32[2]{0}"), Shape.parse("f16[2]{0}"), ignore_fp_precision=True)
    True
    """
    options = dict(ignore_layout=ignore_layout, ignore_buffer=ignore_buffer,
                   ignore_dynamic_dimension=ignore_dynamic_dimension,
                   ignore_element_type=ignore_element_type,
                   ignore_fp_precision=ignore_fp_precision,
                   ignore_dimensions=ignore_dimensions, **layout_options)
    if a.is_tuple:
        return b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes) and all(
            x.equal(y, **options) for x, y in zip(a.tuple_shapes, b.tuple_shapes))
    if a.is_buffer or b.is_buffer:
        if not ignore_buffer and not (a.is_buffer and b.is_buffer):
            return False
        return _unbuffered(a).equal(_unbuffered(b), **options)
    if not a.is_array or not b.is_array:
        return a.element_type == b.element_type
    return (_same_types(a, b, ignore_element_type, ignore_fp_precision)
            and _same_dimensions(a, b, ignore_dimensions, ignore_dynamic_dimension)
            and (ignore_layout or _same_layouts(a, b, layout_options))
            and (ignore_dynamic_dimension
                 or a.dynamic_dimensions == b.dynamic_dimensions))


def _unbounded(shape: Shape, i: int) -> bool:
    """Dimension ``i`` is ``?``: dynamic, of size ``Shape::kUnboundedSize`` (INT64_MIN)."""
    return shape.dimensions[i] == INT64_MIN and shape.dynamic_dimensions[i]


def _unbuffered(shape: Shape) -> Shape:
    return shape.buffer_shape if shape.is_buffer else shape


def _same_types(a: Shape, b: Shape, ignore_element_type: bool, ignore_fp_precision: bool) -> bool:
    """Shape::Equal's element-type rule (two floats match when precision is ignored)."""
    if ignore_element_type or a.element_type == b.element_type:
        return True
    return ignore_fp_precision and a.element_type.is_float and b.element_type.is_float


def _same_dimensions(a: Shape, b: Shape, ignore_dimensions: bool, ignore_dynamic: bool) -> bool:
    """Same rank always; same sizes unless ignored (``?`` matches any size if dynamic is ignored)."""
    if a.rank != b.rank:
        return False
    return ignore_dimensions or all(
        x == y or (ignore_dynamic and (_unbounded(a, i) or _unbounded(b, i)))
        for i, (x, y) in enumerate(zip(a.dimensions, b.dimensions)))


def _same_layouts(a: Shape, b: Shape, layout_options: dict[str, bool]) -> bool:
    """Both without a layout, or both with layouts equal under the layout options."""
    if a.layout is None or b.layout is None:
        return a.layout is None and b.layout is None
    return a.layout.equal(b.layout, **layout_options)


def _type(name: str) -> PrimitiveType:
    t = ELEMENT_TYPES.get(name)
    if t is None or name == "tuple":
        raise LayoutError(f"expected an XLA element type name, but got {name!r}")
    return t


def program_shape_to_string(parameters: list[Shape], result: Shape,
                            names: list[str] | None = None) -> str:
    """``ProgramShape::ToString``: ``(name: shape, ...) -> result``, without layouts.

    >>> from tensorlayout.xla.shape import Shape
    >>> program_shape_to_string([Shape.parse("f32[2]")], Shape.parse("s32[]"), ["x"])
    '(x: f32[2]) -> s32[]'
    """
    params = ", ".join(
        f"{names[i] if names and i < len(names) else '(unknown)'}: {p.to_string()}"
        for i, p in enumerate(parameters))
    return f"({params}) -> {result.to_string()}"
