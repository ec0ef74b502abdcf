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

__all__ = ["common_digits", "common_run", "direct_pairs", "is_direct", "over_extents", "over_padding",
           "same_offsets", "swapped"]

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
#: elements) where either target has sub-tiles, or are 2 x 2 blocks read as their transpose
#: (``swapped``): other short ones leave the kernel tiles slower than two passes through the
#: logical array, whose copies weave the sub-tiles (one thread, ratio to ``np.copyto``, one pass
#: against two: s8[1024,2048]{1,0:T(8,128)(4,1)} -> {0,1:T(8,128)(4,1)} 21.2 / 4.7,
#: f32[1024,1024]{1,0:T(8,128)(2,1)} -> {0,1:...} 7.0 / 4.1).
MIN_RUN = 8
#: ... or, between tilings without sub-tiles, this many bytes: their two passes are as slow
#: (u16[1024,2048]{1,0:T(4,4)} -> {0,1:T(4,4)} 5.7 / 10.3, f32 T(2,2) 8.0 / 10.5, f64 T(2,2)
#: 4.1 / 8.8, f32[1024,1024]{1,0:T(8,4)} -> {0,1:T(8,128)} 3.4 / 5.6).
MIN_RUN_BYTES = 8
#: Runs that are the same on both sides count when the run they start, contiguous on both
#: sides, is this many bytes, or both targets have the same sub-tiles: a sub-tile against none
#: leaves a transpose of short items (one pass against two: bf16[1000,3000]{1,0:T(8,128)(2,1)}
#: -> {0,1:T(8,128)} 7.0 / 5.5, s8[1024,2048]{1,0:T(8,128)(4,1)} -> {0,1:T(8,128)} 10.3 / 6.3;
#: both (2,1): bf16[2048,1024,2]{0,2,1:T(4,128)(2,1)} -> {1,2,0:...} 2.1 / 4.6).
MIN_COMMON_BYTES = 16


def is_direct(src: PhysicalTarget, dst: PhysicalTarget) -> bool:
    """True when ``relayout`` copies ``src`` to ``dst`` in one pass: the tilings nest and the
    contiguous runs are the same (``MIN_COMMON_BYTES``), or long enough on both sides
    (``MIN_RUN``, ``MIN_RUN_BYTES``), or swapped."""
    refined = _refined(src, dst)
    if refined is None:
        return False
    digits = [digit for dim in refined for digit in dim if digit[0] > 1]
    src_run = [digit for digit in digits if digit[1] == 1]
    dst_run = [digit for digit in digits if digit[2] == 1]
    item = src.element_bits // 8
    if src_run == dst_run:
        return not item or src.subtile_elements == dst.subtile_elements \
            or common_run(digits) * item >= MIN_COMMON_BYTES
    if src.subtile_elements or dst.subtile_elements or not item:
        long = all(d[0] >= MIN_RUN for d in (*src_run, *dst_run))
    else:
        long = all(d[0] * item >= MIN_RUN_BYTES for d in (*src_run, *dst_run))
    return long or (src.element_bits in (8, 16) and swapped(digits))


def common_run(digits: list[tuple[int, int, int]]) -> int:
    """How many items from each start are contiguous on both sides: the product of the digits
    of equal strides 1, then the size so far, and so on.

    >>> common_run([(8, 512, 1024), (128, 4, 4), (4, 1, 1)])
    512
    """
    run = 1
    while True:
        nxt = next((d for d in digits if d[0] > 1 and d[1] == d[2] == run), None)
        if nxt is None:
            return run
        run *= nxt[0]


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


def _dim_boxes(refined: Refined, lo: int, hi: int) -> list[tuple[tuple[tuple[int, int, int], ...], int, int]]:
    """The range ``[lo, hi)`` of one dim as boxes: (axes (extent, src stride, dst stride), src
    offset, dst offset)."""
    out = []
    for box in range_boxes(lo, hi, [size for size, _, _ in refined]):
        axes = tuple((hi - lo, ss, ds) for (lo, hi), (_, ss, ds) in zip(box, refined, strict=True)
                     if hi - lo > 1)
        s_off = sum(lo * ss for (lo, _), (_, ss, _) in zip(box, refined, strict=True))
        d_off = sum(lo * ds for (lo, _), (_, _, ds) in zip(box, refined, strict=True))
        out.append((axes, s_off, d_off))
    return out


def _padded(digits: tuple[Digit, ...]) -> int:
    """How far one dim's coordinate runs in a target's buffer (padding included)."""
    return max((d.block * d.extent for d in digits if d.extent > 1), default=1)


