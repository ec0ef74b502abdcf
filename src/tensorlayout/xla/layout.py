"""XLA ``Tile`` and ``Layout``: the data model, its parser and its printer.

A layout lists logical dimensions from most minor (fastest varying) to most major, then
optional annotations in XLA's fixed order: tiles ``T(..)(..)``, tail padding ``L(n)``,
index/pointer types ``#(..)``/``*(..)``, element size ``E(n)``, memory space ``S(n)``,
split configs ``SC(d:i,..)``, physical shape ``P(..)`` and metadata prefix ``M(n)``.

>>> layout = parse_layout("{3,2,0,1:T(8,128)(2,1)S(1)}")
>>> layout.minor_to_major, layout.tiles[0].dims, layout.memory_space
((3, 2, 0, 1), (8, 128), 1)
>>> str(layout)
'{3,2,0,1:T(8,128)(2,1)S(1)}'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from tensorlayout._cursor import Cursor, read_whole
from tensorlayout._lazy import lazy_modules
from tensorlayout.core._frozen import Frozen, set_field
from tensorlayout.core.intmath import INT64_MIN
from tensorlayout.errors import LayoutError, expect_text
from tensorlayout.xla.annotation import _CLOSE, _OPEN, SplitConfig, read_xla_int
from tensorlayout.xla.types import PrimitiveType

if TYPE_CHECKING:
    from tensorlayout.xla.shape import Shape

__all__ = [
    "COMBINE_DIMENSION",
    "MEMORY_SPACE_NAMES",
    "Layout",
    "SplitConfig",
    "Tile",
    "memory_space_name",
    "parse_layout",
    "read_layout",
    "read_xla_int",
    "tile_to_string",
]

#: what a layout does beyond reading and printing its common annotations (equality, the rare
#: annotations' readers), loaded on first use
_lazy = lazy_modules({"ops": "tensorlayout.xla.layout_ops"})

#: ``Tile::kCombineDimension``: a tile dim written ``*`` (stored as INT64_MIN, as in XLA).
COMBINE_DIMENSION = INT64_MIN

#: Names of the memory spaces the seeds give; others are device specific.
MEMORY_SPACE_NAMES = {0: "HBM (default device memory)", 1: "VMEM (fast on-chip memory)",
                      5: "host memory"}


def memory_space_name(space: int) -> str:
    """Human name of ``S(space)``: ``memory_space_name(1) == 'VMEM (fast on-chip memory)'``."""
    return MEMORY_SPACE_NAMES.get(space, f"device-specific memory space {space}")


def tile_to_string(dims: Sequence[int]) -> str:
    """``Tile::ToString``: the tile's sizes in parentheses, ``*`` for a combined dim.

    The one place a tile is printed (:class:`Tile`, layouts, tiling plans and bridges use it).

    >>> tile_to_string((8, COMBINE_DIMENSION, 128))
    '(8,*,128)'
    """
    return "(" + ",".join("*" if d == COMBINE_DIMENSION else str(d) for d in dims) + ")"


class Tile(Frozen):
    """A tile: sizes in major-to-minor order; ``COMBINE_DIMENSION`` is printed ``*``.

    A negative size other than ``*`` is refused here: XLA aborts on it (``MakeLayout``), and
    its printer would write "Invalid value". Empty tiles and 0 sizes are built (XLA builds
    them too) and rejected by validation ("layout has invalid tiles").

    >>> str(Tile((8, COMBINE_DIMENSION, 128)))
    '(8,*,128)'
    >>> Tile((8, -1))
    Traceback (most recent call last):
    tensorlayout.errors.LayoutError: expected tile sizes >= 0 or '*' (COMBINE_DIMENSION), but got (8, -1)
    """

    __slots__ = __match_args__ = ("dims",)
    dims: tuple[int, ...]

    def __init__(self, dims: tuple[int, ...]) -> None:
        if not isinstance(dims, tuple) or not all(_is_tile_dim(d) for d in dims):
            raise LayoutError(f"expected tile sizes >= 0 or '*' (COMBINE_DIMENSION), but got {dims!r}")
        set_field(self, "dims", dims)

    def __eq__(self, other: object) -> bool:  # (written out: layouts, and so tiles, are hashed per call)
        if other.__class__ is self.__class__:
            assert isinstance(other, Tile)
            return self.dims == other.dims
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.dims,))

    def __str__(self) -> str:
        return tile_to_string(self.dims)

    def __len__(self) -> int:
        return len(self.dims)


def _is_tile_dim(d: object) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and (d >= 0 or d == COMBINE_DIMENSION)


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Layout:
    """XLA ``Layout``: ``minor_to_major`` plus every annotation field (defaults not printed).

    Equality follows ``Layout::Equal``: every field except
    ``dynamic_shape_metadata_prefix_bytes`` (M) is compared.
    """

    minor_to_major: tuple[int, ...]
    tiles: tuple[Tile, ...] = ()
    tail_padding_alignment_in_elements: int = 1
    index_primitive_type: PrimitiveType | None = None
    pointer_primitive_type: PrimitiveType | None = None
    element_size_in_bits: int = 0
    memory_space: int = 0
    split_configs: tuple[SplitConfig, ...] = ()
    physical_shape: Shape | None = None
    dynamic_shape_metadata_prefix_bytes: int = field(default=0, compare=False)

    # (the dataclass's methods written out: a dataclass compiles its own with exec at every import)
    def __init__(self, minor_to_major: tuple[int, ...], tiles: tuple[Tile, ...] = (),
                 tail_padding_alignment_in_elements: int = 1,
                 index_primitive_type: PrimitiveType | None = None,
                 pointer_primitive_type: PrimitiveType | None = None, element_size_in_bits: int = 0,
                 memory_space: int = 0, split_configs: tuple[SplitConfig, ...] = (),
                 physical_shape: Shape | None = None, dynamic_shape_metadata_prefix_bytes: int = 0) -> None:
        set_field(self, "minor_to_major", minor_to_major)
        set_field(self, "tiles", tiles)
        set_field(self, "tail_padding_alignment_in_elements", tail_padding_alignment_in_elements)
        set_field(self, "index_primitive_type", index_primitive_type)
        set_field(self, "pointer_primitive_type", pointer_primitive_type)
        set_field(self, "element_size_in_bits", element_size_in_bits)
        set_field(self, "memory_space", memory_space)
        set_field(self, "split_configs", split_configs)
        set_field(self, "physical_shape", physical_shape)
        set_field(self, "dynamic_shape_metadata_prefix_bytes", dynamic_shape_metadata_prefix_bytes)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Layout)
            return (
                (self.minor_to_major, self.tiles, self.tail_padding_alignment_in_elements,
                 self.index_primitive_type, self.pointer_primitive_type, self.element_size_in_bits,
                 self.memory_space, self.split_configs, self.physical_shape)
                == (other.minor_to_major, other.tiles, other.tail_padding_alignment_in_elements,
                    other.index_primitive_type, other.pointer_primitive_type, other.element_size_in_bits,
                    other.memory_space, other.split_configs, other.physical_shape))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.minor_to_major, self.tiles, self.tail_padding_alignment_in_elements,
                     self.index_primitive_type, self.pointer_primitive_type, self.element_size_in_bits,
                     self.memory_space, self.split_configs, self.physical_shape))

    @classmethod
    def parse(cls, text: str) -> Layout:
        return parse_layout(text)

    @property
    def rank(self) -> int:
        return len(self.minor_to_major)

    def minor(self, i: int) -> int:
        """``LayoutUtil::Minor``: the logical dim that is the i-th most minor."""
        return self.minor_to_major[i]

    def major(self, p: int) -> int:
        """``LayoutUtil::Major``: the logical dim at physical position p (0 = most major)."""
        return self.minor_to_major[len(self.minor_to_major) - 1 - p]

    @property
    def major_to_minor(self) -> tuple[int, ...]:
        return tuple(reversed(self.minor_to_major))

    def logical_to_physical(self) -> tuple[int, ...]:
        """``MakeLogicalToPhysical``: physical position of each logical dim."""
        out = [0] * self.rank
        for p, d in enumerate(self.major_to_minor):
            if 0 <= d < self.rank:
                out[d] = p
        return tuple(out)

    def replace(self, **changes: object) -> Layout:
        """A copy with fields changed (layouts are immutable)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def has_annotations(self) -> bool:
        return bool(
            self.tiles or self.tail_padding_alignment_in_elements != 1
            or self.index_primitive_type or self.pointer_primitive_type
            or self.element_size_in_bits or self.memory_space or self.split_configs
            or self.physical_shape is not None or self.dynamic_shape_metadata_prefix_bytes > 0
        )

    def __str__(self) -> str:
        """``Layout::ToString``: ``{minor_to_major:annotations}``, annotations in XLA's order."""
        text = ",".join(map(str, self.minor_to_major))
        if self.has_annotations():
            text += ":" + "".join(show(self) for show in _ANNOTATION_PRINTERS)
        return "{" + text + "}"

    def __repr__(self) -> str:
        """The text form: ``Layout('{1,0:T(2,2)}')``."""
        return f"Layout({str(self)!r})"

    def delete_dimension(self, dim: int) -> Layout:
        """``Layout::DeleteDimension``: drop ``dim`` from ``minor_to_major``, renumber the rest.

        Tiles and the other fields stay, as in XLA.

        >>> str(parse_layout("{2,0,1:T(2)}").delete_dimension(1))
        '{1,0:T(2)}'
        """
        if not 0 <= dim < self.rank:
            raise LayoutError(f"expected a dimension in [0, {self.rank}), but got {dim}")
        m2m = tuple(d - (d > dim) for d in self.minor_to_major if d != dim)
        return replace(self, minor_to_major=m2m)

    def to_string(self) -> str:
        """``LayoutUtil::HumanString`` / ``Layout::ToString``: the same text as ``str(layout)``.

        >>> Layout((1, 0), (Tile((8, 128)),)).to_string()
        '{1,0:T(8,128)}'
        """
        return str(self)

    def equal(
        self,
        other: Layout,
        *,
        ignore_tiles: bool = False,
        ignore_tail_padding: bool = False,
        ignore_index_primitive_type: bool = False,
        ignore_pointer_primitive_type: bool = False,
        ignore_element_size: bool = False,
        ignore_memory_space: bool = False,
        ignore_split_configs: bool = False,
        ignore_physical_shape: bool = False,
        minor_to_major_only: bool = False,
    ) -> bool:
        """``Layout::Equal`` with its ``Ignore*`` options (``M(n)`` is never compared, as in XLA).

        >>> parse_layout("{1,0:T(8,128)S(1)}").equal(parse_layout("{1,0}"), ignore_tiles=True,
        ...                                          ignore_memory_space=True)
        True
        """
        return bool(_lazy("ops").layout_equal(
            self, other, ignore_tiles=ignore_tiles, ignore_tail_padding=ignore_tail_padding,
            ignore_index_primitive_type=ignore_index_primitive_type,
            ignore_pointer_primitive_type=ignore_pointer_primitive_type,
            ignore_element_size=ignore_element_size,
            ignore_memory_space=ignore_memory_space, ignore_split_configs=ignore_split_configs,
            ignore_physical_shape=ignore_physical_shape, minor_to_major_only=minor_to_major_only))


