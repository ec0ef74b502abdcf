"""The TMA boxes of a shared-memory tile over its 2-D global tensor.

The grid is the global tensor (rows: global mode 0, columns: mode 1) around the CTA tile at
the origin. The copy's boxes (:func:`~tensorlayout.gpu.tma.make_tma_copy`) are outlined and
numbered in the order the copy issues them: box ``k`` holds the shared-memory indices
``[k·V, (k+1)·V)`` of the unswizzled tile, ``V`` elements a box. Every tile cell is a group
``<g class="cell">`` with ``data-m``/``data-n``, ``data-box`` and ``data-offset`` (its
shared-memory element offset after the TMA swizzle, which acts on byte addresses); box 0's
cells show that offset, so the swizzle is visible. Cells outside the tile are white, box -1.

>>> from tensorlayout.cute import Layout, parse_layout
>>> smem = parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_2),(_64,_2)):((_64,_512),(_1,_1024))")
>>> pic = tma_boxes_svg((Layout((16, 128), (128, 1)), "f16", smem))   # two 64x16 boxes, 128B swizzle
>>> pic.count('class="cell"'), pic.count('class="box-number"'), '>72</text>' in pic
(2048, 2, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorlayout.cute import ComposedLayout, Layout, Swizzle, size
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.tma import SWIZZLES, TmaCopy, make_tma_copy
from tensorlayout.render._draw import _borders_svg, color
from tensorlayout.render._extent import MAX_CELLS, MAX_SIDE
from tensorlayout.render._tv import CELL, TITLE, _window_note, _windowed, document

__all__ = ["tma_boxes", "tma_boxes_svg"]

#: CUtensorMapSwizzle name -> Swizzle on byte addresses (the inverse of tma.SWIZZLES)
_BYTE_SWIZZLES = {f"CU_TENSOR_MAP_SWIZZLE_{name}": Swizzle(*bms) for bms, name in SWIZZLES.items()}


def _inner(smem: Any) -> Layout:
    """The plain (unswizzled) part of a shared layout make_tma_copy accepted."""
    inner = smem.inner if isinstance(smem, ComposedLayout) else smem
    if not isinstance(inner, Layout):
        raise LayoutError(f"a TMA shared layout is a Layout or Sw<B,M,S> o offset o Layout, got {smem}")
    return inner


def tma_boxes(global_layout: Layout, element: str, smem_layout: Any
              ) -> tuple[TmaCopy, np.ndarray, np.ndarray]:
    """The copy and, over the M x N tile, each element's shared-memory index (unswizzled: box
    ``index // (M·N / boxes)`` holds it) and its swizzled shared offset.

    >>> from tensorlayout.cute import Layout
    >>> tma, box, off = tma_boxes(Layout((8, 16), (16, 1)), "f32", Layout((2, 8), (8, 1)))
    >>> tma.boxes, box[1].tolist()[:2], off[1, :2].tolist()
    (1, [8, 9], [8, 9])
    """
    tma = make_tma_copy(global_layout, element, smem_layout)
    inner = _inner(smem_layout)
    if global_layout.rank() != 2 or inner.rank() != 2:
        raise LayoutError(f"the TMA picture draws a 2-D global tensor and tile, got {global_layout} and "
                          f"{smem_layout}")
    rows, cols = int(size(inner[0])), int(size(inner[1]))
    index = np.array([[int(inner(m, n)) for n in range(cols)] for m in range(rows)], dtype=np.int64)
    if not np.array_equal(np.sort(index, axis=None), np.arange(rows * cols)):
        raise LayoutError(f"the shared tile {inner} is not one-to-one onto [0, {rows * cols}): its boxes "
                          "have no single order to draw")
    nbytes = tma.element_bits // 8
    swizzle = _BYTE_SWIZZLES[tma.swizzle]
    offsets = np.vectorize(lambda i: int(swizzle(int(i) * nbytes)) // nbytes, otypes=[np.int64])(index)
    return tma, index, offsets


def _default_window(dims: tuple[int, int], tile: tuple[int, int]) -> tuple[range, range]:
    """The tile and up to MAX_CELLS cells of the tensor around it, at most MAX_SIDE a side."""
    rows, cols = (range(min(d, max(t, MAX_CELLS), MAX_SIDE)) for d, t in zip(dims, tile))
    return rows, cols


def tma_boxes_svg(copy: tuple[Layout, str, Any], title: str = "",
                  window: Sequence[range] | None = None) -> str:
    """The picture of the module doc for ``(global_layout, element, smem_layout)``; ``window``
    (two ranges over the global tensor) draws another part of it."""
    if not (isinstance(copy, tuple) and len(copy) == 3):
        raise LayoutError("tma_boxes_svg draws (global_layout, element, smem_layout): a TmaCopy alone "
                          "does not keep its layouts")
    glay, element, smem = copy
    tma, index, offsets = tma_boxes(glay, element, smem)
    box = index // (index.size // tma.boxes)
    dims = (int(size(glay[0])), int(size(glay[1])))
    rows, cols = box.shape
    ms, ns = _windowed(dims, window if window is not None else _default_window(dims, (rows, cols)))
    labels = np.full((len(ms), len(ns)), -1, dtype=np.int64)
    volume = box.size // tma.boxes
    body = []
    for r, m in enumerate(ms):
        for c, n in enumerate(ns):
            inside = m < rows and n < cols
            k, off = (int(box[m, n]), int(offsets[m, n])) if inside else (-1, -1)
            labels[r, c] = k
            x, y = CELL + c * CELL, TITLE + CELL + r * CELL
            text = f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 4}">{off}</text>' if k == 0 else ""
            if inside and index[m, n] % volume == 0:  # the box's first shared index
                text += f'<text class="box-number" x="{x + 3}" y="{y + 10}" text-anchor="start" ' \
                        f'font-size="9" font-weight="bold">#{k}</text>'
            body.append(f'<g class="cell" data-m="{m}" data-n="{n}" data-box="{k}" data-offset="{off}">'
                        f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{color(k)}" '
                        f'stroke="#888" stroke-width="0.5"/>{text}</g>')
    body.append(_borders_svg("box-border", labels, CELL, TITLE + CELL, CELL))
    head = title or (f"TMA {element} box {'x'.join(map(str, tma.box_dim))} x {tma.boxes} boxes, "
                     f"{tma.swizzle.removeprefix('CU_TENSOR_MAP_')}")
    head += _window_note(dims, (ms, ns))
    return document(max((len(ns) + 2) * CELL, 8 * len(head)), (len(ms) + 2) * CELL + TITLE, head, body)

