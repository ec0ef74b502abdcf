"""XLA's tiled HLO schedules: how one program id walks the grid of output tiles.

``MajorToMinorTiledHloSchedule`` delinearizes the program id over the iteration space in the
order given (major to minor); ``TransposedDotTiledHloSchedule`` swaps the walk of a root dot's
two non-contracting dimensions.

>>> from tensorlayout.indexing import IndexingMap
>>> offsets = IndexingMap.parse("(d0, d1) -> (d0, d1 * 10), domain: d0 in [0, 1], d1 in [0, 9]")
>>> print(MajorToMinorTiledHloSchedule().schedule(offsets, [DimensionInfo(0, 2), DimensionInfo(1, 10)]))
(pid_0) -> (pid_0 / 10, (pid_0 mod 10) * 10), domain: pid_0 in [0, 19]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import NamedTuple, Protocol

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo.ops._common import delinearize
from tensorlayout.indexing import IndexingMap, Interval, Variable, compose_indexing_maps, const, var
from tensorlayout.tiling.tiling_specification import TilingSpecification

__all__ = [
    "DimensionInfo",
    "MajorToMinorTiledHloSchedule",
    "TiledHloSchedule",
    "TransposedDotTiledHloSchedule",
    "create_major_to_minor_tiled_hlo_schedule",
]


class DimensionInfo(NamedTuple):
    """One dimension of an iteration space: which tiling parameter, how many tiles."""

    dimension_id: int
    dimension_size: int


def _validate(space: Sequence[DimensionInfo], offsets: IndexingMap) -> None:
    if offsets.num_dims < len(space):
        raise UnsupportedError(
            "Expected iteration space to have at most as many dimensions as there are parameters in "
            f"the tile offsets indexing map, but iteration space has {len(space)} dimensions, and "
            f"tile offsets indexing map has {offsets.num_dims} dimensions.")
    seen: list[int] = []
    for dim_id, _ in space:
        if not 0 <= dim_id < offsets.num_dims:
            raise UnsupportedError(f"Dimension id {dim_id} is out of bounds for tile offsets indexing map "
                                   f"with {offsets.num_dims} dimensions.")
        if dim_id in seen:
            raise UnsupportedError(f"Iteration space contains multiple dimensions with id {dim_id}.")
        seen.append(dim_id)


def _major_to_minor(offsets: IndexingMap, space: Sequence[DimensionInfo]) -> IndexingMap:
    """pid -> tile indices (delinearized in ``space`` order) -> tile offsets, simplified."""
    sizes = [d.dimension_size for d in space]
    exprs = [const(0)] * offsets.num_dims
    for info, e in zip(space, delinearize(var(0), sizes), strict=True):
        exprs[info.dimension_id] = e
    pid = IndexingMap(exprs, [Variable(Interval(0, prod(sizes) - 1), "pid_0")])
    scheduled = compose_indexing_maps(pid, offsets).simplify()
    return scheduled.rescale_symbols().remove_unused_symbols()


class TiledHloSchedule(Protocol):
    """A schedule: ``schedule(tile_offsets_indexing, iteration_space)`` -> ``(pid_0) -> offsets``."""

    def schedule(self, tile_offsets_indexing: IndexingMap,
                 iteration_space: Sequence[DimensionInfo]) -> IndexingMap: ...


@dataclass(frozen=True, slots=True)
class MajorToMinorTiledHloSchedule:
    """The default schedule: the last dimension of the iteration space varies fastest."""

    def schedule(self, tile_offsets_indexing: IndexingMap,
                 iteration_space: Sequence[DimensionInfo]) -> IndexingMap:
        _validate(iteration_space, tile_offsets_indexing)
        return _major_to_minor(tile_offsets_indexing, iteration_space)


def create_major_to_minor_tiled_hlo_schedule(spec: TilingSpecification) -> TiledHloSchedule:
    """``CreateMajorToMinorTiledHloSchedule`` (the specification is not needed)."""
    return MajorToMinorTiledHloSchedule()


@dataclass(frozen=True, slots=True)
class TransposedDotTiledHloSchedule:
    """The major-to-minor walk with a root dot's ``m`` and ``n`` dimensions swapped."""

    m_dim_id: int
    n_dim_id: int

    @classmethod
    def create(cls, spec: TilingSpecification) -> TransposedDotTiledHloSchedule:
        """``Create``: UnsupportedError unless the root is the fusion's only dot, with one m and one n."""
        dot, count = spec.parameter_mapping[0]
        if dot.opcode != "dot":
            raise UnsupportedError("TransposedDotTiledHloSchedule expects its root to be a dot instruction "
                                   f"but got {dot.name}")
        if any(h.opcode == "dot" for h, _ in spec.parameter_mapping[1:]):
            raise UnsupportedError("TransposedDotTiledHloSchedule is only supported for TilingSpecifications "
                                   "specifying tiling for a single dot instruction.")
        for side, k in (("lhs", 0), ("rhs", 1)):
            rank = len(dot.operands[k].shape.dimensions)
            n = (rank - len(dot.attribute(f"{side}_contracting_dims", ()))
                 - len(dot.attribute(f"{side}_batch_dims", ())))
            if n != 1:
                raise UnsupportedError(
                    "TransposedDotTiledHloSchedule is only supported for dot instructions with a single "
                    f"non-contracting dimension, but got {n} non-contracting dimensions on the {side} "
                    f"operand of {dot.name}.")
        return cls(spec.parameter_index(dot, count - 2), spec.parameter_index(dot, count - 1))

    def schedule(self, tile_offsets_indexing: IndexingMap,
                 iteration_space: Sequence[DimensionInfo]) -> IndexingMap:
        _validate(iteration_space, tile_offsets_indexing)
        ids = [d.dimension_id for d in iteration_space]
        if self.m_dim_id not in ids or self.n_dim_id not in ids:
            return _major_to_minor(tile_offsets_indexing, iteration_space)
        space = list(iteration_space)
        m, n = ids.index(self.m_dim_id), ids.index(self.n_dim_id)
        space[m], space[n] = space[n], space[m]
        return _major_to_minor(tile_offsets_indexing, space)


TiledHloScheduleBuilder = Callable[[TilingSpecification], TiledHloSchedule]
