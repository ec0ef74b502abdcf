"""Padding advice: why an array takes more bytes than its elements, and what would not.

:func:`padding_report` gives, for one array shape, its logical bytes (``ByteSizeOf``), its
allocated bytes (``ArraySize``), which dimension each tile pads and by how much, and the
cheapest alternatives computed under the TPU's tiling rules (:mod:`tensorlayout.xla.tpu`):
another ``minor_to_major``, a transpose that moves a padded dimension to the front, or a
reshape that merges or drops dimensions, each with its exact allocated bytes.

>>> r = padding_report("s32[2048,1,128,128,4]{4,3,2,0,1:T(8,128)}")
>>> r.logical_bytes, r.allocated_bytes, r.padded_dimensions
(536870912, 17179869184, (4,))
>>> print(r.alternatives[0].change, r.alternatives[0].allocated_bytes)
major_to_minor=(0, 1, 2, 4, 3) (XLA {3,4,2,1,0}), the TPU default 536870912
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tensorlayout.core.intmath import prod, round_up
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.xla.shape import Shape, as_shape
from tensorlayout.xla.shape_query import is_unbounded_dynamic
from tensorlayout.xla.sizes import array_size, byte_size_of_elements, max_split_size
from tensorlayout.xla.tpu import default_layout, tiled_layout

__all__ = [
    "Alternative",
    "BufferPadding",
    "DimensionPadding",
    "PaddingReport",
    "PaddingSummary",
    "binary_bytes",
    "buffers_padding",
    "dimension_padding",
    "human_bytes",
    "layout_change",
    "padding_alternatives",
    "padding_report",
    "tpu_shape",
]

#: How many alternatives a report keeps by default.
MAX_ALTERNATIVES = 5
#: Order of alternative kinds when their bytes tie (the least intrusive change first).
_KIND_ORDER = {"layout": 0, "transpose": 1, "reshape": 2}


def human_bytes(n: int) -> str:
    """Bytes as XLA's memory reports print them (``HumanReadableNumBytes``).

    >>> human_bytes(1000), human_bytes(1536), human_bytes(17179869184)
    ('1000B', '1.5K', '16.00G')
    """
    sign, n = ("-", -n) if n < 0 else ("", n)
    if n < 1024:
        return f"{sign}{n}B"
    value, index = n / 1024, 0
    while value >= 1024 and index < 5:
        value, index = value / 1024, index + 1
    unit = "KMGTPE"[index]
    return f"{sign}{value:.1f}{unit}" if unit == "K" else f"{sign}{value:.2f}{unit}"


def binary_bytes(n: int) -> str:
    """Bytes as XLA's buffer-assignment and memory-usage reports print them (KiB, MiB, GiB).

    >>> binary_bytes(1000), binary_bytes(1536), binary_bytes(7553618), binary_bytes(-3 * 2**30)
    ('1000B', '1.5KiB', '7.20MiB', '-3.00GiB')
    """
    short = human_bytes(n)
    return short if short.endswith("B") else short + "iB"


@dataclass(frozen=True, slots=True)
class DimensionPadding:
    """How the first tile pads one physical dimension.

    ``dimension`` is the logical dim (``None`` for a size-1 dim the tile adds above a
    low-rank array); ``physical`` counts from the most minor (0); ``tile_size`` is the tile
    entry covering it (0 when no tile reaches it).
    """

    dimension: int | None
    physical: int
    size: int
    padded_size: int
    tile_size: int

    @property
    def factor(self) -> float:
        """``padded_size / size`` (1.0 for an empty dim)."""
        return self.padded_size / self.size if self.size else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "physical": self.physical, "size": self.size,
                "padded_size": self.padded_size, "tile_size": self.tile_size,
                "factor": self.factor}


def dimension_padding(shape: Shape | str) -> tuple[DimensionPadding, ...]:
    """Per physical dim (minor first), the size, the padded size and the tile that pads it.

    Only the first tile pads, as in ``ShapeUtil::ArraySize``.

    >>> [(d.dimension, d.size, d.padded_size) for d in dimension_padding("f32[3,5]{1,0:T(2,2)}")]
    [(1, 5, 6), (0, 3, 4)]
    """
    shape = _array(shape)
    layout = shape.layout
    tile = layout.tiles[0].dims if layout is not None and layout.tiles else ()
    rank = shape.rank
    out = []
    for k in range(max(len(tile), rank)):
        dim = layout.minor(k) if layout is not None and k < rank else (
            rank - 1 - k if k < rank else None)
        size = max_split_size(shape, dim) if dim is not None else 1
        t = tile[len(tile) - 1 - k] if k < len(tile) else 0
        padded = round_up(size, t) if t > 0 else size
        out.append(DimensionPadding(dim, k, size, padded, max(t, 0)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Alternative:
    """A cheaper way to hold the same elements: ``kind`` is ``layout``, ``transpose`` or
    ``reshape``; ``change`` says what to do; ``shape`` is the result with its TPU layout."""

    kind: str
    change: str
    shape: Shape
    allocated_bytes: int

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "change": self.change,
                "shape": self.shape.to_string(with_layout=True),
                "logical_bytes": byte_size_of_elements(self.shape),
                "allocated_bytes": self.allocated_bytes}


def _array(shape: Shape | str) -> Shape:
    shape = as_shape(shape)
    if shape.is_buffer:
        shape = shape.buffer_shape
    if not shape.is_array:
        raise LayoutError(f"expected an array shape, but got {shape}")
    return shape


def _m2m_text(m2m: Iterable[int]) -> str:
    return "{" + ",".join(map(str, m2m)) + "}"


def layout_change(minor_to_major: Iterable[int]) -> str:
    """A dim order as JAX takes it (``Layout(major_to_minor=...)``) and as XLA prints it.

    >>> layout_change((0, 1))
    'major_to_minor=(1, 0) (XLA {0,1})'
    """
    m2m = tuple(minor_to_major)
    return f"major_to_minor={tuple(reversed(m2m))!r} (XLA {_m2m_text(m2m)})".replace(",)", ")")


def _layout_candidates(shape: Shape, generation: str | None) -> Iterator[Alternative]:
    """Every (minor, second-minor) pair, the other dims in descending order, TPU tiles."""
    dims, et = shape.dimensions, shape.element_type
    default = default_layout(et, dims, generation=generation)
    yield _candidate("layout", f"{layout_change(default.minor_to_major)}, the TPU default",
                     Shape.array(et, dims, default))
    order = list(range(len(dims) - 1, -1, -1))
    for a in order:
        for b in order:
            if a != b:
                m2m = (a, b) + tuple(d for d in order if d not in (a, b))
                layout = tiled_layout(et, dims, m2m, generation=generation)
                yield _candidate("layout", layout_change(m2m), Shape.array(et, dims, layout))


def _tpu_shape(shape: Shape, dims: tuple[int, ...], generation: str | None) -> Shape:
    et = shape.element_type
    return Shape.array(et, dims, default_layout(et, dims, generation=generation))


def _transpose_candidates(shape: Shape, generation: str | None) -> Iterator[Alternative]:
    """Move each padded dim to the front (``jnp.moveaxis(x, d, 0)``), TPU default layout."""
    dims = shape.dimensions
    for d in sorted({p.dimension for p in dimension_padding(shape)
                     if p.dimension is not None and p.padded_size > p.size}):
        if d == 0:
            continue
        new = (dims[d],) + dims[:d] + dims[d + 1:]
        yield _candidate("transpose", f"move dim {d} (size {dims[d]}) to the front: "
                         f"jnp.moveaxis(x, {d}, 0)",
                         _tpu_shape(shape, new, generation))


def _reshape_candidates(shape: Shape, generation: str | None) -> Iterator[Alternative]:
    """Merge each run of neighbouring dims (all of them: a flatten), and drop every size-1
    dim (free reshapes of the row-major logical order), TPU default layout."""
    dims = shape.dimensions
    runs = [(a, b) for a in range(len(dims)) for b in range(a + 2, len(dims) + 1)]
    for i, j in sorted(runs, key=lambda ab: ab[1] - ab[0]):
        merged = prod(dims[i:j])
        new = dims[:i] + (merged,) + dims[j:]
        what = "flatten" if len(new) == 1 else f"merge dims {i}..{j - 1} into {merged}"
        yield _candidate("reshape", f"{what}: reshape{new}".replace(",)", ")"),
                         _tpu_shape(shape, new, generation))
    squeezed = tuple(d for d in dims if d != 1)
    if len(squeezed) < len(dims):
        yield _candidate("reshape", f"drop the size-1 dims: reshape{squeezed}".replace(",)", ")"),
                         _tpu_shape(shape, squeezed, generation))


def _candidate(kind: str, change: str, shape: Shape) -> Alternative:
    return Alternative(kind, change, shape, array_size(shape))


def _known(source: Iterator[Alternative]) -> Iterator[Alternative]:
    """The candidates of ``source`` up to one with no known TPU layout (a 2-bit vector)."""
    try:
        yield from source
    except UnsupportedError:
        return


def padding_alternatives(shape: Shape | str, *, generation: str | None = None,
                         limit: int = MAX_ALTERNATIVES) -> tuple[Alternative, ...]:
    """The cheapest layouts, transposes and reshapes that allocate fewer bytes than ``shape``.

    The cheapest of each kind (layout, transpose, reshape) first, then the others, each
    group by allocated bytes; distinct shapes only.

    >>> [a.allocated_bytes for a in padding_alternatives("f32[256,512,128,2]{3,2,1,0:T(8,128)}")]
    [134217728, 134217728, 134217728, 134217728, 134217728]
    """
    shape = _array(shape)
    current = array_size(shape)
    if any(shape.dynamic_dimensions) or not shape.rank:
        return ()
    found: dict[str, Alternative] = {}
    for source in (_layout_candidates, _transpose_candidates, _reshape_candidates):
        for alt in _known(source(shape, generation)):
            key = alt.shape.to_string(with_layout=True)
            if alt.allocated_bytes < current and key not in found:
                found[key] = alt
    ranked = sorted(found.values(), key=lambda a: (a.allocated_bytes, _KIND_ORDER[a.kind]))
    best_of_kind = [next(a for a in ranked if a.kind == kind)
                    for kind in _KIND_ORDER if any(a.kind == kind for a in ranked)]
    rest = [a for a in ranked if a not in best_of_kind]
    return tuple(sorted(best_of_kind, key=ranked.index) + rest)[:limit]


@dataclass(frozen=True, slots=True)
class PaddingReport:
    """One array's bytes, per-dimension padding and cheaper alternatives."""

    shape: Shape
    logical_bytes: int
    allocated_bytes: int
    dimensions: tuple[DimensionPadding, ...]
    alternatives: tuple[Alternative, ...]

    @property
    def ratio(self) -> float:
        """Allocated bytes per logical byte (1.0 = no padding)."""
        return self.allocated_bytes / self.logical_bytes if self.logical_bytes else 1.0

    @property
    def waste(self) -> int:
        """Bytes allocated for padding."""
        return self.allocated_bytes - self.logical_bytes

    @property
    def padded_dimensions(self) -> tuple[int, ...]:
        """Logical dims that a tile pads, most minor first."""
        return tuple(d.dimension for d in self.dimensions
                     if d.dimension is not None and d.padded_size > d.size)

    def as_dict(self) -> dict[str, Any]:
        return {"shape": self.shape.to_string(with_layout=True),
                "logical_bytes": self.logical_bytes, "allocated_bytes": self.allocated_bytes,
                "ratio": self.ratio, "waste_bytes": self.waste,
                "padded_dimensions": list(self.padded_dimensions),
                "dimensions": [d.as_dict() for d in self.dimensions],
                "alternatives": [a.as_dict() for a in self.alternatives]}


