"""AMD's matrix-core accumulators as Gluon describes them (``AMDMFMALayout`` for CDNA's MFMA,
``AMDWMMALayout`` for RDNA's and gfx1250's WMMA), their dot operands, lowered as Triton 3.9 does.

An MFMA warp has 64 lanes, a WMMA warp 32. Out dims are ``dim0, dim1`` (M, N), with a leading
batch dim for rank 3.

>>> L = AMDMFMALayout(3, [32, 32, 8], True, [1, 1]).to_linear_layout([32, 32])
>>> L.apply({"register": 1, "lane": 32, "warp": 0, "block": 0})
{'dim0': 0, 'dim1': 5}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tensorlayout.errors import LayoutError
from tensorlayout.triton.encodings import (
    check_permutation,
    combine_with_shape,
    identity_standard_nd,
    pow2_list,
    standard_out_dim_names,
    zero_dim,
)
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["AMDMFMALayout", "AMDWMMALayout"]

REG, LANE, WARP = "register", "lane", "warp"
#: the (M, N) shapes of the MFMA instructions Gluon accepts
MFMA_SHAPES = ([32, 32], [16, 16], [64, 4], [4, 64])
#: WMMA version -> (a lane's registers, the run of lanes 16..31) along a lane's run of the 16x16 tile
#: (version 1 holds every other element, lanes 16..31 the ones between; later versions 8 in a row)
WMMA_TILES = {1: ([2, 4, 8], 1), 2: ([1, 2, 4], 8)}
#: WMMA version -> the instruction K sizes Triton 3.9 accepts (M = N = 16)
WMMA_K = {1: {16}, 2: {16, 32}, 3: {4, 32, 64, 128}}
#: WMMA version -> the dot operands' k_width Triton 3.9 accepts (any for version 3)
WMMA_K_WIDTHS = {1: (8, 16), 2: (4, 8, 16)}


def _id(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    """Triton's ``identity1D``, where a size below 1 (a quotient that rounded to 0) adds nothing."""
    return LinearLayout.identity_1d(max(1, size), in_dim, out_dim)


def _with_batch(tile: LinearLayout, rank: int, warps: int = 1) -> LinearLayout:
    """``tile`` with the batch dim ``dim0`` of a rank-3 layout appended last (``warps`` along it)."""
    if rank != 3:
        return tile
    return tile * _id(1, REG, "dim0") * _id(1, LANE, "dim0") * _id(warps, WARP, "dim0")


