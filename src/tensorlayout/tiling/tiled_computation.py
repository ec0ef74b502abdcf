"""XLA's ``ComputeTiledComputation``: concrete tiles of every symbolically tiled instruction.

The output tile grid comes from the real root's indexing (``ceil(N / t)`` tiles per active
parameter, offsets ``t * pid``), linearized by a schedule; each instruction's offsets are that
schedule composed with its own indexing map (range variables at their lower bound 0), its
sizes and strides its symbolic tile evaluated at the tile sizes. Dots tile their operands in
a loop region over the contracting parameters; concatenates tile each operand in a branch.
Entry point: :meth:`tensorlayout.tiling.SymbolicTileAnalysis.compute_tiled_computation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo import HloInstruction
from tensorlayout.indexing import IndexingMap, Interval, Variable, compose_indexing_maps, const, var
from tensorlayout.indexing.expr import Expr
from tensorlayout.tiling.symbolic_tile import evaluate_tile_sizes, evaluate_tile_strides
from tensorlayout.tiling.symbolic_tiled_hlo import SymbolicTiledHloInstruction, hlo_to_string
from tensorlayout.tiling.tiled_hlo import TiledHloComputation, TiledHloInstruction
from tensorlayout.tiling.tiled_hlo_schedule import (
    DimensionInfo,
    MajorToMinorTiledHloSchedule,
    TiledHloSchedule,
)
from tensorlayout.tiling.tiling_specification import FlatTiling

__all__ = ["compute_tiled_computation", "output_tiling_info"]


@dataclass(frozen=True, slots=True)
class OutputTilingInfo:
    """The tile grid of one root: tiles per parameter, offsets per tile index and per program id."""

    num_output_tiles_per_dim: tuple[int, ...]
    output_tile_offset_indexing: IndexingMap
    linear_output_tile_offset_indexing: IndexingMap


def active_parameters(m: IndexingMap, start: Sequence[int] = ()) -> list[int]:
    """``start`` then the dimensions the results of ``m`` use, in order of first use."""
    out = list(start)
    for r in m.results:
        for e in r.walk():
            if e.is_var and e.value < m.num_dims and e.value not in out:
                out.append(e.value)
    return out


def output_tiling_info(
    root_indexing: IndexingMap,
    tile_sizes: Sequence[int],
    active: Sequence[int],
    schedule: TiledHloSchedule,
    parent_bounds: Sequence[Interval] | None = None,
) -> OutputTilingInfo:
    """``ComputeOutputTilingInfo`` (UnsupportedError for offsets the grid cannot express)."""
    if root_indexing.num_range_vars:
        raise UnsupportedError("Range variables must be converted to dimensions")
    n = root_indexing.num_dims
    bounds = [1] * n
    dims = [Variable(Interval(0, 0), "ignore")] * n
    exprs: list[Expr] = [const(0)] * n
    constraints: list[tuple[Expr, Interval]] = []
    space = []
    for d in active:
        iv, t = root_indexing.get_dimension_bound(d), tile_sizes[d]
        if iv.lower % t:
            raise UnsupportedError(f"Dimension bounds are not divisible by tile size: {root_indexing}")
        upper = -(-(iv.upper + 1) // t)
        if parent_bounds is not None:
            constraints.append((var(d), Interval(iv.lower // t, upper - 1)))
            upper = parent_bounds[d].upper + 1
        elif iv.lower:
            raise UnsupportedError(f"Dimension lower bound is not equal to 0: {root_indexing}")
        bounds[d] = upper
        space.append(DimensionInfo(d, upper))
        dims[d] = Variable(Interval(0, upper - 1), f"pid_{d}")
        exprs[d] = var(d) * t
    offsets = IndexingMap(exprs, dims, (), root_indexing.rt_vars, constraints)
    return OutputTilingInfo(tuple(bounds), offsets, schedule.schedule(offsets, space))


def tile_offset_indexing(symbolic: SymbolicTiledHloInstruction, linear: IndexingMap) -> IndexingMap:
    """``ComputeTileOffsetIndexing``: program id -> this instruction's tile offsets."""
    m = compose_indexing_maps(linear, symbolic.indexing_map)
    if any(b.lower != 0 for b in m.get_symbol_bounds()):
        raise UnsupportedError(f"Symbol lower bound is not zero. {symbolic.indexing_map}")
    table: list[Expr | None] = [None] * m.num_dims + [const(0)] * m.num_range_vars
    table += [var(m.num_dims + i) for i in range(m.num_rt_vars)]
    results = [r.replace_variables(table) for r in m.results]
    constraints = {e.replace_variables(table): iv for e, iv in m.constraints.items()}
    out = IndexingMap(results, m.dim_vars, (), m.rt_vars, constraints.items())
    return out.simplify().rescale_symbols()


