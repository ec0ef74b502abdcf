"""CuTe's ``Swizzle<B,M,S>`` (XOR of bit fields) and composed layouts ``outer ∘ (offset + inner)``.

>>> sw = Swizzle(1, 2, 1)
>>> [sw(i) for i in range(8, 16)], str(sw), str(make_swizzle(0b1000, 0b0100))
([12, 13, 14, 15, 8, 9, 10, 11], 'Swizzle<1,2,1>', 'Swizzle<1,2,1>')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tensorlayout.cute.layout import Layout
from tensorlayout.errors import AlgebraError, LayoutError

__all__ = ["ComposedLayout", "Swizzle", "make_swizzle"]


@dataclass(frozen=True, slots=True)
class Swizzle:
    """``f(x) = x ^ ((x & yyy) >> S)``: B mask bits, M base bits kept, shift S (negative: left)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        for v in (self.bits, self.base, self.shift):
            if not isinstance(v, int) or isinstance(v, bool):
                raise AlgebraError(f"Swizzle<B,M,S> takes ints, got {v!r}")
        if self.bits < 0 or self.base < 0:
            raise AlgebraError(f"Swizzle<{self.bits},{self.base},{self.shift}> needs B >= 0 and M >= 0")
        if abs(self.shift) < self.bits:
            raise AlgebraError(f"Swizzle<{self.bits},{self.base},{self.shift}> needs |S| >= B so the "
                               "source and target bit fields do not overlap")

    @property
    def yyy_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, x: Any) -> Any:
        if not isinstance(x, (int, np.integer, np.ndarray)) or isinstance(x, bool) or (
                isinstance(x, np.ndarray) and x.dtype.kind not in "iu"):
            raise LayoutError(f"a swizzle maps integer offsets, got {x!r}"[:200])
        y = x & self.yyy_mask
        return x ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def size(self) -> int:
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        return self.size()

    def __str__(self) -> str:
        return f"Swizzle<{self.bits},{self.base},{self.shift}>"


def _ctz(x: int) -> int:
    return (x & -x).bit_length() - 1


def make_swizzle(yyy_mask: int, zzz_mask: int) -> Swizzle:
    """Recover ``Swizzle<B,M,S>`` from its two bit masks (equal popcount, contiguous bits)."""
    if yyy_mask <= 0 or zzz_mask <= 0:
        raise AlgebraError("make_swizzle needs two non-zero masks")
    b = bin(yyy_mask).count("1")
    for m in (yyy_mask, zzz_mask):
        if bin(m).count("1") != b or (m >> _ctz(m)) != (1 << b) - 1:
            raise AlgebraError(f"make_swizzle needs two contiguous masks with equal popcounts, got "
                               f"{bin(yyy_mask)} and {bin(zzz_mask)}")
    return Swizzle(b, _ctz(zzz_mask), _ctz(yyy_mask) - _ctz(zzz_mask))


@dataclass(frozen=True, slots=True)
class ComposedLayout:
    """``outer(offset + inner(c))``, typically a Swizzle over a plain layout.

    >>> ComposedLayout(Swizzle(1, 2, 1), 0, Layout(16, 1))(9)
    13
    """

    outer: Swizzle | Layout
    offset: int
    inner: Layout

    def __call__(self, *coord: Any) -> Any:
        return self.outer(self.offset + self.inner(*coord))

    def size(self) -> int:
        return self.inner.size()

    @property
    def shape(self) -> Any:
        return self.inner.shape

    def __str__(self) -> str:
        return f"{self.outer} o {self.offset} o {self.inner}"
