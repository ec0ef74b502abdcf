"""Pictures of Triton linear layouts.

A distributed layout (in dims ``register``, ``lane``, ``warp``, ``block``) draws as the tensor
with each element labelled by the thread that holds it (``T#``, thread = lane + lanes·warp,
as Triton's ``get_distributed_view`` numbers them) and the register (``R#``), coloured by
thread; the first holder is shown where several hold it. A shared layout (in dims ``offset``,
``block``) draws as a layout picture: each element's offset and the memory strip.

>>> from tensorlayout.triton import BlockedLayout
>>> ll = BlockedLayout([1, 2], [4, 8], [1, 1], [1, 0]).to_linear_layout([4, 16])
>>> svg = linear_layout_svg(ll)
>>> svg.count('class="cell"'), '>T9<' in svg
(64, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.render._cells import CELL, TITLE, document, owner_panel
from tensorlayout.render._draw import picture, svg
from tensorlayout.render._extent import Window, extent, window_text
from tensorlayout.render._source import Source
from tensorlayout.triton import LinearLayout

__all__ = ["DISTRIBUTED", "SHARED", "distributed_owners", "is_distributed", "is_shared", "linear_layout_svg",
           "shared_source"]

DISTRIBUTED = ("register", "lane", "warp", "block")
SHARED = ("offset", "block")


def _points(ll: LinearLayout, in_dims: Sequence[str]) -> np.ndarray:
    """The out index (out dims flattened, the first fastest) of every input point, the points
    numbered with the first in dim fastest."""
    flat = np.zeros(1, dtype=np.int64)
    for name in in_dims:
        for basis in ll.flattened_bases(name) if ll.has_in_dim(name) else ():
            flat = np.concatenate([flat, flat ^ basis])
    return flat


def _c_order(flat: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Out indices with the first dim fastest, renumbered in C order (the last dim fastest)."""
    coords = np.unravel_index(flat, sizes, order="F")
    return np.ravel_multi_index(coords, sizes) if sizes else np.zeros_like(flat)


def _grid_shape(sizes: list[int]) -> tuple[int, int]:
    """The tensor as rows x columns: the last dim across, all others down."""
    if not sizes:
        return 1, 1
    return int(np.prod(sizes[:-1], dtype=np.int64)), sizes[-1]


def _size(ll: LinearLayout, name: str) -> int:
    return ll.get_in_dim_size(name) if ll.has_in_dim(name) else 1


def is_distributed(ll: LinearLayout) -> bool:
    """In dims among register/lane/warp/block (at least one)."""
    ins = set(ll.get_in_dim_names())
    return bool(ins) and ins <= set(DISTRIBUTED)


def is_shared(ll: LinearLayout) -> bool:
    """In dims offset (and maybe block)."""
    ins = set(ll.get_in_dim_names())
    return "offset" in ins and ins <= set(SHARED)


def _check_drawable(ll: LinearLayout) -> None:
    if not isinstance(ll, LinearLayout):
        raise LayoutError(f"a linear-layout picture draws a LinearLayout, got {type(ll).__name__}")
    if ll.get_total_in_dim_size() > 1 << 20 or ll.get_total_out_dim_size() > 1 << 20:
        raise UnsupportedError("the layout is too large to draw (over 2^20 points)")
    if not (is_distributed(ll) or is_shared(ll)):
        raise UnsupportedError(f"a picture needs a distributed layout (in dims among {list(DISTRIBUTED)}) "
                               f"or a shared one (in dims 'offset' and maybe 'block'); this one has "
                               f"{ll.get_in_dim_names()}")


