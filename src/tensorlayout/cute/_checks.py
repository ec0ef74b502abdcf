"""Point-by-point and digit checks behind the algebra: where C++'s answer may be wrong, is it?

>>> max_digit(5, 3, 1, 4)
3
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from tensorlayout.cute.int_tuple import flatten
from tensorlayout.cute.layout import Layout, cosize

#: The largest ``size(B)`` for which a composition C++ may get wrong is checked point by point.
VERIFY_LIMIT = 1 << 16


def holds(lhs: Layout, rhs: Layout, out: Layout) -> bool:
    """``out(i) == lhs(rhs(i))`` for every ``i < size(rhs)``, checked point by point (small cases)."""
    n = rhs.size()
    if n > VERIFY_LIMIT or max(cosize(lhs), cosize(rhs), cosize(out)) >= 1 << 62:
        return False
    if not all(_small_strides(x) for x in (lhs, rhs, out)):  # e.g. a 10**40 stride on a size-1 mode
        return all(rhs(i) >= 0 and out(i) == lhs(rhs(i)) for i in range(n))
    inner = rhs.offsets()
    if inner.size and int(inner.min()) < 0:
        return False
    return bool(np.array_equal(out.offsets(), np.asarray(lhs(inner), dtype=np.int64)))


def max_digit(s: int, d: int, prefix: int, radix: int) -> int:
    """``max over j < s of (j·d // prefix) mod radix``, in O(1) for the common cases."""
    top = (s - 1) * d // prefix
    if top < radix:  # no wrap-around: the digits only grow
        return top
    if d <= prefix:  # the digit steps by 0 or 1, so it passes through every value below radix
        return radix - 1
    if d % prefix == 0:  # the digit steps by q mod radix: a full cycle reaches radix - gcd
        q = (d // prefix) % radix
        if q == 0:
            return 0
        g = math.gcd(q, radix)
        return radix - g if s >= radix // g else max((j * q) % radix for j in range(s))
    if s * d < 1 << 62:
        return int(((np.arange(s, dtype=np.int64) * d // prefix) % radix).max())
    return max((j * d // prefix) % radix for j in range(s))


def dividing_prefix(pre: Prefixes, x: int, m: int) -> int:
    """The most ``j <= m`` with ``pre[j]`` dividing ``x > 0``, by bisection: ``pre`` are products
    of leading extents (``pre[0] = 1``), each dividing the next, so the ones dividing ``x`` are a
    prefix. Powers of two are decided by trailing zeros, without a long division.

    >>> dividing_prefix(Prefixes([2, 4, 3, 5]), 16, 3)
    2
    """
    zeros = (x & -x).bit_length() - 1
    lo, hi = 0, min(m, bisect.bisect_right(pre.bits, x.bit_length()) - 1)  # no pre[j] > x divides x
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if zeros < pre.zeros[mid] or (not pre.pow2[mid] and x % pre[mid]):
            hi = mid - 1
        else:
            lo = mid
    return lo


class Prefixes(list[int]):
    """The products of the leading extents of ``cs`` (``[1, c0, c0·c1, …]``, one per extent),
    with each one's trailing zero bits and whether it is a power of two."""

    def __init__(self, cs: list[int]) -> None:
        super().__init__([1])
        for c in cs[:-1]:
            self.append(self[-1] * c)
        self.zeros = [(p & -p).bit_length() - 1 for p in self]
        self.bits = [p.bit_length() for p in self]
        self.pow2 = [p.bit_length() - 1 == z for p, z in zip(self, self.zeros, strict=True)]


def carries(cs: list[int], live: list[tuple[int, int]]) -> bool:
    """Whether adding the values of ``B``'s modes may carry between digits of ``A``.

    ``A ∘ (B0, B1, …)`` is built mode by mode, which is right only if the sum never carries
    (CuTe assumes it; C++ returns a wrong layout when it does). Digit ``p`` of the coalesced ``A``
    (extents ``cs``; radix ``a_p``, not the top one) is safe when ``Σ_k max_j digit_p(j·d_k) < a_p``
    over ``B``'s leaf modes ``s_k:d_k`` with ``s_k > 1`` and ``d_k != 0`` (``live``). A mode adds
    nothing to the digits whose prefix products times radix divide its stride, nor to those past
    its reach, so each mode visits only the digits between (not every digit of ``A``).

    >>> carries([4, 8], [(2, 1), (2, 2)]), carries([4, 8], [(2, 1), (4, 1)])
    (False, True)
    """
    if len(live) < 2 or len(cs) < 2:
        return False
    for _, d in live:
        if d < 0:
            return False
    digits = len(cs) - 1
    pre = Prefixes(cs)  # pre[p]: the product of the extents below digit p
    totals = [0] * digits
    for s, d in live:
        reach = (s - 1) * d
        p = dividing_prefix(pre, d, digits)  # below p, d is a multiple of the digit's whole cycle
        while p < digits and pre[p] <= reach:
            totals[p] += max_digit(s, d, pre[p], cs[p])
            p += 1
    return any(t >= c for t, c in zip(totals, cs, strict=False))


def nested(cs: list[int], cd: list[int]) -> bool:
    """Injective with each stride at least the span of the smaller ones (``R(L(i)) = i`` holds),
    for the flat modes ``cs:cd``.

    >>> nested([2, 3], [3, 1]), nested([2, 3], [2, 1])
    (True, False)
    """
    live = []
    i = 0
    for s in cs:
        d = cd[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if s != 1:
            if d == 0:
                return False
            live.append((d if d > 0 else -d, s))
    live.sort()
    span = 0
    for d, s in live:
        if d < span:
            return False
        span = d * s
    return True


def _small_strides(layout: Layout) -> bool:
    """Every stride below 2**62 in magnitude (numpy's int64 evaluation cannot overflow)."""
    return all(abs(d) < 1 << 62 for d in flatten(layout.stride))


def quasi_holds(layout: Layout, inv: Layout) -> bool:
    """``L(R(L(i))) == L(i)`` for every ``i``, checked point by point (small cases)."""
    if layout.size() > VERIFY_LIMIT or cosize(layout) >= 1 << 62:
        return False
    image = layout.offsets()
    if image.size and int(image.min()) < 0:
        return False
    if not (_small_strides(inv) and _small_strides(layout)):  # offsets may leave int64: Python ints
        return all(layout(inv(int(x))) == int(x) for x in image)
    back = np.asarray(inv(image), dtype=np.int64)  # may leave [0, size): L's last mode extends
    return bool(np.array_equal(np.asarray(layout(back), dtype=np.int64), image))
