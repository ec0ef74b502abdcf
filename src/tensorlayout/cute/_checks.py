"""Point-by-point and digit checks behind the algebra: where C++'s answer may be wrong, is it?

>>> max_digit(5, 3, 1, 4)
3
"""

from __future__ import annotations

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


def carries(cs: list[int], live: list[tuple[int, int]]) -> bool:
    """Whether adding the values of ``B``'s modes may carry between digits of ``A``.

    ``A ∘ (B0, B1, …)`` is built mode by mode, which is right only if the sum never carries
    (CuTe assumes it; C++ returns a wrong layout when it does). Digit ``p`` of the coalesced ``A``
    (extents ``cs``; radix ``a_p``, not the top one) is safe when ``Σ_k max_j digit_p(j·d_k) < a_p``
    over ``B``'s leaf modes ``s_k:d_k`` with ``s_k > 1`` and ``d_k != 0`` (``live``).

    >>> carries([4, 8], [(2, 1), (2, 2)]), carries([4, 8], [(2, 1), (4, 1)])
    (False, True)
    """
    if len(live) < 2 or len(cs) < 2:
        return False
    for _, d in live:
        if d < 0:
            return False
    prefix = 1
    k = len(cs) - 1
    for radix in cs:
        if not k:
            break
        k -= 1
        total = 0
        for s, d in live:
            top = (s - 1) * d // prefix
            total += top if top < radix else max_digit(s, d, prefix, radix)
        if total >= radix:
            return True
        prefix *= radix
    return False


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
