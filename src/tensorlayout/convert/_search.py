"""CuTe → XLA: the search for a tile chain that places every element where a CuTe layout does.

>>> str(cute_to_xla("((2,2),(2,3)):((2,12),(1,4))", dims=(3, 5)))
'f32[3,5]{1,0:T(2,2)}'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tensorlayout import cute
from tensorlayout.convert._xla_cute import as_cute, xla_to_cute
from tensorlayout.core.intmath import INT64_MAX
from tensorlayout.core.layout import Digit
from tensorlayout.errors import LayoutError, TensorLayoutError, UnsupportedError
from tensorlayout.xla import Layout as XlaLayout
from tensorlayout.xla import Shape, Tile
from tensorlayout.xla.types import element_type

__all__ = ["cute_to_xla"]

#: Layouts up to this size are enumerated to say why they have no XLA layout.
_ENUMERATE_MAX = 1 << 20


def _pieces(mode: cute.Layout) -> list[tuple[int, int]]:
    return [(int(s), int(d)) for s, d in mode.flat_modes() if s != 1] or [(1, 0)]


def _why_not_xla(layout: cute.Layout) -> str:
    flat = layout.flat_modes()
    if any(d == 0 and s > 1 for s, d in flat):
        return "it has a stride-0 (broadcast) mode, and XLA layouts are injective"
    if any(d < 0 for _, d in flat):
        return "it has a negative stride, and XLA layouts only go forward in memory"
    if layout.size() > _ENUMERATE_MAX:
        return "no candidate XLA layout matched it (it is too large to diagnose element by element)"
    offsets = layout.offsets()
    if len(np.unique(offsets)) != len(offsets):
        return "it maps two coordinates to one offset"
    if offsets.size and int(offsets.max()) + 1 != offsets.size:
        return (f"its image has holes ({offsets.size} offsets spread over {int(offsets.max()) + 1} "
                "slots); XLA leaves holes only as tile padding, and no tile chain tried leaves these")
    return ("none of the XLA layouts tried reproduces it (chains of up to four tiles rebuilt "
            "from its digits, and guesses for padded digits; a chain that pads inside a tile can "
            "be missed)")


def _natural_tiles(pieces: list[list[tuple[int, int]]], phys: list[int],
                   padded: list[bool]) -> list[Tile]:
    """Tile ``l`` takes, per mode, the product of all but its ``l`` most significant digits;
    a one-digit mode wider than its dim (``padded``) takes its whole size in the first tile."""
    tiles = []
    levels = max(max(len(p) for p in pieces) - 1, 1 if any(padded) else 0)
    for lvl in range(1, levels + 1):
        dims = []
        for k in phys:
            keep = len(pieces[k]) - lvl
            n = pieces[k][0][0] if lvl == 1 and padded[k] else 1
            for s, _ in pieces[k][:max(keep, 0)]:
                n *= s
            dims.append(n)
        while len(dims) > 1 and dims[0] == 1:
            dims.pop(0)
        tiles.append(Tile(tuple(dims)))
    return tiles


def _candidates(layout: cute.Layout, logical: tuple[int, ...]
                ) -> list[tuple[tuple[int, ...], tuple[Tile, ...]]]:
    """(minor_to_major, tiles) guesses for what :func:`_built_chains` misses (digits wider
    than their dims, holes): each dim order, the likeliest first, untiled, with the natural
    tile chain, after a whole-size first tile, and with ``(p,1)`` sub-tiles."""
    modes = layout.modes()
    pieces = [_pieces(m) for m in modes]
    sizes = [int(m.size()) for m in modes]
    top_stride = [p[-1][1] for p in pieces]
    padded = [len(p) == 1 and n < size for p, n, size in zip(pieces, logical, sizes)]
    # size-1 modes go most major: they hold no data, and tiles apply to the minor-most dims
    best = tuple(sorted(range(len(modes)), key=lambda k: (sizes[k] == 1, top_stride[k], k)))
    others = (o for o in itertools.permutations(range(len(modes))) if o != best)  # 13 modes: 6e9 of them
    orders = [best, *itertools.islice(others, 23)]
    out: list[tuple[tuple[int, ...], tuple[Tile, ...]]] = []
    for m2m in orders:
        phys = list(reversed(m2m))
        tiles = _natural_tiles(pieces, phys, padded) if modes else []
        out.append((m2m, ()))
        out.append((m2m, tuple(tiles)))
        if modes and min(sizes) > 0:
            out.append((m2m, (Tile(tuple(sizes[k] for k in phys)),) + tuple(tiles)))
        if m2m == best and len(phys) >= 2:  # a (p,1) sub-tile that reorders inside the tile
            for p in sorted({s for s, _ in pieces[phys[-2]]} | {2, 4, 8}):
                out.append((m2m, tuple(tiles) + (Tile((p, 1)),)))
    return out


def _unmerge_steps(state: tuple[Digit, ...]) -> list[tuple[tuple[Digit, ...], Tile]]:
    """Every way the last tile of a chain can have produced ``state`` (major → minor).

    A tile of m dims turns the last m axes into m counts followed by m in-tile axes. Undoing
    it: pick, at the end of ``state``, ``c`` count axes then ``t`` in-tile axes and spread them
    over the m slots (a slot whose tile size is 1 has no visible in-tile axis, a slot whose
    count is 1 no visible count).
    """
    out = []
    n = len(state)
    for m in range(1, min(n, 4) + 1):
        for t in range(1, m + 1):
            for c in range(m - t, min(m, n - t) + 1):
                head, counts, tiles = state[:n - t - c], state[n - t - c:n - t], state[n - t:]
                for t_slots in itertools.combinations(range(m), t):
                    bare = set(range(m)).difference(t_slots)  # slots only a count axis can fill
                    for c_slots in itertools.combinations(range(m), c):
                        if not bare.issubset(c_slots):
                            continue  # (a slot left empty: _merge_slots would say None)
                        undone = _merge_slots(m, dict(zip(t_slots, tiles)), dict(zip(c_slots, counts)))
                        if undone is not None:
                            out.append((head + undone[0], undone[1]))
    return out


def _merge_slots(m: int, tiles: dict[int, Digit], counts: dict[int, Digit]
                 ) -> tuple[tuple[Digit, ...], Tile] | None:
    """The axes before a tile from its in-tile and count axes per slot, and the tile; None when
    a slot is empty or its two axes are not consecutive digits of one mode."""
    merged, dims = [], []
    for i in range(m):
        tl, ct = tiles.get(i), counts.get(i)
        if tl is not None and ct is not None:
            if tl.source != ct.source or ct.block != tl.block * tl.extent:
                return None
            merged.append(Digit(tl.source, tl.block, tl.extent * ct.extent))
        elif tl is not None or ct is not None:
            merged.append(tl if tl is not None else ct)  # type: ignore[arg-type]
        else:
            return None
        dims.append(tl.extent if tl is not None else 1)
    return tuple(merged), Tile(tuple(dims))


def _built_chains(pieces: list[list[tuple[int, int]]], budget: int = 4000
                  ) -> list[tuple[tuple[int, ...], tuple[Tile, ...]]]:
    """(minor_to_major, tiles) that rebuild the digits, found by undoing tiles one at a time
    from the physical order of all digits (by stride) until each mode is one axis again."""
    axes = []
    for k, ps in enumerate(pieces):
        mult = 1
        for s, d in ps:
            if s > 1:
                axes.append((d, Digit(k, mult, s)))
            mult *= s
    start = tuple(a for _, a in sorted(axes, key=lambda x: -x[0]))
    found: list[tuple[tuple[int, ...], tuple[Tile, ...]]] = []
    seen = {start}
    todo: list[tuple[tuple[Digit, ...], tuple[Tile, ...]]] = [(start, ())]
    while todo and budget > 0:  # breadth first: the shortest chains first
        state, chain = todo.pop(0)
        budget -= 1
        modes = [a.source for a in state if isinstance(a.source, int)]  # search digits: no merges
        if all(a.block == 1 for a in state) and len(set(modes)) == len(modes):
            rest = [k for k in range(len(pieces)) if k not in modes]  # size-1 modes: most major
            m2m = tuple(reversed(rest + modes))
            found.append((m2m, chain))
            if state:  # the same after a first tile that pads each dim to its whole extent
                found.append((m2m, (Tile(tuple(a.extent for a in state)),) + chain))
        if len(chain) < 4:
            for prev, tile in _unmerge_steps(state):
                if prev not in seen:
                    seen.add(prev)
                    todo.append((prev, (tile,) + chain))
    return found


def _chains_with_pseudo_dims(pieces: list[list[tuple[int, int]]]
                             ) -> list[tuple[tuple[int, ...], tuple[Tile, ...]]]:
    """Chains for a layout whose image has gaps, read as the padding of size-1 dims that a
    tile longer than the rank adds in front (``f32[130]{0:T(4,128)}`` leaves 3 empty rows
    of 128 after every row): each gap becomes an extra mode, :func:`_built_chains` runs on
    them all, and the chains whose extra modes are the most major keep only the real ones."""
    digits = sorted((d, s) for ps in pieces for s, d in ps if s > 1)
    extra: list[list[tuple[int, int]]] = []
    span = 1
    for d, s in digits:
        if d > span:
            if d % span:
                return []
            extra.append([(d // span, span)])
        span = d * s
    if not extra or len(extra) > 3:
        return []
    rank = len(pieces)
    out = []
    for m2m, tiles in _built_chains(pieces + extra):
        if set(m2m[len(m2m) - len(extra):]) == set(range(rank, rank + len(extra))):
            out.append((m2m[:len(m2m) - len(extra)], tiles))
    return out


def _search(lay: cute.Layout, canonical: cute.Layout, logical: tuple[int, ...]
            ) -> Iterator[tuple[tuple[int, ...], tuple[Tile, ...]]]:
    """Every (minor_to_major, tiles) to try, lazily: the untiled likeliest dim order, chains
    rebuilt from the digits (as given, then coalesced), chains with pseudo dims, guesses."""
    guesses = _candidates(lay, logical)
    yield guesses[0]
    for x in (lay, canonical):
        yield from _built_chains([_pieces(m) for m in x.modes()])
    yield from _chains_with_pseudo_dims([_pieces(m) for m in lay.modes()])
    yield from guesses[1:]


def _logical_dims(dims: Any, origin: tuple[int, ...] | None, sizes: tuple[int, ...],
                  lay: cute.Layout) -> tuple[int, ...]:
    if dims is None:
        return origin if origin is not None else sizes
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence) or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in dims):
        raise LayoutError(f"expected dims as a sequence of non-negative ints, but got {dims!r}"[:200])
    if len(dims) != len(sizes):
        raise LayoutError(f"dims {tuple(dims)} do not match the rank {len(sizes)} of {lay}")
    return tuple(int(n) for n in dims)


def cute_to_xla(layout: Any, element: str = "f32", dims: Sequence[int] | None = None) -> Shape:
    """An XLA shape whose layout places every element where ``layout`` (CuTe text or layout, TLA
    layout, or a one-to-one Triton :class:`~tensorlayout.triton.LinearLayout`) does.

    ``dims`` are the logical (unpadded) dims, default the mode sizes (a TLA layout gives its
    origin shape); the layout's full domain is the padded one, and the XLA tiles must pad the
    dims to exactly it. Sub-byte element types get ``E(bits)`` (packed, as CuTe and TLA store
    them). Raises :class:`UnsupportedError` saying why when no XLA layout exists.
    The search rebuilds tile chains of up to four tiles by undoing one tile at a time from the
    physical order of the digits, shortest first, so it finds every layout whose digits nest
    exactly (all TPU and TLA formats); for padding inside a tile (holes in the image) it only
    tries a few guesses, and a miss is reported as unsupported.

    >>> str(cute_to_xla("((16,2),(16,3)):((16,256),(1,512))", "f16", dims=(20, 40)))
    'f16[20,40]{0,1:T(16,16)(16,1)}'
    """
    lay, origin = as_cute(layout)
    modes = lay.modes()
    sizes = tuple(int(m.size()) for m in modes)
    logical = _logical_dims(dims, origin, sizes, lay)
    et = element_type(element)
    bits = et.bits if et.is_sub_byte else 0
    if any(d < 0 or (d == 0 and s > 1) for s, d in lay.flat_modes()):
        raise UnsupportedError(f"{lay} has no XLA layout: {_why_not_xla(lay)}")
    if any(abs(v) > INT64_MAX for sd in lay.flat_modes() for v in sd) or any(n > INT64_MAX for n in logical):
        raise UnsupportedError(f"{lay} has no XLA layout: a size or stride is beyond int64, and XLA's "
                               "dimensions and tiles are int64")
    # Without stride-0 and negative digits, coalescing mode by mode is canonical: two such
    # layouts with the same mode sizes are the same function exactly when they coalesce alike.
    profile = tuple(1 for _ in modes)
    canonical = cute.coalesce(lay, profile) if modes else lay

    def matches(shape: Shape) -> bool:
        try:
            got = xla_to_cute(shape)
        except TensorLayoutError:
            return False
        return tuple(int(m.size()) for m in got.modes()) == sizes and (
            not modes or cute.coalesce(got, profile) == canonical)

    for m2m, tiles in _search(lay, canonical, logical):
        try:
            shape = Shape(et, logical, (False,) * len(logical),
                          XlaLayout(m2m, tiles, element_size_in_bits=bits))
        except TensorLayoutError:
            continue
        if matches(shape):
            return _simplest(shape, matches)
    raise UnsupportedError(f"{lay} has no XLA layout: {_why_not_xla(lay)}")


def _simplest(shape: Shape, matches: Any) -> Shape:
    """Drop all-ones tiles (``T(1,1)`` moves nothing) the search may have put in the chain."""
    assert shape.layout is not None
    tiles = tuple(t for t in shape.layout.tiles if any(d != 1 for d in t.dims))
    fewer = replace(shape, layout=replace(shape.layout, tiles=tiles))
    return fewer if tiles != shape.layout.tiles and matches(fewer) else shape
