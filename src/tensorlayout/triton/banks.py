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

from tensorlayout.errors import LayoutError
from tensorlayout.triton import _gf2
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["bank_conflicts", "vector_width"]

#: One wavefront moves 32 banks x 4 bytes.
WAVEFRONT_BITS = 1024


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
    if not (isinstance(reg, LinearLayout) and isinstance(shared, LinearLayout)):
        raise LayoutError("bank_conflicts needs two LinearLayouts (registers, shared memory)")
    if bitwidth not in (8, 16, 32, 64) or isinstance(bitwidth, bool):
        raise LayoutError(f"bitwidth must be 8, 16, 32 or 64, got {bitwidth!r}")
    for ll, dims in ((reg, ("register", "lane")), (shared, ("offset",))):
        if not all(ll.has_in_dim(d) for d in dims):
            raise LayoutError(f"bank_conflicts needs in dims {list(dims)}, got {ll.get_in_dim_names()}")
    if reg.out_dims != shared.out_dims:
        raise LayoutError(f"register and shared layouts cover different tensors: {reg.out_dims} vs "
                          f"{shared.out_dims}")
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