def distributed_owners(ll: LinearLayout) -> tuple[np.ndarray, np.ndarray]:
    """``(thread, register)`` of the first holder of each element (Triton's order: block, warp,
    lane, register), as rows x columns arrays (-1 where nobody holds it)."""
    _check_drawable(ll)
    sizes = ll.get_out_dim_sizes()
    rows, cols = _grid_shape(sizes)
    elem = _c_order(_points(ll, DISTRIBUTED), sizes)
    regs = _size(ll, "register")
    # point = register + regs * thread: the first holder is the smallest point
    first = np.full(rows * cols, -1, dtype=np.int64)
    first[elem[::-1]] = np.arange(elem.size, dtype=np.int64)[::-1]
    held = first >= 0
    return (np.where(held, first // regs, -1).reshape(rows, cols),
            np.where(held, first % regs, -1).reshape(rows, cols))


def _distributed(ll: LinearLayout, title: str, window: Sequence[range] | None) -> str:
    sizes = ll.get_out_dim_sizes()
    thr, val = distributed_owners(ll)
    rows, cols = thr.shape
    ms, ns = _window((rows, cols), window)
    regs, lanes = _size(ll, "register"), _size(ll, "lane")
    body = owner_panel((thr, val), CELL, TITLE + CELL, ms, ns, value="R", lanes=lanes)
    head = title or (f"distributed linear layout [{','.join(map(str, sizes))}]: {regs} registers, "
                     f"{lanes} lanes, {_size(ll, 'warp')} warps, {_size(ll, 'block')} blocks")
    legend = (f"cells: T# thread (lane + {lanes} * warp), R# register, coloured by thread; thick lines: "
              "warps; numbers along the edges: row and column (rows: all dims but the last)",)
    return document((len(ns) + 2) * CELL, (len(ms) + 2) * CELL + TITLE,
                    head + _note((rows, cols), (ms, ns)), body, legend)


def _window(tile: tuple[int, int], window: Sequence[range] | None) -> Window:
    """The drawn rows and columns: ``window`` (default all), capped at 64 of each as XLA
    pictures are (:func:`~tensorlayout.render._extent.extent`)."""
    ext = extent(tile, None, window)
    first = ext.lead[0].start
    return range(first, first + ext.rows), ext.cols


def _note(tile: tuple[int, int], win: Window) -> str:
    if (len(win[0]), len(win[1])) == tile:
        return ""
    return f" window {window_text(win)} of {tile[0]}x{tile[1]} (--window picks another part)"


def shared_source(ll: LinearLayout, name: str = "") -> Source:
    """A picture :class:`~tensorlayout.render.Source` of a shared layout: element -> offset
    (the lowest offset holding it; offsets of block ``b`` follow those of block ``b - 1``)."""
    _check_drawable(ll)
    if not is_shared(ll):
        raise UnsupportedError(f"a shared layout has in dims 'offset' (and maybe 'block'); this one has "
                               f"{ll.get_in_dim_names()}")
    sizes = ll.get_out_dim_sizes()
    elem = _c_order(_points(ll, SHARED), sizes)
    total = int(np.prod(sizes, dtype=np.int64)) if sizes else 1
    where = np.full(total, -1, dtype=np.int64)
    where[elem[::-1]] = np.arange(elem.size, dtype=np.int64)[::-1]  # the first offset wins
    shape = tuple(sizes)

    def offsets(idx: np.ndarray) -> np.ndarray:
        return where[np.ravel_multi_index(tuple(idx.T), shape)] if shape else where[:len(idx)].copy()

    def owners(n: int) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int64)
        k = min(n, elem.size)
        out[:k] = elem[:k]
        return out

    return Source(name or f"shared linear layout [{','.join(map(str, sizes))}]", shape, int(elem.size),
                  offsets, owners)


def linear_layout_svg(ll: LinearLayout, title: str = "", window: Sequence[range] | None = None) -> str:
    """A picture of a Triton linear layout (see the module doc); ``window``: two ranges over
    the tensor viewed as rows x columns (a shared layout: one range per out dim)."""
    _check_drawable(ll)
    if is_shared(ll):
        return svg(picture(shared_source(ll, title), window=window))
    return _distributed(ll, title, window)