def _int_type_str(t: PrimitiveType) -> str:
    return t.name if t.is_integral else "invalid"


def _tiles_text(layout: Layout) -> str:
    return "T" + "".join(str(t) for t in layout.tiles) if layout.tiles else ""


def _tail_text(layout: Layout) -> str:
    n = layout.tail_padding_alignment_in_elements
    return f"L({n})" if n != 1 else ""


def _index_type_text(layout: Layout) -> str:
    t = layout.index_primitive_type
    return f"#({_int_type_str(t)})" if t is not None else ""


def _pointer_type_text(layout: Layout) -> str:
    t = layout.pointer_primitive_type
    return f"*({_int_type_str(t)})" if t is not None else ""


def _element_size_text(layout: Layout) -> str:
    return f"E({layout.element_size_in_bits})" if layout.element_size_in_bits else ""


def _memory_space_text(layout: Layout) -> str:
    return f"S({layout.memory_space})" if layout.memory_space else ""


def _split_configs_text(layout: Layout) -> str:
    return "SC" + "".join(str(c) for c in layout.split_configs) if layout.split_configs else ""


def _physical_shape_text(layout: Layout) -> str:
    shape = layout.physical_shape
    return f"P({shape.to_string(with_layout=True)})" if shape is not None else ""


def _metadata_prefix_text(layout: Layout) -> str:
    n = layout.dynamic_shape_metadata_prefix_bytes
    return f"M({n})" if n > 0 else ""