class _Tiler:
    """One run of ``ComputeTiledInstructions`` state: the tiling, the schedule, what is shared."""

    def __init__(
        self, flat: FlatTiling, schedule: TiledHloSchedule, compute_all: bool, with_offsets: set[int]
    ) -> None:
        self.flat, self.schedule, self.compute_all, self.with_offsets = (
            flat,
            schedule,
            compute_all,
            with_offsets,
        )

    def tile_all(
        self,
        instrs: Sequence[SymbolicTiledHloInstruction],
        info: OutputTilingInfo,
        active: Sequence[int],
        mapping: dict[int, TiledHloInstruction],
    ) -> list[TiledHloInstruction]:
        unique: dict[tuple[object, ...], TiledHloInstruction] = {}
        for s in instrs:
            t = self.tile_one(s, info, active, mapping)
            mapping[id(s)] = unique.setdefault(t.key(), t)
        return list(unique.values())

    def tile_one(
        self,
        s: SymbolicTiledHloInstruction,
        info: OutputTilingInfo,
        active: Sequence[int],
        mapping: dict[int, TiledHloInstruction],
    ) -> TiledHloInstruction:
        """One instruction's tile: sizes, strides, offsets where needed, and its nest or regions."""
        assert s.symbolic_tile is not None
        sizes = evaluate_tile_sizes(s.symbolic_tile, self.flat)
        strides = evaluate_tile_strides(s.symbolic_tile, self.flat)
        offsets, rts = self._offsets(s, info, mapping)
        if s.fusion_analysis is not None:
            called = self._tile_nest(s, info, active, mapping)
            return TiledHloInstruction.create(
                s.hlo, [mapping[id(o)] for o in s.operands], rts, sizes, strides, offsets,
                called_computation=called,
            )
        if not s.regions:
            return TiledHloInstruction.create(
                s.hlo, [mapping[id(o)] for o in s.operands], rts, sizes, strides, offsets
            )
        local = dict(mapping)
        regions = self._tile_regions(s, info, active, local)
        return TiledHloInstruction.create(
            s.hlo, [local[id(o)] for o in s.operands], rts, sizes, strides, offsets, regions
        )

    def _offsets(
        self, s: SymbolicTiledHloInstruction, info: OutputTilingInfo, mapping: dict[int, TiledHloInstruction]
    ) -> tuple[IndexingMap | None, list[TiledHloInstruction]]:
        """The tile offsets map (when asked for, needed to tell tiles apart, or an iota) and the
        runtime-variable tiles it still uses."""
        if not (self.compute_all or id(s.hlo) in self.with_offsets or s.hlo.opcode == "iota"):
            return None, []
        offsets = tile_offset_indexing(s, info.linear_output_tile_offset_indexing)
        offsets, removed = offsets.remove_unused_symbols_with_mask()
        rts = [mapping[id(r)] for i, r in enumerate(s.runtime_variables)
               if not (i < len(removed) and removed[i])]
        return offsets, rts

    def _tile_nest(
        self,
        s: SymbolicTiledHloInstruction,
        info: OutputTilingInfo,
        active: Sequence[int],
        mapping: dict[int, TiledHloInstruction],
    ) -> TiledHloComputation:
        """The tiled computation of a nested fusion (bounded by a concatenate user's dims)."""
        assert s.fusion_analysis is not None
        users = s.hlo.users
        bounds = None
        if users and users[0].opcode == "concatenate":
            bounds = info.output_tile_offset_indexing.get_dimension_bounds()
        nest = s.fusion_analysis
        return _compute(nest.instructions, nest.roots, nest.real_root_indexing, self.flat, self.schedule,
                        self.compute_all, active, bounds, dict(mapping))

    def _tile_regions(
        self,
        s: SymbolicTiledHloInstruction,
        info: OutputTilingInfo,
        active: Sequence[int],
        local: dict[int, TiledHloInstruction],
    ) -> list[list[TiledHloInstruction]]:
        """Each region's tiles (a dot's loop over its own parameters, a concatenate's branches)."""
        params = list(active)
        if s.hlo.opcode in ("dot", "scaled-dot"):
            params = active_parameters(s.regions[-1][-1].indexing_map, params)
        bounds = (
            info.output_tile_offset_indexing.get_dimension_bounds() if s.hlo.opcode == "concatenate" else None
        )
        regions = []
        for region in s.regions:
            region_info = output_tiling_info(region[-1].indexing_map, self.flat, params, self.schedule,
                                             bounds)
            regions.append(self.tile_all(region, region_info, params, local))
        return regions

