"""Triton's GPU encodings written from their definitions, each lowered to a :class:`LinearLayout`.

Class names and arguments follow Gluon (``triton.experimental.gluon.language``): the layout
object is built first, then ``to_linear_layout(shape)`` gives the map for a tensor shape, as
Triton's ``ttg::toLinearLayout`` does. Distributed layouts map ``register, lane, warp, block``
to ``dim0, dim1, ...``; shared layouts map ``offset, block``.

>>> ll = BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0]).to_linear_layout([16, 16])
>>> ll.apply({"register": 3, "lane": 5, "warp": 1, "block": 0})
{'dim0': 9, 'dim1': 7}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = [
    "BlockedLayout",
    "DotOperandLayout",
    "NVMMADistributedLayout",
    "SliceLayout",
    "SwizzledSharedLayout",
    "check_permutation",
    "combine_with_shape",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "fit_cga",
    "identity_standard_nd",
    "positive",
    "pow2_list",
    "powers_below",
    "standard_out_dim_names",
    "to_linear_layout",
    "zero_dim",
]


def standard_out_dim_names(rank: int) -> list[str]:
    """``["dim0", ..., "dim<rank-1>"]``.

    >>> standard_out_dim_names(2)
    ['dim0', 'dim1']
    """
    return [f"dim{i}" for i in range(rank)]


def pow2_list(values: Any, what: str, rank: int | None = None) -> tuple[int, ...]:
    """``values`` checked to be powers of two (``rank`` of them when given).

    >>> pow2_list([1, 4], "warps_per_cta", 2)
    (1, 4)
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise LayoutError(f"{what} must be a list of ints, got {values!r}")
    got = tuple(values)
    for v in got:
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0 or v & (v - 1):
            raise LayoutError(f"{what} must hold powers of two, got {list(got)}")
    if rank is not None and len(got) != rank:
        raise LayoutError(f"{what} must have {rank} entries (the rank), got {list(got)}")
    return got


def _rank(values: Any, what: str) -> int:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise LayoutError(f"{what} must be a list, got {values!r}")
    return len(values)


def _order(order: Any, rank: int) -> tuple[int, ...]:
    got = tuple(order) if isinstance(order, Sequence) and not isinstance(order, str) else None
    if got is None or sorted(got) != list(range(rank)):
        raise LayoutError(f"order must be a permutation of 0..{rank - 1}, got {order!r}")
    return got