def _rank_of(shape: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    dims = pow2_list(shape, "the tensor shape", rank)
    if rank not in (2, 3):
        raise LayoutError(f"{what} has rank 2 or 3 (with a batch dim), got rank {rank}")
    return dims


@dataclass(frozen=True)
class AMDMFMALayout:
    """``#ttg.amd_mfma``: ``instr_shape`` [M, N, K] per instruction (M x N one of 32x32, 16x16,
    64x4, 4x64), ``transposed`` so each lane holds a row run instead of a column run,
    ``tiles_per_warp`` instruction tiles per warp, ``element_bitwidth`` 32 or 64.

    >>> AMDMFMALayout(3, [16, 16, 16], False, [2, 2]).to_linear_layout([32, 32]).get_in_dim_size("lane")
    64
    """

    version: int
    instr_shape: Sequence[int]
    transposed: bool
    warps_per_cta: Sequence[int]
    element_bitwidth: int | None = None
    tiles_per_warp: Sequence[int] | None = None
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)

    @property
    def rank(self) -> int:
        """The tensor rank (of ``warps_per_cta``)."""
        return len(pow2_list(self.warps_per_cta, "warps_per_cta"))

    def _check(self) -> tuple[int, int, int, tuple[int, ...], tuple[int, ...]]:
        """(M, N, lane height, warps_per_cta, tiles_per_warp), checked as Gluon and Triton check them."""
        if self.version not in (1, 2, 3, 4) or isinstance(self.version, bool):
            raise LayoutError(f"AMDMFMALayout version must be in the [1, 4] range, got {self.version!r}")
        instr = list(pow2_list(self.instr_shape, "instr_shape"))
        if len(instr) != 3 or instr[:2] not in MFMA_SHAPES:
            raise LayoutError(f"invalid MFMA intrinsic shape {instr} (M x N: 32x32, 16x16, 64x4 or 4x64)")
        bits = 32 if self.element_bitwidth is None else self.element_bitwidth
        if bits not in (32, 64) or isinstance(bits, bool):
            raise LayoutError(f"element bitwidth must be 32 or 64, got {bits!r}")
        if instr[:2] == [64, 4] and not self.transposed:
            raise LayoutError("64x4 mfma must be transposed (Triton 3.9 asserts)")
        rank = self.rank
        tiles = [1] * rank if self.tiles_per_warp is None else self.tiles_per_warp
        return instr[0], instr[1], 1 if bits == 64 else 4, \
            pow2_list(self.warps_per_cta, "warps_per_cta", rank), pow2_list(tiles, "tiles_per_warp", rank)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The accumulator layout for ``shape``: MFMA tiles N-contiguous over the whole tensor."""
        m, n, height, warps, tiles = self._check()
        rank = self.rank
        dims = _rank_of(shape, rank, "an MFMA layout")
        names = standard_out_dim_names(rank)
        mi, ni = rank - 2, rank - 1
        dim_m, dim_n = names[mi], names[ni]
        per_tile = m * n // (64 * height)
        if self.transposed:
            tile = _id(height, REG, dim_n) * _id(m, LANE, dim_m) * _id(64 // m, LANE, dim_n) \
                * _id(per_tile, REG, dim_n)
        else:
            tile = _id(height, REG, dim_m) * _id(n, LANE, dim_n) * _id(64 // n, LANE, dim_m) \
                * _id(per_tile, REG, dim_m)
        tile = tile.transpose_outs([dim_n, dim_m])
        tile = tile * _id(tiles[ni], REG, dim_n) * _id(warps[ni], WARP, dim_n) \
            * _id(dims[ni] // (n * warps[ni] * tiles[ni]), REG, dim_n) \
            * _id(tiles[mi], REG, dim_m) * _id(warps[mi], WARP, dim_m)
        return combine_with_shape(_with_batch(tile, rank, warps[0]), dims, self.cga_layout,
                                  broadcast_registers=True)

    def dot_operand_layout(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """``DotOperandLayout(operand_index, self, k_width)``: ``k_width`` K elements per lane."""
        m, n, _, warps, tiles = self._check()
        rank = self.rank
        dims = _rank_of(shape, rank, "an MFMA dot operand")
        names = standard_out_dim_names(rank)
        k_i, nonk_i = (rank - 1, rank - 2) if operand_index == 0 else (rank - 2, rank - 1)
        dim_k, dim_nonk = names[k_i], names[nonk_i]
        nonk = m if operand_index == 0 else n
        tile = _id(k_width, REG, dim_k) * _id(nonk, LANE, dim_nonk) * _id(64 // nonk, LANE, dim_k)
        k_tile = 64 // nonk * k_width
        if [m, n, operand_index] in ([64, 4, 0], [4, 64, 1]):  # the 64x64 operand: 16 K steps
            tile, k_tile = tile * _id(16, REG, dim_k), k_tile * 16
        if dims[k_i] > k_tile:
            tile = tile * _id(dims[k_i] // k_tile, REG, dim_k)
        tile = (tile * _id(tiles[nonk_i], REG, dim_nonk)).transpose_outs([dim_k, dim_nonk])
        warp_layout = identity_standard_nd(WARP, warps, list(range(rank - 1, -1, -1)))
        tile = _with_batch(tile, rank)
        cta = tile * warp_layout.transpose_outs(tile.get_out_dim_names())
        # Unlike a WMMA operand's, the CTAs keep the parent's bases along K too (as Triton 3.9 does).
        return combine_with_shape(cta, dims, self.cga_layout, broadcast_registers=True)


@dataclass(frozen=True)
class AMDWMMALayout:
    """``#ttg.amd_wmma``: 16x16 WMMA tiles of a 32-lane warp; ``warp_bases`` and ``reg_bases``
    place the tiles (in tile units: [1, 0] is the next tile along M) across warps and registers;
    ``transposed`` puts a lane's run along N instead of M.

    >>> L = AMDWMMALayout(2, False, [[0, 1], [1, 0]]).to_linear_layout([32, 32])
    >>> L.apply({"register": 0, "lane": 0, "warp": 1, "block": 0})
    {'dim0': 0, 'dim1': 16}
    """

    version: int
    transposed: bool
    warp_bases: Sequence[Sequence[int]]
    reg_bases: Sequence[Sequence[int]] | None = None
    instr_shape: Sequence[int] | None = None
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)
    rank: int = 2

    def _dims(self) -> tuple[int, list[int], list[list[int]], list[list[int]]]:
        """(rank, instr_shape, reg_bases, warp_bases), checked."""
        if self.version not in (1, 2, 3) or isinstance(self.version, bool):
            raise LayoutError(f"AMDWMMALayout version must be in the [1, 3] range, got {self.version!r}")
        rank = self.rank
        if rank not in (2, 3) or isinstance(rank, bool):
            raise LayoutError(f"AMDWMMALayout rank must be 2 or 3, got {rank!r}")
        instr = list(pow2_list([16, 16, 16] if self.instr_shape is None else self.instr_shape, "instr_shape"))
        if len(instr) != 3 or instr[:2] != [16, 16] or instr[2] not in WMMA_K[self.version]:
            raise LayoutError(f"invalid WMMA v{self.version} instruction shape {instr} (16x16 with K in "
                              f"{sorted(WMMA_K[self.version])})")
        regs = [list(b) for b in (self.reg_bases or [])]
        warps = [list(b) for b in self.warp_bases]
        if any(len(b) != rank for b in regs + warps):
            raise LayoutError(f"warp_bases and reg_bases must have rank {rank}: {warps}, {regs}")
        self._tiles(regs, warps, rank, list(range(rank)))  # onto the tiles it spans, or Triton aborts
        return rank, instr, regs, warps

    def _tiles(self, regs: list[list[int]], warps: list[list[int]], rank: int,
               order: list[int]) -> LinearLayout:
        """The registers and warps over tiles, out dims in ``order``."""
        names = standard_out_dim_names(rank)
        tiles = LinearLayout.from_bases([(REG, regs), (WARP, warps)], names)
        return tiles.transpose_outs([names[d] for d in order])

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The accumulator layout for ``shape``."""
        rank, instr, regs, warps = self._dims()
        dims = _rank_of(shape, rank, "a WMMA layout")
        names = standard_out_dim_names(rank)
        if any(dims[i] != 1 and dims[i] < instr[j] for i, j in ((rank - 2, 0), (rank - 1, 1))):
            raise LayoutError(f"Unsupported tensor shape {list(dims)} for a WMMA tile of {instr[:2]} "
                              "(Triton 3.9 asserts)")
        lane_dim, reg_dim = (names[rank - 2], names[rank - 1]) if self.transposed else \
            (names[rank - 1], names[rank - 2])
        regs_in_tile, last_lane = WMMA_TILES[1 if self.version == 1 else 2]
        tile = LinearLayout.from_bases([(REG, [[0, r] for r in regs_in_tile]),
                                        (LANE, [[1, 0], [2, 0], [4, 0], [8, 0], [0, last_lane]])],
                                       [lane_dim, reg_dim], [16, 16])
        rep = list(range(rank - 1, -1, -1))
        tile = _with_batch(tile, rank).transpose_outs([names[d] for d in rep])
        cta = tile * self._tiles(regs, warps, rank, rep)
        return _one_element_per_basis(combine_with_shape(cta, dims, self.cga_layout,
                                                         broadcast_registers=True))

    def dot_operand_layout(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """``DotOperandLayout(operand_index, self, k_width)``: the tiles of the operand, K kept in a warp."""
        rank, instr, regs, warps = self._dims()
        dims = _rank_of(shape, rank, "a WMMA dot operand")
        names = standard_out_dim_names(rank)
        k_i, nonk_i = (rank - 1, rank - 2) if operand_index == 0 else (rank - 2, rank - 1)
        dim_k, dim_nonk = names[k_i], names[nonk_i]
        if self.version in WMMA_K_WIDTHS and k_width not in WMMA_K_WIDTHS[self.version]:
            allowed = "/".join(map(str, WMMA_K_WIDTHS[self.version]))
            raise LayoutError(f"ttg.dot_op kWidth parameter must be {allowed} for WMMA v{self.version}, "
                              f"got {k_width}")
        nonk = instr[0] if operand_index == 0 else instr[1]
        depth = 32 // nonk
        spread = LinearLayout.zeros_1d if self.version == 1 else LinearLayout.identity_1d
        tile = _id(k_width, REG, dim_k) * _id(nonk, LANE, dim_nonk) * spread(depth, LANE, dim_k) \
            * _id(instr[2] // (depth * k_width), REG, dim_k)
        rep = [k_i, nonk_i] + ([0] if rank == 3 else [])
        tile = _with_batch(tile, rank).transpose_outs([names[d] for d in rep])
        regs = [b for b in (zero_dim(b, k_i) for b in regs) if any(b)]  # a K repeat is no register
        cta = tile * self._tiles(regs, [zero_dim(b, k_i) for b in warps], rank, rep)
        cga = [zero_dim(b, k_i) for b in self.cga_layout]  # CTAs along K hold the same operand
        return _one_element_per_basis(combine_with_shape(cta, dims, cga, broadcast_registers=True))


def _one_element_per_basis(layout: LinearLayout) -> LinearLayout:
    """``layout``, checked as Triton 3.9 checks a WMMA layout (``LinearEncodingAttr``): its non-zero
    bases are distinct unit vectors, so no element is held twice except by broadcast (zero) bases."""
    bases = [vec for _, vectors in layout.bases for vec in vectors]
    check_permutation(bases, layout.num_out_dims,
                      "the WMMA layout's bases (Triton 3.9's LinearEncodingAttr aborts)")
    return layout


