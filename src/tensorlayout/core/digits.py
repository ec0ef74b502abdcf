"""Digits, the one building block of :class:`~tensorlayout.core.layout.CoreLayout`, and their
arithmetic on ints and on numpy arrays of coordinates.

A :class:`Digit` is ``stride · ((source // block) mod extent)``; its source is a logical dim
or a :class:`Merge` of other digits. :class:`XorSwizzle` is CuTe's swizzle as an offset
post-op. The array helpers evaluate digits over whole grids of coordinates at once.

>>> Digit(0, 2, 3, 4).value((5,)), XorSwizzle(1, 0, 1)(2)
(2, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from tensorlayout.core._frozen import Frozen, set_field
from tensorlayout.core.intmath import INT64_MAX, ceil_div, fits_int64, prod, row_major_strides, show_int
from tensorlayout.errors import LayoutError

__all__ = [
    "Coords",
    "Digit",
    "Merge",
    "Source",
    "XorSwizzle",
    "c_order_indices",
    "first_owners",
    "int64_array",
    "source_extent",
    "split_digit",
    "strides_decide",
    "sum_digits",
]


class Merge(Frozen):
    """A source that is the row-major combination of digit values (XLA's ``*``, re-split digits).

    Its value is ``((v0 · e1) + v1) · e2 + v2 …`` for parts ``(v_i, e_i)`` = (value, extent).

    >>> m = Merge((Digit(0, 1, 3), Digit(1, 1, 4)))
    >>> source_extent(m, (3, 4))
    12
    """

    __slots__ = __match_args__ = ("parts",)
    parts: tuple[Digit, ...]

    def __init__(self, parts: tuple[Digit, ...]) -> None:
        set_field(self, "parts", parts)


#: A digit reads a logical dim (``>= 0``), a size-1 dim a tile prepends (``< 0``, value 0),
#: or a :class:`Merge`.
Source = int | Merge


class Digit(Frozen):
    """``stride · ((source // block) mod extent)``: one digit of a logical coordinate.

    ``size`` is the old name of ``extent``.

    >>> Digit(0, 4, 2, 16).value((9,)), Digit(0, 4, 2, 16).size
    (0, 2)
    """

    __slots__ = __match_args__ = ("source", "block", "extent", "stride")
    source: Source
    block: int
    extent: int
    stride: int

    def __init__(self, source: Source, block: int = 1, extent: int = 1, stride: int = 0) -> None:
        set_field(self, "source", source)
        set_field(self, "block", block)
        set_field(self, "extent", extent)
        set_field(self, "stride", stride)

    def __eq__(self, other: object) -> bool:  # (written out: digits are compared and hashed often)
        if other.__class__ is self.__class__:
            assert isinstance(other, Digit)
            return (self.source, self.block, self.extent, self.stride) == (
                other.source, other.block, other.extent, other.stride)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.source, self.block, self.extent, self.stride))

    @property
    def size(self) -> int:
        """The old name of ``extent`` (the digit's number of values)."""
        return self.extent

    def value(self, index: Sequence[int]) -> int:
        """The digit's value at logical ``index`` (no stride applied)."""
        return (_source_value(self.source, index) // self.block) % self.extent


def _source_value(source: Source, index: Sequence[int]) -> int:
    if isinstance(source, Merge):
        out = 0
        for part in source.parts:
            out = out * part.extent + part.value(index)
        return out
    return int(index[source]) if source >= 0 else 0


def source_extent(source: Source, shape: Sequence[int]) -> int:
    """How many values ``source`` takes over the logical ``shape`` (1 for a prepended dim).

    >>> source_extent(0, (3, 5)), source_extent(-1, (3, 5))
    (3, 1)
    """
    if isinstance(source, Merge):
        return prod(p.extent for p in source.parts)
    return int(shape[source]) if source >= 0 else 1


_Offsets = TypeVar("_Offsets", int, np.ndarray)


class XorSwizzle(Frozen):
    """CuTe's ``Swizzle<B,M,S>`` as an offset post-op: XOR ``B`` bits from ``M+S`` onto ``M``.

    ``S < 0`` moves the bits the other way, as in CuTe.

    >>> XorSwizzle(3, 3, 3)(0b111_000_000)
    504
    """

    __slots__ = __match_args__ = ("bits", "base", "shift")
    bits: int
    base: int
    shift: int

    def __init__(self, bits: int, base: int, shift: int) -> None:
        set_field(self, "bits", bits)
        set_field(self, "base", base)
        set_field(self, "shift", shift)

    @property
    def yyy_mask(self) -> int:
        """The ``B`` source bits (CuTe's ``yyy_msk``)."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    def __call__(self, offset: _Offsets) -> _Offsets:
        """The swizzled offset (an int, or an int array element-wise)."""
        moved = offset & self.yyy_mask
        return offset ^ (moved >> self.shift if self.shift >= 0 else moved << -self.shift)

    def apply(self, offsets: np.ndarray) -> np.ndarray:
        """The post-op on an integer array of offsets, as int64; a swizzle whose bits reach past
        int64 goes element by element, exactly as on ints, and a result past int64 is a LayoutError.

        >>> XorSwizzle(1, 280, 3).apply(np.array([5, 64])).tolist()
        [5, 64]
        """
        if self.base + abs(self.shift) + self.bits < 63:
            return self(int64_array(offsets, str(self)))
        return int64_array([self(x) for x in np.asarray(offsets).reshape(-1).tolist()],
                           str(self)).reshape(np.shape(offsets))

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def int64_array(values: np.ndarray | Sequence[int], what: str) -> np.ndarray:
    """``values`` (integers) as an int64 array, a LayoutError naming ``what`` when one leaves int64.

    >>> int64_array([2**63], "Sw<1,62,1>")
    Traceback (most recent call last):
    tensorlayout.errors.LayoutError: Sw<1,62,1>: an offset reaches 9223372036854775808, past int64
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and not (
            values.dtype == np.uint64 and values.size and values.max() > INT64_MAX):
        return values.astype(np.int64, copy=False)
    items = np.asarray(values, dtype=object).reshape(-1).tolist()
    bad = next((x for x in items if not fits_int64(int(x))), None)
    if bad is not None:
        raise LayoutError(f"{what}: an offset reaches {show_int(int(bad))}, past int64")
    return np.array(items, dtype=np.int64).reshape(np.shape(values))


#: Coordinates of logical dim ``k`` as an int64 array (broadcastable with the others).
Coords = Callable[[int], np.ndarray]


def c_order_indices(shape: tuple[int, ...]) -> np.ndarray:
    """Every index of ``shape`` in C order, as rows of an int64 array ``(n, rank)``, for any rank.

    >>> c_order_indices((2, 2)).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    rest = np.arange(prod(shape), dtype=np.int64)
    cols = []
    for n in reversed(shape):
        rest, r = np.divmod(rest, n)
        cols.append(r)
    return np.stack(cols[::-1], axis=1) if cols else np.zeros((1, 0), dtype=np.int64)


def sum_digits(digits: list[Digit], coord: Coords, one: tuple[int, ...]) -> np.ndarray:
    """``Σ stride · value`` of ``digits`` at the coordinates ``coord`` gives."""
    out = np.zeros(one, dtype=np.int64)
    for d in digits:
        if d.extent != 1 and d.stride:
            out = out + d.stride * _digit_values(d, coord, one)
    return out


def _digit_values(d: Digit, coord: Coords, one: tuple[int, ...]) -> np.ndarray:
    """The digit's value at the coordinates ``coord`` gives (``one``: the shape of a scalar).

    A block or extent past int64 is no numpy operand: an int64 value is below it (so the
    quotient is 0 and the remainder the value itself)."""
    values = _source_values(d.source, coord, one)
    if d.block > INT64_MAX:
        return np.zeros_like(values)
    values = values // d.block
    return values if d.extent > INT64_MAX else values % d.extent


def _source_values(source: Source, coord: Coords, one: tuple[int, ...]) -> np.ndarray:
    if isinstance(source, Merge):
        out = np.zeros(one, dtype=np.int64)
        for part in source.parts:
            out = out * part.extent + _digit_values(part, coord, one)
        return out
    return coord(source) if source >= 0 else np.zeros(one, dtype=np.int64)


def first_owners(per_dim: tuple[tuple[Digit, ...], ...], shape: tuple[int, ...], n: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per-dim enumeration of the elements whose offset is below ``n``: (C-order positions,
    offsets), one per offset (the first owner), without listing the other elements."""
    cstrides = row_major_strides(shape)
    flat, off = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    for k, digits in enumerate(per_dim):
        xs, cs = _dim_values(digits, shape[k], n)
        flat = (flat[:, None] + xs[None, :] * cstrides[k]).ravel()
        off = (off[:, None] + cs[None, :]).ravel()
        keep = off < n
        flat, off = _first_per_offset(flat[keep], off[keep])
    return flat, off


def _dim_values(digits: tuple[Digit, ...], extent: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates ``x < extent`` of one dim whose offset contribution is below ``n`` (the
    smallest ``x`` per contribution), and the contributions."""
    xs, cs = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    for d in reversed(digits):
        count = 1 if d.stride == 0 else min(d.extent, (n - 1) // d.stride + 1)
        vals = np.arange(max(count, 0), dtype=np.int64)
        xs = (xs[:, None] + vals[None, :] * d.block).ravel()
        cs = (cs[:, None] + vals[None, :] * d.stride).ravel()
        keep = (cs < n) & (xs < extent)
        xs, cs = _first_per_offset(xs[keep], cs[keep])
    return xs, cs


def _first_per_offset(xs: np.ndarray, cs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep, for each distinct offset ``cs``, the entry with the smallest ``xs``."""
    order = np.lexsort((xs, cs))
    xs, cs = xs[order], cs[order]
    first = np.ones(len(cs), dtype=bool)
    first[1:] = cs[1:] != cs[:-1]
    return xs[first], cs[first]


def split_digit(axis: Digit, t: int, shape: Sequence[int]) -> tuple[Digit, Digit]:
    """Tile size ``t`` splits a digit's value ``v`` into ``(v // t, v mod t)`` — XLA's reshape step.

    A digit that is the top of its source (its value never wraps) splits exactly with the
    tile count padded; so does one whose extent ``t`` divides. A lower digit of extent
    ``e <= t`` keeps its value in the in-tile part (the count is 0); any other lower digit
    wraps every ``e`` while the tile wraps every ``t``: its value becomes a :class:`Merge`
    source that is split in turn.

    >>> split_digit(Digit(0, 1, 5), 2, (5,))
    (Digit(source=0, block=2, extent=3, stride=0), Digit(source=0, block=1, extent=2, stride=0))
    """
    src, b, e = axis.source, axis.block, axis.extent
    top = ceil_div(source_extent(src, shape), b) <= e
    if top or e % t == 0:
        return Digit(src, b * t, ceil_div(e, t)), Digit(src, b, t)
    whole = Merge((axis,))
    if e <= t:
        return Digit(src, b * t, 1), Digit(whole, 1, t)
    return Digit(whole, t, ceil_div(e, t)), Digit(whole, 1, t)


def strides_decide(digits: tuple[Digit, ...]) -> bool:
    """Every stride is positive and past the reach of all smaller ones (a mixed radix with gaps
    allowed), so an offset has at most one digit string, read greedily.

    >>> strides_decide((Digit(0, 1, 4, 2), Digit(1, 1, 2, 8)))
    True
    >>> strides_decide((Digit(0, 1, 4, 2), Digit(1, 1, 2, 4)))  # 4 is within the first digit's reach
    False
    """
    reach = 0
    for d in sorted((d for d in digits if d.extent > 1), key=lambda d: d.stride):
        if d.stride <= reach:
            return False
        reach += (d.extent - 1) * d.stride
    return True
