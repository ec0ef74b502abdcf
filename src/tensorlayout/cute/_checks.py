"""Point-by-point and digit checks behind the algebra: where C++'s answer may be wrong, is it?

>>> max_digit(5, 3, 1, 4)
3
"""

from __future__ import annotations

import itertools
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


def carries(a: Layout, flat: list[tuple[int, int]], b: Layout) -> bool:
    """Whether adding the values of ``b``'s modes may carry between digits of ``a``.

    ``A ∘ (B0, B1, …)`` is built mode by mode, which is right only if the sum never carries
    (CuTe assumes it; C++ returns a wrong layout when it does). Digit ``p`` of the coalesced ``A``
    (radix ``a_p``, not the top one) is safe when ``Σ_k max_j digit_p(j·d_k) < a_p`` over ``B``'s
    modes ``s_k:d_k``.
    """
    if b.shape.__class__ is not tuple:
        return False
    modes = [(s, d) for s, d in b.flat_modes() if s > 1 and d != 0]
    if len(modes) < 2 or len(flat) < 2 or any(d < 0 for _, d in modes):
        return False
    prefix = 1
    for radix, _ in flat[:-1]:
        if sum(max_digit(s, d, prefix, radix) for s, d in modes) >= radix:
            return True
        prefix *= radix
    return False


def nested(modes: list[tuple[int, int]]) -> bool:
    """Injective with each stride at least the span of the smaller ones (``R(L(i)) = i`` holds)."""
    live = sorted((abs(d), s) for s, d in modes if d != 0 and s != 1)
    return all(d1 >= d0 * s0 for (d0, s0), (d1, _) in itertools.pairwise(live)) and \
        len(live) == sum(1 for s, d in modes if s != 1)


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