def padding_report(shape: Shape | str, *, generation: str | None = None,
                   limit: int = MAX_ALTERNATIVES) -> PaddingReport:
    """The padding facts and advice for one array shape (layout as given).

    >>> padding_report("bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}").ratio
    4.0
    """
    shape = _array(shape)
    alternatives = padding_alternatives(shape, generation=generation, limit=limit) if limit else ()
    return PaddingReport(shape, byte_size_of_elements(shape), array_size(shape),
                         dimension_padding(shape), alternatives)


@dataclass(frozen=True, slots=True)
class BufferPadding:
    """One named buffer (an instruction result, a parameter, a tuple element) and its report."""

    name: str
    report: PaddingReport

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.report.as_dict()}


@dataclass(frozen=True, slots=True)
class PaddingSummary:
    """Buffers sorted by wasted bytes (most first), with totals."""

    buffers: tuple[BufferPadding, ...]

    @property
    def logical_bytes(self) -> int:
        return sum(b.report.logical_bytes for b in self.buffers)

    @property
    def allocated_bytes(self) -> int:
        return sum(b.report.allocated_bytes for b in self.buffers)

    def by_memory_space(self) -> dict[int, tuple[int, int]]:
        """``{memory space: (logical bytes, allocated bytes)}`` (0 = HBM, 1 = VMEM…).

        >>> buffers_padding([("a", Shape.parse("f32[8,2]{1,0:T(8,128)S(1)}"))]).by_memory_space()
        {1: (64, 4096)}
        """
        out: dict[int, tuple[int, int]] = {}
        for b in self.buffers:
            layout = b.report.shape.layout
            space = layout.memory_space if layout is not None else 0
            logical, allocated = out.get(space, (0, 0))
            out[space] = (logical + b.report.logical_bytes, allocated + b.report.allocated_bytes)
        return dict(sorted(out.items()))

    def as_dict(self) -> dict[str, Any]:
        logical, allocated = self.logical_bytes, self.allocated_bytes
        return {"logical_bytes": logical, "allocated_bytes": allocated,
                "ratio": allocated / logical if logical else 1.0,
                "waste_bytes": allocated - logical,
                "memory_spaces": [{"memory_space": space, "logical_bytes": lo,
                                   "allocated_bytes": al}
                                  for space, (lo, al) in self.by_memory_space().items()],
                "buffers": [b.as_dict() for b in self.buffers]}


