"""The one layout form every notation lowers into: a logical index → physical offset function.

A :class:`CoreLayout` writes the offset of logical element ``x = (x0, x1, …)`` as a sum of
*digits*. Digit ``k`` reads one logical coordinate (its ``source``), divides it by ``block``,
keeps the remainder modulo ``extent`` and weighs it by ``stride``::

    offset(x) = post( base + Σ_k stride_k · ((x[source_k] // block_k) mod extent_k) )

That is a mixed radix per dimension: XLA's tiling walk (pad → reshape → transpose) splits a
dimension into (tile count, in-tile index) digits, CuTe's hierarchical modes are the same
digits listed colexicographically. The top digit of a dimension may count past the logical
extent (padding), so ``slots`` — the buffer's element slots — can exceed the used offsets
(``size`` is the old name of ``slots``; logical counts are ``elements``).
Two rare XLA constructs need a wider source than one coordinate: a ``*`` tile dim merges
dims row-major, and a tile that does not divide an earlier tile's digit re-splits the
digit's *value*; both are a :class:`Merge` source. ``post`` is an optional XOR swizzle
(CuTe's ``Sw<B,M,S>``); ``element_bits``/``packed_bits`` say how elements are stored.

Seed Figure 1, ``f32[3,5]{1,0:T(2,2)}``: dim 0 splits into (tile row, in-tile row) digits
with strides 12 and 2, dim 1 into strides 4 and 1; element (2,3) lives at 17.

>>> lay = CoreLayout((3, 5), (Digit(0, 2, 2, 12), Digit(1, 2, 3, 4), Digit(0, 1, 2, 2),
...                           Digit(1, 1, 2, 1)), slots=24)
>>> lay.offset((2, 3)), lay.index_of(17), lay.offsets().reshape(3, 5)[2].tolist()
(17, (2, 3), [12, 13, 16, 17, 20])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorlayout._lazy import lazy_modules
from tensorlayout.core._frozen import set_field
from tensorlayout.core.digits import (
    Coords,
    Digit,
    Merge,
    Source,
    XorSwizzle,
    c_order_indices,
    first_owners,
    int64_array,
    source_extent,
    split_digit,
    strides_decide,
    sum_digits,
)
from tensorlayout.core.intmath import INT64_MAX, INT64_MIN, prod, show_int
from tensorlayout.errors import LayoutError

__all__ = [
    "MAX_ENUMERATED",
    "CoreLayout",
    "Digit",
    "Merge",
    "Source",
    "XorSwizzle",
    "c_order_indices",
    "check_index",
    "int64_array",
    "source_extent",
    "split_digit",
]

#: what a layout answers beyond its offsets (the index at an offset, density, tiles): its methods
#: load it on first use
_lazy = lazy_modules({"queries": "tensorlayout.core._queries"})

#: ``offsets()`` lists at most this many elements; past it a typed error says how many.
MAX_ENUMERATED = 1 << 28


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class CoreLayout:
    """A layout as the function from logical index to physical element offset (module doc).

    ``shape``: logical dims; ``digits``: major to minor as the notation lists its physical
    axes; ``slots``: element slots of the buffer, padding included; ``base``: offset added
    first; ``post``: optional swizzle; ``element_bits``: bits per element as stored (0 =
    unknown); ``packed_bits``: bits per element when sub-byte elements are packed, else 0;
    ``signed``: sub-byte values sign-extend; ``tile_elements``/``subtile_elements``: slots per
    tile and innermost sub-tile (for pictures); ``name``: the notation's own text.
    """

    shape: tuple[int, ...]
    digits: tuple[Digit, ...]
    slots: int
    base: int = 0
    post: XorSwizzle | None = None
    element_bits: int = 0
    packed_bits: int = 0
    signed: bool = False
    tile_elements: int | None = None
    subtile_elements: int | None = None
    name: str = field(default="", compare=False)

    # (the dataclass's methods written out: a dataclass compiles its own with exec at every import)
    def __init__(self, shape: tuple[int, ...], digits: tuple[Digit, ...], slots: int, base: int = 0,
                 post: XorSwizzle | None = None, element_bits: int = 0, packed_bits: int = 0,
                 signed: bool = False, tile_elements: int | None = None,
                 subtile_elements: int | None = None, name: str = "") -> None:
        set_field(self, "shape", shape)
        set_field(self, "digits", digits)
        set_field(self, "slots", slots)
        set_field(self, "base", base)
        set_field(self, "post", post)
        set_field(self, "element_bits", element_bits)
        set_field(self, "packed_bits", packed_bits)
        set_field(self, "signed", signed)
        set_field(self, "tile_elements", tile_elements)
        set_field(self, "subtile_elements", subtile_elements)
        set_field(self, "name", name)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, CoreLayout)
            return (
                (self.shape, self.digits, self.slots, self.base, self.post, self.element_bits,
                 self.packed_bits, self.signed, self.tile_elements, self.subtile_elements)
                == (other.shape, other.digits, other.slots, other.base, other.post, other.element_bits,
                    other.packed_bits, other.signed, other.tile_elements, other.subtile_elements))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.shape, self.digits, self.slots, self.base, self.post, self.element_bits,
                     self.packed_bits, self.signed, self.tile_elements, self.subtile_elements))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{self.__class__.__qualname__}({fields})"

    @staticmethod
    def from_modes(shape: Sequence[int], modes: Sequence[Sequence[tuple[int, int]]], slots: int | None = None,
                   *, size: int | None = None, **meta: Any) -> CoreLayout:
        """The layout whose dim ``k`` splits into ``modes[k]``, ``(extent, stride)`` pairs least
        significant first (CuTe's colexicographic order); ``slots`` (old name: ``size``)
        defaults to one past the largest offset.

        >>> CoreLayout.from_modes((4, 6), [[(2, 2), (2, 12)], [(2, 1), (3, 4)]]).offset((2, 3))
        17
        """
        digits = []
        for k, mode in enumerate(modes):
            block = 1
            for extent, stride in mode:
                digits.append(Digit(k, block, int(extent), int(stride)))
                block = max(block * int(extent), 1)  # past a zero extent the dim is empty anyway
        slots = size if slots is None else slots
        if slots is None:
            slots = 1 + sum((d.extent - 1) * d.stride for d in digits if d.stride > 0)
        return CoreLayout(tuple(int(n) for n in shape), tuple(digits), slots, **meta)

    @property
    def size(self) -> int:
        """The old name of :attr:`slots` (the buffer's element slots, not the logical elements)."""
        return self.slots

    @property
    def rank(self) -> int:
        """Number of logical dims."""
        return len(self.shape)

    @property
    def elements(self) -> int:
        """Number of logical elements."""
        return prod(self.shape)

    def is_dense(self) -> bool:
        """The digits, sorted by stride, are a compact mixed radix: their value box covers
        ``[0, Π extent)`` once (padding slots included), as a tiled buffer's digits do.

        Pre: none. Post: True iff the strides of the digits with extent > 1, sorted, are
        ``1, e0, e0·e1, …``; base and post-op are not read.

        >>> CoreLayout.from_modes((4, 6), [[(2, 2), (2, 12)], [(2, 1), (3, 4)]]).is_dense()
        True
        """
        return bool(_lazy("queries").is_dense(self))

    def is_injective(self) -> bool:
        """No two logical elements share an offset (a buffer can store data under it).

        Pre: the layout lists at most :data:`MAX_ENUMERATED` elements unless its digits decide
        it. Post: True iff ``offsets()`` has no repeated value; decided from the digits when
        each dim is an exact mixed radix with nested strides (the XOR post-op and the base
        are one-to-one), else by listing the offsets.

        >>> CoreLayout.from_modes((2, 2), [[(2, 0)], [(2, 1)]]).is_injective()
        False
        """
        return bool(_lazy("queries").is_injective(self))

    def tile_split(self) -> tuple[int, ...] | None:
        """Per logical dim the tile extent: a tile coordinate is ``i // t``, the in-tile one
        ``i % t`` (the block of the dim's most significant digit); None without tiles.

        Pre: none. Post: a tuple of ``rank`` blocks, some > 1, or None (no dim splits, or a
        digit reads a merge of several digits).

        >>> CoreLayout.from_modes((4, 6), [[(2, 2), (2, 12)], [(2, 1), (3, 4)]]).tile_split()
        (2, 2)
        """
        return _lazy("queries").tile_split(self)

    def contiguous_tile(self) -> int | None:
        """Slots per tile when every tile is one contiguous run (tile ``offset // t``): the
        notation's own :attr:`tile_elements`, else the in-tile digits' when they are compact.

        Pre: none. Post: None (also for tiles of one slot), or ``t > 1`` such that the in-tile
        digits (all but each dim's most significant one), sorted by stride, have strides
        ``1, e0, e0·e1, …``, ``t = Π e``, and every tile count digit's stride is a multiple of
        ``t`` (a tile starts at a multiple of it).

        >>> CoreLayout.from_modes((4, 6), [[(2, 1), (2, 24)], [(2, 4), (3, 8)]]).contiguous_tile() is None
        True
        """
        return _lazy("queries").contiguous_tile(self)

    def offset(self, index: Sequence[int]) -> int:
        """Physical offset of logical ``index`` (no bounds check; see :meth:`checked_offset`)."""
        out = self.base + sum(d.stride * d.value(index) for d in self.digits)
        return self.post(out) if self.post is not None else out

    def checked_offset(self, index: Sequence[int]) -> int:
        """:meth:`offset` after checking ``index`` is a tuple of in-bounds integers."""
        return self.offset(check_index(self.shape, index, self.name))

    def offsets(self) -> np.ndarray:
        """Offset of every logical element in logical C order (int64).

        >>> CoreLayout((2, 3), (Digit(0, 1, 2, 1), Digit(1, 1, 3, 2)), slots=6).offsets().tolist()
        [0, 2, 4, 1, 3, 5]
        """
        n = self.elements
        if n > MAX_ENUMERATED:
            raise LayoutError(f"{self.name or 'layout'} has {n} elements; listing every offset "
                              f"is limited to {MAX_ENUMERATED}")
        if n == 0:  # (a zero dim beside a huge one must not allocate the huge one's range)
            return np.zeros(0, dtype=np.int64)
        self._check_int64()
        rank = self.rank
        if rank > 32:  # numpy arrays have at most 64 dims: go through explicit index rows
            return self.offsets_at(c_order_indices(self.shape))

        def grid(k: int) -> np.ndarray:
            view = [1] * rank
            view[k] = self.shape[k]
            return np.arange(self.shape[k], dtype=np.int64).reshape(view)

        # one small vector per dim (its digits summed), the small ones added first: the last add
        # writes the full-size answer in one pass
        per_dim = [d for d in self.digits if isinstance(d.source, int)]
        merged = [d for d in self.digits if not isinstance(d.source, int)]
        parts = [sum_digits([d for d in per_dim if d.source == k], grid, (1,) * rank) for k in range(rank)]
        if merged:
            parts.append(sum_digits(merged, grid, (1,) * rank))
        parts = sorted((p for p in parts if p.any()), key=np.size)
        out = np.empty(self.shape, dtype=np.int64)
        acc = np.full((1,) * rank, self.base, dtype=np.int64)
        for p in parts[:-1]:
            acc = acc + p
        np.add(acc, parts[-1] if parts else 0, out=out)
        flat = out.reshape(-1)
        return self.post.apply(flat) if self.post is not None else flat

    def offsets_at(self, idx: np.ndarray) -> np.ndarray:
        """Offsets of the logical indices in the rows of ``idx`` (an int array ``(k, rank)``).

        >>> CoreLayout((2, 3), (Digit(0, 1, 2, 1), Digit(1, 1, 3, 2)), slots=6).offsets_at(
        ...     np.array([[1, 2], [0, 1]])).tolist()
        [5, 2]
        """
        self._check_int64()
        rows = np.asarray(idx, dtype=np.int64).reshape(len(idx), self.rank)
        out = np.broadcast_to(self._sum(lambda k: rows[:, k], (1,)), (len(rows),)).copy()
        return self.post.apply(out) if self.post is not None else out

    def _sum(self, coord: Coords, one: tuple[int, ...]) -> np.ndarray:
        return self.base + sum_digits(list(self.digits), coord, one)

    def owners(self, n: int) -> np.ndarray:
        """For slots ``0 … n-1``, the C-order position of the first element stored there (-1: none).

        Pre: none (``n <= 0`` gives an empty array). Post: ``out[k] == -1`` or ``out[k]`` is the
        smallest C-order position whose offset is ``k``; costs with ``n`` where the digits or
        an XOR post-op allow, else lists the offsets.

        >>> CoreLayout((2, 2), (Digit(0, 1, 2, 0), Digit(1, 1, 2, 2)), slots=4).owners(4).tolist()
        [0, -1, 1, -1]
        """
        out = np.full(max(n, 0), -1, dtype=np.int64)
        if not self.elements or n <= 0:
            return out
        if self.post is not None or self.base:
            through = self._owners_unshifted(n)
            if through is not None:
                return through
        both = self.per_dim_digits() if self.post is None and not self.base else None
        if both is not None and all(d.stride >= 0 for ds in both[0] for d in ds):
            flat, off = first_owners(both[0], self.shape, n)
            out[off] = flat
        elif self.elements <= 1 << 20:
            offs = self.offsets()
            keep = (offs >= 0) & (offs < n)
            out[offs[keep][::-1]] = np.flatnonzero(keep)[::-1]  # the first owner wins
        else:
            for k in range(n):
                idx = self.index_of(k)
                out[k] = -1 if idx is None else np.ravel_multi_index(idx, self.shape)
        return out

    def _owners_unshifted(self, n: int) -> np.ndarray | None:
        """:meth:`owners` read through the base and an XOR swizzle (its own inverse when its
        bit fields do not overlap): slot ``k`` is the plain layout's slot ``post(k) - base``.
        Costs with ``n`` and those slots, not with the layout's size; None when they reach far."""
        return _lazy("queries").owners_unshifted(self, n)

    def _check_int64(self) -> None:
        """Every offset within int64 (the sums may wrap on the way and still come out exact:
        int64 arithmetic is exact modulo 2^64)."""
        terms = [d.stride * (d.extent - 1) for d in self.digits if d.extent > 1]
        high = self.base + sum(t for t in terms if t > 0)
        low = self.base + sum(t for t in terms if t < 0)
        if high > INT64_MAX or low < INT64_MIN:
            reach = high if high > INT64_MAX else low
            raise LayoutError(f"{self.name or 'layout'}: offsets reach {show_int(reach)}, past int64")

    def index_of(self, offset: int) -> tuple[int, ...] | None:
        """The logical index stored at ``offset``, or None for a slot no element uses.

        Exact for any layout: digit values are read off by the strides (largest first), then
        checked by evaluating the offset again; where the digits do not decide the index (see
        :meth:`decides_indices`; a dense layout's do too) and that finds none, by enumeration.
        """
        return _lazy("queries").index_of(self, offset)

    def decides_indices(self) -> bool:
        """The digits alone give the index at any offset (strides positive, each past the reach
        of the smaller ones, no swizzle), so :meth:`indices_at` lists nothing.

        >>> CoreLayout((4,), (Digit(0, 1, 4, 2),), slots=7).decides_indices()
        True
        """
        return self.post is None and strides_decide(self.digits)

    def indices_at(self, offset: int) -> tuple[tuple[int, ...], ...]:
        """Every logical index stored at ``offset``: none for a padding slot, several where a
        broadcast or overlapping strides share it (C order). Exact: when the strides are a
        mixed radix (each past the reach of the smaller ones) the digits decide the index;
        otherwise the offsets are listed (at most :data:`MAX_ENUMERATED` elements).

        >>> CoreLayout((2, 2), (Digit(0, 1, 2, 0), Digit(1, 1, 2, 1)), slots=2).indices_at(1)
        ((0, 1), (1, 1))
        """
        return _lazy("queries").indices_at(self, offset)

    def simple_digits(self) -> tuple[Digit, ...]:
        """The digits with every identity re-wrap undone: a digit whose source is one other
        digit's value, read whole (``block`` 1, ``extent`` at least that digit's), is that digit.

        >>> inner = Digit(0, 2, 3)
        >>> CoreLayout((6,), (Digit(Merge((inner,)), 1, 4, 1),), slots=4).simple_digits()
        (Digit(source=0, block=2, extent=3, stride=1),)
        """
        return tuple(_unwrapped(d) for d in self.digits)

    def per_dim_digits(self) -> tuple[tuple[tuple[Digit, ...], ...], tuple[tuple[Digit, ...], ...]] | None:
        """Per logical dim its digits major first as an exact mixed radix, and the same for the
        size-1 dims a tile prepends; None when some dim's digits are not one (merges, inner
        padding, gaps). This is the strided description the relayout engine copies with.

        >>> dd, lead = CoreLayout((4,), (Digit(0, 2, 2, 1), Digit(0, 1, 2, 2)), slots=4).per_dim_digits()
        >>> [(d.block, d.extent, d.stride) for d in dd[0]], lead
        ([(2, 2, 1), (1, 2, 2)], ())
        """
        by_source: dict[int, list[Digit]] = {}
        for d in self.simple_digits():
            if isinstance(d.source, Merge):
                return None
            by_source.setdefault(d.source, []).append(d)
        pseudo = sorted(s for s in by_source if s < 0)
        out = []
        for s in [*pseudo, *range(self.rank)]:
            chain = _mixed_radix(by_source.get(s, []), self.shape[s] if s >= 0 else 1, s)
            if chain is None:
                return None
            out.append(chain)
        return tuple(out[len(pseudo):]), tuple(out[:len(pseudo)])


def _unwrapped(d: Digit) -> Digit:
    src = d.source
    while isinstance(src, Merge) and len(src.parts) == 1 and d.block == 1 \
            and d.extent >= src.parts[0].extent:
        part = src.parts[0]
        d = Digit(part.source, part.block, part.extent, d.stride)
        src = d.source
    return d


def _mixed_radix(digits: list[Digit], n: int, source: int) -> tuple[Digit, ...] | None:
    """``digits`` sorted major first if they write ``x`` in ``[0, n)`` as an exact mixed radix
    (each block the product of the extents below it, the top one covering ``n``)."""
    ds = sorted((d for d in digits if d.extent != 1), key=lambda d: -d.block)
    if not ds:
        return (Digit(source, 1, 1, 0),)
    if ds[-1].block != 1 or ds[0].block * ds[0].extent < n:
        return None
    for hi, lo in itertools.pairwise(ds):
        if hi.block != lo.block * lo.extent:
            return None
    return tuple(ds)


def check_index(shape: tuple[int, ...], index: Sequence[int], name: str = "") -> tuple[int, ...]:
    """``index`` as a tuple of ints after checking rank, type and bounds (a :class:`LayoutError`).

    >>> check_index((3, 5), (2, 7))
    Traceback (most recent call last):
    tensorlayout.errors.LayoutError: index (2, 7) is out of bounds: dimension 1 has size 5, but the index is 7
    """
    what = name or f"shape {list(shape)}"
    if isinstance(index, (str, bytes)) or not hasattr(index, "__iter__"):
        raise LayoutError(f"expected an index of {len(shape)} integers for {what}, but got {index!r}")
    idx = tuple(index)
    if len(idx) != len(shape) or any(isinstance(i, bool) or not isinstance(i, (int, np.integer))
                                     for i in idx):
        raise LayoutError(f"expected an index of {len(shape)} integers for {what}, but got {index!r}")
    for d, (i, n) in enumerate(zip(idx, shape, strict=True)):
        if not 0 <= i < n:
            raise LayoutError(f"index {idx} is out of bounds: dimension {d} has size {n}, "
                              f"but the index is {i}")
    return tuple(int(i) for i in idx)