def _offsets_needed(
    instrs: Sequence[SymbolicTiledHloInstruction], flat: FlatTiling, roots: Sequence[HloInstruction]
) -> set[int]:
    """HLOs whose leaves share sizes (offsets tell them apart), and every root of a multi-output fusion."""
    seen: set[tuple[int, tuple[int, ...]]] = set()
    out: set[int] = set()
    for s in instrs:
        if s.operands or s.symbolic_tile is None:
            continue
        key = (id(s.hlo), tuple(evaluate_tile_sizes(s.symbolic_tile, flat)))
        if key in seen:
            out.add(id(s.hlo))
        seen.add(key)
    if len(roots) > 1:
        out.update(id(r) for r in roots)
    return out


def _safe_for_buffer_sharing(
    t: TiledHloInstruction, reference_tiles: int, schedule: TiledHloSchedule
) -> bool:
    """``IsSafeForBufferSharing``: the same tile grid and offsets as tiling from this root directly."""
    if not isinstance(schedule, MajorToMinorTiledHloSchedule):
        raise UnsupportedError("Buffer sharing is only supported with the default schedule")
    dims = t.hlo.shape.dimensions
    if prod(-(-n // s) for n, s in zip(dims, t.tile_sizes, strict=True)) != reference_tiles:
        return False
    identity = IndexingMap([var(i) for i in range(len(dims))], [(0, n - 1) for n in dims])
    info = output_tiling_info(identity, t.tile_sizes, range(len(dims)), schedule)
    if t.tile_offsets_indexing is None:
        raise UnsupportedError(f"Expected {t} to have a tile_offsets_indexing value")
    return t.tile_offsets_indexing == info.linear_output_tile_offset_indexing


def _tiled_roots(
    roots: Sequence[HloInstruction],
    tiled: Sequence[TiledHloInstruction],
    num_tiles: int,
    schedule: TiledHloSchedule,
) -> tuple[TiledHloInstruction, ...]:
    """``InitializeTiledRoots``: the real root, and for each other root a tile safe to reuse."""
    index = {id(r): i for i, r in enumerate(roots)}
    found: list[TiledHloInstruction | None] = [None] * len(roots)
    found[index[id(tiled[-1].hlo)]] = tiled[-1]
    for t in tiled[:-1]:
        i = index.get(id(t.hlo))
        if i is not None and _safe_for_buffer_sharing(t, num_tiles, schedule):
            found[i] = t
    for maybe, r in zip(found, roots, strict=True):
        if maybe is None:
            raise UnsupportedError(
                f"Unsupported case of multi-output fusion, we found no tiling to reuse for {hlo_to_string(r)}"
            )
    return tuple(t for t in found if t is not None)


def _compute(
    instrs: Sequence[SymbolicTiledHloInstruction],
    roots: Sequence[HloInstruction],
    root_indexing: IndexingMap,
    flat: FlatTiling,
    schedule: TiledHloSchedule,
    compute_all: bool,
    active_start: Sequence[int],
    parent_bounds: Sequence[Interval] | None,
    mapping: dict[int, TiledHloInstruction],
) -> TiledHloComputation:
    """``ComputeTiledComputationImpl``: a fusion, or a nest inside one (``parent_bounds`` when it
    feeds a concatenate)."""
    active = active_parameters(root_indexing, active_start)
    for s in instrs:
        assert s.symbolic_tile is not None
        if any(st < 0 for st in evaluate_tile_strides(s.symbolic_tile, flat)):
            raise UnsupportedError(f"Full support for negative strides is not implemented {s.to_string()}")
    with_offsets = set() if compute_all else _offsets_needed(instrs, flat, roots)
    info = output_tiling_info(root_indexing, flat, active, schedule, parent_bounds)
    tiler = _Tiler(flat, schedule, compute_all, with_offsets)
    tiled = tiler.tile_all(instrs, info, active, mapping)
    tiled_roots = _tiled_roots(roots, tiled, prod(info.num_output_tiles_per_dim), schedule)
    return TiledHloComputation(tuple(tiled), tiled_roots, info.num_output_tiles_per_dim)


def compute_tiled_computation(
    instrs: Sequence[SymbolicTiledHloInstruction],
    roots: Sequence[HloInstruction],
    root_indexing: IndexingMap,
    flat: FlatTiling,
    schedule: TiledHloSchedule,
    compute_all_tile_offset_indexing_maps: bool,
) -> TiledHloComputation:
    """``ComputeTiledComputationImpl`` for a fusion (no enclosing fusion)."""
    return _compute(
        instrs, roots, root_indexing, flat, schedule, compute_all_tile_offset_indexing_maps, (), None, {}
    )
