"""XLA's GPU reduction emitters as the read-coalescing analysis sees them: thread ids -> the
elements of a reduction hero's inputs each thread reads.

A reduction is normalized to ``[D, H, W]`` (``ReductionDimensions``): a *row* reduction keeps
``H``, a *column* reduction keeps ``D`` and ``W``. The emitter XLA picks (``CreateReductionFusion``)
and its launch parameters follow XLA's heuristics: multi-row (small power-of-two rows, several
per warp), row, small column (minor kept size divides the warp) or column; its map goes from
``(th_x, th_y, th_z, bl_x, bl_y, bl_z)[loop symbols]`` to the normalized input, then to the hero
operand through the bitcast map.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nadd {\\n a = f32[] parameter(0)\\n b = f32[] parameter(1)\\n"
...   " ROOT s = f32[] add(a, b)\\n}\\nENTRY e {\\n p = f32[100,64,32] parameter(0)\\n"
...   " c = f32[] constant(0)\\n ROOT r = f32[100,32] reduce(p, c), dimensions={1}, to_apply=add\\n}")
>>> reduction_dimensions(m.entry.root)
ReductionDimensions(is_row_reduction=False, dimensions=(100, 64, 32))
>>> reduction_emitter_name(m.entry.root, 32, 32)
'SmallColumnReductionFusion'
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from tensorlayout.core.intmath import ceil_div, prod, row_major_strides
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.ops._common import bitcast_map, major_to_minor
from tensorlayout.indexing import Expr, IndexingMap, compose, const, var
from tensorlayout.xla.shape import Shape

__all__ = [
    "ReductionDimensions",
    "consecutive_dimensions",
    "reduction_dimensions",
    "reduction_emitter_name",
    "reduction_thread_id_to_input_indexing",
]

WARP = 32
TILE = 32  # kTileSize of the column emitters
MIN_THREADS_X_ROW_REDUCTION = 1024
THREADS_PER_BLOCK_TARGET = 256
MINOR_REDUCED_ELEMENTS_PER_THREAD = 16


@dataclass(frozen=True)
class ReductionDimensions:
    """``ReductionDimensions``: row ``[D, H, W] -> [D, H]`` or column ``[D, H, W] -> [D, W]``."""

    is_row_reduction: bool
    dimensions: tuple[int, int, int]


def consecutive_dimensions(shape: Shape, dims: Sequence[int]) -> bool:
    """``LayoutUtil::AreDimensionsConsecutive``: ``dims`` are adjacent in the physical order."""
    pos = sorted(major_to_minor(shape).index(d) for d in dims)
    return all(b == a + 1 for a, b in itertools.pairwise(pos))


def _partition(shape: Shape, middle: Sequence[int]) -> tuple[int, int, int]:
    """``PartitionShapeByMiddleDimensions``: products of the dims before, of, and after ``middle``."""
    order = major_to_minor(shape)
    pos = [order.index(d) for d in middle]
    lo, hi = min(pos), max(pos)
    dims = [shape.dimensions[d] for d in order]
    return prod(dims[:lo]), prod(dims[lo : hi + 1]), prod(dims[hi + 1 :])


def reduction_dimensions(reduce: HloInstruction) -> ReductionDimensions:
    """``GetReductionKindAndContiguousComponents`` of a reduce (a column reduction: module doc).

    >>> from tensorlayout.hlo import parse_module
    >>> m = parse_module("HloModule m\\nadd {\\n a = f32[] parameter(0)\\n b = f32[] parameter(1)\\n"
    ...   " ROOT s = f32[] add(a, b)\\n}\\nENTRY e {\\n p = f32[8,16,64] parameter(0)\\n"
    ...   " c = f32[] constant(0)\\n ROOT r = f32[8] reduce(p, c), dimensions={1,2}, to_apply=add\\n}")
    >>> reduction_dimensions(m.entry.root)  # a row reduction: the reduced dims are minor
    ReductionDimensions(is_row_reduction=True, dimensions=(1, 8, 1024))
    """
    shape = reduce.operands[0].shape
    reduced = list(reduce.attribute("dimensions", ()))
    kept = [d for d in range(shape.rank) if d not in reduced]
    if not kept:
        return ReductionDimensions(True, (1, 1, shape.elements_in()))
    if consecutive_dimensions(shape, kept):
        a, b, c = _partition(shape, kept)
        if b == 1:
            return ReductionDimensions(True, (1, 1, a * c))
        if c == 1:
            return ReductionDimensions(False, (1, a, b))
        return ReductionDimensions(True, (a, b, c))
    a, b, c = _partition(shape, reduced)
    if c == 1:
        return ReductionDimensions(True, (1, a, b))
    return ReductionDimensions(False, (a, b, c))


def _delinearize_in_bounds(linear: Expr, sizes: Sequence[int]) -> list[Expr]:
    """``DelinearizeInBoundsIndex``: ``(x / stride) mod size`` per dim, no mod on the first
    dimension larger than one (the index is in bounds)."""
    if 0 in sizes:
        return [const(0)] * len(sizes)
    strides = row_major_strides(sizes)
    out = [(linear // st) % n for n, st in zip(sizes, strides)]
    for k, n in enumerate(sizes):
        if n > 1:
            out[k] = linear // strides[k]
            break
    return out


def _vector_size(minor_dim: int, num_threads: int, smallest_input_bits: int) -> int:
    """``GetVectorSizeForMlir`` (complex inputs aside)."""
    if minor_dim % 2 or num_threads * 2 > minor_dim or smallest_input_bits >= 64:
        return 1
    if smallest_input_bits >= 32 or num_threads * 4 > minor_dim:
        return 2
    return 4 if minor_dim % 4 == 0 else 2


@dataclass(frozen=True)
class _Emitter:
    """One emitter's map into its normalized input shape."""

    name: str
    input_shape: tuple[int, ...]
    num_threads: int
    blocks: int
    results: tuple[Expr, ...]
    symbol_sizes: tuple[int, ...]

    def indexing(self) -> IndexingMap:
        dims = [(0, self.num_threads - 1), (0, 0), (0, 0), (0, self.blocks - 1), (0, 0), (0, 0)]
        ranges = [(0, n - 1) for n in self.symbol_sizes]
        constraints = [(r, (0, n - 1)) for r, n in zip(self.results, self.input_shape)]
        return IndexingMap(list(self.results), dims, ranges, (), constraints)


