"""How Triton 3.9 lowers a ``convert_layout`` on Hopper once its data path is known: the path
(``minimalCvtLayout`` and the checks built on it), the mixed transpositions that decide between
warp shuffles and shared memory, and, through shared memory, the instructions of each round.

>>> from tensorlayout.triton import BlockedLayout
>>> a = BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]).to_linear_layout([32, 32])
>>> b = BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1]).to_linear_layout([32, 32])
>>> data_path(a, a), data_path(a, b)
('none', 'shared')
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorlayout.design._triton_swizzle import SmemPlan
from tensorlayout.triton import _gf2
from tensorlayout.triton.layout_utils import action_remove_broadcasted_regs
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["RoundOps", "WarpPermutation", "data_path", "minimal_cvt_layout", "mixed_transpositions",
           "round_ops", "shuffle_counts", "warp_permutation"]

#: The in dims Triton quotients out of a conversion, slowest first.
HW_DIMS = ("register", "lane", "warp", "block")


def without_broadcast_registers(layout: LinearLayout) -> LinearLayout:
    """``layout`` with its zero register bases dropped (``actionRemoveBroadcastedRegs``)."""
    return action_remove_broadcasted_regs(layout).apply(layout)


def minimal_cvt_layout(src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """The part of ``dst⁻¹ ∘ src`` that moves data (``minimalCvtLayout``): the identity over
    block, then warp, then lane, then register is quotiented out while it holds."""
    comp = dst.invert_and_compose(src)
    common = []
    for s, d in zip(reversed(src.get_in_dim_names()), reversed(dst.get_in_dim_names())):
        if s != d:
            break
        common.append(s)
    for dim in common:
        quotient = comp.quotient([dim])
        if quotient is None:
            break
        comp = quotient
    return comp


def _padded(layout: LinearLayout, n_reg: int, n_lane: int) -> list[list[int]]:
    flat = layout.flatten_outs()
    regs = flat.flattened_bases("register")
    lanes = flat.flattened_bases("lane")
    return [regs + [0] * (n_reg - len(regs)), lanes + [0] * (n_lane - len(lanes))]


def _permutation(src: LinearLayout, dst: LinearLayout) -> tuple[list[list[tuple[int, int]]], int]:
    """The permutation of (register, lane) index bits taking ``src`` to ``dst``
    (``getWarpLayoutConvertDecomposition``, first stage): ``perm[d][i]`` is where bit ``i`` of
    dim ``d`` (0 register, 1 lane) goes; zero columns filled as Triton fills them."""
    src, dst = without_broadcast_registers(src), without_broadcast_registers(dst)
    n_reg = max(src.get_in_dim_size_log2("register"), dst.get_in_dim_size_log2("register"))
    n_lane = max(src.get_in_dim_size_log2("lane"), dst.get_in_dim_size_log2("lane"))
    s, t = _padded(src, n_reg, n_lane), _padded(dst, n_reg, n_lane)
    t_cols = t[0] + t[1]
    pivots, _ = _gf2.echelon(t_cols)
    perm: list[list[tuple[int, int]]] = []
    free_src, free_dst = [], []
    for d in range(2):
        row = []
        for i, (sv, tv) in enumerate(zip(s[d], t[d])):
            combo = _gf2.solve(pivots, sv) or 0
            j = _gf2.lowest_bit(combo) if combo else -1
            row.append((0, j) if 0 <= j < n_reg else (1, j - n_reg) if j >= 0 else (d, i))
            if sv == 0 and tv != 0:
                free_src.append((d, i))
            elif tv == 0 and sv != 0:
                free_dst.append((d, i))
        perm.append(row)
    for (d, i), target in zip(free_src, free_dst):
        perm[d][i] = target
    return perm, n_reg


@dataclass(frozen=True)
class WarpPermutation:
    """The (register, lane) bit permutation of a warp-local conversion, factored as Triton does
    (``getWarpLayoutConvertDecomposition``): ``mixed`` holds the (register bit, lane bit)
    transpositions sliced out of mixed cycles; ``lane_trivial`` says the remaining lane
    permutation is the identity; ``register_bits`` counts the (padded) register bits."""

    mixed: tuple[tuple[int, int], ...]
    lane_trivial: bool
    register_bits: int


def warp_permutation(src: LinearLayout, dst: LinearLayout) -> WarpPermutation:
    """Walk the cycles of the bit permutation: each run of lane bits inside a cycle that also
    holds register bits becomes one transposition (its closing register bit, its first lane
    bit); lane-to-lane steps, and each run's closing lane mapped to its first, make the lane
    permutation."""
    perm, n_reg = _permutation(src, dst)
    lanes = [-1] * len(perm[1])
    seen: set[tuple[int, int]] = set()
    mixed = []
    for d in range(2):
        for i in range(len(perm[d])):
            cur, lane_start = (d, i), -1
            while cur not in seen:
                seen.add(cur)
                nxt = perm[cur[0]][cur[1]]
                if cur[0] == 1 and nxt[0] == 1:
                    lanes[cur[1]] = nxt[1]
                elif cur[0] == 0 and nxt[0] == 1:
                    lane_start = nxt[1]
                elif cur[0] == 1:
                    lanes[cur[1]] = lane_start
                    mixed.append((nxt[1], lane_start))
                cur = nxt
    return WarpPermutation(tuple(mixed), lanes == list(range(len(lanes))), n_reg)


def mixed_transpositions(src: LinearLayout, dst: LinearLayout) -> int:
    """How many (register, lane) transpositions the warp-shuffle lowering needs (Triton keeps
    shuffles for fewer than two)."""
    return len(warp_permutation(src, dst).mixed)


def shuffle_counts(src: LinearLayout, dst: LinearLayout, bitwidth: int) -> dict[str, int]:
    """The ``shfl.sync`` instructions of ``transferWithinWarp``: registers are packed up to 32
    bits (``nPack``); one transposition with a trivial lane permutation ships half the
    registers (``bfly``); otherwise every register whose transposed bits are set is swapped
    (``bfly``), or, when lanes also permute, every register is fetched by index (``idx``)."""
    w = warp_permutation(src, dst)
    m = len(w.mixed)
    n_pack = min((min(max(32 // bitwidth, 1), 4)).bit_length() - 1, w.register_bits - m)
    regs = (1 << (w.register_bits - n_pack)) * (2 if bitwidth == 64 else 1)
    if not w.lane_trivial:
        return {"shfl.sync.idx.b32": regs}
    if m == 1 and w.mixed[0][0] >= n_pack:
        return {"shfl.sync.bfly.b32": regs // 2}
    return {"shfl.sync.bfly.b32": regs - (regs >> m)}


def data_path(src: LinearLayout, dst: LinearLayout) -> str:
    """``none`` (same layout), ``registers`` (a permutation inside each thread), ``shuffles``
    (inside each warp, fewer than two mixed transpositions) or ``shared`` (a round trip
    through shared memory), as Triton decides."""
    outs = minimal_cvt_layout(src, dst).get_out_dim_names()
    if not outs:
        return "none"
    if outs == ["register"]:
        comp = minimal_cvt_layout(src, dst)
        regs = comp.flattened_bases("register")
        return "none" if regs == [1 << i for i in range(len(regs))] else "registers"
    if outs == ["register", "lane"] and mixed_transpositions(src, dst) < 2:
        return "shuffles"
    return "shared"



@dataclass(frozen=True)
class RoundOps:
    """One side of a shared-memory round trip: the instruction, its width in bits, how many
    per thread per round, and the registers one round moves."""

    op: str
    vector_bits: int
    per_round: int
    registers: int


def _coordinates(plan: SmemPlan) -> tuple[dict[int, tuple[int, int]], int, int]:
    cols = list(plan.vector + plan.bank + plan.segment + plan.reps)
    pivots, _ = _gf2.echelon(cols)
    return pivots, len(cols) - len(plan.reps), len(cols)


def _vector(images: list[int], others: list[int], most: int) -> int:
    """``largestVectorisation``: the widest ``v`` whose offsets 1..v/2 are registers and whose
    other bases keep the low bits clear."""
    v = most
    while v > 1:
        wanted = [1 << j for j in range(v.bit_length() - 1)]
        rest = [x for x in images if x not in wanted] + others
        if all(w in images for w in wanted) and not any(x & (v - 1) for x in rest):
            return v
        v //= 2
    return 1


def round_ops(side: LinearLayout, plan: SmemPlan, kind: int, bitwidth: int) -> RoundOps:
    """The instructions one side issues per round: ``kind`` 0 plain ld/st.shared (vectorised as
    ``largestVectorisation`` finds), 1 ldmatrix/stmatrix ``.x4``, 2 the ``.trans`` form."""
    pivots, offset_bits, _ = _coordinates(plan)
    flat = without_broadcast_registers(side).flatten_outs()
    mask = (1 << offset_bits) - 1
    images = [(_gf2.solve(pivots, b) or 0) if b else 0 for b in flat.flattened_bases("register")]
    tile = [x & mask for x in images if x & mask]
    others = [(_gf2.solve(pivots, b) or 0) & mask if b else 0
              for name in ("lane", "warp") for b in flat.flattened_bases(name)]
    registers = 1 << len(tile)
    if kind == 0:
        vec = _vector(tile, others, max(128 // bitwidth, 1))
        return RoundOps("shared", vec * bitwidth, registers // vec, registers)
    bits = min(registers * bitwidth, 128)
    return RoundOps("matrix.trans" if kind == 2 else "matrix", bits, registers * bitwidth // bits, registers)
