"""Tile propagation to the operands of a ``ragged-dot`` (lhs, rhs, group sizes).

Three modes, by where the lhs ragged dimension sits: a batch dimension (a batched dot; the
group sizes are read whole), a non-contracting dimension (the group dimension ``G`` is a
sequential loop; the lhs rows of a group are masked by the group size ``rt``), or a contracting
dimension (``G`` is the output's dimension 0; the ragged contraction is the sequential ``M``
loop, masked by the group size).

>>> from tensorlayout.hlo import parse_module
>>> from tensorlayout.tiling.experimental.tiling_space import TilingSpace
>>> m = parse_module("HloModule m\\nENTRY e {\\n lhs = f32[256,128] parameter(0)\\n"
...   " rhs = f32[8,128,64] parameter(1)\\n gs = s32[8] parameter(2)\\n"
...   " ROOT rd = f32[256,64] ragged-dot(lhs, rhs, gs), lhs_contracting_dims={1},"
...   " rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\\n}")
>>> space = TilingSpace.create(m.entry.root)
>>> print(propagate_tile_to_input_for_ragged_dot(space, m.entry.root, space.tiled_roots[0])[0])
(tid_0, tid_1, tid_2, tid_3){rt_0} -> offsets [tid_0 * ts_0, tid_3 * ts_3] sizes [ts_0, ts_3] \
strides [1, 1] upper bounds [rt_0, 128]
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import var
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.tile import DimTile, Tile, get_full_dim_tile
from tensorlayout.tiling.experimental.tiling_space import TilingSpace, dim_tile

__all__ = ["propagate_tile_to_input_for_ragged_dot"]


def _free(rank: int, *used: Sequence[int]) -> list[int]:
    """``GetNonContractingDims``: the dims of ``rank`` in none of ``used``."""
    taken = {d for dims in used for d in dims}
    return [d for d in range(rank) if d not in taken]


def _place(rank: int, assignments: Sequence[tuple[Sequence[int], Sequence[DimTile]]]) -> list[DimTile]:
    out: list[DimTile | None] = [None] * rank
    for dims, tiles in assignments:
        for d, t in zip(dims, tiles, strict=True):
            out[d] = t
    if any(t is None for t in out):
        raise TilingStatusError("kInvalidArgument", "ragged-dot dimension numbers do not cover the operand")
    return [t for t in out if t is not None]


def propagate_tile_to_input_for_ragged_dot(space: TilingSpace, hlo: HloInstruction, tile: Tile) -> list[Tile]:
    """``PropagateTileToInputForRaggedDotOp``: tiles of lhs, rhs and the group sizes."""
    lhs, rhs = hlo.operands[0].shape, hlo.operands[1].shape
    lb, rb = list(hlo.attribute("lhs_batch_dims", ())), list(hlo.attribute("rhs_batch_dims", ()))
    lc, rc = list(hlo.attribute("lhs_contracting_dims", ())), list(hlo.attribute("rhs_contracting_dims", ()))
    ragged = hlo.attribute("lhs_ragged_dims", (0,))[0]
    rank = hlo.shape.rank
    out = tile.dim_tiles

    def seq(position: int) -> DimTile:
        return dim_tile(space, space.get_dimension_info(hlo, position))

    if ragged in lb:
        ks = [seq(rank + i) for i in range(len(lc))]
        lnc, rnc = _free(lhs.rank, lb, lc), _free(rhs.rank, rb, rc)
        m0, n0 = len(lb), len(lb) + len(lnc)
        lt = _place(lhs.rank, [(lb, out[: len(lb)]), (lnc, out[m0:n0]), (lc, ks)])
        rt = _place(rhs.rank, [(rb, out[: len(rb)]), (rc, ks), (rnc, out[n0 : n0 + len(rnc)])])
        groups = [get_full_dim_tile(hlo.operands[2].shape.dimensions[0])]
        return [tile.clone_with_new_dims(t) for t in (lt, rt, groups)]
    info = space.get_rt_var_info(hlo, 2)
    if info is None:
        raise TilingStatusError("kInternal", "Missing group_size RTVar for ragged-dot")
    group_size = var(2 * space.num_dimensions + info.id)
    if ragged not in lc:
        g = seq(rank)
        ks = [seq(rank + 1 + i) for i in range(len(lc))]
        groups_dims = list(hlo.attribute("rhs_group_dims", ()))
        lnc, rnc = _free(lhs.rank, lb, lc), _free(rhs.rank, rb + groups_dims, rc)
        m0 = len(lb)
        ms = [DimTile(d.offset, d.size, d.stride, group_size) for d in out[m0 : m0 + len(lnc)]]
        n0 = m0 + len(lnc)
        lt = _place(lhs.rank, [(lb, out[:m0]), (lnc, ms), (lc, ks)])
        rt = _place(
            rhs.rank,
            [(rb, out[:m0]), (groups_dims, [g] * len(groups_dims)), (rnc, out[n0 : n0 + len(rnc)]), (rc, ks)],
        )
        return [tile.clone_with_new_dims(t) for t in (lt, rt, [*out[:m0], g])]
    rel = seq(rank)
    m = DimTile(rel.offset, rel.size, rel.stride, group_size)
    lnc, rnc = _free(lhs.rank, lb, lc), _free(rhs.rank, rb, rc)
    k0 = 1 + len(lb)
    n0 = k0 + len(lnc)
    lt = _place(lhs.rank, [(lb, out[1:k0]), (lnc, out[k0:n0]), (lc, [m] * len(lc))])
    rt = _place(rhs.rank, [(rb, out[1:k0]), (rnc, out[n0 : n0 + len(rnc)]), (rc, [m] * len(rc))])
    return [tile.clone_with_new_dims(t) for t in (lt, rt, [out[0]])]
