"""XLA's experimental tile schedule: program id (and tile id) -> tile id per parallel dimension.

The parallel dimensions' tile counts are delinearized from the global tile id
``pid * tiles_per_pid + tid``, major dimension first. For a dot (or scaled dot) root with one
non-contracting dimension per side whose lhs is smaller than its rhs, the ``m`` and ``n``
dimensions swap places in that order (the lhs tile stays in L2 while ``n`` moves slowly);
for a ragged dot, the same with the average group size ``M / G`` against ``N`` (non-contracting
ragged dimension: swap ``m`` and ``n``; contracting: swap ``k`` and ``n``).

>>> from tensorlayout.hlo import parse_module
>>> from tensorlayout.tiling.experimental.tiling_space import TilingSpace
>>> from tensorlayout.tiling.experimental.tiled_hlo import TiledHloComputation
>>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[2,97] parameter(0)\\n"
...                  " ROOT n = f32[2,97] negate(p0)\\n}")
>>> space = TilingSpace.create(m.entry.root).assign_tile_sizes([1, 32])
>>> print(get_schedule(TiledHloComputation.tile(m.entry.root, space), 2))
d0 -> (pid * 2 + tid) / 4, d1 -> (pid * 2 + tid) mod 4, num_pids=4, num_tiles=8
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorlayout.core.intmath import ceil_div, prod
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import Expr, var
from tensorlayout.tiling.experimental.tile import delinearize_index
from tensorlayout.tiling.experimental.tiled_hlo import TiledHloComputation
from tensorlayout.tiling.experimental.tiling_space import PARALLEL, TilingSpace

__all__ = ["Schedule", "get_schedule"]


@dataclass(frozen=True)
class Schedule:
    """Per parallel dimension id, its tile id as an expression of ``pid`` (d0) and ``tid`` (d1)."""

    dim_id_to_pid_expr: dict[int, Expr]
    num_pids: int
    num_tiles: int

    @property
    def num_tiles_per_pid(self) -> int:
        return ceil_div(self.num_tiles, self.num_pids)

    def to_string(self) -> str:
        """``Schedule::ToString``: ``d<k> -> <expr>`` by dimension id, then the counts."""
        parts = [
            f"d{k} -> {self.dim_id_to_pid_expr[k].to_string(['pid', 'tid'])}"
            for k in sorted(self.dim_id_to_pid_expr)
        ]
        return ", ".join([*parts, f"num_pids={self.num_pids}", f"num_tiles={self.num_tiles}"])

    __str__ = to_string


def _swap(size: int, a: int, b: int) -> list[int]:
    perm = list(range(size))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def _parallel_pair(
    space: TilingSpace, root: HloInstruction, first: int, second: int
) -> tuple[int, int] | None:
    """The tiling ids of two output dimensions of ``root`` if both are parallel."""
    a, b = space.get_dimension_info(root, first), space.get_dimension_info(root, second)
    if a.type != PARALLEL or b.type != PARALLEL:
        return None
    return a.id, b.id


def _dot_permutation(space: TilingSpace, root: HloInstruction, n: int) -> list[int]:
    lhs, rhs = root.operands[0].shape, root.operands[1].shape
    batch = len(root.attribute("lhs_batch_dims", ()))
    lhs_free = lhs.rank - len(root.attribute("lhs_contracting_dims", ())) - batch
    rhs_free = (
        rhs.rank - len(root.attribute("rhs_contracting_dims", ())) - len(root.attribute("rhs_batch_dims", ()))
    )
    if lhs_free != 1 or rhs_free != 1:
        return []
    if lhs.elements_in() * lhs.element_type.bit_width >= rhs.elements_in() * rhs.element_type.bit_width:
        return []
    pair = _parallel_pair(space, root, batch, batch + 1)
    return _swap(n, *pair) if pair else []


def _ragged_dot_permutation(space: TilingSpace, root: HloInstruction, n: int) -> list[int]:
    ragged = root.attribute("lhs_ragged_dims", (0,))[0]
    batch = list(root.attribute("lhs_batch_dims", ()))
    if ragged in batch:
        return []
    m_avg = root.operands[0].shape.dimensions[ragged] // max(root.operands[2].shape.dimensions[0], 1)
    out = root.shape.dimensions
    if ragged not in root.attribute("lhs_contracting_dims", ()):
        if m_avg >= out[len(batch) + 1]:
            return []
        pair = _parallel_pair(space, root, len(batch), len(batch) + 1)
        return _swap(n, *pair) if pair else []
    k_dim = 1 + len(batch)
    if k_dim + 1 >= len(out) or m_avg >= out[k_dim + 1]:
        return []
    pair = _parallel_pair(space, root, k_dim, k_dim + 1)
    if pair is None:
        return []
    parallel = [d.id for d in space.dimensions if d.type == PARALLEL]
    return _swap(n, parallel.index(pair[0]), parallel.index(pair[1]))


def _permutation(computation: TiledHloComputation) -> list[int]:
    """``GetParallelDimensionsPermutation``: the traversal order of the parallel dimensions."""
    if len(computation.roots) != 1:
        return []
    root = computation.roots[0].hlo
    space = computation.tiling_space
    n = space.num_parallel_dimensions
    if n < 2:
        return []
    if root.opcode in ("dot", "scaled-dot"):
        return _dot_permutation(space, root, n)
    if root.opcode == "ragged-dot":
        return _ragged_dot_permutation(space, root, n)
    return []


def get_schedule(computation: TiledHloComputation, num_tiles_per_pid: int = 1) -> Schedule:
    """``GetSchedule``: the schedule of a tiled computation with concrete tile sizes."""
    parallel = [d for d in computation.tiling_space.dimensions if d.type == PARALLEL]
    counts = [ceil_div(d.dimension_size, d.tile_size or 1) for d in parallel]
    ids = [d.id for d in parallel]
    perm = _permutation(computation)
    if perm:
        counts, ids = [counts[p] for p in perm], [ids[p] for p in perm]
    tile = var(0) if num_tiles_per_pid <= 1 else var(0) * num_tiles_per_pid + var(1)
    exprs = dict(zip(ids, delinearize_index(counts, tile)))
    total = prod(counts)
    return Schedule(exprs, ceil_div(total, num_tiles_per_pid), total)