def buffers_padding(buffers: Iterable[tuple[str, Shape]], *, generation: str | None = None,
                    limit: int = 3) -> PaddingSummary:
    """Reports for named shapes (tuples split into ``name{i}`` leaves), most waste first.

    >>> s = buffers_padding([("a", Shape.parse("f32[8,128]{1,0:T(8,128)}")),
    ...                      ("b", Shape.parse("f32[8,2]{1,0:T(8,128)}"))])
    >>> [b.name for b in s.buffers], s.logical_bytes, s.allocated_bytes
    (['b', 'a'], 4160, 8192)
    """
    out = [BufferPadding(name, padding_report(leaf, generation=generation, limit=limit))
           for name, shape in buffers for name, leaf in _leaves(name, shape)]
    out.sort(key=lambda b: (-b.report.waste, b.name))
    return PaddingSummary(tuple(out))


def _leaves(name: str, shape: Shape) -> Iterator[tuple[str, Shape]]:
    if shape.is_tuple:
        for i, sub in enumerate(shape.tuple_shapes):
            yield from _leaves(f"{name}{{{i}}}", sub)
    elif shape.is_array or shape.is_buffer:
        yield name, shape



def tpu_shape(shape: Shape | str, *, generation: str | None = None) -> Shape:
    """``shape`` with the TPU default layout when it has no tiles (other shapes unchanged;
    tuples element by element).

    >>> str(tpu_shape("f32[8,2]{1,0}").to_string(with_layout=True))
    'f32[8,2]{0,1:T(2,128)}'
    """
    shape = as_shape(shape)
    if shape.is_tuple:
        return Shape.tuple_of(*(tpu_shape(s, generation=generation) for s in shape.tuple_shapes))
    if not shape.is_array or (shape.layout is not None and shape.layout.tiles):
        return shape
    if is_unbounded_dynamic(shape):
        raise LayoutError(f"{shape} has an unbounded dynamic dimension '?', which has no size "
                          "and no TPU layout; give it a bound such as '<=128'")
    et, dims = shape.element_type, shape.dimensions
    layout = default_layout(et, dims, generation=generation)
    if shape.layout is not None:
        layout = layout.replace(memory_space=shape.layout.memory_space)
    return Shape(et, dims, shape.dynamic_dimensions, layout)
