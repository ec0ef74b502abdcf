"""The picture of a layout: a logical grid colored by tile and a memory-order strip.

Every logical cell is an SVG group ``<g class="cell">`` with ``data-index``,
``data-offset``, ``data-tile`` and ``data-intile`` attributes, a colored rect and its offset
as text. Beneath, the strip draws every physical slot in memory order (``<rect
class="slot">``, data slots in their tile's color, padding slots white with class ``pad``).

>>> from tensorlayout.relayout import PhysicalTarget
>>> pic = picture(PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}"))
>>> len(pic.cells), pic.slots, pic.padding, pic.cells[13]
(15, 24, 9, Cell(row=2, col=3, index=(2, 3), offset=17, tile=4, intile=1))
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import numpy as np

from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.relayout import PhysicalTarget

__all__ = ["MAX_CELLS", "MAX_SLOTS", "Cell", "Picture", "picture", "svg"]

MAX_ELEMENTS = 1 << 26  # offsets of the whole target are computed to draw it
MAX_CELLS = 64  # rows and columns of the grid drawn at most
MAX_SLOTS = 2048  # physical slots drawn in the strip at most
CELL = 36  # px per grid cell
SLOT = 18  # px per strip slot
MARGIN = 24


@dataclass(frozen=True, slots=True)
class Cell:
    """One drawn logical element: grid position, full logical index, offset and tile."""

    row: int
    col: int
    index: tuple[int, ...]
    offset: int
    tile: int
    intile: int


@dataclass(frozen=True, slots=True)
class Picture:
    """What gets drawn: cells, the slot count, padding slots among them, caption lines."""

    title: str
    rows: int
    cols: int
    cells: tuple[Cell, ...]
    slots: int  # physical slots drawn in the strip
    slot_tiles: tuple[int, ...]  # tile id per drawn slot, -1 for padding
    padding: int  # padding slots among the drawn ones
    subtiles: tuple[tuple[int, int, int, int], ...]  # (row0, col0, rows, cols) red boxes
    notes: tuple[str, ...]
    tile_elements: int | None


def picture(target: PhysicalTarget, tile_ids: np.ndarray | None = None,
            subtile_elements: int | None = None) -> Picture:
    """Compute the picture of ``target``: the last two dims, at index 0 of the others."""
    shape = target.logical_shape
    elements = int(np.prod(shape, dtype=object)) if shape else 1
    if elements > MAX_ELEMENTS:
        raise UnsupportedError(f"{target} has {elements} elements; pictures are drawn for at most "
                               f"{MAX_ELEMENTS} (take a smaller shape with the same layout)")
    notes: list[str] = []
    offsets = target.offsets
    ids = tile_ids if tile_ids is not None else target.tile_ids
    if ids is not None:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size != offsets.size:
            raise LayoutError(f"expected {offsets.size} tile ids, but got {ids.size}")
    elif target.tile_elements:
        ids = offsets // target.tile_elements
    else:
        ids = np.zeros_like(offsets)
    te = target.tile_elements if tile_ids is None and target.tile_ids is None else None
    grid_shape = shape[-2:] if len(shape) >= 2 else ((1, shape[0]) if shape else (1, 1))
    lead = shape[:-2] if len(shape) > 2 else ()
    if lead:
        notes.append(f"showing dims {len(shape) - 2} and {len(shape) - 1} at index "
                     f"({', '.join('0' for _ in lead)}, :, :) of the others")
    rows, cols = grid_shape
    off_grid = offsets.reshape((-1, rows, cols))[0] if offsets.size else np.zeros((rows, cols), np.int64)
    id_grid = ids.reshape((-1, rows, cols))[0] if ids.size else np.zeros((rows, cols), np.int64)
    r_shown, c_shown = min(rows, MAX_CELLS), min(cols, MAX_CELLS)
    if (r_shown, c_shown) != (rows, cols):
        notes.append(f"showing the first {r_shown}x{c_shown} of {rows}x{cols} cells")
    cells = []
    for r in range(r_shown):
        for c in range(c_shown):
            index = (0,) * len(lead) + ((r, c) if len(shape) >= 2 else ((c,) if shape else ()))
            off = int(off_grid[r, c])
            cells.append(Cell(r, c, index, off, int(id_grid[r, c]), off % te if te else off))
    if not te:
        first = {}
        for cell in cells:  # without tile sizes, in-tile index = rank of the offset in its tile
            first.setdefault(cell.tile, []).append(cell.offset)
        rank = {(t, o): i for t, offs in first.items() for i, o in enumerate(sorted(offs))}
        cells = [Cell(c.row, c.col, c.index, c.offset, c.tile, rank[(c.tile, c.offset)]) for c in cells]
    slots = min(target.physical_elements, MAX_SLOTS)
    if slots < target.physical_elements:
        notes.append(f"memory strip shows the first {slots} of {target.physical_elements} slots")
    slot_tiles = np.full(slots, -1, dtype=np.int64)
    keep = offsets < slots
    slot_tiles[offsets[keep]] = ids[keep]
    padding = int((slot_tiles < 0).sum())
    subtiles = _subtiles(cells, subtile_elements) if subtile_elements else ()
    return Picture(target.name or str(target), r_shown, c_shown, tuple(cells), slots,
                   tuple(int(t) for t in slot_tiles), padding, subtiles, tuple(notes),
                   target.tile_elements)


def _subtiles(cells: list[Cell], size: int) -> tuple[tuple[int, int, int, int], ...]:
    """Bounding boxes of the cells sharing ``offset // size``, when they fill the box."""
    groups: dict[int, list[Cell]] = {}
    for c in cells:
        groups.setdefault(c.offset // size, []).append(c)
    out = []
    for group in groups.values():
        r0, r1 = min(c.row for c in group), max(c.row for c in group)
        c0, c1 = min(c.col for c in group), max(c.col for c in group)
        if (r1 - r0 + 1) * (c1 - c0 + 1) == len(group) and len(group) > 1:
            out.append((r0, c0, r1 - r0 + 1, c1 - c0 + 1))
    return tuple(sorted(out))


def color(tile: int) -> str:
    """A pastel color per tile id (golden-angle hues); padding (-1) is white.

    >>> color(-1), color(0)
    ('#ffffff', 'hsl(0,70%,80%)')
    """
    if tile < 0:
        return "#ffffff"
    return f"hsl({(tile * 137) % 360},70%,{80 - 8 * ((tile // 18) % 2)}%)"


def svg(pic: Picture) -> str:
    """The SVG document of a picture (standalone, UTF-8 text)."""
    grid_w, grid_h = pic.cols * CELL, pic.rows * CELL
    per_row = max(8, min(64, (max(grid_w, 480)) // SLOT))
    if pic.tile_elements and pic.tile_elements <= per_row:
        per_row = (per_row // pic.tile_elements) * pic.tile_elements
    strip_rows = -(-pic.slots // per_row) if pic.slots else 0
    left = MARGIN + 28
    top = MARGIN + 20 + 16 * len(pic.notes)
    strip_top = top + grid_h + 48
    width = max(left + grid_w, left + per_row * SLOT) + MARGIN
    height = strip_top + strip_rows * SLOT + MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" '
           f'data-rows="{pic.rows}" data-cols="{pic.cols}" data-slots="{pic.slots}" '
           f'data-padding="{pic.padding}">',
           f'<title>{escape(pic.title)}</title>',
           f'<text class="caption" x="{MARGIN}" y="{MARGIN}" font-size="14">{escape(pic.title)}</text>']
    for k, note in enumerate(pic.notes):
        out.append(f'<text class="note" x="{MARGIN}" y="{MARGIN + 16 * (k + 1)}" font-size="12" '
                   f'fill="#555">{escape(note)}</text>')
    for c in range(pic.cols):
        out.append(f'<text class="axis" x="{left + c * CELL + CELL / 2}" y="{top - 4}" font-size="10" '
                   f'text-anchor="middle" fill="#777">{c}</text>')
    for r in range(pic.rows):
        out.append(f'<text class="axis" x="{left - 6}" y="{top + r * CELL + CELL / 2 + 4}" '
                   f'font-size="10" text-anchor="end" fill="#777">{r}</text>')
    out.append('<g class="grid">')
    for cell in pic.cells:
        x, y = left + cell.col * CELL, top + cell.row * CELL
        index = ",".join(map(str, cell.index))
        out.append(f'<g class="cell" data-index="{index}" data-offset="{cell.offset}" '
                   f'data-tile="{cell.tile}" data-intile="{cell.intile}">'
                   f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{color(cell.tile)}" '
                   f'stroke="#444" stroke-width="0.5"/>'
                   f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 4}" font-size="{_font(cell.offset)}" '
                   f'text-anchor="middle">{cell.offset}</text></g>')
    out.append("</g>")
    if pic.subtiles:
        out.append('<g class="subtiles" fill="none" stroke="#d00" stroke-width="2">')
        for r0, c0, nr, nc in pic.subtiles:
            out.append(f'<rect class="subtile" x="{left + c0 * CELL + 2}" y="{top + r0 * CELL + 2}" '
                       f'width="{nc * CELL - 4}" height="{nr * CELL - 4}"/>')
        out.append("</g>")
    out.append(f'<text class="strip-caption" x="{MARGIN}" y="{strip_top - 10}" font-size="12">'
               f'memory order: {pic.slots} slots, {pic.padding} padding (white)</text>')
    out.append('<g class="strip">')
    for k, tile in enumerate(pic.slot_tiles):
        x, y = left + (k % per_row) * SLOT, strip_top + (k // per_row) * SLOT
        cls = "slot pad" if tile < 0 else "slot"
        dash = ' stroke-dasharray="2,2"' if tile < 0 else ""
        out.append(f'<rect class="{cls}" data-offset="{k}" x="{x}" y="{y}" width="{SLOT}" '
                   f'height="{SLOT}" fill="{color(tile)}" stroke="#888" stroke-width="0.5"{dash}/>')
    out.append("</g>")
    for row in range(strip_rows):
        out.append(f'<text class="axis" x="{left - 6}" y="{strip_top + row * SLOT + 13}" '
                   f'font-size="9" text-anchor="end" fill="#777">{row * per_row}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _font(offset: int) -> int:
    digits = len(str(offset))
    return 12 if digits <= 3 else max(7, 12 - 2 * (digits - 3))
