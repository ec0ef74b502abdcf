"""Triton's generic swizzling for a ``convert_layout`` through shared memory (``GenericSwizzling``,
Triton 3.9), on flattened bases: every basis is an int over the tensor's flat index (the first out
dim fastest, as Triton's ``flattenOuts``).

The shared layout has four in dims: ``vector`` (the elements one access moves), ``bank`` (the
rest of one 128-byte wavefront), ``segment`` (the wavefronts) and ``reps`` (bases both sides hold
in registers, moved in separate rounds). Each rule below is one of Triton's steps.

>>> choose_segment([1, 2, 4], [1, 8, 16], 6, 2)
[32, 10]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tensorlayout.triton import _gf2
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["MemOpTile", "SmemPlan", "choose_segment", "plan_shared"]

#: One wavefront: 32 banks of 32 bits.
BANK_BITS = 32 * 32


@dataclass(frozen=True)
class MemOpTile:
    """A shared-memory instruction's tile (Triton's ``LocalMemOpTile``): the lanes whose bases
    must be contiguous in memory (``lane_contig``) and the lanes that give addresses
    (``lane_addr``); ``name`` is the instruction family."""

    name: str
    lane_contig: tuple[int, ...]
    lane_addr: tuple[int, ...]


LD_ST = MemOpTile("shared", (), (0, 1, 2))
MATRIX = MemOpTile("matrix", (0, 1), (2, 3, 4))
MATRIX_TRANS = MemOpTile("matrix.trans", (2, 3, 4), (0, 1))


def mem_op_tiles(bitwidth: int) -> tuple[MemOpTile, ...]:
    """The instructions a Hopper store (or load) may use, Triton's order (``getSrcDstTiles``):
    ld/st.shared; ldmatrix/stmatrix up to 32-bit elements; their ``.trans`` forms for 16-bit."""
    tiles = [LD_ST]
    if bitwidth <= 32:
        tiles.append(MATRIX)
    if bitwidth == 16:
        tiles.append(MATRIX_TRANS)
    return tuple(tiles)


@dataclass(frozen=True)
class Side:
    """One distributed layout flattened: ``regs``/``lanes``/``warps`` bases over the flat index,
    and the layout itself (out dims flattened) for ``invert_and_compose``."""

    regs: tuple[int, ...]
    lanes: tuple[int, ...]
    warps: tuple[int, ...]
    flat: LinearLayout

    @staticmethod
    def of(layout: LinearLayout) -> Side:
        """``layout`` (register broadcasting already removed) flattened."""
        flat = layout.flatten_outs()
        return Side(tuple(flat.flattened_bases("register")), tuple(flat.flattened_bases("lane")),
                    tuple(flat.flattened_bases("warp")), flat)


@dataclass(frozen=True)
class SmemPlan:
    """The shared layout chosen (flat bases per in dim) and the instruction pair (indices into
    :func:`mem_op_tiles`: 0 ld/st.shared, 1 ldmatrix/stmatrix, 2 their ``.trans``)."""

    vector: tuple[int, ...]
    bank: tuple[int, ...]
    segment: tuple[int, ...]
    reps: tuple[int, ...]
    store: int
    load: int


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def _log2(x: int) -> int:
    return x.bit_length() - 1


def nullspace(vectors: Sequence[int], dim: int) -> list[int]:
    """The null space of the rows ``vectors`` over ``dim`` columns (Triton's ``nullspaceBasis``),
    one vector per free column, in column order.

    >>> nullspace([0b011], 3)
    [3, 4]
    """
    rows = [r for r in _gf2.rref(vectors) if r]
    pivots = {_gf2.lowest_bit(r) for r in rows}
    out = []
    for free in range(dim):
        if free in pivots:
            continue
        vec = 1 << free
        for r in rows:
            if r >> free & 1:
                vec ^= 1 << _gf2.lowest_bit(r)
        out.append(vec)
    return out


def intersection(b1: Sequence[int], b2: Sequence[int], dim: int) -> list[int]:
    """A basis of span(b1) ∩ span(b2) (``intersectionBasis``): for unit vectors, those of ``b1``
    also in ``b2`` in ``b1``'s order; otherwise through null spaces."""
    if all(map(_pow2, b1)) and all(map(_pow2, b2)):
        other = set(b2)
        return [b for b in b1 if b in other]
    return nullspace(nullspace(b1, dim) + nullspace(b2, dim), dim)


def complement(basis: Sequence[int], dim: int) -> list[int]:
    """Unit vectors completing ``basis`` to the whole space: the non-pivot columns of its reduced
    echelon form (``complementBasis``)."""
    pivots = {_gf2.lowest_bit(r) for r in _gf2.rref(basis) if r}
    return [1 << i for i in range(dim) if i not in pivots]


def choose_segment(bank_src: Sequence[int], bank_dst: Sequence[int], dim: int, length: int) -> list[int]:
    """The segment bases (``computeSegment``): unit vectors neither side uses within a wavefront;
    then sums pairing the bases only one side uses (conflict-free for both); then, when still
    short, bases that cost conflicts (the store's, then the load's)."""
    src, dst = set(bank_src) - {0}, set(bank_dst) - {0}
    segment = [1 << b for b in range(dim) if 1 << b not in src and 1 << b not in dst]
    if len(segment) >= length:
        return segment[:length]
    a, b = sorted(src - dst), sorted(dst - src)
    if len(a) > len(b):
        a, b = b, a
    conflicts = min(max(0, length - len(a) - len(segment)), len(a))
    segment += [a[i] ^ b[i] for i in range(conflicts, len(a))]
    segment += a[:conflicts] + b[:conflicts]
    return segment[:length]


def split_reps(src: Side, dst: Side, segment: Sequence[int], leave: int) -> tuple[list[int], list[int]]:
    """Segment bases held in registers on both sides become ``reps`` (rounds), except the first
    ``leave`` of them, kept for ldmatrix/stmatrix ``.x4`` (``buildReps``)."""
    kept, reps = [], []
    for s in segment:
        if s in src.regs and s in dst.regs:
            if leave > 0:
                leave -= 1
                kept.append(s)
            else:
                reps.append(s)
        else:
            kept.append(s)
    return kept, reps


def swizzle(src: Side, dst: Side, bitwidth: int, vbasis: Sequence[int], tile_src: Sequence[int],
            tile_dst: Sequence[int], leave: int = 0, instrs: tuple[int, int] = (0, 0)) -> SmemPlan:
    """The shared layout for given vector bases and per-side lane tiles (``optimalSwizzling``):
    the segment avoids both tiles' bases, the bank takes the rest of the space."""
    dim = src.flat.get_total_out_dim_size_log2()
    len_bank = min(_log2(BANK_BITS // ((1 << len(vbasis)) * bitwidth)), dim - len(vbasis))
    len_seg = dim - len_bank - len(vbasis)
    segment = choose_segment(list(vbasis) + list(tile_src), list(vbasis) + list(tile_dst), dim, len_seg)
    bank = complement(list(vbasis) + segment, dim)
    kept, reps = split_reps(src, dst, segment, leave)
    return SmemPlan(tuple(vbasis), tuple(bank), tuple(kept), tuple(reps), *instrs)


def conflicts(plan: SmemPlan, tile_src: Sequence[int], tile_dst: Sequence[int], dim: int) -> tuple[int, int]:
    """(read, write) extra wavefronts Triton scores (``bankConflicts``): ``2**k - 1`` for the
    ``k`` tile bases inside the segment."""
    write = 1 << len(intersection(plan.segment, tile_src, dim))
    read = 1 << len(intersection(plan.segment, tile_dst, dim))
    return read - 1, write - 1



def _without(values: Sequence[int], drop: Sequence[int]) -> list[int]:
    return [v for v in values if v not in drop]


def _bank_fill(src: Side, dst: Side, vbasis: list[int], dim: int) -> tuple[list[int], bool | None]:
    """Below 32 bits, the vector is filled up to one bank word: first with one side's registers
    that the other side spreads over warps (more of them wins; on a tie the lowest basis), then
    with warp bases common to both, then with either side's warp bases."""
    warp_src, warp_dst = _without(src.warps, [0]), _without(dst.warps, [0])
    reg_src = intersection(_without(src.regs, vbasis), warp_dst, dim)
    reg_dst = intersection(_without(dst.regs, vbasis), warp_src, dim)
    if len(reg_src) == len(reg_dst) and reg_src:
        fills: bool | None = min(reg_src) < min(reg_dst)
    else:
        fills = len(reg_src) > len(reg_dst)
    return vbasis + (reg_src if fills else reg_dst), fills


def vector_bases(src: Side, dst: Side, bitwidth: int) -> tuple[list[int], bool | None]:
    """The vector bases of a plain ld/st conversion (``getVecBasisLdSt``): registers common to
    both sides (at most 128 bits); below 32 bits filled up to one bank word (:func:`_bank_fill`,
    then warp bases). Also whether the source (True), the destination (False) or neither (None)
    filled the word."""
    dim = src.flat.get_total_out_dim_size_log2()
    vbasis = intersection(src.regs, dst.regs, dim)[:_log2(128 // bitwidth)]
    if (1 << len(vbasis)) * bitwidth >= 32:
        return vbasis, None
    per_bank = _log2(32 // bitwidth)
    vbasis, fills = _bank_fill(src, dst, vbasis, dim)
    warp_src, warp_dst = _without(src.warps, [0]), _without(dst.warps, [0])
    if len(vbasis) < per_bank:
        vbasis += intersection(warp_src, warp_dst, dim)
    i = 0
    while len(vbasis) < per_bank and (i < len(warp_src) or i < len(warp_dst)):
        if i < len(warp_src) and warp_src[i] not in vbasis:
            vbasis.append(warp_src[i])
        if len(vbasis) < per_bank and i < len(warp_dst) and warp_dst[i] not in vbasis:
            vbasis.append(warp_dst[i])
        i += 1
    return vbasis[:per_bank], fills


def _phase_lanes(side: Side, vec_elems: int, bitwidth: int) -> list[int]:
    """The lanes of one ld/st.shared phase (``getLaneTile``): wider accesses split the warp
    into phases, dropping the top lanes."""
    log2_vec = _log2(max(1, vec_elems * bitwidth // 32))
    phase = max(0, log2_vec + len(side.lanes) - 5)
    return list(side.lanes[:len(side.lanes) - phase])


def _banks_first(plan: SmemPlan, src: Side, dst: Side, fills: bool | None) -> SmemPlan:
    """Bank bases that are registers of the side that filled the word (else of the side with
    more of them) move to the front, so that side vectorises further."""
    in_src = [i for i, b in enumerate(plan.bank) if b in src.regs]
    in_dst = [i for i, b in enumerate(plan.bank) if b in dst.regs]
    order = in_src if fills is True else in_dst if fills is False else \
        (in_src if len(in_src) > len(in_dst) else in_dst)
    order = order + [i for i in range(len(plan.bank)) if i not in order]
    return replace(plan, bank=tuple(plan.bank[i] for i in order))


def plan_ld_st(src: Side, dst: Side, bitwidth: int) -> tuple[SmemPlan, list[int], list[int]]:
    """Plain ld.shared/st.shared (``optimalSwizzlingLdSt``), with the lane tiles it scores."""
    vbasis, fills = vector_bases(src, dst, bitwidth)
    t_src = _phase_lanes(src, 1 << len(vbasis), bitwidth)
    t_dst = _phase_lanes(dst, 1 << len(vbasis), bitwidth)
    plan = swizzle(src, dst, bitwidth, vbasis, t_src, t_dst)
    if _log2(max(1, (1 << len(vbasis)) * bitwidth // 32)) < 2:
        plan = _banks_first(plan, src, dst, fills)
    return plan, t_src, t_dst


def tile_vector(a: Side, b: Side, n_reg_a: int, n_reg_b: int, lanes_a: Sequence[int],
                lanes_b: Sequence[int]) -> list[int] | None:
    """The vector bases shared by an instruction pair (``optimalSwizzlingTile``): ``n_reg_b``
    common registers, then ``b``'s contiguous lanes; None when the registers are too few, a
    contiguous lane is broadcast, or ``b``'s lanes do not land where ``a``'s instruction needs
    them (registers first, then the matching lanes)."""
    if n_reg_a < n_reg_b:
        return tile_vector(b, a, n_reg_b, n_reg_a, lanes_b, lanes_a)
    dim = a.flat.get_total_out_dim_size_log2()
    vbasis = intersection(a.regs, b.regs, dim)
    if len(vbasis) < n_reg_b:
        return None
    tile_a, tile_b = [a.lanes[i] for i in lanes_a], [b.lanes[i] for i in lanes_b]
    if 0 in tile_a or 0 in tile_b:
        return None
    cvt = b.flat.invert_and_compose(a.flat)
    if any(cvt.get_basis("lane", lanes_b[i], "register") == 0 for i in range(n_reg_a - n_reg_b)):
        return None
    tail = list(lanes_b[len(lanes_b) - len(lanes_a):]) if lanes_a else []
    if any(cvt.get_basis("lane", ib, "lane") != 1 << ia for ia, ib in zip(lanes_a, tail)):
        return None
    return vbasis[:n_reg_b] + tile_b


def _addr_tile(op: MemOpTile, side: Side, vbasis: Sequence[int]) -> list[int] | None:
    """The bases one instruction's addresses span (``getTile``): registers outside the vector up
    to three address bits, then the address lanes; None when registers run out."""
    need = 3 - len(op.lane_addr)
    regs = [r for r in side.regs if r not in vbasis][:need]
    if len(regs) < need:
        return None
    return regs + [side.lanes[i] for i in op.lane_addr]


def plan_shared(src: Side, dst: Side, bitwidth: int) -> tuple[SmemPlan, tuple[int, int]]:
    """The shared layout and instruction pair Triton picks (the tiled ``optimalSwizzling``):
    among the pairs that fit, the fewest scored bank conflicts, ties to the most rounds (first
    found wins); with no pair, plain ld/st (``optimalSwizzlingLdSt``). Also returns the scored
    (read, write) conflicts."""
    dim = src.flat.get_total_out_dim_size_log2()
    total = _log2(128 // bitwidth)
    ops = mem_op_tiles(bitwidth)
    best: tuple[tuple[int, int], SmemPlan] | None = None
    for i_s, op_s in enumerate(ops):
        for i_d, op_d in enumerate(ops):
            vbasis = tile_vector(src, dst, total - len(op_s.lane_contig), total - len(op_d.lane_contig),
                                 op_s.lane_contig, op_d.lane_contig)
            if vbasis is None:
                continue
            t_src, t_dst = _addr_tile(op_s, src, vbasis), _addr_tile(op_d, dst, vbasis)
            if t_src is None or t_dst is None:
                continue
            leave = min(len(op.lane_contig) + len(op.lane_addr) - 3 for op in (op_s, op_d))
            plan = swizzle(src, dst, bitwidth, vbasis, t_src, t_dst, leave, (i_s, i_d))
            score = conflicts(plan, t_src, t_dst, dim)
            if best is None or sum(score) < sum(best[0]) or \
                    (sum(score) == sum(best[0]) and len(plan.reps) > len(best[1].reps)):
                best = (score, plan)
    if best is None:
        plan, t_src, t_dst = plan_ld_st(src, dst, bitwidth)
        return plan, conflicts(plan, t_src, t_dst, dim)
    return best[1], best[0]
