"""XLA ``Shape``: arrays, tuples, tokens, opaque and buffer shapes, with parser and printer.

>>> s = parse_shape("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}")
>>> s.element_type.name, s.dimensions, s.layout.minor_to_major
('bf16', (8, 1, 1280, 16384), (3, 2, 0, 1))
>>> str(s)
'bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}'
>>> parse_shape("f32[2,3]").to_string(with_layout=True)
'f32[2,3]{1,0}'
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, TypeVar

from tensorlayout._cursor import Cursor, read_whole
from tensorlayout._lazy import lazy_modules, lazy_names
from tensorlayout.core._frozen import set_field
from tensorlayout.core.intmath import INT64_MAX, INT64_MIN, prod
from tensorlayout.errors import LayoutError, ParseError, expect_text
from tensorlayout.xla.layout import Layout, read_layout, read_xla_int
from tensorlayout.xla.types import ELEMENT_TYPES, PrimitiveType

_F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["UNBOUNDED_SIZE", "Shape", "as_shape", "parse_shape", "problems", "read_shape", "takes_shape"]

#: what a shape does beyond being read and printed (its constructor, equality, program shapes),
#: loaded on first use; ``program_shape_to_string`` is still importable from here
_lazy = lazy_modules({"ops": "tensorlayout.xla.shape_ops"})
__getattr__, __dir__ = lazy_names(
    __name__, {"program_shape_to_string": ("tensorlayout.xla.shape_ops", "program_shape_to_string")},
    [*__all__, "program_shape_to_string"])

#: ``Shape::kUnboundedSize``: the size of a dimension written ``?``.
UNBOUNDED_SIZE = INT64_MIN

_TUPLE = ELEMENT_TYPES["tuple"]


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Shape:
    """An XLA shape. ``kind`` is ``"array"``, ``"tuple"``, ``"token"``, ``"opaque"`` or ``"buffer"``.

    Arrays carry ``element_type``, ``dimensions``, ``dynamic_dimensions`` and an optional
    ``layout``; tuples carry ``tuple_shapes``; a buffer wraps one array in ``tuple_shapes[0]``.
    Equality is ``ShapeUtil::Equal`` (layouts compared, M ignored).
    """

    element_type: PrimitiveType
    dimensions: tuple[int, ...] = ()
    dynamic_dimensions: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    is_buffer: bool = False

    # (the dataclass's methods written out: a dataclass compiles its own with exec at every import)
    def __init__(self, element_type: PrimitiveType, dimensions: tuple[int, ...] = (),
                 dynamic_dimensions: tuple[bool, ...] = (), layout: Layout | None = None,
                 tuple_shapes: tuple[Shape, ...] = (), is_buffer: bool = False) -> None:
        set_field(self, "element_type", element_type)
        set_field(self, "dimensions", dimensions)
        set_field(self, "dynamic_dimensions", dynamic_dimensions)
        set_field(self, "layout", layout)
        set_field(self, "tuple_shapes", tuple_shapes)
        set_field(self, "is_buffer", is_buffer)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Shape)
            return (
                (self.element_type, self.dimensions, self.dynamic_dimensions, self.layout,
                 self.tuple_shapes, self.is_buffer)
                == (other.element_type, other.dimensions, other.dynamic_dimensions, other.layout,
                    other.tuple_shapes, other.is_buffer))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.element_type, self.dimensions, self.dynamic_dimensions, self.layout,
                     self.tuple_shapes, self.is_buffer))

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def array(
        element_type: str | PrimitiveType,
        dimensions: tuple[int, ...] | list[int],
        layout: Layout | str | None = "default",
        dynamic_dimensions: tuple[bool, ...] | None = None,
    ) -> Shape:
        """``MakeShape``: an array; ``layout="default"`` attaches ``{n-1,...,0}``.

        >>> str(Shape.array("f32", (3, 5), "{0,1}"))
        'f32[3,5]{0,1}'
        """
        return Shape(*_lazy("ops").array_fields(element_type, dimensions, layout, dynamic_dimensions))

    @staticmethod
    def tuple_of(*shapes: Shape) -> Shape:
        """``MakeTupleShape``: the tuple of ``shapes`` (not validated)."""
        return Shape(_TUPLE, tuple_shapes=tuple(shapes))

    @classmethod
    def parse(cls, text: str) -> Shape:
        return parse_shape(text)

    # -- kind queries ---------------------------------------------------------------------
    @property
    def kind(self) -> str:
        if self.is_buffer:
            return "buffer"
        return {"tuple": "tuple", "token": "token", "opaque": "opaque"}.get(
            self.element_type.name, "array")

    @property
    def is_array(self) -> bool:
        """``IsArray``: an array (not tuple, token, opaque or buffer)."""
        return self.kind == "array"

    @property
    def is_tuple(self) -> bool:
        """``IsTuple``."""
        return self.kind == "tuple"

    @property
    def is_token(self) -> bool:
        """``IsToken``."""
        return self.kind == "token"

    @property
    def is_opaque(self) -> bool:
        """``IsOpaque``."""
        return self.kind == "opaque"

    @property
    def is_scalar(self) -> bool:
        """``IsScalar``: an array of rank 0."""
        return self.is_array and not self.dimensions

    @property
    def rank(self) -> int:
        """Number of dimensions (an array's; 0 for other kinds)."""
        return len(self.dimensions)

    def dimension(self, d: int) -> int:
        """``GetDimension``: dimension ``d``; negative ``d`` counts from the end (-1 = last)."""
        return self.dimensions[self.dim_index(d)]

    def dim_index(self, d: int) -> int:
        """Normalise a dimension number, accepting Python-style negatives."""
        r = self.rank
        if isinstance(d, bool) or not isinstance(d, int) or not -r <= d < r:
            raise LayoutError(f"expected a dimension number in [{-r}, {r - 1}] for "
                              f"{self.to_string()}, but got {d!r}")
        return d + r if d < 0 else d

    def is_dynamic_dimension(self, d: int) -> bool:
        """``is_dynamic_dimension``: dimension ``d`` is ``<=n`` or ``?``."""
        return self.dynamic_dimensions[self.dim_index(d)]

    @property
    def is_dynamic(self) -> bool:
        """``is_dynamic``: some dimension is dynamic (tuples recurse)."""
        return any(self.dynamic_dimensions) or any(t.is_dynamic for t in self.tuple_shapes)

    @property
    def bit_width(self) -> int:
        """Bits of one element: ``E(n)`` if set, else the type's bit width."""
        if self.layout is not None and self.layout.element_size_in_bits:
            return self.layout.element_size_in_bits
        return self.element_type.bit_width

    def elements_in(self) -> int:
        """``ElementsIn``: product of the dims (bounds for dynamic dims); a scalar has 1."""
        return prod(self.dimensions)

    @property
    def is_zero_element_array(self) -> bool:
        """``IsZeroElementArray``: an array with a dimension of size 0."""
        return self.is_array and 0 in self.dimensions

    def leaves(self) -> Iterator[Shape]:
        """Leaf (non-tuple) subshapes in pre-order."""
        if self.is_tuple:
            for s in self.tuple_shapes:
                yield from s.leaves()
        else:
            yield self

    @property
    def buffer_shape(self) -> Shape:
        """The array inside a ``b(...)`` buffer shape."""
        return self.tuple_shapes[0]

    def with_layout(self, layout: Layout | str | None) -> Shape:
        """A copy with ``layout`` (a Layout, its text, or None to clear it)."""
        if isinstance(layout, str):
            layout = Layout.parse(layout)
        return replace(self, layout=layout)

    # -- printing -------------------------------------------------------------------------
    def __str__(self) -> str:
        return self.to_string(with_layout=True)

    def __repr__(self) -> str:
        """The text form: ``Shape('f32[3,5]{1,0:T(2,2)}')``."""
        return f"Shape({str(self)!r})"

    def to_string(self, with_layout: bool = False) -> str:
        """``ShapeUtil::HumanString[WithLayout]``."""
        kind = self.kind
        if kind == "tuple":
            parts = []
            for i, s in enumerate(self.tuple_shapes):
                prefix = "" if i == 0 else (f", /*index={i}*/" if i % 5 == 0 else ", ")
                parts.append(prefix + s.to_string(with_layout))
            return "(" + "".join(parts) + ")"
        if kind == "buffer":
            return f"b({self.buffer_shape.to_string(with_layout)})"
        if kind in ("token", "opaque"):
            return f"{kind}[]"
        dims = ",".join(_dim_str(d, dyn) for d, dyn in zip(self.dimensions,
                                                           self.dynamic_dimensions, strict=False))
        text = f"{self.element_type.name}[{dims}]"
        if with_layout and self.layout is not None:
            layout = str(self.layout)
            if self.dimensions or layout != "{}":
                text += layout
        return text

    def equal(self, other: Shape, *, ignore_layout: bool = False,
              ignore_dynamic_dimension: bool = False, ignore_element_type: bool = False,
              ignore_fp_precision: bool = False, ignore_dimensions: bool = False,
              ignore_buffer: bool = False, **layout_options: bool) -> bool:
        """``Shape::Equal`` with its ``Ignore*`` options (layout options as in :meth:`Layout.equal`).

        As in XLA: ``ignore_dimensions`` still compares ranks; ``ignore_dynamic_dimension`` lets
        a ``?`` dimension match any size; ``ignore_buffer`` compares ``b(x)`` as ``x``.

        >>> parse_shape("f32[4,3]{0,1}").equal(parse_shape("f16[4,3]{0,1}"),
        ...                                    ignore_fp_precision=True)
        True
        >>> parse_shape("f32[?,3]").equal(parse_shape("f32[7,3]"), ignore_dynamic_dimension=True)
        True
        """
        return bool(_lazy("ops").shape_equal(
            self, other, ignore_layout=ignore_layout, ignore_dynamic_dimension=ignore_dynamic_dimension,
            ignore_element_type=ignore_element_type, ignore_fp_precision=ignore_fp_precision,
            ignore_dimensions=ignore_dimensions, ignore_buffer=ignore_buffer, **layout_options))

    def compatible(self, other: Shape, *, ignore_element_type: bool = False,
                   ignore_fp_precision: bool = False) -> bool:
        """``ShapeUtil::Compatible[IgnoringElementType|IgnoringFpPrecision]``."""
        return self.equal(other, ignore_layout=True, ignore_dynamic_dimension=True,
                          ignore_element_type=ignore_element_type,
                          ignore_fp_precision=ignore_fp_precision)


def _dim_str(d: int, dynamic: bool) -> str:
    if d == UNBOUNDED_SIZE and dynamic:
        return "?"
    return f"<={d}" if dynamic else str(d)


# -- validation (ShapeUtil::ValidateShape, LayoutUtil::ValidateLayoutForShape) ---------------
# Each rule takes an array shape and returns the sentences it finds (empty if it holds).

def _negative_dimensions(shape: Shape) -> list[str]:
    """Sizes are >= 0, except ``?`` (an unbounded dynamic dimension)."""
    return [f"Negative dimension at index {i}" for i, d in enumerate(shape.dimensions)
            if d < 0 and not (d == UNBOUNDED_SIZE and shape.dynamic_dimensions[i])]


def _size_overflow(shape: Shape) -> list[str]:
    """The extent product times the byte width fits int64, multiplied as XLA does.

    XLA multiplies the dims in logical order and remembers an overflow even if a later dim
    is 0 (``c64[9223372036854775807,2,0]`` is refused, ``c64[9223372036854775807,0,2]`` is
    not); ``?`` counts as 1; the byte width is the unpacked one (``E(n)`` is ignored).
    """
    product, overflow = 1, False
    for d in shape.dimensions:
        product *= 1 if d == UNBOUNDED_SIZE else max(d, 0)
        overflow = overflow or product > INT64_MAX
    if overflow or product * shape.element_type.byte_width > INT64_MAX:
        return [f"Shape {shape.to_string()} size may overflow int64_t"]
    return []


def _minor_to_major_values(shape: Shape) -> list[str]:
    """``minor_to_major`` is a permutation of the dims."""
    assert shape.layout is not None
    m2m, rank = shape.layout.minor_to_major, shape.rank
    text = "{" + ",".join(map(str, m2m)) + "}"
    if any(not 0 <= d < rank for d in m2m):
        return [f"layout minor_to_major field has out-of-bounds value: {text}"]
    if len(set(m2m)) != rank:
        return [f"layout minor_to_major field has duplicate values: {text}"]
    return []


def _tail_padding(shape: Shape) -> list[str]:
    assert shape.layout is not None
    if shape.layout.tail_padding_alignment_in_elements < 1:
        return ["layout tail_padding_alignment_in_elements must be >= 1"]
    return []


def _sparse_only_fields(shape: Shape) -> list[str]:
    """Index/pointer types and a physical shape belong to sparse arrays, which XLA dropped."""
    layout = shape.layout
    assert layout is not None
    out = []
    if layout.index_primitive_type is not None or layout.pointer_primitive_type is not None:
        out.append("layout has an index or pointer primitive type, but is not a sparse array")
    if layout.physical_shape is not None:
        out.append("layout has a physical shape, but is not a sparse array")
    return out


def _tiles(shape: Shape) -> list[str]:
    """Every tile has at least one dim and no 0 size (negative sizes cannot be built)."""
    assert shape.layout is not None
    for t in shape.layout.tiles:
        if not t.dims or 0 in t.dims:
            return [f"layout has invalid tiles: {t} (tiles need sizes >= 1 or '*')"]
    return []


def _element_size(shape: Shape) -> list[str]:
    assert shape.layout is not None
    e = shape.layout.element_size_in_bits
    return [f"layout element_size_in_bits must be >= 0, but got {e}"] if e < 0 else []


def _split_configs(shape: Shape) -> list[str]:
    """``SC(d:i,...)``: d a physical dim named once; 0 < i < that dim's size, increasing
    (``SC(d:)``, no indices, on any dim).

    Found by asking XLA's validator (jaxlib 0.10.2) about tuple elements such as
    ``(f32[4,8]{1,0:SC(1:5)})`` (accepted) and ``(f32[4,8]{1,0:SC(0:5)})`` (refused).
    """
    layout = shape.layout
    assert layout is not None
    seen: set[int] = set()
    for config in layout.split_configs:
        d = config.dimension
        if not 0 <= d < shape.rank or d in seen:
            return [f"layout split config {config} names physical dimension {d}, which is "
                    f"{'named twice' if d in seen else f'not in [0, {shape.rank})'}"]
        seen.add(d)
        size = shape.dimensions[layout.major(d)]
        points = (0, *config.split_indices, size)
        # no split indices (``SC(0:)``) is valid on any dim, even of size 0 or '?' (as in XLA)
        if config.split_indices and any(b <= a for a, b in itertools.pairwise(points)):
            return [f"layout split config {config}: split indices must increase strictly "
                    f"within (0, {_dim_str(size, shape.dynamic_dimensions[layout.major(d)])}), "
                    f"the size of physical dimension {d}"]
    return []


_SHAPE_RULES: tuple[Callable[[Shape], list[str]], ...] = (_negative_dimensions, _size_overflow)
_LAYOUT_RULES: tuple[Callable[[Shape], list[str]], ...] = (
    _minor_to_major_values, _tail_padding, _sparse_only_fields, _tiles, _element_size,
    _split_configs,
)


def problems(shape: Shape, *, allow_missing_layouts: bool = False) -> list[str]:
    """Every validation rule ``shape`` breaks, as sentences (empty if valid); tuples recurse.

    >>> problems(parse_shape("f32[2,3]{0,0}"))
    ['layout minor_to_major field has duplicate values: {0,0}']
    """
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA Shape, but got {type(shape).__name__}")
    if shape.is_tuple or shape.is_buffer:
        return [p for sub in shape.tuple_shapes
                for p in problems(sub, allow_missing_layouts=allow_missing_layouts)]
    if not shape.is_array:
        return []
    out = [p for rule in _SHAPE_RULES for p in rule(shape)]
    layout = shape.layout
    if layout is None:
        return out if allow_missing_layouts else [
            *out, f"shape {shape.to_string()} does not have a layout"]
    if layout.rank != shape.rank:
        return [*out, f"layout minor_to_major field contains {layout.rank} elements, "
                      f"but shape has {shape.rank} dimensions"]
    rules = _LAYOUT_RULES
    if _minor_to_major_values(shape):  # later rules index dims through minor_to_major
        rules = tuple(r for r in rules if r is not _split_configs)
    return out + [p for rule in rules for p in rule(shape)]


# -- text -----------------------------------------------------------------------------------

_TYPE_NAME = re.compile(r"[a-z][a-z0-9]*")
_DIM_INT = re.compile(r"-?[0-9]+")


# shape := tuple | buffer | array
def read_shape(cur: Cursor) -> Shape:
    """Read one shape at the cursor and leave the cursor just after it.

    A ``{`` after ``]`` starts a layout only if an integer or ``:`` follows (XLA's rule, which
    separates a layout from a computation body).
    """
    cur.skip()
    if cur.peek("("):
        return _read_tuple(cur)
    if cur.text.startswith("b(", cur.pos):
        return _read_buffer(cur)
    return _read_array(cur)


# tuple := '(' [shape (',' shape)*] ')'
def _read_tuple(cur: Cursor) -> Shape:
    start = cur.pos
    cur.expect("(")
    elements: list[Shape] = []
    with cur.nested("a tuple shape"):
        if not cur.accept(")"):
            while True:
                elements.append(_validated(cur, read_shape(cur), start))
                if cur.accept(")"):
                    break
                cur.expect(",", "',' or ')' in a tuple shape")
    return Shape(_TUPLE, tuple_shapes=tuple(elements))


# buffer := 'b' '(' shape ')'
def _read_buffer(cur: Cursor) -> Shape:
    """A buffer; like a top-level array its layout is not validated here (inside a tuple, the
    tuple's validation covers it), as XLA's parser does."""
    start = cur.pos
    cur.pos += 2
    with cur.nested("a buffer shape"):
        inner = read_shape(cur)
    if not inner.is_array:
        raise cur.error("an array shape inside b(...)", at=start + 2)
    if not cur.accept(")"):
        raise cur.error("')'", context="expects ')' at the end of buffer shape")
    return Shape(inner.element_type, tuple_shapes=(inner,), is_buffer=True)


# array := TYPE '[' [dim (',' dim)*] ']' [layout]
def _read_array(cur: Cursor) -> Shape:
    start = cur.pos
    m = _TYPE_NAME.match(cur.text, cur.pos)
    if not m or m.group() not in ELEMENT_TYPES or m.group() == "tuple":
        raise cur.error("a shape (an element type such as f32, followed by [dims])")
    et = ELEMENT_TYPES[m.group()]
    cur.pos = m.end()
    if not cur.accept("["):  # XLA's lexer allows whitespace (and comments) before '['
        raise cur.error("a shape (an element type such as f32, followed by [dims])", at=start)
    dims: list[int] = []
    dyn: list[bool] = []
    if not cur.accept("]"):
        while True:
            _read_dim(cur, dims, dyn)
            if cur.accept("]"):
                break
            cur.expect(",", "',' or ']' in the dimensions")
    if not et.is_array:
        if dims:
            raise cur.error(f"'{et.name}[]' with no dimensions", at=start)
        return Shape(et)
    layout = _read_array_layout(cur, len(dims))
    return Shape(et, tuple(dims), tuple(dyn), layout)


def _read_array_layout(cur: Cursor, rank: int) -> Layout:
    """The layout after an array's dims, or the default ``{rank-1,...,0}`` if none follows."""
    save = cur.pos
    if not cur.accept("{"):
        return Layout(tuple(range(rank - 1, -1, -1)))
    cur.skip()
    is_layout = cur.peek(":") or bool(_DIM_INT.match(cur.text, cur.pos))
    cur.pos = save
    if not is_layout:
        return Layout(tuple(range(rank - 1, -1, -1)))
    cur.skip()
    at = cur.pos
    layout = read_layout(cur, read_shape)
    if layout.rank != rank:
        raise ParseError(cur.text, at, f"a layout with {rank} dimensions",
                         f"Dimensions size is {rank}, but minor to major size is {layout.rank}.")
    if layout.physical_shape is not None:
        raise ParseError(cur.text, at, "a layout without P(...)",
                         "Layout has physical shape, but is not for a sparse array")
    return layout


# dim := INT | '<=' INT | '?'
def _read_dim(cur: Cursor, dims: list[int], dyn: list[bool]) -> None:
    if cur.accept("?"):
        dims.append(UNBOUNDED_SIZE)
        dyn.append(True)
        return
    bounded = cur.accept("<=")
    start = cur.pos
    value = read_xla_int(cur, "a dimension size")  # [2^63, 2^64) bit-cast negative, as XLA
    if value < 0 and not (bounded and value == UNBOUNDED_SIZE):  # XLA: '<=' INT64_MIN is '?'
        raise cur.error("a non-negative dimension size", at=start)
    cur.skip()
    if cur.pos < len(cur.text) and (cur.text[cur.pos].isalnum() or cur.text[cur.pos] in "_."):
        raise cur.error("',' or ']' after a dimension size")
    dims.append(value)
    dyn.append(bounded)


def _validated(cur: Cursor, shape: Shape, start: int) -> Shape:
    """Tuple elements are validated as XLA's MakeValidatedTupleShape does."""
    found = problems(shape)
    if found:
        raise ParseError(cur.text, start, "a valid tuple element", found[0])
    return shape


def parse_shape(text: str) -> Shape:
    """Parse XLA shape text; arrays without a layout get the default ``{n-1,...,0}``.

    >>> parse_shape("(f32[2], s32[])").is_tuple
    True
    """
    expect_text(text, "shape text")
    return _parse_shape_cached(text)


@lru_cache(maxsize=8192)
def _parse_shape_cached(text: str) -> Shape:
    return read_whole(text, read_shape, "end of the shape (extra content after shape)", comments=True)


parse_shape.cache_clear = _parse_shape_cached.cache_clear  # type: ignore[attr-defined]


def as_shape(x: Shape | str) -> Shape:
    """Accept a :class:`Shape` or its text; anything else is a :class:`LayoutError`."""
    if isinstance(x, Shape):
        return x
    if isinstance(x, str):
        return parse_shape(x)
    raise LayoutError(f"expected an XLA Shape or shape text, but got {type(x).__name__}")


def takes_shape(fn: _F) -> _F:
    """Decorator: the first argument may be a Shape or shape text (checked)."""
    @functools.wraps(fn)
    def wrapper(shape: Shape | str, *args: object, **kwargs: object) -> object:
        return fn(as_shape(shape), *args, **kwargs)
    return wrapper  # type: ignore[return-value]
