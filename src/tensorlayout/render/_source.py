"""What a picture needs from a layout, computed for the drawn part only.

A :class:`Source` answers, without listing every element of the layout: the offsets of given
logical indices, the logical owner of each of the first ``n`` physical slots (or padding),
and how indices split into tile and in-tile coordinates. So a ``bf16[65536,65536]`` layout
draws as fast as a small one. Every notation reaches it through the layout core
(:class:`~tensorlayout.core.layout.CoreLayout`), which answers all three questions; only a
:class:`~tensorlayout.relayout.PhysicalTarget` built from explicit offsets is listed in full
(so its size is capped).

>>> src = source_of("f32[3,5]{1,0:T(2,2)}")
>>> src.offsets(np.array([[2, 3]])).tolist(), src.owners(6).tolist(), src.split
([17], [0, 1, 5, 6, 2, 3], (2, 2))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensorlayout import convert, cute
from tensorlayout.core.intmath import prod, show_int
from tensorlayout.core.layout import CoreLayout, Merge
from tensorlayout.cute.lowering import lower_layout
from tensorlayout.cute.swizzle import ComposedLayout
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import UnsupportedError
from tensorlayout.relayout import PhysicalTarget, as_target
from tensorlayout.render._coords import coord_target
from tensorlayout.xla import Shape
from tensorlayout.xla.lowering import lower_shape

__all__ = ["MAX_ENUMERATED", "Source", "source_of"]

MAX_ENUMERATED = 1 << 24  # a PhysicalTarget's offsets are listed in full: at most this many
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
        PhysicalTarget.from_xla(obj)  # the same checks relayout makes (array shape, packing)
        return _core_source(lower_shape(obj))
    if isinstance(obj, (cute.Layout, TlaLayout, ComposedLayout)):
        return _core_source(lower_layout(obj))
    if isinstance(obj, (cute.CoordLayout, cute.CountingTensor)):  # coordinates: slots of their extent
        return _enumerated_source(coord_target(obj))
    target = obj if isinstance(obj, PhysicalTarget) else as_target(obj)
    if target.layout is not None:
        return _core_source(target.layout)
    return _enumerated_source(target)


def _check_size(name: str, shape: tuple[int, ...], slots: int) -> None:
    elements = prod(shape)
    if elements >= _LIMIT or slots >= _LIMIT or any(n >= _LIMIT for n in shape):
        raise UnsupportedError(f"{name} has {show_int(elements)} elements in {show_int(slots)} slots "
                               f"(dims [{', '.join(map(show_int, shape))}]); "
                               "pictures need all of them below 2^62")


def _core_source(lay: CoreLayout) -> Source:
    """Offsets digit by digit; owners by enumerating only the digit values that land in the
    first ``n`` slots (or, for merged or swizzled layouts, by reading each slot back)."""
    name = lay.name or "layout"
    if any(d.stride < 0 for d in lay.digits if d.extent != 1):
        raise UnsupportedError(f"{name} has a negative stride; a picture needs offsets >= 0")
    if lay.base < 0:
        raise UnsupportedError(f"{name} has a negative offset ({show_int(lay.base)}); a picture needs "
                               "offsets >= 0")
    slots = lay.size if lay.elements else 0
    _check_size(name, lay.shape, max(slots, 1))
    notes = []
    if any(d.stride == 0 and d.extent > 1 for d in lay.digits):
        notes.append("stride-0 (broadcast) modes: several cells share one slot")
    split = _split(lay)
    tile_elements = lay.tile_elements if lay.tile_elements is not None else _contiguous_tile(lay)
    return Source(name, lay.shape, slots, lay.offsets_at, lay.owners, split,
                  tile_elements if split is not None or lay.tile_elements else None,
                  None, lay.subtile_elements, tuple(notes))


def _split(lay: CoreLayout) -> tuple[int, ...] | None:
    """Per logical dim the block of its top digit: a tile coordinate is ``i // block``."""
    split = [1] * lay.rank
    for d in lay.simple_digits():
        if isinstance(d.source, Merge):
            if len(d.source.parts) > 1:
                return None
        elif d.source >= 0 and d.extent != 1:
            split[d.source] = max(split[d.source], d.block)
    return tuple(split) if any(t > 1 for t in split) else None


def _contiguous_tile(lay: CoreLayout) -> int | None:
    """Slots per tile when the in-tile digits (all but each dim's top one), sorted by stride,
    are compact, so every tile is one contiguous run; else None."""
    both = lay.per_dim_digits()
    if both is None:
        return None
    inner = sorted((d.stride, d.extent) for ds in both[0] for d in ds[1:])
    acc = 1
    for stride, extent in inner:
        if stride != acc:
            return None
        acc *= extent
    return acc


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
