"""The pieces every owner picture is made of (TV layouts, MMA and copy panels, Triton's
distributed layouts, bank pictures): cells with their ``data-*`` facts, the row and column
index labels along a panel (as CuTe's ``print_svg`` numbers them), thick warp outlines, and
the SVG document around them.

A cell is a group ``<g class="cell">`` whose ``data-index`` is ``"row,col"`` (the logical
indices the labels show) and whose other ``data-*`` attributes are its facts; the HTML page's
hover read-out prints them, so every picture kind gets one.

>>> import numpy as np
>>> thr = np.array([[0, 32], [1, 33]]); val = np.zeros((2, 2), dtype=np.int64)
>>> body = owner_panel((thr, val), CELL, TITLE + CELL, range(2), range(2))
>>> sum('class="cell"' in e for e in body), sum('class="index"' in e for e in body)
(4, 4)
>>> [e for e in body if 'class="warp"' in e][0]
'<line class="warp" x1="68" y1="62" x2="68" y2="96"/>'
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

__all__ = ["CELL", "GAP", "LEGEND", "PALETTE", "STYLE", "TITLE", "document", "index_labels", "owner_cells",
           "owner_panel", "thread_cell", "warp_lines"]

CELL = 34  # px per cell
GAP = 2 * CELL  # px between panels
TITLE = 28  # px of title line
LEGEND = 14  # px per legend line
#: CuTe's print_latex/print_svg thread colours, cycled by thread index
PALETTE = ("#afafff", "#8bff8b", "#ffb0b0", "#ffff9e", "#a0ffff", "#ffb4ff", "#ffd89e", "#d1a3ff")
#: how index labels and warp outlines look
STYLE = ("<style>text.index { font-size: 9px; fill: #555; } "
         "line.warp { stroke: #000; stroke-width: 2.5; stroke-linecap: square; }</style>")


def owner_cells(owners: tuple[np.ndarray, np.ndarray], x0: int, y0: int, ms: range, ns: range,
                transpose: bool = False, value: str = "V", lanes: int = 32) -> list[str]:
    """Cells ``T#`` over ``{value}#`` for rows ``ms`` and columns ``ns`` of ``owners`` (thread
    and value arrays, -1 where nobody holds the element), coloured by thread; each names its
    warp (thread // ``lanes``)."""
    thr, val = owners
    out = []
    for m in ms:
        for n in ns:
            r, c = (n - ns.start, m - ms.start) if transpose else (m - ms.start, n - ns.start)
            t, v = int(thr[m, n]), int(val[m, n])
            data = (f'data-index="{m},{n}" data-m="{m}" data-n="{n}" data-thread="{t}" '
                    f'data-value="{v}" data-warp="{t // lanes if t >= 0 else -1}"')
            out.append(thread_cell(x0 + c * CELL, y0 + r * CELL, t, t, f"{value}{v}", data))
    return out


def thread_cell(x: int, y: int, thread: int, colour: int, below: str, data: str) -> str:
    """One cell at ``(x, y)``: ``T{thread}`` over ``below`` in palette colour ``colour``, or blank
    and white where ``thread`` is -1 (nobody); ``data`` is its ``data-*`` attributes.

    >>> thread_cell(0, 0, -1, -1, "V0", 'data-m="0"')
    '<g class="cell" data-m="0"><rect x="0" y="0" width="34" height="34" fill="#ffffff" \
stroke="#000" stroke-width="0.5"/></g>'
    """
    fill = PALETTE[colour % len(PALETTE)] if thread >= 0 else "#ffffff"
    label = (f'<text x="{x + CELL / 2}" y="{y + 14}">T{thread}</text>'
             f'<text x="{x + CELL / 2}" y="{y + 27}">{below}</text>') if thread >= 0 else ""
    return (f'<g class="cell" {data}><rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
            f'stroke="#000" stroke-width="0.5"/>{label}</g>')


def index_labels(x0: int, y0: int, rows: Sequence[int], cols: Sequence[int]) -> list[str]:
    """The row indices left of a panel at ``(x0, y0)`` and the column indices above it."""
    out = [f'<text class="index" x="{x0 - 4}" y="{y0 + r * CELL + CELL / 2 + 3}" text-anchor="end">{i}</text>'
           for r, i in enumerate(rows)]
    out += [f'<text class="index" x="{x0 + c * CELL + CELL / 2}" y="{y0 - 4}">{j}</text>'
            for c, j in enumerate(cols)]
    return out


def warp_lines(thr: np.ndarray, x0: int, y0: int, ms: range, ns: range, transpose: bool = False,
               lanes: int = 32) -> list[str]:
    """Thick lines between neighbouring cells held by different warps (thread // ``lanes``;
    -1 nobody) and around the panel: each warp's elements read as one outlined region."""
    part = thr[ms.start:ms.stop, ns.start:ns.stop]
    warp = np.where(part >= 0, part // lanes, -1)
    if transpose:
        warp = warp.T
    rows, cols = warp.shape
    out = []
    for r, c in zip(*np.nonzero(warp[:, :-1] != warp[:, 1:]), strict=True):
        x, y = x0 + (int(c) + 1) * CELL, y0 + int(r) * CELL
        out.append(f'<line class="warp" x1="{x}" y1="{y}" x2="{x}" y2="{y + CELL}"/>')
    for r, c in zip(*np.nonzero(warp[:-1, :] != warp[1:, :]), strict=True):
        x, y = x0 + int(c) * CELL, y0 + (int(r) + 1) * CELL
        out.append(f'<line class="warp" x1="{x}" y1="{y}" x2="{x + CELL}" y2="{y}"/>')
    out.append(f'<rect class="warp-border" x="{x0}" y="{y0}" width="{cols * CELL}" height="{rows * CELL}" '
               'fill="none" stroke="#000" stroke-width="2.5"/>')
    return out


def owner_panel(owners: tuple[np.ndarray, np.ndarray], x0: int, y0: int, ms: range, ns: range,
                transpose: bool = False, value: str = "V", lanes: int = 32) -> list[str]:
    """A whole owner panel: its cells, its index labels and its warp outlines."""
    rows, cols = (ns, ms) if transpose else (ms, ns)
    return [*owner_cells(owners, x0, y0, ms, ns, transpose, value, lanes), *index_labels(x0, y0, rows, cols),
            *warp_lines(owners[0], x0, y0, ms, ns, transpose, lanes)]


def document(width: int, height: int, title: str, body: list[str], legend: Sequence[str] = ()) -> str:
    """The SVG document around picture ``body`` elements, ``title`` centred on top and the
    ``legend`` lines beneath (the height grows to hold them)."""
    width = max(width, 7 * max((len(line) for line in (title, *legend)), default=0) + 2 * CELL)
    lines = [f'<text class="legend" x="{CELL}" y="{height + k * LEGEND}" text-anchor="start">'
             f'{escape(line)}</text>' for k, line in enumerate(legend)]
    height += LEGEND * len(legend)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="10" '
            f'text-anchor="middle">\n<title>{escape(title)}</title>\n{STYLE}\n'
            f'<text x="{width / 2}" y="18" font-size="14">{escape(title)}</text>\n'
            + "\n".join([*body, *lines]) + "\n</svg>\n")