class _RankOfOrder:
    """A layout whose rank is the length of its ``order`` list (blocked and swizzled shared)."""

    __slots__ = ()
    order: Sequence[int]

    @property
    def rank(self) -> int:
        """The tensor rank the layout is for."""
        return _rank(self.order, "order")


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """``in_dim`` laid over ``shape`` minor-to-major in ``order`` (out dims in that order).

    >>> identity_standard_nd("lane", [2, 4], [1, 0]).apply({"lane": 5})
    {'dim1': 1, 'dim0': 1}
    """
    names = standard_out_dim_names(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity_1d(shape[d], in_dim, names[d])
    return ret


def _zeros_or_identity(in_dim: str, shape: Sequence[int], order: Sequence[int],
                       zero_dim: int) -> LinearLayout:
    """Triton's ``broadcastedDotOperandLayout``: identity in ``order`` except 0 along ``zero_dim``."""
    names = standard_out_dim_names(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        make = LinearLayout.zeros_1d if d == zero_dim else LinearLayout.identity_1d
        ret = ret * make(shape[d], in_dim, names[d])
    return ret


def ensure_layout_not_smaller_than(layout: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """Repeat the first in dim (``register``/``offset``) until each out dim covers ``shape``."""
    k_dim = layout.get_in_dim_names()[0]
    ret = layout
    for name in layout.get_out_dim_names():
        actual, desired = layout.get_out_dim_size(name), shape[name]
        if actual < desired:
            ret = ret * LinearLayout.identity_1d(desired // actual, k_dim, name)
    return ret


def ensure_layout_not_larger_than(layout: LinearLayout, shape: dict[str, int],
                                  broadcast_registers: bool = True) -> LinearLayout:
    """Clip each out dim to ``shape``: every basis value at or past the size goes (all copies of
    it, as in Triton); a register basis is dropped (or zeroed when ``broadcast_registers``), any
    other basis becomes 0 (a broadcast).

    >>> ll = LinearLayout.from_bases([("register", [[1], [4]]), ("lane", [[6]])], ["dim0"], [8], False)
    >>> ensure_layout_not_larger_than(ll, {"dim0": 4}, broadcast_registers=False).bases
    [('register', [[1]]), ('lane', [[0]])]
    """
    sizes = [min(s, shape[n]) for n, s in layout.out_dims]
    if sizes == layout.get_out_dim_sizes():
        return layout
    if not all(type(s) is int and s > 0 and not s & (s - 1) for s in sizes):
        raise LayoutError(f"a layout can only be clipped to power-of-two sizes, got {shape}")
    return layout._clip_outs(sizes, None if broadcast_registers else "register")


#: The ``block`` layout of one CTA (no ``cga_layout`` bases), per rank.
_ONE_CTA: dict[int, LinearLayout] = {}


def fit_cga(shape: Sequence[int], cga_layout: Any) -> tuple[LinearLayout, list[int]]:
    """The ``block -> dims`` layout clipped to ``shape``, and the shape left for one CTA.

    >>> fit_cga([8, 4], [[1, 0]])[1]
    [4, 4]
    """
    names = standard_out_dim_names(len(shape))
    if (type(cga_layout) is list or type(cga_layout) is tuple) and not cga_layout and \
            all(type(n) is int and n > 0 for n in shape):
        one = _ONE_CTA.get(len(shape))
        if one is None:
            one = _ONE_CTA[len(shape)] = LinearLayout.from_bases([("block", [])], names, [1] * len(shape))
        return one, list(shape)
    bases, sizes = _cga(cga_layout, len(shape))
    cga = LinearLayout.from_bases([("block", bases)], names, sizes, require_surjective=False)
    cga = ensure_layout_not_larger_than(cga, dict(zip(names, shape)))
    return cga, [max(1, n // cga.get_out_dim_size(d)) for n, d in zip(shape, names)]


def combine_with_shape(cta: LinearLayout, shape: Sequence[int], cga_layout: Any = (),
                        broadcast_registers: bool = False) -> LinearLayout:
    """Triton's ``combineCtaCgaWithShape``: fit one CTA's layout to the shape, then add ``block``.

    Out-of-shape registers are dropped for ``#blocked`` but kept as zero bases (broadcast) for
    the MMA layouts and their dot operands, as Triton 3.9 does.
    """
    names = standard_out_dim_names(len(shape))
    cga, per_cta = fit_cga(shape, cga_layout)
    cta_shape = dict(zip(names, per_cta))
    cta = ensure_layout_not_smaller_than(cta, cta_shape)
    cta = ensure_layout_not_larger_than(cta, cta_shape, broadcast_registers)
    return (cta * cga.transpose_outs(cta.get_out_dim_names())).transpose_outs(names)


def _cga(cga_layout: Any, rank: int) -> tuple[list[list[int]], list[int]]:
    """The ``block`` bases of a ``cga_layout`` and the out sizes they span, checked as Triton's
    CGA encoding checks them (onto those sizes, one CTA per tile: see ``check_permutation``)."""
    if isinstance(cga_layout, (str, bytes)) or not isinstance(cga_layout, Sequence):
        raise LayoutError(f"cga_layout must be a list of bases, got {cga_layout!r}")
    bases = [list(_pow2_or_zero(b, rank)) for b in cga_layout]
    return bases, check_permutation(bases, rank, "the CGA layout")


def check_permutation(bases: Sequence[Sequence[int]], rank: int, what: str) -> list[int]:
    """The out sizes ``bases`` span, after checking what Triton 3.9 checks of a CGA layout (and of
    an AMD WMMA CTA layout): the map onto those sizes is surjective, and the non-zero bases are
    distinct unit vectors (a permutation matrix once the zero, broadcast, bases are removed).

    >>> check_permutation([[2]], 1, "the CGA layout")
    Traceback (most recent call last):
    tensorlayout.errors.LayoutError: the CGA layout [[2]] is not surjective onto [4] (Triton 3.9 aborts)
    """
    sizes = [1] * rank
    for b in bases:
        sizes = [max(s, 2 * x) for s, x in zip(sizes, b)]
    names = standard_out_dim_names(rank)
    spanned = LinearLayout.from_bases([("block", [list(b) for b in bases])], names, sizes,
                                      require_surjective=False)
    if not spanned.is_surjective():
        raise LayoutError(f"{what} {[list(b) for b in bases]} is not surjective onto {sizes} "
                          "(Triton 3.9 aborts)")
    nonzero = [tuple(b) for b in bases if any(b)]
    if len(set(nonzero)) != len(nonzero) or any(sum(1 for x in b if x) != 1 for b in nonzero):
        raise LayoutError(f"{what} {[list(b) for b in bases]}: after removing broadcast (zero) bases it "
                          "must be a permutation matrix (Triton 3.9 rejects it)")
    return sizes


def _pow2_or_zero(basis: Any, rank: int) -> tuple[int, ...]:
    ok = isinstance(basis, Sequence) and not isinstance(basis, (str, bytes)) and len(basis) == rank
    if ok and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 and not x & (x - 1)
                  for x in basis):
        return tuple(basis)
    raise LayoutError(f"cga_layout bases must be {rank} powers of two (or 0), got {basis!r}")


def _shape(shape: Any, rank: int) -> tuple[int, ...]:
    return pow2_list(shape, "the tensor shape", rank)


@dataclass(frozen=True)
class BlockedLayout(_RankOfOrder):
    """``#blocked``: each thread owns ``size_per_thread``, tiled over lanes, warps (and CTAs).

    >>> print(BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]).to_linear_layout([4, 8]))
    <BLANKLINE>
     - register is a size 1 dimension
     - lane=1 -> (0, 1)
       lane=2 -> (0, 2)
       lane=4 -> (0, 4)
       lane=8 -> (1, 0)
       lane=16 -> (2, 0)
     - warp is a size 1 dimension
     - block is a size 1 dimension
    where out dims are: [dim0 (size 4), dim1 (size 8)]
    """

    size_per_thread: Sequence[int]
    threads_per_warp: Sequence[int]
    warps_per_cta: Sequence[int]
    order: Sequence[int]
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The layout for a tensor of ``shape`` (Triton's ``toLinearLayout``)."""
        rank = self.rank
        spt = pow2_list(self.size_per_thread, "size_per_thread", rank)
        tpw = pow2_list(self.threads_per_warp, "threads_per_warp", rank)
        wpc = pow2_list(self.warps_per_cta, "warps_per_cta", rank)
        order = _order(self.order, rank)
        cta = (identity_standard_nd("register", spt, order) * identity_standard_nd("lane", tpw, order)
               * identity_standard_nd("warp", wpc, order))
        return combine_with_shape(cta, _shape(shape, rank), self.cga_layout)


def _mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int],
              rep_order: Sequence[int]) -> LinearLayout:
    """Triton's ``nvidiaMmaTile``: kWidth registers and 4 lanes along ``order[0]``, 8 lanes along
    ``order[1]``, then register repeats along ``order[1]`` and ``order[0]``."""
    names = standard_out_dim_names(len(rep_order))
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    if m % 8 or n % (k_width * 4):
        raise LayoutError(f"an MMA tile of {list(tile_shape)} does not hold kWidth={k_width} fragments")
    reg, lane = "register", "lane"
    return (identity_standard_nd(reg, [1] * len(rep_order), rep_order)
            * LinearLayout.identity_1d(k_width, reg, names[inner])
            * LinearLayout.identity_1d(4, lane, names[inner])
            * LinearLayout.identity_1d(8, lane, names[outer])
            * LinearLayout.identity_1d(m // 8, reg, names[outer])
            * LinearLayout.identity_1d(n // (k_width * 4), reg, names[inner]))


def _row_major(rank: int) -> list[int]:
    return list(range(rank - 1, -1, -1))


@dataclass(frozen=True)
class NVMMADistributedLayout:
    """``#nvidia_mma``: the accumulator of ``mma.sync`` (version ``[2, 0]``, ``instr_shape``
    ``[16, 8]``) or ``wgmma`` (``[3, 0]``, ``[16, N, 16]``).

    >>> L = NVMMADistributedLayout([2, 0], [1, 1], [16, 8]).to_linear_layout([16, 8])
    >>> L.apply({"register": 1, "lane": 5, "warp": 0, "block": 0})
    {'dim0': 1, 'dim1': 3}
    """

    version: Sequence[int]
    warps_per_cta: Sequence[int]
    instr_shape: Sequence[int]
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)

    @property
    def rank(self) -> int:
        """The tensor rank the layout is for."""
        return _rank(self.warps_per_cta, "warps_per_cta")

    def _major(self) -> int:
        major = self.version[0] if isinstance(self.version, Sequence) and self.version else None
        if major not in (2, 3):
            raise UnsupportedError(f"NVMMADistributedLayout version {self.version!r}: only [2, 0] (mma.sync) "
                                   "and [3, 0] (wgmma) are modelled")
        return major

    def warp_order(self) -> list[int]:
        """Warps go along N first for ``mma.sync`` and along M first for ``wgmma``, then along the
        batch dims, the outermost last (Triton's ``getMatrixOrder``).

        >>> NVMMADistributedLayout([3, 0], [1, 1, 1], [16, 64, 16]).warp_order()
        [1, 2, 0]
        """
        order = _row_major(self.rank)
        if self._major() == 3:
            order[:2] = order[1::-1]
        return order

    def tile_shape(self) -> list[int]:
        """The shape one warp's instruction covers (``instr_shape`` without K)."""
        instr = pow2_list(self.instr_shape, "instr_shape")
        return list(instr) if self._major() == 2 else list(instr[:2])

    def _checked_tile(self) -> list[int]:
        tile = self.tile_shape()
        if len(tile) != self.rank:
            raise LayoutError(f"instr_shape {list(self.instr_shape)} does not match rank {self.rank}")
        return tile

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The layout for a tensor of ``shape``: one instruction tile per warp, then repeats."""
        rank = self.rank
        wpc = pow2_list(self.warps_per_cta, "warps_per_cta", rank)
        tile = self._checked_tile()
        order = _row_major(rank)
        cta = _mma_tile(tile, 2, order, order)
        warps = identity_standard_nd("warp", wpc, self.warp_order()).transpose_outs(cta.get_out_dim_names())
        return combine_with_shape(cta * warps, _shape(shape, rank), self.cga_layout,
                                   broadcast_registers=True)

    def dot_operand_layout(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """``DotOperandLayout(operand_index, self, k_width).to_linear_layout(shape)``: one warp's
        tile is ``[M, K]`` (A) or ``[K, 8]`` (B) with M ``instr_shape[rank - 2]`` (read there whatever
        the length of ``instr_shape``, as Triton 3.9 does) and K ``k_width`` times 4 when M is 8
        (fp64's m8n8k4) or 8 otherwise."""
        if self._major() == 3 and operand_index == 1:
            raise UnsupportedError("wgmma takes its B operand from shared memory: no register layout")
        rank, is_a = self.rank, operand_index == 0
        if rank < 2:  # the tile below is [..., M, K] or [..., K, N]
            raise LayoutError(f"a dot operand has rank 2 or more, but its parent's warps_per_cta "
                              f"{list(self.warps_per_cta)} give rank {rank}")
        if _rank(self.instr_shape, "instr_shape") < rank - 1:
            raise LayoutError(f"instr_shape {list(self.instr_shape)} has no M (entry {rank - 2}) for a "
                              f"rank-{rank} operand")
        m = pow2_list([self.instr_shape[rank - 2]], "instr_shape's M")[0]
        k = k_width * (4 if m == 8 else 8)
        tile = [1] * rank
        tile[rank - 2:] = [m, k] if is_a else [k, 8]
        order = _row_major(rank) if is_a else [rank - 2, rank - 1, *range(rank - 3, -1, -1)]
        cta = _mma_tile(tile, k_width, order, order)
        k_dim = rank - 1 if is_a else rank - 2
        wpc = pow2_list(self.warps_per_cta, "warps_per_cta", rank)
        warps = _zeros_or_identity("warp", wpc, self.warp_order(), k_dim)
        cga = [zero_dim(b, k_dim) for b in _cga(self.cga_layout, rank)[0]]
        return combine_with_shape(cta * warps.transpose_outs(cta.get_out_dim_names()), _shape(shape, rank),
                                   cga, broadcast_registers=True)


def zero_dim(basis: Sequence[int], dim: int) -> list[int]:
    """``basis`` with its ``dim`` entry set to 0 (an operand's CTAs along K hold the same data).

    >>> zero_dim([2, 1], 1)
    [2, 0]
    """
    return [0 if d == dim else x for d, x in enumerate(basis)]


@dataclass(frozen=True)
class DotOperandLayout:
    """``#dot_op``: operand A (``operand_index`` 0) or B (1) of an MMA parent, ``k_width``
    consecutive K elements per thread. The parent lowers its own operands (NVIDIA MMA here,
    AMD MFMA/WMMA in :mod:`tensorlayout.triton.encodings_amd`).

    >>> parent = NVMMADistributedLayout([2, 0], [1, 1], [16, 8])
    >>> L = DotOperandLayout(0, parent, 2).to_linear_layout([16, 16])
    >>> L.apply({"register": 1, "lane": 1, "warp": 0, "block": 0})
    {'dim0': 0, 'dim1': 3}
    """

    operand_index: int
    parent: Any
    k_width: int

    @property
    def rank(self) -> int:
        """The parent's rank."""
        self._lowering()
        return int(self.parent.rank)

    def _lowering(self) -> Any:
        method = getattr(self.parent, "dot_operand_layout", None)
        if not callable(method):
            raise UnsupportedError(f"dot operands of {type(self.parent).__name__} are not modelled "
                                   "(parents: NVMMADistributedLayout, AMDMFMALayout, AMDWMMALayout)")
        return method

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The layout for an operand of ``shape`` ([M, K] for A, [K, N] for B)."""
        lower = self._lowering()
        if self.operand_index not in (0, 1) or isinstance(self.operand_index, bool):
            raise LayoutError(f"operand_index must be 0 (A) or 1 (B), got {self.operand_index!r}")
        k_width = pow2_list([self.k_width], "k_width")[0]
        result: LinearLayout = lower(self.operand_index, k_width, shape)
        return result


@dataclass(frozen=True)
class SliceLayout:
    """``#ttg.slice``: the layout ``parent`` gives a tensor with dim ``dim`` removed (the parent
    over the shape with a 1 put back at ``dim``; register bases that become 0 are dropped).

    >>> parent = BlockedLayout([1, 4], [2, 16], [1, 2], [0, 1])
    >>> print(SliceLayout(1, parent).to_linear_layout([4]))
    <BLANKLINE>
     - register=1 -> (2)
     - lane=1 -> (1)
       lane=2 -> (0)
       lane=4 -> (0)
       lane=8 -> (0)
       lane=16 -> (0)
     - warp=1 -> (0)
     - block is a size 1 dimension
    where out dims are: [dim0 (size 4)]
    """

    dim: int
    parent: Any

    @property
    def rank(self) -> int:
        """One less than the parent's."""
        return int(self.parent.rank) - 1

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The parent's layout over ``shape`` with a size-1 dim ``dim`` inserted, that dim removed."""
        rank = self.rank
        if not isinstance(self.dim, int) or isinstance(self.dim, bool) or not 0 <= self.dim <= rank:
            raise LayoutError(f"SliceLayout dim must be in [0, {rank}] (the parent has rank {rank + 1}), "
                              f"got {self.dim!r}")
        full = list(_shape(shape, rank))
        parent = to_linear_layout(self.parent, full[:self.dim] + [1] + full[self.dim:])
        drop = self.dim
        bases = [(name, [v[:drop] + v[drop + 1:] for v in vectors
                         if name != "register" or any(v[:drop] + v[drop + 1:])])
                 for name, vectors in parent.bases]
        return LinearLayout.from_bases(bases, standard_out_dim_names(rank), full, require_surjective=False)


def positive(value: Any, what: str) -> int:
    """``value`` checked to be a positive int.

    >>> positive(3, "vec")
    3
    """
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise LayoutError(f"{what} must be a positive int, got {value!r}")
    return value


@dataclass(frozen=True)
class SwizzledSharedLayout(_RankOfOrder):
    """``#swizzled_shared``: row ``r`` of the two minor dims stores column ``c`` at
    ``c ^ ((r // per_phase % max_phase) * vec)``.

    >>> L = SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear_layout([4, 8])
    >>> [L.apply({"offset": o, "block": 0}) for o in (8, 16)]
    [{'dim0': 1, 'dim1': 2}, {'dim0': 2, 'dim1': 4}]
    """

    vec: int
    per_phase: int
    max_phase: int
    order: Sequence[int]
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The ``offset -> element`` layout for a tensor of ``shape``."""
        rank = self.rank
        order = _order(self.order, rank)
        full = _shape(shape, rank)
        dims = fit_cga(full, self.cga_layout)[1]
        vec, per_phase = positive(self.vec, "vec"), positive(self.per_phase, "per_phase")
        max_phase = positive(self.max_phase, "max_phase")
        names = standard_out_dim_names(rank)
        if rank == 1:
            line = LinearLayout.identity_1d(dims[0], "offset", "dim0")
            return combine_with_shape(line, full, self.cga_layout)
        col, row = order[0], order[1]
        cols, rows = dims[col], dims[row]
        bases = [[0, 1 << i] for i in range(cols.bit_length() - 1)]
        bases += [[r, vec * (r // per_phase % max_phase) % cols] for r in powers_below(rows)]
        cta = LinearLayout.from_bases([("offset", bases)], [names[row], names[col]])
        for d in order[2:]:
            cta = cta * LinearLayout.identity_1d(dims[d], "offset", names[d])
        return combine_with_shape(cta, full, self.cga_layout)


def powers_below(n: int) -> list[int]:
    """The powers of two below ``n``.

    >>> powers_below(8)
    [1, 2, 4]
    """
    return [1 << i for i in range(n.bit_length() - 1)]


def to_linear_layout(layout: Any, shape: Sequence[int]) -> LinearLayout:
    """Gluon's ``to_linear_layout(layout, shape)``.

    >>> to_linear_layout(SwizzledSharedLayout(1, 1, 1, [1, 0]), [2, 2]).get_in_dim_names()
    ['offset', 'block']
    """
    if isinstance(layout, LinearLayout):
        return layout
    method = getattr(layout, "to_linear_layout", None)
    if not callable(method):
        raise UnsupportedError(f"no linear layout for {type(layout).__name__}")
    result = method(shape)
    if not isinstance(result, LinearLayout):
        raise UnsupportedError(f"{type(layout).__name__}.to_linear_layout did not give a LinearLayout")
    return result
