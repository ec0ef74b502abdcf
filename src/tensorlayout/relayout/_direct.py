"""One-pass relayout between two strided targets, without a logical intermediate.

Per logical dim, both targets write the coordinate in a mixed radix (their digits). Where
the two radices nest (every block of one divides or is divided by every block of the
other, as for all power-of-two tilings) their common refinement is one mixed radix whose
digits each have a stride in both buffers. Boxes of the valid range over those digits
become pairs of strided views, one over each buffer, and are copied like any other box.

>>> from tensorlayout.relayout._target import PhysicalTarget
>>> src = PhysicalTarget.from_xla("f32[4,6]{1,0:T(2,2)}")
>>> dst = PhysicalTarget.from_xla("f32[4,6]{0,1}")
>>> common_digits(src.digits[0], dst.digits[0], 4)
[(2, 12, 2), (2, 2, 1)]
"""

from __future__ import annotations

from itertools import pairwise, product

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlayout.core.intmath import ceil_div, prod
from tensorlayout.core.layout import Digit
from tensorlayout.relayout._memo import TargetMemo
from tensorlayout.relayout._plan import has_fast_path, range_boxes
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.relayout._views import Pair, coalesce

__all__ = ["common_digits", "direct_pairs", "is_direct", "swapped"]

Refined = list[tuple[int, int, int]]  # per dim, major first: (size, src stride, dst stride)
#: per destination target and source target: the digits both refine to (None: no one pass)
REFINED: TargetMemo[PhysicalTarget, list[Refined] | None] = TargetMemo()


def _stride(digits: tuple[Digit, ...], block: int) -> int:
    """The buffer stride of a step of ``block`` in the coordinate: that of the digit with the
    largest block not above it, scaled (0 when no digit counts)."""
    best = max((d for d in digits if d.extent > 1 and d.block <= block), key=lambda d: d.block,
               default=None)
    return 0 if best is None else best.stride * (block // best.block)


def common_digits(src: tuple[Digit, ...], dst: tuple[Digit, ...], n: int) -> Refined | None:
    """The common refinement of one dim's two mixed radices over ``[0, n)``: (size, src
    stride, dst stride) per digit, major first; None when the blocks do not nest."""
    blocks = sorted({1, *(d.block for d in (*src, *dst) if d.extent > 1)})
    if any(hi % lo for lo, hi in pairwise(blocks)):
        return None
    ends = [*blocks[1:], ceil_div(n, blocks[-1]) * blocks[-1]]
    return [(hi // lo, _stride(src, lo), _stride(dst, lo)) for lo, hi in zip(blocks, ends)][::-1]


#: The one-pass copy pays off when the runs contiguous on each side are this long (in
#: elements) or are the same run, or are 2 x 2 blocks read as their transpose (``swapped``):
#: other short ones leave the kernel tiles slower than two passes through the logical array.
MIN_RUN = 8


def is_direct(src: PhysicalTarget, dst: PhysicalTarget) -> bool:
    """True when ``relayout`` copies ``src`` to ``dst`` in one pass (cached on ``dst``): the
    tilings nest and the contiguous runs are long enough (``MIN_RUN``) or swapped."""
    refined = _refined(src, dst)
    if refined is None:
        return False
    digits = [digit for dim in refined for digit in dim if digit[0] > 1]
    src_run = [digit for digit in digits if digit[1] == 1]
    dst_run = [digit for digit in digits if digit[2] == 1]
    return src_run == dst_run or all(d[0] >= MIN_RUN for d in (*src_run, *dst_run)) \
        or (src.element_bits in (8, 16) and swapped(digits))


def swapped(digits: list[tuple[int, int, int]]) -> bool:
    """True when the copy can move 2 x 2 blocks of items, each read as its transpose (a (2,1)
    sub-tile against a transposed one): the only digits of stride 1 are a (2, 1, 2) and a
    (2, 2, 1), and every other stride is a multiple of 4 on both sides, so the kernel moves
    whole blocks of 4 items (of 1 or 2 bytes; see ``units`` in ``_kernel_path``).

    >>> swapped([(64, 4, 512), (2, 1, 2), (2, 2, 1), (32, 512, 4)])
    True
    """
    pair = sorted(d for d in digits if 1 in d[1:])
    rest = [d for d in digits if 1 not in d[1:]]
    return pair == [(2, 1, 2), (2, 2, 1)] \
        and all(d[1] % 4 == 0 and d[2] % 4 == 0 for d in rest)


def _refined(src: PhysicalTarget, dst: PhysicalTarget) -> list[Refined] | None:
    return REFINED.get(dst, src, lambda: _refine(src, dst))


def _refine(src: PhysicalTarget, dst: PhysicalTarget) -> list[Refined] | None:
    out: list[Refined] | None = None
    if has_fast_path(src) and has_fast_path(dst) and src.logical_shape == dst.logical_shape \
            and not src.leading_digits and not dst.leading_digits \
            and not src.packed_bits and not dst.packed_bits:
        assert src.digits is not None and dst.digits is not None
        dims = [common_digits(s, d, n) for s, d, n in zip(src.digits, dst.digits, src.logical_shape,
                                                          strict=True)]
        out = None if any(r is None for r in dims) else [r for r in dims if r is not None]
    return out


def _dim_boxes(refined: Refined, n: int) -> list[tuple[tuple[tuple[int, int, int], ...], int, int]]:
    """The valid range of one dim as boxes: (axes (extent, src stride, dst stride), src
    offset, dst offset)."""
    out = []
    for box in range_boxes(0, n, [size for size, _, _ in refined]):
        axes = tuple((hi - lo, ss, ds) for (lo, hi), (_, ss, ds) in zip(box, refined, strict=True)
                     if hi - lo > 1)
        s_off = sum(lo * ss for (lo, _), (_, ss, _) in zip(box, refined, strict=True))
        d_off = sum(lo * ds for (lo, _), (_, _, ds) in zip(box, refined, strict=True))
        out.append((axes, s_off, d_off))
    return out


def direct_pairs(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray,
                 out: np.ndarray) -> list[Pair]:
    """(destination view over ``out``, source view over ``data``) per box of a one-pass copy
    (``is_direct(src, dst)`` must hold); axes sorted by destination stride, merged."""
    refined = _refined(src, dst)
    assert refined is not None
    pairs = []
    per_dim = [_dim_boxes(r, n) for r, n in zip(refined, src.logical_shape, strict=True)]
    for combo in product(*per_dim):
        axes = sorted((a for axes, _, _ in combo for a in axes), key=lambda a: -a[2])
        shape = tuple(a[0] for a in axes)
        if not prod(shape):
            continue
        d_off, s_off = sum(c[2] for c in combo), sum(c[1] for c in combo)
        dv = as_strided(out[d_off:], shape, tuple(a[2] * out.strides[0] for a in axes))
        sv = as_strided(data[s_off:], shape, tuple(a[1] * data.strides[0] for a in axes))
        pairs.append(coalesce(dv, sv))
    return pairs
