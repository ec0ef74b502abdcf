"""What a picture needs from a layout, computed for the drawn part only.

A :class:`Source` answers, without listing every element of the layout: the offsets of given
logical indices, the logical owner of each of the first ``n`` physical slots (or padding),
and how indices split into tile and in-tile coordinates. So a ``bf16[65536,65536]`` layout
draws as fast as a small one. Three backends make one:

* a CuTe layout (also TLA formats, and every XLA layout :func:`~tensorlayout.convert.xla_to_cute`
  can write as one): offsets digit by digit, owners by enumerating only the digit values
  that land in the first ``n`` slots;
* XLA layouts without a CuTe form (combined dims ``*``, uneven re-tiles): all offsets when
  the array is small, else ``linear_index``/``multi_index`` per drawn cell and slot;
* any :class:`~tensorlayout.relayout.PhysicalTarget`: its offsets array (so its size is capped).

>>> src = source_of("f32[3,5]{1,0:T(2,2)}")
>>> src.offsets(np.array([[2, 3]])).tolist(), src.owners(6).tolist(), src.split
([17], [0, 1, 5, 6, 2, 3], (2, 2))
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensorlayout import convert, cute
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.relayout import PhysicalTarget, as_target
from tensorlayout.xla import Shape, linear_index, multi_index
from tensorlayout.xla.layout import COMBINE_DIMENSION

__all__ = ["MAX_ENUMERATED", "Source", "source_of"]

MAX_ENUMERATED = 1 << 24  # a PhysicalTarget's offsets are listed in full: at most this many
_SMALL = 1 << 20  # XLA layouts without a CuTe form list all offsets up to this size
_LIMIT = 1 << 62  # offsets and element counts must fit int64 with room to add


@dataclass(frozen=True)
class Source:
    """The questions a picture asks of a layout (see the module doc).

    ``offsets(idx)``: offsets of logical indices ``idx`` (an int64 array ``(k, rank)``);
    ``owners(n)``: for slots ``0 … n-1``, the C-order flat logical index stored there, -1
    for padding; ``split``: per logical dim, the tile extent (tile coordinate ``i // t``,
    in-tile coordinate ``i % t``), None without tiles; ``tile_elements``: slots per tile when
    every tile is one contiguous run (tile ``offset // tile_elements``); ``tile_ids``: an
    explicit tile per logical element (C order); ``subtile_elements``: slots per innermost
    sub-tile (red boxes); ``notes``: caption lines.
    """

    name: str
    shape: tuple[int, ...]
    slots: int
    offsets: Callable[[np.ndarray], np.ndarray]
    owners: Callable[[int], np.ndarray]
    split: tuple[int, ...] | None = None
    tile_elements: int | None = None
    tile_ids: np.ndarray | None = None
    subtile_elements: int | None = None
    notes: tuple[str, ...] = ()


def source_of(obj: object) -> Source:
    """The :class:`Source` for an XLA shape (or its text), a CuTe or TLA layout (or CuTe text),
    or anything :func:`~tensorlayout.relayout.as_target` accepts."""
    if isinstance(obj, str):
        obj = convert.parse_target(obj)
    if isinstance(obj, Shape):
        return _xla_source(obj)
    if isinstance(obj, TlaLayout):
        return _cute_source(obj.layout, tuple(int(n) for n in obj.origin_shape), str(obj))
    if isinstance(obj, cute.Layout):
        return _cute_source(obj, tuple(int(m.size()) for m in obj.modes()), str(obj))
    if isinstance(obj, PhysicalTarget):
        return _enumerated_source(obj)
    return _enumerated_source(as_target(obj))


def _c_strides(shape: tuple[int, ...]) -> np.ndarray:
    out = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        out[k] = out[k + 1] * shape[k + 1]
    return np.array(out, dtype=np.int64)


def _check_size(name: str, shape: tuple[int, ...], slots: int) -> None:
    elements = 1
    for n in shape:
        elements *= n
    if elements >= _LIMIT or slots >= _LIMIT:
        raise UnsupportedError(f"{name} has {elements} elements in {slots} slots; pictures need "
                               f"both below 2^62")


# ---------------------------------------------------------------- CuTe layouts


def _cute_source(lay: cute.Layout, logical: tuple[int, ...], name: str, *,
                 split: tuple[int, ...] | None = None, tile_elements: int | None = None,
                 subtile: int | None = None, slots: int | None = None) -> Source:
    """A CuTe layout over ``logical`` (its origin shape, or the mode sizes); ``split`` and
    ``tile_elements`` default to the layout's own digits (inner digits = the tile)."""
    modes = lay.modes()
    # per mode: (size, stride, multiplier) of each digit, least significant first
    pieces = []
    for mode in modes:
        mult, ps = 1, []
        for s, d in mode.flat_modes():
            if int(d) < 0:
                raise UnsupportedError(f"{name} has a negative stride; a picture needs offsets >= 0")
            if s != 1:
                ps.append((int(s), int(d), mult))
            mult *= int(s)
        pieces.append(ps)
    cosize = 1 + sum((s - 1) * d for ps in pieces for s, d, _ in ps)
    if slots is None:
        slots = cosize if all(n > 0 for n in logical) else 0
    _check_size(name, logical, max(slots, cosize))
    notes = []
    if any(d == 0 for ps in pieces for _, d, _ in ps):
        notes.append("stride-0 (broadcast) modes: several cells share one slot")
    if split is None and tile_elements is None:
        split, tile_elements = _cute_tiles(pieces)

    def offsets(idx: np.ndarray) -> np.ndarray:
        out = np.zeros(len(idx), dtype=np.int64)
        for k, ps in enumerate(pieces):
            for j, (s, d, mult) in enumerate(ps):
                digit = idx[:, k] // mult
                out += (digit if j == len(ps) - 1 else digit % s) * d
        return out

    cstrides = _c_strides(logical)

    def owners(n: int) -> np.ndarray:
        flat, off = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        for k, ps in enumerate(pieces):
            xs, cs = _mode_values(ps, logical[k], n)
            flat = (flat[:, None] + xs[None, :] * cstrides[k]).ravel()
            off = (off[:, None] + cs[None, :]).ravel()
            keep = off < n
            flat, off = _first_per_offset(flat[keep], off[keep])
        out = np.full(n, -1, dtype=np.int64)
        if all(m > 0 for m in logical):
            out[off] = flat
        return out

    return Source(name, logical, slots, offsets, owners, split, tile_elements, None, subtile,
                  tuple(notes))


def _mode_values(ps: list[tuple[int, int, int]], extent: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates ``x < extent`` of one mode whose offset contribution is below ``n``
    (one per contribution: the smallest ``x``), and the contributions."""
    xs, cs = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    for s, d, mult in ps:
        count = 1 if d == 0 else min(s, (n - 1) // d + 1)  # stride 0: one representative
        vals = np.arange(max(count, 0), dtype=np.int64)
        xs = (xs[:, None] + vals[None, :] * mult).ravel()
        cs = (cs[:, None] + vals[None, :] * d).ravel()
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


def _cute_tiles(pieces: list[list[tuple[int, int, int]]]) -> tuple[tuple[int, ...] | None, int | None]:
    """A mode with several digits is tiled: all but its top digit form the tile. The tiles are
    contiguous runs when the inner digits, sorted by stride, are compact."""
    split = tuple(ps[-1][2] if len(ps) > 1 else 1 for ps in pieces)
    if all(t == 1 for t in split):
        return None, None
    inner = sorted((d, s) for ps in pieces for s, d, _ in ps[:-1])
    acc = 1
    for d, s in inner:
        if d != acc:
            return split, None
        acc *= s
    return split, acc


# ---------------------------------------------------------------- XLA shapes


def _xla_split(shape: Shape) -> tuple[int, ...] | None:
    """Per logical dim, the size of the first tile along it (tiles cover the minor-most dims)."""
    assert shape.layout is not None
    if not shape.layout.tiles or COMBINE_DIMENSION in shape.layout.tiles[0].dims:
        return None
    split = [1] * shape.rank
    for t, d in zip(reversed(shape.layout.tiles[0].dims), reversed(shape.layout.major_to_minor)):
        split[d] = t
    return tuple(split) if any(t > 1 for t in split) else None


def _xla_source(shape: Shape) -> Source:
    target = PhysicalTarget.from_xla(shape)  # validates; slots, tile sizes and name, lazily
    name, split = target.name, _xla_split(shape)
    _check_size(name, tuple(shape.dimensions), target.physical_elements)
    try:
        lay = convert.xla_to_cute(shape)
    except UnsupportedError:
        lay = None
    if lay is not None:
        return _cute_source(lay, tuple(shape.dimensions), name, split=split,
                            tile_elements=target.tile_elements, subtile=target.subtile_elements,
                            slots=target.physical_elements)
    if target.size <= _SMALL:
        return _enumerated_source(target, split=split)
    cstrides = _c_strides(tuple(shape.dimensions))

    def offsets(idx: np.ndarray) -> np.ndarray:
        return np.array([linear_index(shape, tuple(int(i) for i in row)) for row in idx], dtype=np.int64)

    def owners(n: int) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int64)
        for k in range(n):
            with contextlib.suppress(LayoutError):  # a padding slot stays -1
                out[k] = int(np.dot(multi_index(shape, k), cstrides)) if shape.rank else 0
        return out

    return Source(name, tuple(shape.dimensions), target.physical_elements, offsets, owners, split,
                  target.tile_elements, None, target.subtile_elements)


# ---------------------------------------------------------------- any PhysicalTarget


def _enumerated_source(target: PhysicalTarget, split: tuple[int, ...] | None = None) -> Source:
    if target.size > MAX_ENUMERATED:
        raise UnsupportedError(f"{target} has {target.size} elements; pictures of this kind of "
                               f"target list every offset, so they are drawn for at most "
                               f"{MAX_ENUMERATED} (take a smaller shape with the same layout)")
    all_offsets = target.offsets
    shape = tuple(target.logical_shape)
    if all_offsets.size and int(all_offsets.min()) < 0:
        raise UnsupportedError(f"{target} has negative offsets; a picture needs offsets >= 0")

    def offsets(idx: np.ndarray) -> np.ndarray:
        if not shape:
            return all_offsets[:len(idx)].copy() if len(idx) else np.zeros(0, dtype=np.int64)
        return all_offsets[np.ravel_multi_index(tuple(idx.T), shape)]

    def owners(n: int) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int64)
        keep = all_offsets < n
        out[all_offsets[keep][::-1]] = np.flatnonzero(keep)[::-1]  # the first owner wins
        return out

    return Source(target.name or str(target), shape, target.physical_elements, offsets, owners,
                  split, target.tile_elements, target.tile_ids, target.subtile_elements)