#: Each annotation's printer, in the order ``Layout::ToString`` writes them (each prints
#: nothing when its field has the default value).
_ANNOTATION_PRINTERS: tuple[Callable[[Layout], str], ...] = (
    _tiles_text, _tail_text, _index_type_text, _pointer_type_text, _element_size_text,
    _memory_space_text, _split_configs_text, _physical_shape_text, _metadata_prefix_text,
)

#: Reads the shape inside ``P(...)``. The shape and layout grammars nest in each other, so the
#: shape grammar (:func:`tensorlayout.xla.shape.read_shape`) passes its own reader in.
ShapeReader = Callable[[Cursor], "Shape"]

_ANNOTATION = re.compile(r"SC|[DTLESPM#*]")


# layout := '{' [INT (',' INT)*] [':' annotations] '}'
def read_layout(cur: Cursor, read_shape: ShapeReader | None = None) -> Layout:
    """Read a layout at the cursor (the ``{`` must come next).

    ``read_shape`` reads the shape of a ``P(...)`` annotation; without it ``P`` is refused.
    """
    cur.expect("{", "'{' to start a layout")
    m2m: list[int] = []
    if not cur.peek(":") and not cur.peek("}"):
        m2m.append(read_xla_int(cur, "a dimension number"))
        while cur.accept(","):
            m2m.append(read_xla_int(cur, "a dimension number"))
    fields: dict[str, object] = {}
    if cur.accept(":"):
        fields = _read_annotations(cur, read_shape)
    cur.expect("}", "'}' to end the layout (annotations go in the order T L # * E S SC P M)")
    return Layout(tuple(m2m), **fields)  # type: ignore[arg-type]


