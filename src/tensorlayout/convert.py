"""Bridges between the three notations: XLA tiled layouts, CuTe/TLA layouts, indexing maps.

All three answer one question (where does element (i, j, …) live?), so each can be rewritten
in the others where the target notation can express it; where it cannot, a
:class:`~tensorlayout.errors.UnsupportedError` says why. Offsets are in elements (an ``E(4)``
layout packs two per byte, but element ``k`` is still offset ``k``); memory spaces (``S(n)``)
and tail padding (``L(n)``) do not move elements, so the CuTe and map forms drop them.

>>> from tensorlayout.xla import parse_shape
>>> str(xla_to_cute(parse_shape("f32[3,5]{1,0:T(2,2)}")))
'((2,2),(2,3)):((2,12),(1,4))'
>>> str(cute_to_xla("((2,2),(2,3)):((2,12),(1,4))", dims=(3, 5)))
'f32[3,5]{1,0:T(2,2)}'
>>> print(to_indexing_map(parse_shape("f32[3,5]{1,0:T(2,2)}")))
(d0, d1) -> ((d0 mod 2) * 2 + (d0 / 2) * 12 + (d1 / 2) * 4 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tensorlayout import cute
from tensorlayout.cute import tla
from tensorlayout.cute.lowering import from_core, lower_layout
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, TensorLayoutError, UnsupportedError
from tensorlayout.indexing.layouts import layout_map
from tensorlayout.indexing.map import IndexingMap
from tensorlayout.xla import Layout as XlaLayout
from tensorlayout.xla import Shape, Tile, parse_shape
from tensorlayout.xla.lowering import lower_shape
from tensorlayout.xla.types import ELEMENT_TYPES, element_type

#: Layouts up to this size are enumerated to say why they have no XLA layout.
_ENUMERATE_MAX = 1 << 20

__all__ = ["cute_to_xla", "is_xla_text", "parse_target", "tla_to_xla", "to_indexing_map",
           "xla_to_cute"]


def is_xla_text(text: str) -> bool:
    """True for XLA shape text (it has ``[``, or is ``token``/``opaque``); CuTe text never does.

    >>> is_xla_text("bf16[8,128]{1,0:T(8,128)(2,1)}"), is_xla_text("(4,8):(8,1)")
    (True, False)
    """
    stripped = text.strip()
    return "[" in stripped or stripped.startswith(("token", "opaque"))


def parse_target(text: str) -> Shape | cute.Layout:
    """XLA shape text as a :class:`Shape`, anything else as a CuTe :class:`~tensorlayout.cute.Layout`.

    >>> type(parse_target("f32[3,5]{1,0:T(2,2)}")).__name__, str(parse_target(" (4,8):(8,1) "))
    ('Shape', '(4,8):(8,1)')
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected XLA shape or CuTe layout text, but got {type(text).__name__}")
    return parse_shape(text.strip()) if is_xla_text(text) else cute.Layout.parse(text.strip())


# ---------------------------------------------------------------- XLA → CuTe


def _as_shape(x: Shape | str) -> Shape:
    shape = parse_shape(x) if isinstance(x, str) else x
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA shape or its text, but got {type(x).__name__}")
    if shape.kind == "tuple":
        raise UnsupportedError(f"{shape} is a tuple shape; convert its element shapes one at a time")
    if not shape.is_array:
        raise UnsupportedError(f"{shape} is a {shape.kind} shape, which holds no array elements")
    if shape.layout is None:
        raise LayoutError(f"shape {shape} has no layout")
    return shape


def xla_to_cute(shape: Shape | str) -> cute.Layout:
    """The XLA layout as a hierarchical CuTe layout over the padded logical domain.

    Mode ``k`` is logical dim ``k``; its sub-modes are the digits the tiles split it into,
    least significant first, the top one counting whole tiles (so it covers the padding).
    A rank-0 shape gives ``():()``. Combined dims (``*`` over two dims of size > 1) and a
    later tile that does not divide the extent an earlier one left raise
    :class:`UnsupportedError`.

    >>> str(xla_to_cute("bf16[16,256]{1,0:T(8,128)(2,1)}"))
    '((2,4,2),(128,2)):((1,256,2048),(2,1024))'
    """
    return from_core(lower_shape(_as_shape(shape)))


# ---------------------------------------------------------------- CuTe → XLA


def _as_cute(x: Any) -> tuple[cute.Layout, tuple[int, ...] | None]:
    if isinstance(x, TlaLayout):
        return x.layout, tuple(int(n) for n in x.origin_shape)
    if isinstance(x, str):
        return cute.Layout.parse(x), None
    if isinstance(x, cute.Layout):
        return x, None
    raise LayoutError(f"expected a CuTe or TLA layout (or CuTe text), but got {type(x).__name__}")


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
    orders = [best] + [o for o in itertools.permutations(range(len(modes))) if o != best][:23]
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


_Ax = tuple[int, int, int]  # (mode, multiplier, extent): digit (x // multiplier) % extent of mode x


def _unmerge_steps(state: tuple[_Ax, ...]) -> list[tuple[tuple[_Ax, ...], Tile]]:
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
                    for c_slots in itertools.combinations(range(m), c):
                        undone = _merge_slots(m, dict(zip(t_slots, tiles)), dict(zip(c_slots, counts)))
                        if undone is not None:
                            out.append((head + undone[0], undone[1]))
    return out


def _merge_slots(m: int, tiles: dict[int, _Ax], counts: dict[int, _Ax]
                 ) -> tuple[tuple[_Ax, ...], Tile] | None:
    """The axes before a tile from its in-tile and count axes per slot, and the tile; None when
    a slot is empty or its two axes are not consecutive digits of one mode."""
    merged, dims = [], []
    for i in range(m):
        tl, ct = tiles.get(i), counts.get(i)
        if tl is not None and ct is not None:
            if tl[0] != ct[0] or ct[1] != tl[1] * tl[2]:
                return None
            merged.append((tl[0], tl[1], tl[2] * ct[2]))
        elif tl is not None or ct is not None:
            merged.append(tl if tl is not None else ct)  # type: ignore[arg-type]
        else:
            return None
        dims.append(tl[2] if tl is not None else 1)
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
                axes.append((d, (k, mult, s)))
            mult *= s
    start = tuple(a for _, a in sorted(axes, key=lambda x: -x[0]))
    found: list[tuple[tuple[int, ...], tuple[Tile, ...]]] = []
    seen = {start}
    todo: list[tuple[tuple[_Ax, ...], tuple[Tile, ...]]] = [(start, ())]
    while todo and budget > 0:  # breadth first: the shortest chains first
        state, chain = todo.pop(0)
        budget -= 1
        modes = [a[0] for a in state]
        if all(a[1] == 1 for a in state) and len(set(modes)) == len(modes):
            rest = [k for k in range(len(pieces)) if k not in modes]  # size-1 modes: most major
            m2m = tuple(reversed(rest + modes))
            found.append((m2m, chain))
            if state:  # the same after a first tile that pads each dim to its whole extent
                found.append((m2m, (Tile(tuple(a[2] for a in state)),) + chain))
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
    """An XLA shape whose layout places every element where ``layout`` does.

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
    lay, origin = _as_cute(layout)
    modes = lay.modes()
    sizes = tuple(int(m.size()) for m in modes)
    logical = _logical_dims(dims, origin, sizes, lay)
    et = element_type(element)
    bits = et.bits if et.is_sub_byte else 0
    if any(d < 0 or (d == 0 and s > 1) for s, d in lay.flat_modes()):
        raise UnsupportedError(f"{lay} has no XLA layout: {_why_not_xla(lay)}")
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


_DTYPE_NAMES = {"half": "f16", "float": "f32", "float16": "f16", "float32": "f32", "fp16": "f16",
                "fp32": "f32", "bfloat16": "bf16", "int8": "s8", "uint8": "u8", "int4": "s4",
                "int16": "s16", "int32": "s32"}
_BITS_NAMES = {1: "u1", 2: "u2", 4: "s4", 8: "s8", 16: "f16", 32: "f32", 64: "f64"}


def _xla_type_name(dtype: str | int) -> str:
    """The XLA element type of a TLA ``dtype``: an XLA name, a C name or a bit width."""
    if isinstance(dtype, str) and dtype in ELEMENT_TYPES:
        return dtype
    if isinstance(dtype, str) and dtype.lower() in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype.lower()]
    bits = tla.element_bits(dtype)  # validates the name or width
    if bits not in _BITS_NAMES:
        raise UnsupportedError(f"XLA has no {bits}-bit element type for TLA dtype {dtype!r}")
    return _BITS_NAMES[bits]


def tla_to_xla(tag: str, rows: int, cols: int, dtype: str | int = "f16") -> Shape:
    """A TLA format (``zZ``, ``nN``, ``RowMajor`` …) in XLA notation, or why it cannot be written so.

    ``dtype`` is an XLA type name (``f16``), a C name (``half``) or a bit width; 4-bit types
    get ``E(4)`` since the fractal formats pack them. zN (row-major fractals arranged
    column-major) needs a transposing ``(16,1)`` sub-tile:

    >>> str(tla_to_xla("zZ", 40, 72, "f16")), str(tla_to_xla("zN", 40, 72, "f16"))
    ('f16[40,72]{1,0:T(16,16)}', 'f16[40,72]{0,1:T(16,16)(16,1)}')
    """
    t = tla.make_format(tag, rows, cols, dtype)
    try:
        return cute_to_xla(t, _xla_type_name(dtype))
    except UnsupportedError as err:
        raise UnsupportedError(f"TLA {tag} {rows}x{cols}: {err}") from None


# ---------------------------------------------------------------- indexing maps


def to_indexing_map(x: Any, *, simplify: bool = True) -> IndexingMap:
    """Logical index → physical element offset as an :class:`~tensorlayout.indexing.IndexingMap`.

    Accepts an XLA shape (text or :class:`Shape`), a CuTe layout (text or value) or a TLA layout
    (whose domain is the origin shape). The map is simplified unless ``simplify=False``.

    >>> print(to_indexing_map("((4,2),(4,3)):((4,16),(1,32))"))
    (d0, d1) -> ((d1 / 4) * 32 + d0 * 4 + d1 mod 4), domain: d0 in [0, 7], d1 in [0, 11]
    """
    if isinstance(x, str):
        x = parse_target(x)
    if isinstance(x, Shape):
        return layout_map(lower_shape(_as_shape(x)), simplify=simplify)
    lay, origin = _as_cute(x)
    return layout_map(lower_layout(lay if origin is None else x), simplify=simplify)
