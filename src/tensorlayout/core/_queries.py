"""What a :class:`~tensorlayout.core.layout.CoreLayout` answers beyond its offsets: the index at
an offset (:func:`index_of`, :func:`indices_at`), whether its digits decide indices, its density,
injectivity and tiles, and its owners through a base and a swizzle. Each is the body of the
layout's method of the same name, which loads this module on first use: showing where a
layout's elements live needs none of it.

>>> from tensorlayout.core.layout import CoreLayout, Digit
>>> lay = CoreLayout((3, 5), (Digit(0, 2, 2, 12), Digit(1, 2, 3, 4), Digit(0, 1, 2, 2),
...                           Digit(1, 1, 2, 1)), slots=24)
>>> index_of(lay, 17), indices_at(lay, 9), is_dense(lay), tile_split(lay)
((2, 3), (), True, (2, 2))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from tensorlayout.core.digits import Digit, Merge, strides_decide
from tensorlayout.core.intmath import fits_int64

if TYPE_CHECKING:  # the layout lazily loads this module for its methods: only its type is needed here
    from tensorlayout.core.layout import CoreLayout

__all__ = ["contiguous_tile", "index_of", "indices_at", "is_dense", "is_injective",
           "owners_unshifted", "tile_split"]


def is_dense(lay: CoreLayout) -> bool:
    """The digits, sorted by stride, are a compact mixed radix (:meth:`CoreLayout.is_dense`)."""
    acc = 1
    for d in sorted((d for d in lay.simple_digits() if d.extent > 1), key=lambda d: d.stride):
        if d.stride != acc:
            return False
        acc *= d.extent
    return True


def is_injective(lay: CoreLayout) -> bool:
    """No two logical elements share an offset (:meth:`CoreLayout.is_injective`)."""
    if lay.elements <= 1 or (lay.per_dim_digits() is not None and strides_decide(lay.digits)):
        return True
    offsets = lay.offsets()
    return bool(np.unique(offsets).size == offsets.size)


def tile_split(lay: CoreLayout) -> tuple[int, ...] | None:
    """Per logical dim the tile extent, or None (:meth:`CoreLayout.tile_split`)."""
    split = [1] * lay.rank
    for d in lay.simple_digits():
        if isinstance(d.source, Merge):
            if len(d.source.parts) > 1:
                return None
        elif d.source >= 0 and d.extent != 1:
            split[d.source] = max(split[d.source], d.block)
    return tuple(split) if any(t > 1 for t in split) else None


def contiguous_tile(lay: CoreLayout) -> int | None:
    """Slots per contiguous tile, or None (:meth:`CoreLayout.contiguous_tile`)."""
    if lay.tile_elements is not None:
        return lay.tile_elements
    both = lay.per_dim_digits()
    if both is None:
        return None
    acc = 1
    for stride, extent in sorted((d.stride, d.extent) for ds in both[0] for d in ds[1:]):
        if stride != acc:
            return None
        acc *= extent
    tops = (ds[0] for ds in both[0] if len(ds) > 1 or ds[0].block > 1)
    return acc if acc > 1 and all(d.stride % acc == 0 for d in tops) else None


def owners_unshifted(lay: CoreLayout, n: int) -> np.ndarray | None:
    """``owners`` read through the base and an XOR swizzle, or None (:meth:`CoreLayout.owners`)."""
    if lay.post is not None and abs(lay.post.shift) < lay.post.bits:
        return None
    pre = np.arange(n, dtype=np.int64)
    if lay.post is not None:
        pre = lay.post.apply(pre)
    if not fits_int64(int(pre.max()) - lay.base) or not fits_int64(int(pre.min()) - lay.base):
        return None
    pre -= lay.base
    top = int(pre.max()) + 1
    if top > 4 * n + (1 << 20):
        return None
    own = replace(lay, post=None, base=0).owners(max(top, 0))
    return np.where(pre >= 0, own[np.clip(pre, 0, None)] if top > 0 else -1, -1)


def index_of(lay: CoreLayout, offset: int) -> tuple[int, ...] | None:
    """The logical index stored at ``offset``, or None (:meth:`CoreLayout.index_of`)."""
    guess = _greedy_index(lay, int(offset))
    if guess is not None and lay.offset(guess) == offset:
        return guess
    if lay.decides_indices():
        return None
    hits = np.flatnonzero(lay.offsets() == offset)
    return tuple(int(i) for i in np.unravel_index(int(hits[0]), lay.shape)) if hits.size else None


def indices_at(lay: CoreLayout, offset: int) -> tuple[tuple[int, ...], ...]:
    """Every logical index stored at ``offset`` (:meth:`CoreLayout.indices_at`)."""
    if lay.decides_indices():
        found = _greedy_index(lay, int(offset))
        return (found,) if found is not None and lay.offset(found) == offset else ()
    hits = np.flatnonzero(lay.offsets() == offset)
    return tuple(tuple(int(c) for c in np.unravel_index(int(h), lay.shape)) for h in hits)


def _greedy_index(lay: CoreLayout, offset: int) -> tuple[int, ...] | None:
    """The index whose digits, read greedily by falling stride, give ``offset`` (None: none)."""
    rest = offset - lay.base
    pairs = []
    for d in sorted(lay.digits, key=_falling_stride):
        if d.extent <= 1 or d.stride <= 0:
            continue
        v = rest // d.stride
        if not 0 <= v < d.extent:
            return None
        rest -= v * d.stride
        if v:  # (a zero digit adds nothing to its source)
            pairs.append((d, v))
    if rest:
        return None
    coords = [0] * lay.rank
    _accumulate(pairs, coords)
    ok = all(0 <= c < n for c, n in zip(coords, lay.shape, strict=True))
    return tuple(coords) if ok else None


def _accumulate(pairs: Iterable[tuple[Digit, int]], coords: list[int]) -> None:
    """Add each digit's ``value · block`` into its source; a merge, once all of its digits
    are in, splits back into its parts (the deepest merge first: a merge only feeds the
    shallower ones its parts read, so each is split once, complete)."""
    totals: dict[Merge, int] = {}

    def add(d: Digit, v: int) -> None:
        if isinstance(d.source, Merge):
            totals[d.source] = totals.get(d.source, 0) + v * d.block
        elif d.source >= 0:
            coords[d.source] += v * d.block

    for d, v in pairs:
        add(d, v)
    while totals:
        m = max(totals, key=_depth)
        total = totals.pop(m)
        for part in reversed(m.parts):
            total, v = divmod(total, part.extent)
            add(part, v)


def _falling_stride(d: Digit) -> int:
    return -d.stride


def _depth(m: Merge) -> int:
    """How many merges sit below ``m`` through its parts' sources."""
    return 1 + max((_depth(p.source) for p in m.parts if isinstance(p.source, Merge)), default=0)


