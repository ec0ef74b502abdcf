"""What a picture needs from a layout, computed for the drawn part only.

A :class:`Source` answers, without listing every element of the layout: the offsets of given
logical indices, the logical owner of each of the first ``n`` physical slots (or padding),
and how indices split into tile and in-tile coordinates. So a ``bf16[65536,65536]`` layout
draws as fast as a small one. Every notation reaches it through the one dispatch
(:func:`tensorlayout.lowering.lower`) as a :class:`~tensorlayout.core.layout.CoreLayout`,
which answers all three questions; only a layout given as explicit offsets (a
:class:`Listed` one: coordinates, a relayout target built from offsets) is listed in full
(so its size is capped).

>>> src = source_of("f32[3,5]{1,0:T(2,2)}")
>>> src.offsets(np.array([[2, 3]])).tolist(), src.owners(6).tolist(), src.split
([17], [0, 1, 5, 6, 2, 3], (2, 2))
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from tensorlayout.core.intmath import prod, show_int
from tensorlayout.core.layout import CoreLayout
from tensorlayout.errors import UnsupportedError
from tensorlayout.lowering import lower, lowers, parse_xla_or_cute
from tensorlayout.render._coords import coord_target

__all__ = ["MAX_ENUMERATED", "Listed", "Source", "source_of"]

MAX_ENUMERATED = 1 << 24  # a layout given as explicit offsets is listed in full: at most this many
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


@runtime_checkable
class Listed(Protocol):
    """A layout given by the offset of every logical element (C order), as a relayout
    ``PhysicalTarget`` built from offsets is; read by its attributes, so pictures need not
    import relayout."""

    @property
    def logical_shape(self) -> tuple[int, ...]: ...
    @property
    def offsets(self) -> np.ndarray: ...
    @property
    def physical_elements(self) -> int: ...
    @property
    def tile_elements(self) -> int | None: ...
    @property
    def tile_ids(self) -> np.ndarray | None: ...
    @property
    def subtile_elements(self) -> int | None: ...
    @property
    def name(self) -> str: ...


def source_of(obj: object) -> Source:
    """The :class:`Source` for anything :func:`~tensorlayout.lowering.lower` takes (XLA shape
    or CuTe text included), a coordinate layout, or a relayout target (its core form, else its
    listed offsets)."""
    if isinstance(obj, str):
        obj = parse_xla_or_cute(obj)
    basis = sys.modules.get("tensorlayout.cute.basis")  # not loaded: no coordinate layout exists
    if basis is not None and isinstance(obj, (basis.CoordLayout, basis.CountingTensor)):
        return _enumerated_source(coord_target(obj))  # coordinates: slots of their extent
    if lowers(obj):
        return _core_source(lower(obj))
    to_target = getattr(obj, "to_physical_target", None)
    target = to_target() if callable(to_target) else obj
    core = getattr(target, "layout", None)  # a relayout target's core form (None: listed offsets)
    if core is not None and lowers(core):
        return _core_source(lower(core))
    if isinstance(target, Listed):
        return _enumerated_source(target)
    raise UnsupportedError(f"expected a layout (XLA, CuTe, TLA, Triton) or a relayout target, "
                           f"but got {type(obj).__name__}")


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
    slots = lay.slots if lay.elements else 0
    _check_size(name, lay.shape, max(slots, 1))
    notes = []
    if any(d.stride == 0 and d.extent > 1 for d in lay.digits):
        notes.append("stride-0 (broadcast) modes: several cells share one slot")
    split = lay.tile_split()
    tile_elements = lay.contiguous_tile()
    return Source(name, lay.shape, slots, lay.offsets_at, lay.owners, split,
                  tile_elements if split is not None or lay.tile_elements else None,
                  None, lay.subtile_elements, tuple(notes))


# ---------------------------------------------------------------- explicit offsets


def _enumerated_source(target: Listed, split: tuple[int, ...] | None = None) -> Source:
    elements = prod(target.logical_shape)
    if elements > MAX_ENUMERATED:
        raise UnsupportedError(f"{target} has {elements} elements; pictures of this kind of "
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
