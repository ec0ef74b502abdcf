"""Shared-memory bank conflicts of a register layout stored to (or loaded from) a shared layout,
counted as Triton counts them (``bankConflictsMemDesc``, reached through Gluon's
``bank_conflicts``): the excess wavefronts per wavefront, always ``2**k - 1``.

The registers that hold consecutive offsets form one vector access (at most 128 bits). The
shared offsets split into the ``vector``, the ``bank`` part (one 128-byte wavefront of vectors)
and the ``segment`` above it. Lanes of one phase (32 lanes for 4-byte accesses, 16 for 8-byte,
8 for 16-byte) conflict when they differ only in segment bits: same banks, other words.

>>> from tensorlayout.triton import BlockedLayout, SwizzledSharedLayout
>>> reg = BlockedLayout([1, 1], [32, 1], [1, 1], [1, 0]).to_linear_layout([32, 32])
>>> bank_conflicts(reg, SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([32, 32]), 32)
7
>>> bank_conflicts(reg, SwizzledSharedLayout(4, 1, 8, [1, 0]).to_linear_layout([32, 32]), 32)
0
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorlayout.core.banks import lanes_per_phase, phase_of, words_of
from tensorlayout.errors import LayoutError
from tensorlayout.triton import _gf2
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["BankReport", "bank_conflicts", "hardware_bank_conflicts", "vector_width"]

#: One wavefront moves 32 banks x 4 bytes.
WAVEFRONT_BITS = 1024


def _check(reg: LinearLayout, shared: LinearLayout, bitwidth: int) -> None:
    if not (isinstance(reg, LinearLayout) and isinstance(shared, LinearLayout)):
        raise LayoutError("bank conflicts need two LinearLayouts (registers, shared memory)")
    if bitwidth not in (8, 16, 32, 64) or isinstance(bitwidth, bool):
        raise LayoutError(f"bitwidth must be 8, 16, 32 or 64, got {bitwidth!r}")
    for ll, dims in ((reg, ("register", "lane")), (shared, ("offset",))):
        if not all(ll.has_in_dim(d) for d in dims):
            raise LayoutError(f"bank conflicts need in dims {list(dims)}, got {ll.get_in_dim_names()}")
    if reg.out_dims != shared.out_dims:
        raise LayoutError(f"register and shared layouts cover different tensors: {reg.out_dims} vs "
                          f"{shared.out_dims}")


def _without_broadcast_registers(reg: LinearLayout) -> LinearLayout:
    bases = [(n, [v for v in vs if any(v)] if n == "register" else vs) for n, vs in reg.bases]
    return LinearLayout.from_bases(bases, reg.get_out_dim_names(), reg.get_out_dim_sizes(),
                                   require_surjective=False)


def vector_width(reg: LinearLayout, shared: LinearLayout, bitwidth: int) -> int:
    """Elements per vector access (at most 128 bits): ``2**k`` when registers map to the offsets
    1, 2, ..., 2**(k-1) and every other basis keeps the low ``k`` offset bits zero (aligned).

    >>> from tensorlayout.triton import BlockedLayout, SwizzledSharedLayout
    >>> reg = BlockedLayout([1, 8], [32, 1], [1, 1], [1, 0]).to_linear_layout([32, 8])
    >>> vector_width(reg, SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([32, 8]), 16)
    8
    """
    to_smem = _without_broadcast_registers(reg).invert_and_compose(shared)
    offset = to_smem.get_out_dim_names().index("offset")
    images = [(n, v[offset]) for n, vs in to_smem.bases for v in vs]
    vec = 1
    while vec * 2 * bitwidth <= 128:
        wanted = [1 << j for j in range((vec * 2).bit_length() - 1)]
        regs = [x for n, x in images if n == "register"]
        if not all(w in regs for w in wanted):
            break
        others = list(images)
        for w in wanted:
            others.remove(("register", w))
        if any(x & (2 * vec - 1) for _, x in others):
            break
        vec *= 2
    return vec


def bank_conflicts(reg: LinearLayout, shared: LinearLayout, bitwidth: int) -> int:
    """Excess wavefronts per wavefront when ``reg`` is stored to ``shared`` (Triton's count).

    ``reg`` maps ``register, lane, warp, block`` and ``shared`` maps ``offset, block`` to the same
    tensor; ``bitwidth`` is the element width in bits.
    """
    _check(reg, shared, bitwidth)
    vec = vector_width(reg, shared, bitwidth)
    vec_log = vec.bit_length() - 1
    offsets = shared.get_in_dim_size_log2("offset")
    bank_log = min((WAVEFRONT_BITS // (vec * bitwidth)).bit_length() - 1, offsets - vec_log)
    segments = shared.flattened_bases("offset")[vec_log + bank_log:]
    lanes = reg.flattened_bases("lane")
    drop = max(vec * bitwidth // 32, 1).bit_length() - 1
    lanes = lanes[: max(len(lanes) - drop, 0)]
    common = _gf2.rank(segments) + _gf2.rank(lanes) - _gf2.rank(segments + lanes)
    return (1 << common) - 1


#: The most vector instructions :func:`hardware_bank_conflicts` enumerates.
MAX_INSTRUCTIONS = 1 << 12


@dataclass(frozen=True)
class BankReport:
    """Wavefronts of each vector access of warp 0, counted on the CUDA bank model.

    ``wavefronts[i][p]`` is the number of wavefronts phase ``p`` of instruction ``i`` takes
    (1 is ideal); ``excess`` is the worst phase's count minus 1.
    """

    vector_bits: int
    lanes_per_phase: int
    wavefronts: tuple[tuple[int, ...], ...]

    @property
    def excess(self) -> int:
        return max((max(w) for w in self.wavefronts if w), default=1) - 1


def hardware_bank_conflicts(reg: LinearLayout, shared: LinearLayout, bitwidth: int) -> BankReport:
    """Wavefronts per phase by brute force over the lanes of warp 0 (CUDA's model: 32 banks of
    4 bytes; 4-byte accesses in one phase of 32 lanes, 8-byte in half-warps, 16-byte in quarter
    warps), with the vector width Triton picks (:func:`vector_width`).

    >>> from tensorlayout.triton import BlockedLayout, SwizzledSharedLayout
    >>> reg = BlockedLayout([1, 1], [32, 1], [1, 1], [1, 0]).to_linear_layout([32, 32])
    >>> r = hardware_bank_conflicts(reg, SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([32, 32]), 32)
    >>> r.vector_bits, r.lanes_per_phase, r.wavefronts[0], r.excess
    (128, 8, (8, 8, 8, 8), 7)
    """
    _check(reg, shared, bitwidth)
    vec = vector_width(reg, shared, bitwidth)
    to_smem = _without_broadcast_registers(reg).invert_and_compose(shared)
    offset = to_smem.get_out_dim_names().index("offset")
    images = [v[offset] for n, vs in to_smem.bases if n == "register" for v in vs]
    vector_regs = [images.index(1 << j) for j in range(vec.bit_length() - 1)]
    others = [j for j in range(len(images)) if j not in vector_regs]
    if len(others) > MAX_INSTRUCTIONS.bit_length() - 1:
        raise LayoutError(f"too many vector instructions to enumerate (2**{len(others)})")
    access_bytes = vec * bitwidth // 8
    per_phase = lanes_per_phase(access_bytes)
    lanes = to_smem.get_in_dim_size("lane")
    zero = dict.fromkeys(to_smem.get_in_dim_names(), 0)
    report = []
    for pick in range(1 << len(others)):
        register = sum(1 << j for k, j in enumerate(others) if pick >> k & 1)
        addrs = [to_smem.apply({**zero, "register": register, "lane": lane})["offset"] * bitwidth // 8
                 for lane in range(lanes)]
        words = {lane: words_of(a, access_bytes) for lane, a in enumerate(addrs)}
        report.append(tuple(phase_of(range(p, min(p + per_phase, lanes)), words).wavefronts
                            for p in range(0, lanes, per_phase)))
    return BankReport(vec * bitwidth, per_phase, tuple(report))
