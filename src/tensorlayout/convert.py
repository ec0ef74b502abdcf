"""Bridges between the three notations: XLA tiled layouts, CuTe/TLA layouts, indexing maps.

All three answer one question (where does element (i, j, …) live?), so each can be rewritten
in the others where the target notation can express it; where it cannot, a
:class:`~tensorlayout.errors.UnsupportedError` says why.

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from tensorlayout import cute
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, TensorLayoutError, UnsupportedError
from tensorlayout.xla import Layout as XlaLayout
from tensorlayout.xla import Shape, Tile, parse_shape, tiling_plan
from tensorlayout.xla.layout import COMBINE_DIMENSION
from tensorlayout.xla.types import element_type

#: Layouts up to this size are compared element by element when their structures differ.
_ENUMERATE_MAX = 1 << 22

__all__ = ["cute_to_xla", "tla_to_xla", "to_indexing_map", "xla_to_cute"]


@dataclass(frozen=True, slots=True)
class _Axis:
    """One physical axis of the tiled view: digit ``(i_dim // mult) % extent`` of logical dim ``dim``."""

    dim: int | None  # None: a size-1 dim a tile adds in front
    mult: int
    extent: int
    top: bool  # the most significant digit of its dim (may be padded)


def _as_shape(x: Shape | str) -> Shape:
    shape = parse_shape(x) if isinstance(x, str) else x
    if not isinstance(shape, Shape) or not shape.is_array or shape.layout is None:
        raise LayoutError(f"expected an array shape with a layout, got {x}")
    return shape


def _split(axis: _Axis, t: int, tile: tuple[int, ...]) -> tuple[_Axis, _Axis]:
    if axis.dim is None:
        return _Axis(None, 1, 1, True), _Axis(None, 1, t, False)
    if not axis.top and axis.extent % t:
        raise UnsupportedError(
            f"tile {tile}: size {t} does not divide the extent {axis.extent} an earlier tile gave "
            f"dim {axis.dim}, so the padding sits inside a tile; a CuTe layout cannot express that")
    count = -(-axis.extent // t)
    return (_Axis(axis.dim, axis.mult * t, count, axis.top), _Axis(axis.dim, axis.mult, t, False))


def _tiled_part(step: Any) -> tuple[int, tuple[int, ...]]:
    """How many leading groups a step leaves untiled, and the tile sizes of the others."""
    tiled = len(step.output_dims) - len(step.groups)
    return len(step.groups) - tiled, step.output_dims[len(step.output_dims) - tiled:]


def _axes(shape: Shape) -> tuple[list[_Axis], tuple[int, ...]]:
    plan = tiling_plan(shape)
    axes = [_Axis(d, 1, shape.dimensions[d], True) for d in plan.physical_order]
    for step in plan.steps:
        tile = tuple("*" if t == COMBINE_DIMENSION else t for t in step.tile)
        axes = [_Axis(None, 1, 1, True)] * (len(step.input_dims) - len(axes)) + axes
        merged: list[_Axis] = []
        for group in step.groups:
            real = [axes[i] for i in group if axes[i].extent > 1]
            if len(real) > 1:
                raise UnsupportedError(
                    f"tile {tile} combines dims {[a.dim for a in real]} with '*'; a CuTe layout maps "
                    "each mode separately and cannot express the merged padding")
            merged.append(real[0] if real else axes[group[-1]])
        untiled, sizes = _tiled_part(step)
        counts, tiles = [], []
        for axis, t in zip(merged[untiled:], sizes):
            c, tl = _split(axis, t, tile)
            counts.append(c)
            tiles.append(tl)
        axes = merged[:untiled] + counts + tiles
    return axes, plan.tiled_dims


def xla_to_cute(shape: Shape | str) -> cute.Layout:
    """The XLA layout as a hierarchical CuTe layout over the padded logical domain.

    Mode ``k`` is logical dim ``k``; its sub-modes are the digits the tiles split it into.
    """
    shape = _as_shape(shape)
    if shape.rank == 0:
        return cute.Layout(1, 0)
    axes, tiled = _axes(shape)
    strides = [0] * len(tiled)
    acc = 1
    for k in range(len(tiled) - 1, -1, -1):
        strides[k] = acc
        acc *= tiled[k]
    modes_s: list[Any] = []
    modes_d: list[Any] = []
    for d in range(shape.rank):
        pieces = sorted((a.mult, a.extent, s) for a, s in zip(axes, strides) if a.dim == d and a.extent > 1)
        expect = 1
        for mult, extent, _ in pieces:
            if mult != expect:
                raise UnsupportedError(f"dim {d} is split into digits that do not nest (multiplier {mult}, "
                                       f"expected {expect})")
            expect *= extent
        if not pieces:
            modes_s.append(1)
            modes_d.append(0)
        elif len(pieces) == 1:
            modes_s.append(pieces[0][1])
            modes_d.append(pieces[0][2])
        else:
            modes_s.append(tuple(p[1] for p in pieces))
            modes_d.append(tuple(p[2] for p in pieces))
    return cute.Layout(tuple(modes_s), tuple(modes_d))


# ---------------------------------------------------------------- CuTe → XLA


def _as_cute(x: Any) -> tuple[cute.Layout, tuple[int, ...] | None]:
    if isinstance(x, TlaLayout):
        return x.layout, x.origin_shape
    if isinstance(x, str):
        return cute.Layout.parse(x), None
    if isinstance(x, cute.Layout):
        return x, None
    raise LayoutError(f"expected a CuTe or TLA layout, got {type(x).__name__}")


def _pieces(mode: cute.Layout) -> list[tuple[int, int]]:
    return [(s, d) for s, d in mode.flat_modes() if s != 1] or [(1, 0)]


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
        return "its image has holes, and XLA layouts are dense up to whole-tile padding"
    return ("no minor_to_major order with a chain of tiles reproduces it (XLA orders the "
            "elements of a tile by one tile shape per level; this layout's digits do not nest "
            "that way)")


def _natural_tiles(pieces: list[list[tuple[int, int]]], phys: list[int]) -> list[Tile]:
    """Tile ``l`` takes, per mode, the product of all but its ``l`` most significant digits."""
    tiles = []
    for lvl in range(1, max(len(p) for p in pieces)):
        dims = []
        for k in phys:
            keep = len(pieces[k]) - lvl
            n = 1
            for s, _ in pieces[k][:max(keep, 0)]:
                n *= s
            dims.append(n)
        while len(dims) > 1 and dims[0] == 1:
            dims.pop(0)
        tiles.append(Tile(tuple(dims)))
    return tiles


def _candidates(layout: cute.Layout) -> list[tuple[tuple[int, ...], tuple[Tile, ...]]]:
    """(minor_to_major, tiles) guesses, the likeliest first: the order of the modes' most
    significant strides with the natural tile chain, then every single tile whose dims are
    digit prefixes, then the other orders."""
    modes = layout.modes() if isinstance(layout.shape, tuple) else (layout,)
    pieces = [_pieces(m) for m in modes]
    sizes = [m.size() for m in modes]
    top_stride = [p[-1][1] for p in pieces]
    # size-1 modes go most major: they hold no data, and tiles apply to the minor-most dims
    best = tuple(sorted(range(len(modes)), key=lambda k: (sizes[k] == 1, top_stride[k], k)))
    orders = [best] + [o for o in itertools.permutations(range(len(modes))) if o != best][:23]
    out: list[tuple[tuple[int, ...], tuple[Tile, ...]]] = []
    for m2m in orders:
        phys = list(reversed(m2m))
        tiles = _natural_tiles(pieces, phys)
        out.append((m2m, tuple(tiles)))
        out.append((m2m, (Tile(tuple(sizes[k] for k in phys)),) + tuple(tiles)))
        if m2m == best and len(phys) >= 2:  # a (p,1) sub-tile that reorders inside the tile
            for p in sorted({s for s, _ in pieces[phys[-2]]} | {2, 4, 8}):
                out.append((m2m, tuple(tiles) + (Tile((p, 1)),)))
        if m2m == best:
            out += _prefix_chains(pieces, phys, deep=layout.size() <= 1 << 16)
    return out


def _prefix_chains(pieces: list[list[tuple[int, int]]], phys: list[int],
                   deep: bool) -> list[tuple[tuple[int, ...], tuple[Tile, ...]]]:
    """Single tiles, and (when ``deep``) two-tile chains, whose dims are digit prefixes."""
    m2m = tuple(reversed(phys))
    prefixes = []
    for k in phys:
        acc, opts = 1, [1]
        for s, _ in pieces[k]:
            acc *= s
            opts.append(acc)
        prefixes.append(opts)
    out = []
    for first in itertools.islice(itertools.product(*prefixes), 512):
        out.append((m2m, (Tile(tuple(first)),)))
    if deep:
        for first in itertools.islice(itertools.product(*prefixes), 256):
            inner = [[q for q in opts if f % q == 0 and q <= f] for opts, f in zip(prefixes, first)]
            for second in itertools.islice(itertools.product(*inner), 64):
                if second != first:
                    out.append((m2m, (Tile(tuple(first)), Tile(tuple(second)))))
    return out


def cute_to_xla(layout: Any, element: str = "f32", dims: tuple[int, ...] | None = None) -> Shape:
    """An XLA shape whose layout places every element where ``layout`` does.

    ``dims`` are the logical (unpadded) dims, default the mode sizes (a TLA layout gives its
    origin shape). Raises :class:`UnsupportedError` saying why when no XLA layout exists.
    The search tries the natural tile chain of the layout's digits, single tiles of every digit
    prefix, ``(p,1)`` sub-tiles and other dim orders; a layout whose tiles are wider than the
    dims they tile (padding-only digits) can be missed, and is then reported as unsupported.
    """
    lay, origin = _as_cute(layout)
    modes = lay.modes() if isinstance(lay.shape, tuple) else (lay,)
    sizes = tuple(m.size() for m in modes)
    logical = tuple(dims) if dims is not None else (origin if origin is not None else sizes)
    if len(logical) != len(modes):
        raise LayoutError(f"dims {logical} do not match the rank {len(modes)} of {lay}")
    et = element_type(element)
    profile = tuple(1 for _ in modes)
    canonical = cute.coalesce(lay, profile)
    want = lay.offsets() if lay.size() <= _ENUMERATE_MAX else None
    for m2m, tiles in _candidates(lay):
        try:
            shape = Shape(et, logical, (False,) * len(logical), XlaLayout(m2m, tiles))
            got = xla_to_cute(shape)
        except TensorLayoutError:
            continue
        got_modes = got.modes() if isinstance(got.shape, tuple) else (got,)
        if tuple(m.size() for m in got_modes) != sizes:
            continue
        # the same mode by mode after coalescing is the same function; otherwise compare offsets
        if cute.coalesce(got, profile) == canonical or (
                want is not None and np.array_equal(got.offsets(), want)):
            return shape
    raise UnsupportedError(f"{lay} has no XLA layout: {_why_not_xla(lay)}")


def tla_to_xla(tag: str, rows: int, cols: int, dtype: str = "f16") -> Shape:
    """A TLA format (``zZ``, ``nN``, ``RowMajor`` …) in XLA notation, or why it cannot be written so.

    zN (row-major fractals arranged column-major) needs a transposing ``(16,1)`` sub-tile:

    >>> str(tla_to_xla("zZ", 40, 72, "f16")), str(tla_to_xla("zN", 40, 72, "f16"))
    ('f16[40,72]{1,0:T(16,16)}', 'f16[40,72]{0,1:T(16,16)(16,1)}')
    """
    from tensorlayout.cute import tla
    t = tla.make_format(tag, rows, cols, dtype)
    bits = tla.element_bits(dtype)
    name = dtype if isinstance(dtype, str) and not dtype.isdigit() and dtype.lower() not in (
        "half", "float") else {4: "s4", 8: "s8", 16: "f16", 32: "f32"}.get(bits, "f32")
    try:
        return cute_to_xla(t, name if name in _xla_names() else "f16")
    except UnsupportedError as err:
        raise UnsupportedError(f"TLA {tag} {rows}x{cols}: {err}") from None


def _xla_names() -> set[str]:
    from tensorlayout.xla import ELEMENT_TYPES
    return set(ELEMENT_TYPES)


# ---------------------------------------------------------------- indexing maps


def to_indexing_map(x: Any, *, simplify: bool = True) -> Any:
    """Logical index → physical element offset as an :class:`~tensorlayout.indexing.IndexingMap`.

    Accepts an XLA shape (text or :class:`Shape`), a CuTe layout (text or value) or a TLA layout
    (whose domain is the origin shape). The map is simplified unless ``simplify=False``.
    """
    from tensorlayout.indexing import IndexingMap, const, var
    if isinstance(x, str) and ("[" in x or x.strip().startswith(("token", "opaque"))):
        x = parse_shape(x)
    if isinstance(x, Shape):
        shape = _as_shape(x)
        plan = tiling_plan(shape)
        cur = [var(d) for d in plan.physical_order]
        for step in plan.steps:
            cur = [const(0)] * (len(step.input_dims) - len(cur)) + cur
            merged = []
            for group in step.groups:
                e = const(0)
                for i in group:
                    e = e * step.input_dims[i] + cur[i]
                merged.append(e)
            untiled, sizes = _tiled_part(step)
            tiled = merged[untiled:]
            cur = merged[:untiled] + [e // t for e, t in zip(tiled, sizes)] + \
                [e % t for e, t in zip(tiled, sizes)]
        offset = const(0)
        acc = 1
        for e, n in zip(reversed(cur), reversed(plan.tiled_dims)):
            offset = offset + e * acc
            acc *= n
        bounds = [(0, n - 1) for n in shape.dimensions]
        m = IndexingMap([offset], bounds)
    else:
        lay, origin = _as_cute(x)
        modes = lay.modes() if isinstance(lay.shape, tuple) else (lay,)
        offset = const(0)
        for k, mode in enumerate(modes):
            flat = mode.flat_modes()
            prefix = 1
            for j, (s, d) in enumerate(flat):
                digit = var(k) // prefix if prefix > 1 else var(k)
                if j < len(flat) - 1:
                    digit = digit % s
                offset = offset + digit * d
                prefix *= s
        extents = origin if origin is not None else tuple(m.size() for m in modes)
        m = IndexingMap([offset], [(0, n - 1) for n in extents])
    return m.simplify() if simplify else m
