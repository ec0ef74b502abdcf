"""Scaled-basis layouts and counting tensors (CuTe's coordinate-valued layouts) as pictures: each
element's coordinate, flattened column-major over the coordinates' extent, is its slot, so the grid
shows where every element points and the strip which element (if any) each coordinate holds; for a
thread's partition, the coordinates the thread owns.

>>> from tensorlayout.cute import parse_layout
>>> t = coord_target(parse_layout("ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)"))
>>> t.logical_shape, t.physical_elements, t.offsets.tolist()
((4, 1, 1), 72, [54, 63, 62, 71])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorlayout import cute
from tensorlayout.errors import UnsupportedError

if TYPE_CHECKING:  # at run time CuTe's names load from `cute` when a coordinate layout comes
    from tensorlayout.cute import CoordLayout, CountingTensor

__all__ = ["MAX_COORDS", "CoordOffsets", "coord_target"]

MAX_COORDS = 1 << 16  # coordinates are evaluated one by one


@dataclass(frozen=True)
class CoordOffsets:
    """A coordinate layout as listed offsets (the picture source's ``Listed`` form): every
    element's slot, over ``physical_elements`` slots; no tiles."""

    logical_shape: tuple[int, ...]
    offsets: np.ndarray = field(compare=False)
    physical_elements: int
    name: str
    tile_elements: None = None
    tile_ids: None = None
    subtile_elements: None = None


def _leaves(v: Any) -> list[int]:
    v = cute.basis.as_arithmetic_tuple(v)  # `cute.basis` is loaded: a coordinate layout exists
    return [x for y in v for x in _leaves(y)] if isinstance(v, tuple) else [int(v)]


def coord_target(obj: CoordLayout | CountingTensor) -> CoordOffsets:
    """The listed offsets of a coordinate layout: slot = column-major index of the coordinate."""
    lay = obj.layout if isinstance(obj, cute.CountingTensor) else obj
    n = int(lay.size())
    if n > MAX_COORDS:
        raise UnsupportedError(f"{obj} has {n} elements; pictures of coordinates list them all "
                               f"(at most {MAX_COORDS})")
    coords = [_leaves(obj(i)) for i in range(n)]
    rank = max((len(c) for c in coords), default=0)
    table = np.array([c + [0] * (rank - len(c)) for c in coords], dtype=np.int64).reshape(n, rank)
    if table.size and int(table.min()) < 0:
        raise UnsupportedError(f"{obj} has negative coordinates; a picture needs them >= 0")
    extent = table.max(axis=0) + 1 if n else np.ones(rank, dtype=np.int64)
    weights = np.cumprod(np.concatenate([[1], extent[:-1]])).astype(np.int64)
    dims = tuple(int(cute.size(m)) for m in lay.shape) if isinstance(lay.shape, tuple) else (n,)
    # the logical grid is C order over the top-level modes; CuTe's index i is column-major
    order = np.arange(n).reshape(dims[::-1]).T.ravel() if dims else np.arange(n)
    offsets = (table @ weights)[order] if rank else np.zeros(n, dtype=np.int64)
    name = f"{obj} (slots: coordinates in {cute.basis.format_value(tuple(extent.tolist()))})"
    offsets.flags.writeable = False
    return CoordOffsets(dims, offsets, int(np.prod(extent)), name)