_ORDER = ("D", "T", "L", "#", "*", "E", "S", "SC", "P", "M")


# annotations := [dlt] [tiles] [tail] [index] [pointer] [esize] [mspace] [splits] [phys] [meta]
def _read_annotations(cur: Cursor, read_shape: ShapeReader | None) -> dict[str, object]:
    """Each annotation at most once, in XLA's order; the first that does not fit ends them."""
    fields: dict[str, object] = {}
    next_allowed = 0
    while True:
        cur.skip()
        m = _ANNOTATION.match(cur.text, cur.pos)
        if not m or m.group() not in _ORDER[next_allowed:]:
            return fields
        key = m.group()
        next_allowed = _ORDER.index(key) + 1
        cur.pos = m.end()
        if key == "P":
            fields["physical_shape"] = _read_physical_shape(cur, read_shape)
        else:
            fields.update(_ANNOTATION_READERS[key](cur))




def _read_paren_int(cur: Cursor) -> tuple[int, int]:
    """``'(' INT ')'``: the integer and where it starts."""
    cur.expect("(", _OPEN)
    start = cur.pos
    value = read_xla_int(cur, "an integer inside the annotation")
    cur.expect(")", _CLOSE)
    return start, value


# tail := 'L' '(' INT ')'      (XLA aborts on L(n) with n < 1; we refuse it)
def _read_tail_padding(cur: Cursor) -> dict[str, object]:
    start, value = _read_paren_int(cur)
    if value < 1:
        raise cur.error("L(n) with n >= 1 (tail padding alignment)", at=start)
    return {"tail_padding_alignment_in_elements": value}


