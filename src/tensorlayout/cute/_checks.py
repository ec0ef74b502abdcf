"""Point-by-point and digit checks behind the algebra: where C++'s answer may be wrong, is it?

>>> max_digit(5, 3, 12, Prefixes([4]), 0, 4)
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


def max_digit(s: int, d: int, reach: int, pre: Prefixes, p: int, radix: int) -> int:
    """``max over j < s of (j·d // pre[p]) mod radix`` (``reach`` is ``(s-1)·d``), in O(1) for the
    common cases (a power-of-two prefix divides by a shift).

    >>> max_digit(5, 3, 12, Prefixes([4]), 0, 4)
    3
    """
    top = div(reach, pre, p)
    if top < radix:  # no wrap-around: the digits only grow
        return top
    prefix = pre[p]
    if d <= prefix:  # the digit steps by 0 or 1, so it passes through every value below radix
        return radix - 1
    q, r = (d >> pre.zeros[p], d & (prefix - 1)) if p < pre.twos else divmod(d, prefix)
    if r == 0:  # the digit steps by q mod radix: a full cycle reaches radix - gcd
        q %= radix
        if q == 0:
            return 0
        g = math.gcd(q, radix)
        return radix - g if s >= radix // g else max((j * q) % radix for j in range(s))
    if s * d < 1 << 62:
        return int(((np.arange(s, dtype=np.int64) * d // prefix) % radix).max())
    return max((j * d // prefix) % radix for j in range(s))


_WORD = 1 << 62  # ints below this in magnitude multiply any int in time linear in its bits
_LOW = (1 << 60) - 1


def trailing_zeros(x: int) -> int:
    """The trailing zero bits of ``x != 0``, reading only the lowest word of a positive ``x``
    when one of its bits is set there.

    >>> trailing_zeros(40), trailing_zeros(1 << 300), trailing_zeros(-3 << 200)
    (3, 300, 200)
    """
    low = x & _LOW  # of a positive x: its lowest word only
    if low:
        return (low & -low).bit_length() - 1
    return (x & -x).bit_length() - 1


def mul(x: int, y: int) -> int:
    """``x * y`` in time linear in the bits of both when one of them is a power of two times a
    word-sized odd part (strides and prefix products of the big-stride layouts are): the trailing
    zero bits become one shift instead of a long multiplication.

    >>> mul(3 << 100, 5 << 200) == 15 << 300, mul(-7, 1 << 90) == -7 << 90
    (True, True)
    """
    if -_WORD < x < _WORD or -_WORD < y < _WORD:
        return y if x == 1 else x * y  # one word: linear already (times 1: no copy)
    zx = trailing_zeros(x)
    zy = trailing_zeros(y)
    return ((x >> zx) * (y >> zy)) << (zx + zy)


def div(x: int, pre: Prefixes, k: int) -> int:
    """``x // pre[k]``, by a shift when ``pre[k]`` is a power of two (a long division costs the
    product of the two lengths; a shift, their difference).

    >>> div(-96, Prefixes([4, 8, 3]), 2), div(100, Prefixes([4, 3]), 1)
    (-3, 25)
    """
    if k < pre.twos:
        return x >> pre.zeros[k]
    return x // pre[k]


def dividing_prefix(pre: Prefixes, x: int, m: int) -> int:
    """The most ``j <= m`` with ``pre[j]`` dividing ``x > 0``: ``pre`` are products of leading
    extents (``pre[0] = 1``), each dividing the next, so the ones dividing ``x`` are a prefix.
    Powers of two (a prefix of ``pre`` too) are decided by trailing zeros and bisected in C;
    past them, a bisection by long divisions.

    >>> dividing_prefix(Prefixes([2, 4, 3, 5]), 16, 3), dividing_prefix(Prefixes([2, 4, 3, 5]), 24, 3)
    (2, 3)
    """
    hi = min(m, bisect.bisect_right(pre.bits, x.bit_length()) - 1,  # no pre[j] > x divides x
             bisect.bisect_right(pre.zeros, trailing_zeros(x)) - 1)  # nor one with more trailing zeros
    if hi < pre.twos:
        return hi
    lo = pre.twos - 1  # a power of two with no more trailing zeros than x: it divides x
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if x % pre[mid]:
            hi = mid - 1
        else:
            lo = mid
    return lo


class Prefixes:
    """The products of the leading extents of ``cs`` (``[1, c0, c0·c1, …]``, one per extent),
    each built only when asked for (a walk that stops early never builds the long ones; the
    powers of two, which come first, are shifts of 1), with each one's trailing zero bits, a
    lower bound on its bit length (exact for the powers of two) and how many are powers of two.

    >>> pre = Prefixes([4, 6, 5]); [pre[k] for k in range(3)], pre.zeros, pre.bits, pre.twos
    ([1, 4, 24], [0, 2, 3], [1, 3, 5], 2)
    """

    __slots__ = ("_built", "bits", "cs", "twos", "zeros")

    def __init__(self, cs: list[int]) -> None:
        self.cs = cs
        zeros = [0]
        bits = [1]
        z = 0
        b = 1
        twos = 1
        for c in cs[:-1]:
            t = (c & -c).bit_length() - 1 if c < _WORD else trailing_zeros(c)
            z += t
            b += c.bit_length() - 1  # c·p has at least bits(c) + bits(p) - 1 bits
            zeros.append(z)
            bits.append(b)
            if twos == len(zeros) - 1 and c == 1 << t:
                twos += 1
        self.zeros = zeros
        self.bits = bits
        self.twos = twos  # the powers of two come first
        self._built: list[int] = []  # the products from index twos - 1 on, as far as asked for

    def __getitem__(self, k: int) -> int:
        twos = self.twos
        if k < twos:
            return 1 << self.zeros[k]
        built = self._built
        if not built:
            built.append(1 << self.zeros[twos - 1])
        cs = self.cs
        while len(built) <= k - twos + 1:
            built.append(mul(built[-1], cs[twos - 2 + len(built)]))
        return built[k - twos + 1]

    def __len__(self) -> int:
        return len(self.zeros)

    def at_most(self, k: int, x: int) -> bool:
        """``self[k] <= x`` for ``x > 0``, by bit lengths where they decide (no product built)."""
        bl = x.bit_length()
        if self.bits[k] > bl:
            return False
        if k < self.twos:
            return self.zeros[k] < bl
        return self[k] <= x


def carries(pre: Prefixes, cs: list[int], live: list[tuple[int, int, int]]) -> bool:
    """Whether adding the values of ``B``'s modes may carry between digits of ``A``.

    ``A ∘ (B0, B1, …)`` is built mode by mode, which is right only if the sum never carries
    (CuTe assumes it; C++ returns a wrong layout when it does). Digit ``p`` of the coalesced ``A``
    (extents ``cs``, prefix products ``pre``; radix ``a_p``, not the top one) is safe when
    ``Σ_k max_j digit_p(j·d_k) < a_p`` over ``B``'s leaf modes ``s_k:d_k`` with ``s_k > 1`` and
    ``d_k != 0`` (``live``, with ``k_k``: :func:`dividing_prefix` of ``d_k``). A mode adds nothing
    to the digits whose prefix products times radix divide its stride, nor to those past its
    reach, so each mode visits only the digits between (not every digit of ``A``).

    >>> carries(Prefixes([4, 8]), [4, 8], [(2, 1, 0), (2, 2, 0)])
    False
    >>> carries(Prefixes([4, 8]), [4, 8], [(2, 1, 0), (4, 1, 0)])
    True
    """
    if len(live) < 2 or len(cs) < 2:
        return False
    for _, d, _ in live:
        if d < 0:
            return False
    digits = len(cs) - 1
    totals = [0] * digits
    for s, d, p in live:  # below p, d is a multiple of the digit's whole cycle
        reach = d if s == 2 else (s - 1) * d  # times 1: no copy of a long d
        while p < digits and pre.at_most(p, reach):
            totals[p] += max_digit(s, d, reach, pre, p, cs[p])
            p += 1
    return any(t >= c for t, c in zip(totals, cs, strict=False))


def nested(cs: list[int], cd: list[int], order: list[int]) -> bool:
    """Injective with each stride at least the span of the smaller ones (``R(L(i)) = i`` holds),
    for the flat modes ``cs:cd`` with non-negative strides, ``order`` their positions by stride.

    >>> nested([2, 3], [3, 1], [1, 0]), nested([2, 3], [2, 1], [1, 0])
    (True, False)
    """
    low, s_low = 0, 1  # the span of the smaller modes is low * s_low, built only when needed
    for k in order:
        s = cs[k]
        if s != 1:
            d = cd[k]
            if d == 0 or (d < low * s_low if low < _WORD else _below(d, low, s_low)):
                return False
            low, s_low = d, s
    return True


def _below(d: int, p: int, s: int) -> bool:
    """``d < p * s`` for ``d, p >= 0`` and ``s >= 1``, decided on the leading word of ``p`` where
    that does (no long product built): with ``p = a·2^t + r``, ``r < 2^t``, the product lies in
    ``[a·s·2^t, (a+1)·s·2^t)``."""
    t = p.bit_length() - 62
    if t > 0 and s < _WORD:
        a = p >> t
        b = d >> t
        if b >= (a + 1) * s:
            return False
        if b < a * s:
            return True
    return d < p * s


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
