"""Global-memory coalescing of a thread-value layout: the widest vector each thread can load or store,
and the 32-byte sectors each warp request touches.

A layout gives every (thread, value) an element of the tile; a global layout gives every element its
offset. One instruction moves, for each thread of a warp (32 consecutive threads), ``vector``
consecutive values; those must sit at consecutive offsets aligned to the vector (at most 16 bytes,
``ld.global.v4.b32``), so the vector is the widest width every group of values keeps. A request then
touches the distinct 32-byte sectors of its bytes (the base address taken 128-byte aligned).

>>> from tensorlayout.cute import Layout
>>> from tensorlayout.gpu import TVLayout
>>> tv = TVLayout(Layout(((8, 4), 8), ((8, 64), 1)), (64, 4))   # thread t: 8 values of one row
>>> rep = coalescing(tv, Layout((64, 4), (1, 64)), 16)          # column-major 64x4 halfs
>>> rep.vector, rep.sectors_per_request, rep.ideal_sectors
(8, (16, 16), 16)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tensorlayout.cute import Layout, make_layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.tiled import TiledCopy
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.triton import LinearLayout

__all__ = ["Coalescing", "coalescing", "offsets_table"]

WARP, SECTOR, MAX_VECTOR_BYTES = 32, 32, 16


@dataclass(frozen=True)
class Coalescing:
    """Per warp: ``requests`` instructions of ``vector`` elements per thread; sectors per request
    (min, max), the fewest sectors the same bytes could take, and bytes used per byte moved."""

    element_bits: int
    vector: int
    requests: int
    sectors_per_request: tuple[int, int]
    ideal_sectors: int
    efficiency: float

    @property
    def vector_bytes(self) -> int:
        return self.vector * self.element_bits // 8

    def __str__(self) -> str:
        lo, hi = self.sectors_per_request
        sectors = str(lo) if lo == hi else f"{lo}-{hi}"
        return (f"vector: {self.vector} elements ({self.vector_bytes} bytes) per thread; "
                f"{self.requests} request(s) per warp, {sectors} sectors of 32 bytes each "
                f"(at best {self.ideal_sectors}); {self.efficiency:.0%} of the bytes moved are used")


def offsets_table(layout: TVLayout | TiledCopy | LinearLayout,
                  global_layout: Layout | None = None) -> np.ndarray:
    """``table[t, v]``: the global element offset of thread ``t``'s value ``v``.

    A TVLayout (a TiledCopy: its source side) indexes the tile column-major, as ``global_layout``'s
    1-D index does; a Triton distributed layout (threads ``lane + 32·warp``, values its registers)
    gives tensor coordinates, row-major by default.
    """
    if isinstance(layout, TiledCopy):
        layout = layout.tv_s()
    if isinstance(layout, TVLayout):
        glay = global_layout if global_layout is not None else make_layout(layout.tile)
        _check_global(glay, layout.tile[0] * layout.tile[1])
        return np.asarray(glay.offsets(), dtype=np.int64)[layout.table()]
    if isinstance(layout, LinearLayout):
        return _ll_table(layout, global_layout)
    raise LayoutError(f"coalescing takes a TVLayout, a TiledCopy or a Triton LinearLayout, got "
                      f"{type(layout).__name__}")


def _check_global(glay: Any, size: int) -> None:
    if not isinstance(glay, Layout):
        raise LayoutError(f"the global layout is a Layout, got {type(glay).__name__}")
    if int(glay.size()) < size:
        raise LayoutError(f"the global layout {glay} has {glay.size()} elements; the tile has {size}")


def _dim_table(ll: LinearLayout, in_dim: str) -> np.ndarray:
    """``table[x, d]``: out coordinate ``d`` of in-dim value ``x`` (XOR of the bases of its bits)."""
    outs = len(ll.out_dims)
    table = np.zeros((1, outs), dtype=np.int64)
    if ll.has_in_dim(in_dim):
        for i in range(ll.get_in_dim_size_log2(in_dim)):
            basis = np.array([ll.get_basis(in_dim, i, name) for name, _s in ll.out_dims], dtype=np.int64)
            table = np.concatenate([table, table ^ basis])
    return table


def _ll_table(ll: LinearLayout, global_layout: Layout | None) -> np.ndarray:
    names = set(ll.get_in_dim_names())
    if not names <= {"register", "lane", "warp", "block"}:
        raise LayoutError(f"a distributed layout has in dims register/lane/warp/block, got {sorted(names)}")
    reg, lane, warp = (_dim_table(ll, d) for d in ("register", "lane", "warp"))
    if len(lane) > WARP:
        raise LayoutError(f"a warp has {WARP} lanes; this layout has {len(lane)}")
    crd = (reg[None, None, :, :] ^ lane[None, :, None, :] ^ warp[:, None, None, :])  # (warp, lane, reg, dim)
    crd = crd.reshape(len(warp) * len(lane), len(reg), -1)
    sizes = [s for _n, s in ll.out_dims]
    glay = global_layout if global_layout is not None else Layout(
        tuple(sizes), tuple(int(np.prod(sizes[k + 1:])) for k in range(len(sizes))))
    _check_global(glay, int(np.prod(sizes)))
    if glay.rank() != len(sizes):
        raise LayoutError(f"the global layout {glay} has rank {glay.rank()}; the tensor has "
                          f"{len(sizes)} dims")
    offs = np.zeros(crd.shape[:2], dtype=np.int64)
    for k, mode in enumerate(glay.modes()):
        offs += np.asarray(mode.offsets(), dtype=np.int64)[crd[:, :, k]]
    return offs


def _vector(table: np.ndarray, max_vector: int) -> int:
    """The widest power-of-two width every group of consecutive values keeps contiguous and aligned."""
    width = 1
    values = table.shape[1]
    while width * 2 <= max_vector and values % (width * 2) == 0:
        w = width * 2
        groups = table.reshape(table.shape[0], values // w, w)
        if not ((groups == groups[:, :, :1] + np.arange(w)).all() and (groups[:, :, 0] % w == 0).all()):
            break
        width = w
    return width


def coalescing(layout: TVLayout | TiledCopy | LinearLayout, global_layout: Layout | None,
               element_bits: int) -> Coalescing:
    """The vector width and the sectors per warp request of ``layout`` over ``global_layout``
    (see :func:`offsets_table`), for elements of ``element_bits`` bits (8, 16, 32 or 64)."""
    if element_bits not in (8, 16, 32, 64):
        raise LayoutError(f"element_bits is 8, 16, 32 or 64, got {element_bits!r}")
    table = offsets_table(layout, global_layout)
    if table.size == 0:
        raise LayoutError("the layout has no elements")
    nbytes = element_bits // 8
    vec = _vector(table, MAX_VECTOR_BYTES // nbytes)
    threads, values = table.shape
    pad = -threads % WARP  # a last partial warp is a warp of fewer lanes
    warps = (threads + pad) // WARP
    counts, ideal, used = [], 0, 0
    for w in range(warps):
        rows = table[w * WARP:min((w + 1) * WARP, threads)]
        for g in range(values // vec):
            chunk = rows[:, g * vec:(g + 1) * vec]
            byte = (chunk[..., None] * nbytes + np.arange(nbytes)).ravel()
            distinct = np.unique(byte)
            counts.append(len(np.unique(distinct // SECTOR)))
            ideal = max(ideal, -(-len(distinct) // SECTOR))
            used += len(distinct)
    moved = sum(counts) * SECTOR
    return Coalescing(element_bits, vec, values // vec, (min(counts), max(counts)), ideal,
                      used / moved if moved else 1.0)