# esize := 'E' '(' INT ')'
def _read_element_size(cur: Cursor) -> dict[str, object]:
    return {"element_size_in_bits": _read_paren_int(cur)[1]}


# mspace := 'S' '(' INT ')'     (stored as int8, as XLA does: S(256) is S(0))
def _read_memory_space(cur: Cursor) -> dict[str, object]:
    value = _read_paren_int(cur)[1]
    return {"memory_space": (value + 128) % 256 - 128}


# meta := 'M' '(' INT ')'
def _read_metadata_prefix(cur: Cursor) -> dict[str, object]:
    return {"dynamic_shape_metadata_prefix_bytes": _read_paren_int(cur)[1]}


# phys := 'P' '(' shape ')'
def _read_physical_shape(cur: Cursor, read_shape: ShapeReader | None) -> Shape:
    if read_shape is None:
        raise cur.error("no P(...) here: a physical shape is read only inside a shape "
                        "(parse_shape), where XLA refuses it for dense arrays")
    cur.expect("(")
    with cur.nested("a physical shape P(...)"):
        shape = read_shape(cur)
    cur.expect(")")
    return shape


# tiles := 'T' tile+       tile := '(' [tdim (',' tdim)*] ')'       tdim := INT | '*'
def _read_tiles(cur: Cursor) -> dict[str, object]:
    tiles: list[Tile] = []
    while cur.accept("("):
        dims: list[int] = []
        if not cur.peek(")"):
            dims.append(_read_tile_dim(cur))
            while cur.accept(","):
                dims.append(_read_tile_dim(cur))
        cur.expect(")", "')' to end the tile")
        tiles.append(Tile(tuple(dims)))
    if not tiles:
        raise cur.error("'(' to start a tile after T")
    return {"tiles": tuple(tiles)}


def _read_tile_dim(cur: Cursor) -> int:
    if cur.accept("*"):
        return COMBINE_DIMENSION
    start = cur.pos
    d = read_xla_int(cur, "a tile size or '*'")
    if d < 0 and d != COMBINE_DIMENSION:  # XLA reads INT64_MIN (as 2^63 or -2^63) as '*'
        raise cur.error("a non-negative tile size or '*'", at=start)
    return d


def _rare(name: str) -> Callable[[Cursor], dict[str, object]]:
    """The reader ``name`` of a rare annotation, from :mod:`tensorlayout.xla.layout_ops` when one comes."""
    return lambda cur: getattr(_lazy("ops"), name)(cur)


#: The reader of each annotation (``P`` needs the shape reader and is read apart).
_ANNOTATION_READERS: dict[str, Callable[[Cursor], dict[str, object]]] = {
    "D": _rare("skip_dim_level_types"), "T": _read_tiles, "L": _read_tail_padding,
    "#": _rare("read_index_type"), "*": _rare("read_pointer_type"), "E": _read_element_size,
    "S": _read_memory_space, "SC": _rare("read_split_configs"), "M": _read_metadata_prefix,
}


def parse_layout(text: str) -> Layout:
    """Parse XLA layout text such as ``{1,0:T(8,128)(2,1)}`` (``P(...)`` only inside a shape).

    >>> parse_layout("{:T(256)}").tiles
    (Tile(dims=(256,)),)
    """
    expect_text(text, "layout text")
    return _parse_layout_cached(text)


@lru_cache(maxsize=4096)
def _parse_layout_cached(text: str) -> Layout:
    return read_whole(text, read_layout, "end of the layout", comments=True)