def _row(r: ReductionDimensions, in_bits: int) -> _Emitter:
    d, h, w = r.dimensions
    reduced = min(
        MIN_THREADS_X_ROW_REDUCTION, ceil_div(ceil_div(w, MINOR_REDUCED_ELEMENTS_PER_THREAD), WARP) * WARP
    )
    kept = 1
    if reduced * 2 <= THREADS_PER_BLOCK_TARGET:
        kept = h if h * reduced <= THREADS_PER_BLOCK_TARGET else THREADS_PER_BLOCK_TARGET // reduced
    vec = _vector_size(w, reduced, in_bits)
    shape = (d, h, w // vec, vec)
    minor_tile = min(MINOR_REDUCED_ELEMENTS_PER_THREAD // vec, ceil_div(shape[2], reduced))
    per_block = (kept, minor_tile * reduced)
    blocks = (ceil_div(shape[1], per_block[0]), ceil_div(shape[2], per_block[1]))
    tid = _delinearize_in_bounds(var(0), [kept, reduced])
    bid = _delinearize_in_bounds(var(3), list(blocks))
    s0, s1, s2 = var(6), var(7), var(8)
    results = (s0, bid[0] * per_block[0] + tid[0], bid[1] * per_block[1] + s1 * reduced + tid[1], s2)
    return _Emitter("RowReductionFusion", shape, kept * reduced, prod(blocks), results, (d, minor_tile, vec))


def _multi_row_threads(r: ReductionDimensions, vec: int) -> tuple[int, int]:
    reduced = r.dimensions[2] // vec
    kept_size = r.dimensions[1]
    kept = (
        kept_size if kept_size * reduced <= THREADS_PER_BLOCK_TARGET else THREADS_PER_BLOCK_TARGET // reduced
    )
    return kept, reduced


def _multi_row(r: ReductionDimensions, in_bits: int, out_bits: int, cores: int) -> _Emitter | None:
    """``MultiRowReductionFusion::TryCreate``: power-of-two rows of at most a warp of vectors."""
    d, h, w = r.dimensions
    if w & (w - 1):
        return None
    small, large = min(in_bits, out_bits), max(in_bits, out_bits)
    vec = min(w, 64 // small)
    if large >= 32:
        vec = min(128 // large, vec)
    if w > WARP * vec:
        return None
    while vec > 1 and ceil_div(h, _multi_row_threads(r, vec)[0]) < cores:
        vec //= 2
    if w > WARP * vec:
        return None
    kept, reduced = _multi_row_threads(r, vec)
    blocks = ceil_div(h, kept)
    tid = _delinearize_in_bounds(var(0), [kept, reduced])
    block = _delinearize_in_bounds(var(3), [blocks])[0] if blocks != 1 else const(0)
    results = (var(6), block * kept + tid[0], tid[1] * vec + var(7))
    return _Emitter("MultiRowReductionFusion", (d, h, w), kept * reduced, blocks, results, (d, vec))


def _column(r: ReductionDimensions, in_bits: int) -> _Emitter:
    d, h, w = r.dimensions
    vec = _vector_size(w, TILE, in_bits)
    blocks = (d, ceil_div(w, TILE * vec))
    tid = _delinearize_in_bounds(var(0), [TILE, TILE])
    bid = _delinearize_in_bounds(var(3), list(blocks))
    results = (bid[0], tid[0] + var(6) * TILE, (bid[1] * TILE + tid[1]) * vec + var(7))
    return _Emitter(
        "ColumnReductionFusion", (d, h, w), TILE * TILE, prod(blocks), results, (ceil_div(h, TILE), vec)
    )


def _small_column(r: ReductionDimensions, in_bits: int) -> _Emitter:
    d, h, w = r.dimensions
    vec = _vector_size(h * w, TILE, in_bits)
    threads = 128
    shared_rows = vec * threads // w
    while shared_rows > TILE and vec > 1:
        vec //= 2
        shared_rows //= 2
    if shared_rows > TILE:
        threads //= shared_rows // TILE
    loop = ceil_div(h * w, vec * threads)
    linear = var(0) * vec + var(7) + var(6) * (vec * threads)
    flat = [linear // w, linear % w]
    return _Emitter("SmallColumnReductionFusion", (d, h, w), threads, d, (var(3), *flat), (loop, vec))


def _emitter(hero: HloInstruction, in_bits: int, out_bits: int, cores: int) -> _Emitter:
    """``CreateReductionFusion``: the emitter XLA picks for ``hero``."""
    r = reduction_dimensions(hero)
    if r.is_row_reduction:
        return _multi_row(r, in_bits, out_bits, cores) or _row(r, in_bits)
    return _small_column(r, in_bits) if WARP % r.dimensions[2] == 0 else _column(r, in_bits)


def reduction_emitter_name(hero: HloInstruction, in_bits: int, out_bits: int, cores: int = 84) -> str:
    """The name of the emitter class XLA picks for the reduction ``hero``."""
    return _emitter(hero, in_bits, out_bits, cores).name


def reduction_thread_id_to_input_indexing(
    hero: HloInstruction, in_bits: int, out_bits: int, cores: int = 84
) -> list[IndexingMap | None]:
    """``ReductionFusion::ComputeThreadIdToInputIndexing``: per hero operand, thread ids ->
    operand index (None for the init values, which have no indexing)."""
    emitter = _emitter(hero, in_bits, out_bits, cores)
    projected = emitter.indexing()
    inputs = len(hero.operands) // 2
    out: list[IndexingMap | None] = []
    for k, operand in enumerate(hero.operands):
        if k >= inputs:
            out.append(None)
            continue
        normalized = Shape.array(operand.shape.element_type, list(emitter.input_shape))
        out.append(compose(projected, bitcast_map(normalized, operand.shape)).simplify())
    return out