def over_extents(src: PhysicalTarget, dst: PhysicalTarget, lanes: bool = False) -> tuple[int, ...]:
    """Per dim, how far a one-pass copy may run: the logical size, rounded up to whole sub-tile
    rows or tile rows where the innermost common digit is contiguous on both sides (up to
    ``MAX_OVER`` items: a ragged (4,1) sub-tile's last rows, 3 bytes of every 4, moved as runs
    of 4 bytes; the last 83 of 128 lanes of every row moved as whole rows of 128), both buffers
    have slots that far, and no more of them are padding than data (into a streamed
    destination: ``OVER_STREAMED``; ``lanes``: there also whole tile rows of lanes that are
    mostly padding); the slots past the size are padding on both sides, which the
    destination's fill then overwrites (``over_padding``).

    >>> s = PhysicalTarget.from_xla("s8[19,300]{1,0:T(8,128)(4,1)}")
    >>> over_extents(s, PhysicalTarget.from_xla("s8[19,300]{1,0:T(32,128)(4,1)}"))
    (20, 300)
    """
    refined = _refined(src, dst)
    assert refined is not None and src.digits is not None and dst.digits is not None
    streamed = OVER_STREAMED and dst.physical_elements * src.element_bits >= 8 * STREAMED_BYTES
    out = []
    for r, n, s, d in zip(refined, src.logical_shape, src.digits, dst.digits, strict=True):
        size, s_stride, d_stride = r[-1]
        lined = s_stride == d_stride == 1 or (streamed and s_stride == d_stride)
        b = size if lined and 1 < size <= MAX_OVER else 1
        m = ceil_div(n, b) * b  # (no more slots to fill again than the ragged rows hold)
        fills = m - n <= n % b or (streamed and (lanes or b <= MAX_SUBTILE_ROWS))
        out.append(m if fills and m <= min(_padded(s), _padded(d)) else n)
    return tuple(out)


#: The largest digit a dim is rounded up to (``over_extents``): whole rows of a tile's 128
#: lanes make one box of what were two (the full tiles, then the ragged one), so that the
#: copy runs through each row once (one thread, alternately with a copy: f64[851,1185]{0,1:T(1,128)}
#: -> {0,1:T(8,128)} 2.28 -> 1.10x, f64[2157,219] 1.99 -> 1.50x; with MAX_OVER 8, sub-tile rows only).
MAX_OVER = 128
MAX_SUBTILE_ROWS = 8  # a sub-tile's most rows: (8,1), as E(4)'s
#: A destination from this size on is written past the cache (the kernel streams runs into a
#: span this large: ``RUN_STREAM_SPAN`` in ``_kernel_gather.h``).
STREAMED_BYTES = 8 << 20
#: Into a streamed destination a one-pass copy also runs a ragged sub-tile row whole when it
#: is mostly padding, and the lanes of (2,1) / (4,1) groups to whole tile rows, so that its
#: boxes write whole lines in one sweep (each box a sweep of its own, partial lines streamed
#: out, a ragged quad row byte by byte: pred[37,3,31,5,893]{4,0,3,1,2:T(8,128)(4,1)} ->
#: {4,0,2,3,1:T(4,128)(4,1)}, 6 boxes -> 1, 2.3-2.9 -> 1.1x a copy, one thread); in the cache
#: the refill of what it ran over measured slower (f16[4445,207]{1,0:T(2,128)(2,1)} ->
#: {1,0:T(8,128)(2,1)} 1.9 -> 2.2-2.4x). False: never.
OVER_STREAMED = True


def direct_pairs(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray,
                 out: np.ndarray, how: str = "data") -> list[Pair]:
    """(destination view over ``out``, source view over ``data``) per box of a one-pass copy
    (``is_direct(src, dst)`` must hold); axes sorted by destination stride, merged. ``how``:
    the boxes of the valid range ("data"), or running to ``over_extents``, into padding that
    ``over_padding`` then refills ("over"), or where every element has the same offset on both
    sides (``same_offsets``), the buffers' common length whole ("all"); "lanes": as "over",
    with ``over_extents``'s ``lanes``."""
    if how == "all":
        n = min(src.physical_elements, dst.physical_elements)
        return [(out[:n], data[:n])]
    extents = over_extents(src, dst, how == "lanes") if how in ("over", "lanes") else src.logical_shape
    return _pairs(src, dst, data, out, [(0, n) for n in extents])


def same_offsets(src: PhysicalTarget, dst: PhysicalTarget) -> bool:
    """True when every logical element has the same offset in both buffers (a target and an
    equal one; tilings that differ only where the shape does not reach).

    >>> t = PhysicalTarget.from_xla("s8[39,192]{0,1:T(4,128)(4,1)}")
    >>> same_offsets(t, PhysicalTarget.from_xla("s8[39,192]{0,1:T(4,128)(4,1)}"))
    True
    """
    refined = _refined(src, dst)
    return refined is not None and all(d[1] == d[2] for dim in refined for d in dim if d[0] > 1)


def over_padding(src: PhysicalTarget, dst: PhysicalTarget, out: np.ndarray, lanes: bool = False
                 ) -> list[np.ndarray]:
    """Views over ``out`` of the destination's padding slots an ``over`` copy writes (those
    past a dim's size, up to ``over_extents``).

    >>> s = PhysicalTarget.from_xla("s8[7,300]{1,0:T(8,128)(4,1)}")  # row 7 of every 4-row group
    >>> [(v.shape, v.strides) for v in over_padding(s, s, np.zeros(s.physical_elements, np.int8))]
    [((2, 128), (1024, 4)), ((44,), (4,))]
    """
    extents = over_extents(src, dst, lanes)
    views = []
    for k, (n, m) in enumerate(zip(src.logical_shape, extents, strict=True)):
        if m > n:
            ranges = [(0, e) for e in extents]
            ranges[k] = (n, m)
            views += [dv for dv, _ in _pairs(src, dst, out, out, ranges)]
    return views


def _pairs(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray, out: np.ndarray,
           ranges: list[tuple[int, int]]) -> list[Pair]:
    """``direct_pairs`` over the box of coordinates ``ranges`` (per dim)."""
    refined = _refined(src, dst)
    assert refined is not None
    pairs = []
    per_dim = [_dim_boxes(r, lo, hi) for r, (lo, hi) in zip(refined, ranges, strict=True)]
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
