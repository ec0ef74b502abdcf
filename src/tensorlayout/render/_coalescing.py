"""One warp request of a thread-value access drawn on its 2-D global tensor, by 32-byte sector.

The grid is the global tensor (rows: mode 0, columns: mode 1). The request (warp ``w``'s
values ``[r·vec, (r+1)·vec)`` of each lane, ``vec`` the vector width
:func:`~tensorlayout.gpu.coalescing.coalescing` finds) fills its cells, coloured by the 32-byte
sector each element's bytes start in, labelled with the lane (``L#``) and the value (``v#``).
Every cell is a group ``<g class="cell">`` with ``data-m``/``data-n``, ``data-offset`` (global
element offset), ``data-lane``/``data-value``/``data-sector`` (-1 outside the request). Beneath
the grid, the caption (``<text class="caption">``) is the report ``show --coalescing`` prints.

>>> from tensorlayout.cute import Layout
>>> from tensorlayout.gpu.tv import TVLayout
>>> pic = coalescing_svg(TVLayout.parse("(32,8):(8,1)", (8, 32)), Layout((8, 32), (32, 1)), 16)
>>> pic.count('class="cell"'), pic.count('data-lane="-1"'), pic.count('data-sector="0"')
(256, 224, 16)
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from tensorlayout.cute import Layout, make_layout, size
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.coalescing import SECTOR, WARP, coalescing, offsets_table
from tensorlayout.gpu.tiled import TiledCopy
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.render._draw import color
from tensorlayout.render._extent import MAX_CELLS
from tensorlayout.render._tv import CELL, TITLE, _window_note, _windowed, document
from tensorlayout.triton import LinearLayout

__all__ = ["coalescing_svg", "global_of"]

Access = TVLayout | TiledCopy | LinearLayout


def global_of(layout: Access, global_layout: Layout | None) -> Layout:
    """The global tensor's layout: ``global_layout``, else the default
    :func:`~tensorlayout.gpu.coalescing.offsets_table` uses (a TV tile column-major, a Triton
    tensor row-major).

    >>> from tensorlayout.gpu.tv import TVLayout
    >>> str(global_of(TVLayout.parse("(32,8):(8,1)", (8, 32)), None))
    '(8,32):(1,8)'
    """
    if global_layout is not None:
        return global_layout
    if isinstance(layout, LinearLayout):
        sizes = [s for _n, s in layout.out_dims]
        return Layout(tuple(sizes), tuple(int(np.prod(sizes[k + 1:])) for k in range(len(sizes))))
    tile = (layout.tv_s() if isinstance(layout, TiledCopy) else layout).tile
    return make_layout(tile)


def _request_cells(table: np.ndarray, vec: int, warp: int, request: int) -> dict[int, tuple[int, int]]:
    """Global offset -> (lane, value) of one warp request (the lowest lane and value where shared)."""
    lanes = table[warp * WARP:(warp + 1) * WARP, request * vec:(request + 1) * vec]
    if lanes.size == 0:
        raise LayoutError(f"warp {warp} request {request} is outside the access ({table.shape[0]} threads, "
                          f"{table.shape[1] // vec} requests of {vec} values)")
    out: dict[int, tuple[int, int]] = {}
    for lane in range(lanes.shape[0]):
        for v in range(vec):
            out.setdefault(int(lanes[lane, v]), (lane, request * vec + v))
    return out


def coalescing_svg(layout: Access, global_layout: Layout | None, element_bits: int, *, warp: int = 0,
                   request: int = 0, title: str = "", window: Sequence[range] | None = None) -> str:
    """The picture of the module doc; ``window`` (two ranges) draws another part of the tensor."""
    report = coalescing(layout, global_layout, element_bits)
    glay = global_of(layout, global_layout)
    if glay.rank() != 2:
        raise LayoutError(f"the coalescing picture draws a 2-D global tensor, got {glay}")
    held = _request_cells(offsets_table(layout, global_layout), report.vector, warp, request)
    dims = (int(size(glay[0])), int(size(glay[1])))
    ms, ns = _windowed(dims, window if window is not None else tuple(range(min(d, MAX_CELLS)) for d in dims))
    nbytes = element_bits // 8
    first = min(held) * nbytes // SECTOR
    body, drawn = [], set()
    for r, m in enumerate(ms):
        for c, n in enumerate(ns):
            off = int(glay(m, n))
            lane, value = held.get(off, (-1, -1))
            sector = off * nbytes // SECTOR - first if lane >= 0 else -1
            x, y = CELL + c * CELL, TITLE + CELL + r * CELL
            text = ""
            if lane >= 0:
                drawn.add(off)
                text = (f'<text x="{x + CELL / 2}" y="{y + 14}">L{lane}</text>'
                        f'<text x="{x + CELL / 2}" y="{y + 27}">v{value}</text>')
            body.append(f'<g class="cell" data-m="{m}" data-n="{n}" data-offset="{off}" data-lane="{lane}" '
                        f'data-value="{value}" data-sector="{sector}"><rect x="{x}" y="{y}" '
                        f'width="{CELL}" height="{CELL}" fill="{color(sector)}" stroke="#888" '
                        f'stroke-width="0.5"/>{text}</g>')
    caption = str(report)
    if len(drawn) < len(held):
        caption += f" ({len(held) - len(drawn)} of this request's elements lie outside the drawn part)"
    height = (len(ms) + 2) * CELL + TITLE
    body.append(f'<text class="caption" x="{CELL}" y="{height - CELL / 3}" text-anchor="start" '
                f'font-size="12">{escape(caption)}</text>')
    sectors = len({o * nbytes // SECTOR for o in held})
    head = title or (f"warp {warp} request {request}: {len(held)} elements of {element_bits} bits in "
                     f"{sectors} sectors of 32 bytes (colour: sector) over {glay}")
    head += _window_note(dims, (ms, ns))
    return document(max((len(ns) + 2) * CELL, 8 * len(head), 7 * len(caption) + 2 * CELL), height, head, body)
