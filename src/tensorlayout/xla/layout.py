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
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from tensorlayout._cursor import Cursor
from tensorlayout.errors import LayoutError
from tensorlayout.xla.types import ELEMENT_TYPES, PrimitiveType

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
]

#: ``Tile::kCombineDimension``: a tile dim written ``*`` (stored as INT64_MIN, as in XLA).
COMBINE_DIMENSION = -(2**63)

#: Names of the memory spaces the seeds give; others are device specific.
MEMORY_SPACE_NAMES = {0: "HBM (default device memory)", 1: "VMEM (fast on-chip memory)",
                      5: "host memory"}


def memory_space_name(space: int) -> str:
    """Human name of ``S(space)``: ``memory_space_name(1) == 'VMEM (fast on-chip memory)'``."""
    return MEMORY_SPACE_NAMES.get(space, f"device-specific memory space {space}")


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile: sizes in major-to-minor order; ``COMBINE_DIMENSION`` is printed ``*``.

    >>> str(Tile((8, COMBINE_DIMENSION, 128)))
    '(8,*,128)'
    """

    dims: tuple[int, ...]

    def __str__(self) -> str:
        return "(" + ",".join(_tile_dim_str(d) for d in self.dims) + ")"

    def __len__(self) -> int:
        return len(self.dims)


def _tile_dim_str(d: int) -> str:
    if d == COMBINE_DIMENSION:
        return "*"
    return str(d) if d >= 0 else f"Invalid value {d}"


@dataclass(frozen=True, slots=True)
class SplitConfig:
    """``SC(dimension:split_indices)``; ``dimension`` is a *physical* dim (0 = most major)."""

    dimension: int
    split_indices: tuple[int, ...]

    def __str__(self) -> str:
        return f"({self.dimension}:{','.join(map(str, self.split_indices))})"


@dataclass(frozen=True, slots=True)
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
        out = ["{", ",".join(map(str, self.minor_to_major))]
        if self.has_annotations():
            out.append(":")
            if self.tiles:
                out.append("T" + "".join(str(t) for t in self.tiles))
            if self.tail_padding_alignment_in_elements != 1:
                out.append(f"L({self.tail_padding_alignment_in_elements})")
            if self.index_primitive_type is not None:
                out.append(f"#({_int_type_str(self.index_primitive_type)})")
            if self.pointer_primitive_type is not None:
                out.append(f"*({_int_type_str(self.pointer_primitive_type)})")
            if self.element_size_in_bits:
                out.append(f"E({self.element_size_in_bits})")
            if self.memory_space:
                out.append(f"S({self.memory_space})")
            if self.split_configs:
                out.append("SC" + "".join(str(s) for s in self.split_configs))
            if self.physical_shape is not None:
                out.append(f"P({self.physical_shape.to_string(with_layout=True)})")
            if self.dynamic_shape_metadata_prefix_bytes > 0:
                out.append(f"M({self.dynamic_shape_metadata_prefix_bytes})")
        out.append("}")
        return "".join(out)

    def equal(
        self,
        other: Layout,
        *,
        ignore_tiles: bool = False,
        ignore_tail_padding: bool = False,
        ignore_element_size: bool = False,
        ignore_memory_space: bool = False,
        ignore_split_configs: bool = False,
        minor_to_major_only: bool = False,
    ) -> bool:
        """``Layout::Equal`` with its ``Ignore*`` options."""
        if self.minor_to_major != other.minor_to_major:
            return False
        if minor_to_major_only:
            return True
        return (
            (ignore_tiles or self.tiles == other.tiles)
            and (ignore_tail_padding or self.tail_padding_alignment_in_elements
                 == other.tail_padding_alignment_in_elements)
            and self.index_primitive_type == other.index_primitive_type
            and self.pointer_primitive_type == other.pointer_primitive_type
            and (ignore_element_size or self.element_size_in_bits == other.element_size_in_bits)
            and (ignore_memory_space or self.memory_space == other.memory_space)
            and (ignore_split_configs or self.split_configs == other.split_configs)
            and self.physical_shape == other.physical_shape
        )


def _int_type_str(t: PrimitiveType) -> str:
    return t.name if t.is_integral else "invalid"


_ANNOTATION = re.compile(r"SC|[DTLESPM#*]")
_INT_TOKEN = re.compile(r"-?[0-9]+")


def _read_int(cur: Cursor, what: str = "an integer") -> int:
    """An XLA INT token: values in [2^63, 2^64) bit-cast to int64; larger ones are errors."""
    start = cur.pos
    value = cur.integer(what)
    if value >= 2**64 or value < -(2**63):
        raise cur.error(f"{what} that fits in 64 bits", at=start)
    if value >= 2**63:
        value -= 2**64
    return value


# layout := '{' [INT (',' INT)*] [':' annotations] '}'
def read_layout(cur: Cursor) -> Layout:
    """Read a layout at the cursor (the ``{`` must come next)."""
    cur.expect("{", "'{' to start a layout")
    m2m: list[int] = []
    if not cur.peek(":") and not cur.peek("}"):
        m2m.append(_read_int(cur, "a dimension number"))
        while cur.accept(","):
            m2m.append(_read_int(cur, "a dimension number"))
    fields: dict[str, object] = {}
    if cur.accept(":"):
        _read_annotations(cur, fields)
    cur.expect("}", "'}' to end the layout (annotations go in the order T L # * E S SC P M)")
    return Layout(tuple(m2m), **fields)  # type: ignore[arg-type]


_ORDER = ("D", "T", "L", "#", "*", "E", "S", "SC", "P", "M")


# annotations := [dlt] [tiles] [tail] [index] [pointer] [esize] [mspace] [splits] [phys] [meta]
def _read_annotations(cur: Cursor, fields: dict[str, object]) -> None:
    next_allowed = 0
    while True:
        cur.skip()
        m = _ANNOTATION.match(cur.text, cur.pos)
        if not m or m.group() not in _ORDER[next_allowed:]:
            return
        key = m.group()
        next_allowed = _ORDER.index(key) + 1
        cur.pos = m.end()
        if key == "D":
            _skip_dim_level_types(cur)
        elif key == "T":
            fields["tiles"] = _read_tiles(cur)
        elif key in ("L", "E", "S", "M"):
            cur.expect("(")
            start = cur.pos
            value = _read_int(cur)
            cur.expect(")")
            if key == "L":
                if value < 1:
                    raise cur.error("L(n) with n >= 1 (tail padding alignment)", at=start)
                fields["tail_padding_alignment_in_elements"] = value
            elif key == "E":
                fields["element_size_in_bits"] = value
            elif key == "S":
                fields["memory_space"] = (value + 128) % 256 - 128  # int8, as XLA stores it
            else:
                fields["dynamic_shape_metadata_prefix_bytes"] = value
        elif key in ("#", "*"):
            cur.expect("(")
            start = cur.pos
            name = cur.identifier("an unsigned integer type")
            t = ELEMENT_TYPES.get(name)
            if t is None or not t.is_unsigned:
                raise cur.error("an unsigned integer type such as u32", at=start)
            cur.expect(")")
            fields["index_primitive_type" if key == "#" else "pointer_primitive_type"] = t
        elif key == "SC":
            fields["split_configs"] = _read_split_configs(cur)
        else:  # "P"
            from tensorlayout.xla.shape import read_shape

            cur.expect("(")
            fields["physical_shape"] = read_shape(cur)
            cur.expect(")")


# tiles := 'T' ('(' [tdim (',' tdim)*] ')')+      tdim := INT | '*'
def _read_tiles(cur: Cursor) -> tuple[Tile, ...]:
    tiles: list[Tile] = []
    while cur.accept("("):
        dims: list[int] = []
        if not cur.peek(")"):
            while True:
                if cur.accept("*"):
                    dims.append(COMBINE_DIMENSION)
                else:
                    start = cur.pos
                    d = _read_int(cur, "a tile size or '*'")
                    if d < 0:
                        raise cur.error("a non-negative tile size or '*'", at=start)
                    dims.append(d)
                if not cur.accept(","):
                    break
        cur.expect(")", "')' to end the tile")
        tiles.append(Tile(tuple(dims)))
    if not tiles:
        raise cur.error("'(' to start a tile after T")
    return tuple(tiles)


# splits := 'SC' ('(' INT ':' [INT (',' INT)*] ')')+
def _read_split_configs(cur: Cursor) -> tuple[SplitConfig, ...]:
    configs: list[SplitConfig] = []
    while cur.accept("("):
        dim = _read_int(cur, "a physical dimension number")
        cur.expect(":")
        idx: list[int] = []
        if not cur.peek(")"):
            idx.append(_read_int(cur, "a split index"))
            while cur.accept(","):
                idx.append(_read_int(cur, "a split index"))
        cur.expect(")")
        configs.append(SplitConfig(dim, tuple(idx)))
    if not configs:
        raise cur.error("'(' to start a split config after SC")
    return tuple(configs)


# dlt := 'D' '(' [lvl (',' lvl)*] ')'     lvl := ('D'|'C'|'S'|'H') ['+'] ['~']
def _skip_dim_level_types(cur: Cursor) -> None:
    """XLA (2026) parses dim-level types and drops them; so do we."""
    cur.expect("(")
    if cur.accept(")"):
        return
    while True:
        cur.skip()
        if cur.pos < len(cur.text) and cur.text[cur.pos] in "DCSH":
            cur.pos += 1
        else:
            raise cur.error("a DimLevelType abbreviation (D, C, or S)")
        cur.accept("+")
        cur.accept("~")
        if not cur.accept(","):
            break
    cur.expect(")")


def parse_layout(text: str) -> Layout:
    """Parse XLA layout text such as ``{1,0:T(8,128)(2,1)}``.

    >>> parse_layout("{:T(256)}").tiles
    (Tile(dims=(256,)),)
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected layout text (str), but got {type(text).__name__}")
    return _parse_layout_cached(text)


@lru_cache(maxsize=4096)
def _parse_layout_cached(text: str) -> Layout:
    cur = Cursor(text, comments=True)
    layout = read_layout(cur)
    cur.expect_end("end of the layout")
    return layout


def check_layout_fields(layout: Layout) -> Layout:
    """Reject a layout whose fields no XLA text could produce (used by constructors)."""
    for t in layout.tiles:
        if any(d < 0 and d != COMBINE_DIMENSION for d in t.dims):
            raise LayoutError(f"tile {t} has a negative size; only '*' is allowed")
    return layout
