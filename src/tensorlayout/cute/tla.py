"""CATLASS TLA (Ascend): layouts with an origin shape, ``crd2offset``, tiles and the fractal formats.

A TLA layout is CuTe's shape:stride plus ``origin_shape``, the valid (unpadded) extent of each
top-level mode. Formats for a (rows × cols) matrix of an element of E bits (C0 = 256/E elements
per 32-byte row of a fractal; a fractal holds 512 bytes):

>>> str(make_format("zN", 8, 12, "f16"))
'((16,1),(16,1)):((16,256),(1,256)) origin (8,12)'
>>> zn = TlaLayout(make_layout(((4, 2), (4, 3)), ((4, 16), (1, 32))))
>>> crd2offset((1, 5), zn), str(make_layout_tile(zn, (4, 4)))
(37, '((4,1),(4,1)):((4,16),(1,32)) origin (4,4)')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorlayout.core.element_types import element_type
from tensorlayout.core.intmath import ceil_div, round_up
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.coords import crd2idx
from tensorlayout.cute.int_tuple import IntTuple, format_int_tuple
from tensorlayout.cute.layout import Layout
from tensorlayout.cute.layout import get as cute_get
from tensorlayout.errors import LayoutError

__all__ = [
    "FORMATS",
    "TlaLayout",
    "crd2offset",
    "depth",
    "element_bits",
    "get",
    "get_tile_layout",
    "is_format",
    "make_coord",
    "make_format",
    "make_layout",
    "make_layout_l0c",
    "make_layout_tile",
    "make_shape",
    "make_stride",
    "rank",
    "shape",
    "stride",
]

BYTE_PER_C0 = 32
C0_NUM_PER_FRACTAL = 16
BYTE_PER_FRACTAL = 512

FORMATS = ("RowMajor", "ColumnMajor", "VectorLayout", "zN", "zZ", "nZ", "nN", "L0C", "Weight4BitnZ")

_ALIASES = {"half": 16, "float": 32, "float16": 16, "float32": 32, "bfloat16": 16, "int8": 8,
            "uint8": 8, "int4": 4, "int32": 32, "int16": 16, "fp16": 16, "fp32": 32}


def element_bits(dtype: str | int) -> int:
    """Bits of an element given as bits, an XLA type name (``f16``) or a C name (``half``)."""
    if it.is_int(dtype):
        bits = int(dtype)
    elif isinstance(dtype, str) and dtype.lower() in _ALIASES:
        bits = _ALIASES[dtype.lower()]
    elif isinstance(dtype, str):
        bits = element_type(dtype).bit_width
    else:
        raise LayoutError(f"expected an element type name or a bit width, got {it.describe(dtype)}")
    if bits <= 0 or 256 % bits:
        raise LayoutError(f"TLA formats need an element width dividing 256 bits, got {bits}")
    return bits


class TlaLayout:
    """``tla::Layout<Shape, Stride, OriginShape>``: a CuTe layout plus the valid extent per mode.

    An immutable value; the origin shape defaults to the size of each top-level mode.
    ``element_bits`` is the element width :func:`make_format` was given (0: not known); it is
    what a relayout checks arrays against, not part of the layout function (nor of equality).
    """

    __slots__ = ("_element_bits", "_layout", "_origin_shape")

    def __init__(self, layout: Layout, origin_shape: tuple[int, ...] = (), element_bits: int = 0) -> None:
        if isinstance(layout, TlaLayout):  # its CuTe layout (the origin shape is given anew)
            layout = layout.layout
        if not isinstance(layout, Layout):
            raise LayoutError(f"TlaLayout: expected a Layout, got {it.describe(layout)}")
        if not (isinstance(origin_shape, tuple) and all(it.is_int(x) for x in origin_shape)):
            raise LayoutError(f"TlaLayout: an origin shape is a flat tuple of ints, got "
                              f"{it.describe(origin_shape)}")
        if not it.is_int(element_bits):
            raise LayoutError(f"TlaLayout: element_bits is an int, got {it.describe(element_bits)}")
        if not origin_shape:
            modes = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
            origin_shape = tuple(it.product(m) for m in modes)
        if len(origin_shape) != rank(layout):
            raise LayoutError(f"origin shape {origin_shape} does not match the rank of {layout}")
        self._layout = layout
        self._origin_shape = tuple(origin_shape)
        self._element_bits = int(element_bits)

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def origin_shape(self) -> tuple[int, ...]:
        return self._origin_shape

    @property
    def element_bits(self) -> int:
        """Bits per element of the format (0: not known)."""
        return self._element_bits

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TlaLayout):
            return NotImplemented
        return self._layout == other._layout and self._origin_shape == other._origin_shape

    def __hash__(self) -> int:
        return hash((self._layout, self._origin_shape))

    def __repr__(self) -> str:
        return f"TlaLayout(layout={self._layout!r}, origin_shape={self._origin_shape!r})"

    def __call__(self, *coord: Any) -> int:
        return crd2offset(coord[0] if len(coord) == 1 else tuple(coord), self)

    @property
    def shape(self) -> IntTuple:
        return self.layout.shape

    @property
    def stride(self) -> IntTuple:
        return self.layout.stride

    def __str__(self) -> str:
        return f"{self.layout} origin {format_int_tuple(self.origin_shape)}"


def make_shape(*xs: IntTuple) -> tuple[Any, ...]:
    return tuple(xs)


make_stride = make_shape
make_coord = make_shape


def make_layout(shape: IntTuple, stride: IntTuple | None = None,
                origin: Sequence[int] | None = None) -> TlaLayout:
    """``MakeLayout(shape, stride[, origin])``; ``MakeLayout(n)`` is ``(n):(1)``.

    >>> str(make_layout((it.Int(2), 4), (it.Int(12), it.Int(1))).layout)
    '(_2,4):(_12,_1)'
    """
    if stride is None:
        if not it.is_int(shape):
            raise LayoutError("MakeLayout(shape) without a stride takes a length")
        return TlaLayout(Layout((shape,), (1,)))
    return TlaLayout(Layout(shape, stride), tuple(origin) if origin is not None else ())


def _as_tla(x: TlaLayout | Layout | str) -> TlaLayout:
    if isinstance(x, TlaLayout):
        return x
    if isinstance(x, str):
        x = Layout.parse(x)
    if isinstance(x, Layout):
        return TlaLayout(x)
    raise LayoutError(f"expected a TLA or CuTe layout, got {type(x).__name__}")


def rank(x: TlaLayout | Layout) -> int:
    """Rank, taken from the stride as TLA does."""
    lay = x.layout if isinstance(x, TlaLayout) else x
    return it.rank(lay.stride)


def depth(x: TlaLayout | Layout) -> int:
    lay = x.layout if isinstance(x, TlaLayout) else x
    return it.depth(lay.stride)


def shape(x: TlaLayout | Layout) -> IntTuple:
    return x.shape


def stride(x: TlaLayout | Layout) -> IntTuple:
    return x.stride


def get(x: TlaLayout | Layout, *path: int) -> Layout:
    return cute_get(x.layout if isinstance(x, TlaLayout) else x, *path)


def crd2offset(coord: IntTuple, layout: TlaLayout | Layout | str) -> int:
    """Offset of a (row, col) element coordinate (or a natural one): CuTe's ``crd2idx``.

    Each entry of a flat coordinate is split colexicographically inside its mode.
    """
    lay = _as_tla(layout).layout
    if not isinstance(coord, tuple) and isinstance(lay.shape, tuple):
        raise LayoutError(f"crd2offset needs a coordinate of rank {len(lay.shape)}, got {coord}")
    if isinstance(coord, tuple) and isinstance(lay.shape, tuple) and len(coord) != len(lay.shape):
        raise LayoutError(f"crd2offset needs a coordinate of rank {len(lay.shape)}, "
                          f"got {format_int_tuple(coord)}")
    return crd2idx(coord, lay.shape, lay.stride)


# ---------------------------------------------------------------- formats


def make_format(tag: str, rows: int, cols: int, dtype: str | int = "f16") -> TlaLayout:
    """``MakeLayout<Element, Tag>(rows, cols)``: RowMajor, ColumnMajor, VectorLayout, zN, zZ, nZ,
    nN (the legacy tag's formula), L0C, Weight4BitnZ; padded to whole fractals, origin (rows, cols)."""
    if not isinstance(tag, str):
        raise LayoutError(f"a TLA format is named by a string ({', '.join(FORMATS)}), got {it.describe(tag)}")
    if not (it.is_int(rows) and it.is_int(cols)) or rows < 0 or cols < 0:
        raise LayoutError(f"rows and cols must be non-negative ints, got {it.describe(rows)} x "
                          f"{it.describe(cols)}")
    bits = element_bits(dtype)
    c0 = 256 // bits
    f = 4096 // bits
    r, c = rows, cols
    table: dict[str, tuple[Any, Any]] = {
        "RowMajor": ((r, c), (c, 1)),
        "ColumnMajor": ((r, c), (1, r)),
        "zN": (((16, ceil_div(r, 16)), (c0, ceil_div(c, c0))), ((c0, f), (1, round_up(r, 16) * c0))),
        "zZ": (((16, ceil_div(r, 16)), (c0, ceil_div(c, c0))), ((c0, round_up(c, c0) * 16), (1, f))),
        "nZ": (((c0, ceil_div(r, c0)), (16, ceil_div(c, 16))), ((1, round_up(c, 16) * c0), (c0, f))),
        "nN": (((c0, ceil_div(r, c0)), (16, ceil_div(c, 16))), ((1, f), (c0, round_up(r, c0) * 16))),
        "L0C": (((16, ceil_div(r, 16)), (16, ceil_div(c, 16))), ((16, 256), (1, round_up(r, 16) * 16))),
        "Weight4BitnZ": (((32, ceil_div(r, 32)), (16, ceil_div(c, 16))),
                         ((1, round_up(c, 16) * 32), (32, 512))),
    }
    if tag == "VectorLayout":
        return TlaLayout(Layout((c,), (1,)), (c,), bits)
    key = next((k for k in table if k.lower() == str(tag).lower()), None)
    if key is None:
        raise LayoutError(f"unknown TLA format {it.describe(tag)}; expected one of {', '.join(FORMATS)}")
    s, d = table[key]
    return TlaLayout(Layout(s, d), (rows, cols), bits)


def make_layout_l0c(rows: int, cols: int) -> TlaLayout:
    """``MakeLayoutL0C(rows, cols)``: zN with 16x16 fractals, whatever the element type."""
    return make_format("L0C", rows, cols)


# ---------------------------------------------------------------- tiles


def _tile_shape(lay: Layout, tile: Sequence[int]) -> IntTuple:
    if it.depth(lay.stride) <= 1:
        if len(tile) != it.rank(lay.stride):
            raise LayoutError(f"tile shape {tuple(tile)} must have the rank of {lay}")
        return tuple(tile) if isinstance(lay.shape, tuple) else tile[0]
    if it.rank(lay.stride) != 2 or len(tile) != 2:
        raise LayoutError(f"tiles of fractal layouts need rank 2 (layout {lay}, tile {tuple(tile)})")
    out: list[IntTuple] = []
    for mode, t in zip(lay.shape, tile):  # type: ignore[arg-type]
        if isinstance(mode, tuple):
            out.append((mode[0], it.ceil_div(t, mode[0])))
        else:
            out.append(t)
    return tuple(out)


def make_layout_tile(layout: TlaLayout | Layout | str, tile: Sequence[int]) -> TlaLayout:
    """``MakeLayoutTile(layout, (rows, cols))`` (before v1.5): new shape, same stride, origin = tile."""
    lay = _as_tla(layout).layout
    if not (isinstance(tile, (tuple, list)) and all(it.is_int(x) for x in tile)):
        raise LayoutError(f"make_layout_tile: tile must be a sequence of ints, got {it.describe(tile)}")
    return TlaLayout(Layout(_tile_shape(lay, tile), lay.stride), tuple(tile))


def get_tile_layout(layout: TlaLayout | Layout | str, tile: Sequence[int], coord: Sequence[int],
                    origin: Sequence[int] | None = None) -> TlaLayout:
    """``GetTileLayout(layout, tileShape, coord)``: the tile at element ``coord``.

    The origin shape is cropped to what is left of the parent's origin:
    ``min(tile, max(origin - coord, 0))`` per mode; the stride is unchanged.

    >>> str(get_tile_layout("((4,2),(4,3)):((4,16),(1,32))", (4, 4), (6, 10), origin=(8, 12)))
    '((4,1),(4,1)):((4,16),(1,32)) origin (2,2)'
    """
    parent = _as_tla(layout)
    for name, v in (("tile", tile), ("coord", coord), ("origin", origin)):
        if (v is not None or name != "origin") and not (
                isinstance(v, (tuple, list)) and all(it.is_int(x) for x in v)):
            raise LayoutError(f"get_tile_layout: {name} must be a sequence of ints, got {it.describe(v)}")
    base = tuple(origin) if origin is not None else parent.origin_shape
    if not (len(tile) == len(coord) == len(base)):
        raise LayoutError(f"tile {tuple(tile)}, coord {tuple(coord)} and origin {base} need equal ranks")
    new_origin = tuple(min(t, max(o - c, 0)) for t, c, o in zip(tile, coord, base))
    return TlaLayout(Layout(_tile_shape(parent.layout, tile), parent.layout.stride), new_origin)


# ---------------------------------------------------------------- format recognition


def _at(t: IntTuple, *path: int) -> IntTuple | None:
    """``get<path...>(t)``, or None where the path leaves the tuple."""
    for k in path:
        if not isinstance(t, tuple) or k >= len(t):
            return None
        t = t[k]
    return t


def _pairs(t: IntTuple) -> bool:
    """Both top-level modes of ``t`` are rank-2 tuples."""
    return all(isinstance(m, tuple) and len(m) == 2 for m in (_at(t, 0), _at(t, 1)))


def _fractal(lay: Layout, shape_pairs: bool, stride_pairs: bool) -> bool:
    """TLA's guard of the fractal checks: depth 2 and rank 2 (from the stride), plus rank-2 modes."""
    return (it.depth(lay.stride) == 2 and it.rank(lay.stride) == 2 and
            (not shape_pairs or _pairs(lay.shape)) and (not stride_pairs or _pairs(lay.stride)))


def is_format(layout: TlaLayout | Layout | str, tag: str, dtype: str | int = "f16") -> bool:
    """TLA's ``detail::is<Tag>`` checks: does ``layout`` have the pattern of format ``tag``?

    ``VectorLayout`` (isVector), ``RowMajor``, ``ColumnMajor``, ``zN``, ``zNUnAlign``, ``zZ``
    and ``nZ``; C0 and the fractal size come from ``dtype``. Like TLA, only the unit stride and
    the fractal pattern are looked at, not whether the strides are compact.

    >>> zn = make_format("zN", 100, 100, "f16")
    >>> is_format(zn, "zN"), is_format(zn, "nZ"), is_format("(4,8):(8,1)", "RowMajor")
    (True, False, True)
    """
    lay = _as_tla(layout).layout
    c0, frac, f16 = 256 // element_bits(dtype), 4096 // element_bits(dtype), C0_NUM_PER_FRACTAL
    shape, stride = lay.shape, lay.stride
    flat = it.depth(stride) == 1

    def at(*path: int) -> tuple[IntTuple | None, ...]:  # (shape<path>, stride<path>)
        return _at(shape, *path), _at(stride, *path)

    checks: dict[str, Callable[[], bool]] = {
        "vectorlayout": lambda: flat and it.rank(stride) == 1 and at(0)[1] == 1,
        "rowmajor": lambda: flat and it.rank(stride) == 2 and at(1)[1] == 1,
        "columnmajor": lambda: flat and it.rank(stride) == 2 and at(0)[1] == 1,
        "zn": lambda: _fractal(lay, True, True) and
        (at(0, 0)[0], at(1, 0)[0], at(1, 0)[1], at(0, 1)[1]) == (f16, c0, 1, frac),
        "znunalign": lambda: _fractal(lay, True, False) and
        (at(0, 1)[0], at(1, 0)[0], at(0, 0)[1], at(1, 0)[1]) == (1, c0, c0, 1),
        "zz": lambda: _fractal(lay, False, False) and
        (at(0, 0)[0], at(1, 0)[0], at(1, 0)[1], at(1, 1)[1]) == (f16, c0, 1, frac),
        "nz": lambda: _fractal(lay, False, True) and
        (at(0, 0)[0], at(1, 0)[0], at(0, 0)[1], at(1, 1)[1]) == (c0, f16, 1, frac),
    }
    check = checks.get(tag.lower()) if isinstance(tag, str) else None
    if check is None:
        raise LayoutError(f"is_format knows VectorLayout, RowMajor, ColumnMajor, zN, zNUnAlign, zZ and nZ, "
                          f"got {it.describe(tag)}")
    return check()
