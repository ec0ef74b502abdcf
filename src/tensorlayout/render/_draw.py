"""The picture of a layout: a logical grid colored by tile and a memory-order strip.

The grid is the array viewed as 2-D: one column per index of the last dim, one row per index
of all the others (rank 1 is one row; rank > 2 stacks the slices, a line between them, each
row labelled with its leading index). Past :data:`MAX_CELLS` rows or columns the grid stops
at a tile boundary (:mod:`tensorlayout.render._extent`), or draws only a given window; thick
lines (``<path class="tile-border">``) separate the tiles. Every logical cell is an SVG
group ``<g class="cell">`` with ``data-index``, ``data-offset``,
``data-tile`` and ``data-intile`` attributes (and ``data-tilecoord``/``data-intilecoord``
when the layout has tiles), a colored rect and its offset as text. Beneath, the strip draws
up to :data:`MAX_SLOTS` physical slots in memory order (``<rect class="slot">``, data slots in
their tile's color with the ``data-index`` they hold, padding slots white with class ``pad``),
wrapped so that every strip row lies in one tile (:func:`strip_wrap`), thick lines between
tiles (``<path class="strip-border">``); for a window it starts at the window's first tile.

>>> from tensorlayout.render._source import source_of
>>> pic = picture(source_of("f32[3,5]{1,0:T(2,2)}"))
>>> len(pic.cells), pic.slots, pic.padding
(15, 24, 9)
>>> pic.cells[13]  # the seed's element (2,3): tile (1,1), in-tile (0,1)
Cell(row=2, col=3, index=(2, 3), offset=17, tile=4, intile=1, tile_coord=(1, 1), intile_coord=(0, 1))
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from tensorlayout.core.intmath import INT64_MAX, ceil_div
from tensorlayout.errors import LayoutError
from tensorlayout.render._extent import Extent, extent, window_text
from tensorlayout.render._source import Source

__all__ = ["MAX_SLOTS", "Cell", "Picture", "border_segments", "cell_tiles", "color", "hsl", "picture",
           "strip_wrap", "svg"]

MAX_SLOTS = 2048  # physical slots drawn in the strip at most
CELL = 36  # px per grid cell
SLOT = 18  # px per strip slot
MARGIN = 24


@dataclass(frozen=True, slots=True)
class Cell:
    """One drawn logical element: grid position, logical index, offset, tile and in-tile index
    (numbers in memory order, and coordinates when the layout has tiles)."""

    row: int
    col: int
    index: tuple[int, ...]
    offset: int
    tile: int
    intile: int
    tile_coord: tuple[int, ...] | None = None
    intile_coord: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Picture:
    """What gets drawn: cells, row labels, slice separators, the strip, caption lines."""

    title: str
    rows: int
    cols: int
    cells: tuple[Cell, ...]
    row_labels: tuple[str, ...]
    separators: tuple[int, ...]  # grid rows that start a new slice (rank > 2)
    slots: int  # physical slots drawn in the strip
    slot_tiles: tuple[int, ...]  # tile id per drawn slot, -1 for padding
    slot_index: tuple[tuple[int, ...] | None, ...]  # logical index held by each drawn slot
    padding: int  # padding slots among the drawn ones
    subtiles: tuple[tuple[int, int, int, int], ...]  # (row0, col0, rows, cols) red boxes
    notes: tuple[str, ...]
    tile_elements: int | None
    col_start: int = 0  # logical index of the first drawn column
    strip_start: int = 0  # offset of the first drawn slot
    wrap: int = 32  # slots per strip row
    split: tuple[int, ...] | None = None  # tile extent per dim (thick borders between tiles)


def _tiles(src: Source, idx: np.ndarray, offs: np.ndarray, ids: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Tile id, in-tile number (None: rank it later) and coordinates of each index."""
    tcoord = icoord = None
    if src.split is not None and len(idx):
        split = np.array(src.split, dtype=np.int64)
        tcoord = idx // split
        icoord = (idx % split)[:, split > 1]
    if ids is not None:
        flat = np.ravel_multi_index(tuple(idx.T), src.shape) if src.shape else np.zeros(len(idx), np.int64)
        return ids[flat], None, tcoord, icoord
    if src.tile_elements and src.tile_elements > INT64_MAX:  # one tile holds every int64 offset
        return np.zeros(len(idx), dtype=np.int64), offs.copy(), tcoord, icoord
    if src.tile_elements:
        return offs // src.tile_elements, offs % src.tile_elements, tcoord, icoord
    if tcoord is not None and icoord is not None and src.split is not None:
        split = np.array(src.split, dtype=np.int64)
        grid = tuple(ceil_div(n, t) for n, t in zip(src.shape, src.split))
        inner = tuple(int(t) for t in split[split > 1])
        return (np.ravel_multi_index(tuple(tcoord.T), grid),
                np.ravel_multi_index(tuple(icoord.T), inner), tcoord, icoord)
    return np.zeros(len(idx), dtype=np.int64), offs.copy(), None, None


def picture(src: Source, tile_ids: np.ndarray | None = None, window: Sequence[range] | None = None
            ) -> Picture:
    """Compute the picture of ``src``; ``tile_ids`` (one per logical element, C order)
    overrides the tile coloring; ``window`` (one ``range`` per dim) draws only that part."""
    shape = src.shape
    elements = int(np.prod(shape, dtype=object)) if shape else 1
    ids = _checked_tile_ids(tile_ids if tile_ids is not None else src.tile_ids, elements)
    notes = list(src.notes)
    ext = extent(shape, src.split, window)
    _grid_notes(ext, shape, window, src.split, notes)
    rows, cols = ext.rows, len(ext.cols)
    lead_idx = ext.lead_index()
    idx = _grid_indices(shape, lead_idx, ext.cols)
    offs = src.offsets(idx) if len(idx) else np.zeros(0, dtype=np.int64)
    tile, intile, tcoord, icoord = _tiles(src, idx, offs, ids)
    if intile is None:  # explicit tile ids: in-tile number = rank of the offset among drawn cells
        intile = _ranks_within_tiles(tile, offs)
    if len(np.unique(offs)) < len(offs) and not any("broadcast" in n for n in notes):
        notes.append("not injective: some cells share one slot")
    cells = tuple(
        Cell(k // cols, k % cols, tuple(int(i) for i in idx[k]), int(offs[k]), int(tile[k]), int(intile[k]),
             None if tcoord is None else tuple(int(i) for i in tcoord[k]),
             None if icoord is None else tuple(int(i) for i in icoord[k]))
        for k in range(len(idx)))
    wrap = strip_wrap(cols, src.tile_elements, src.split)
    start = _strip_start(offs, math.lcm(wrap, src.tile_elements or 1), window is not None)
    if window is not None and len(offs) and start == 0 and int(offs.min()) > MAX_STRIP_SKIP:
        notes.append(f"the window's first slot, {int(offs.min())}, is past the {MAX_STRIP_SKIP} slots "
                     "a strip reads back: the strip shows the start of memory")
    n, slot_tiles, slot_index = _strip(src, ids, notes, start, wrap)
    labels = tuple(",".join(str(int(i)) for i in lead_idx[r]) for r in range(rows)) if len(shape) >= 2 \
        else ("",) * rows
    seps = tuple(r for r in range(1, rows) if len(shape) > 2 and lead_idx[r][-1] == ext.lead[-1].start)
    subtiles = _subtiles(cells, src.subtile_elements) if src.subtile_elements else ()
    return Picture(src.name, rows, cols, cells, labels, seps, n, tuple(int(t) for t in slot_tiles),
                   tuple(slot_index), int((slot_tiles < 0).sum()), subtiles, tuple(notes),
                   src.tile_elements, ext.cols.start, start, wrap, src.split)


def _checked_tile_ids(ids: np.ndarray | None, elements: int) -> np.ndarray | None:
    """Explicit tile ids as a flat int64 array, one per logical element."""
    if ids is None:
        return None
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size != elements:
        raise LayoutError(f"expected {elements} tile ids, but got {ids.size}")
    return ids


def tile_text(split: tuple[int, ...] | None) -> str:
    """A tile's shape as the caption names it.

    >>> tile_text((8, 128)), tile_text(None)
    ('8x128', '')
    """
    return "" if split is None else "x".join(map(str, split))


def _grid_notes(ext: Extent, shape: tuple[int, ...], window: Sequence[range] | None,
                split: tuple[int, ...] | None, notes: list[str]) -> None:
    """Caption lines saying what part of the grid is drawn."""
    if 0 in shape:
        notes.append(f"no elements: a dim of {list(shape)} is 0")
        return
    if len(shape) > 2:
        notes.append(f"rows: dims 0..{len(shape) - 2} (index at the left), columns: dim {len(shape) - 1}")
    if window is not None:
        notes.append(f"window {window_text(window)} of [{','.join(map(str, shape))}]")
    if (ext.rows, len(ext.cols)) != (ext.rows_all, ext.cols_all):
        whole = f" (whole {tile_text(split)} tiles)" if split and not ext.cut_tile else \
            (f" (cutting {tile_text(split)} tiles)" if split else "")
        notes.append(f"showing the first {ext.rows}x{len(ext.cols)} of {ext.rows_all}x{ext.cols_all} "
                     f"cells{whole}; --window picks another part")
    if split:
        notes.append(f"tiles {tile_text(split)}, thick borders")


def _grid_indices(shape: tuple[int, ...], lead_idx: np.ndarray, cols: range) -> np.ndarray:
    """The logical index of every drawn cell, row by row."""
    rows = len(lead_idx)
    idx = np.concatenate([np.repeat(lead_idx, len(cols), axis=0),
                          np.tile(np.arange(cols.start, cols.stop, dtype=np.int64), rows)[:, None]], axis=1)
    return idx[:, :len(shape)] if shape else np.zeros((rows * len(cols), 0), dtype=np.int64)


def _ranks_within_tiles(tile: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """Each cell's rank by offset among the drawn cells of its tile."""
    order = np.lexsort((offs, tile))
    intile = np.zeros(len(offs), dtype=np.int64)
    start = 0
    for k in range(1, len(order) + 1):
        if k == len(order) or tile[order[k]] != tile[order[start]]:
            intile[order[start:k]] = np.arange(k - start)
            start = k
    return intile


#: A window's strip starts at its first cell's tile when the slots before it are this few;
#: past that it starts at slot 0 (reading owners back costs a pass over the skipped slots).
MAX_STRIP_SKIP = 1 << 22


def strip_wrap(cols: int, tile: int | None, split: tuple[int, ...] | None) -> int:
    """Slots per strip row: a power of two near the grid's width, made a multiple of the slots
    per tile, or, for a larger tile, a divisor of it (its row length when that divides it),
    so every strip row lies in one tile and every tile starts a row.

    >>> strip_wrap(128, 1024, (8, 128)), strip_wrap(5, 4, (2, 2)), strip_wrap(12, None, None)
    (128, 32, 32)
    """
    base = 1 << (min(max(cols * CELL // SLOT, 32), 128).bit_length() - 1)
    if not tile:
        return base
    if tile <= base:
        return base // tile * tile
    if split and 8 <= split[-1] <= 128 and tile % split[-1] == 0:
        return split[-1]
    return max(d for d in range(1, base + 1) if tile % d == 0)


def _strip_start(offs: np.ndarray, unit: int, windowed: bool) -> int:
    """The first slot of the strip: 0, or for a window its lowest cell's slot rounded down to
    ``unit`` (a whole number of strip rows and of tiles)."""
    if not windowed or not len(offs):
        return 0
    start = int(offs.min()) // unit * unit
    return start if start <= MAX_STRIP_SKIP else 0


def _strip_count(slots: int, tile: int | None, wrap: int) -> int:
    """Slots the strip draws out of ``slots``: at most MAX_SLOTS, cut at a tile boundary, or
    for tiles larger than that at a strip row's end (a tile row's, as the wrap divides it)."""
    if slots <= MAX_SLOTS:
        return slots
    unit = tile if tile and tile <= MAX_SLOTS else wrap
    return max(MAX_SLOTS // unit, 1) * unit


def _strip(src: Source, ids: np.ndarray | None, notes: list[str], start: int, wrap: int
           ) -> tuple[int, np.ndarray, list[tuple[int, ...] | None]]:
    """Slots from ``start`` in memory order: how many, the tile of each (-1: padding), what it holds."""
    shape = src.shape
    n = _strip_count(src.slots - start, src.tile_elements, wrap)
    if start:
        notes.append(f"memory strip shows slots {start} to {start + n - 1} of {src.slots}")
    elif n < src.slots:
        notes.append(f"memory strip shows the first {n} of {src.slots} slots")
    owners = src.owners(start + n)[start:] if n else np.zeros(0, dtype=np.int64)
    held = owners >= 0
    slot_tiles = np.full(n, -1, dtype=np.int64)
    slot_index: list[tuple[int, ...] | None] = [None] * n
    if held.any():
        oidx = np.array(np.unravel_index(owners[held], shape), dtype=np.int64).T if shape \
            else np.zeros((int(held.sum()), 0), dtype=np.int64)
        slot_tiles[held] = _tiles(src, oidx, start + np.flatnonzero(held), ids)[0]
        for k, ix in zip(np.flatnonzero(held), oidx):
            slot_index[int(k)] = tuple(int(i) for i in ix)
    return n, slot_tiles, slot_index


def _subtiles(cells: tuple[Cell, ...], size: int) -> tuple[tuple[int, int, int, int], ...]:
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


def hsl(hue: float, saturation: float, lightness: float) -> str:
    """The ``#rrggbb`` of an HSL colour (hex, which every SVG renderer reads; CSS ``hsl()`` is
    not read by all).

    >>> hsl(0, 0.7, 0.8), hsl(120, 0.6, 0.82)
    ('#f0a8a8', '#b6edb6')
    """
    r, g, b = colorsys.hls_to_rgb(hue / 360 % 1, lightness, saturation)
    return "#" + "".join(f"{round(x * 255):02x}" for x in (r, g, b))


def color(tile: int) -> str:
    """A pastel color per tile id (golden-angle hues); padding (-1) is white.

    >>> color(-1), color(0)
    ('#ffffff', '#f0a8a8')
    """
    return "#ffffff" if tile < 0 else _COLORS[tile % _COLOR_PERIOD]


#: The hue repeats every 360 tiles and the lightness every 36, so 360 colors are all there are:
#: a table (a 64x64 picture asks for a color 6,144 times).
_COLOR_PERIOD = 360
_COLORS = tuple(hsl((t * 137) % 360, 0.7, 0.8 - 0.08 * ((t // 18) % 2)) for t in range(_COLOR_PERIOD))


def _coord(c: tuple[int, ...] | None) -> str:
    return "" if c is None else ",".join(map(str, c))


@dataclass(frozen=True, slots=True)
class _Frame:
    """Where the parts of the SVG go (px)."""

    left: int
    top: int
    strip_top: int
    per_row: int
    strip_rows: int
    width: int
    height: int


def _frame(pic: Picture) -> _Frame:
    grid_w, grid_h = pic.cols * CELL, pic.rows * CELL
    per_row = pic.wrap
    strip_rows = ceil_div(pic.slots, per_row) if pic.slots else 0
    label_w = max([len(lb) for lb in pic.row_labels] + [2]) * 7
    left = MARGIN + label_w + 8
    top = MARGIN + 20 + 16 * len(pic.notes)
    strip_top = top + grid_h + 48
    width = max(left + grid_w, left + per_row * SLOT) + MARGIN
    height = strip_top + strip_rows * SLOT + MARGIN
    return _Frame(left, top, strip_top, per_row, strip_rows, width, height)


def svg(pic: Picture) -> str:
    """The SVG document of a picture (standalone, UTF-8 text)."""
    f = _frame(pic)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{f.width}" height="{f.height}" '
           f'viewBox="0 0 {f.width} {f.height}" font-family="sans-serif" '
           f'data-rows="{pic.rows}" data-cols="{pic.cols}" data-slots="{pic.slots}" '
           f'data-padding="{pic.padding}">',
           f'<title>{escape(pic.title)}</title>',
           f'<text class="caption" x="{MARGIN}" y="{MARGIN}" font-size="14">{escape(pic.title)}</text>']
    for k, note in enumerate(pic.notes):
        out.append(f'<text class="note" x="{MARGIN}" y="{MARGIN + 16 * (k + 1)}" font-size="12" '
                   f'fill="#555">{escape(note)}</text>')
    out += _grid_svg(pic, f)
    out += _strip_svg(pic, f)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _grid_svg(pic: Picture, f: _Frame) -> list[str]:
    """Axis numbers, the cells, slice separators and sub-tile boxes."""
    left, top = f.left, f.top
    out = [f'<text class="axis" x="{left + c * CELL + CELL / 2}" y="{top - 4}" font-size="10" '
           f'text-anchor="middle" fill="#777">{pic.col_start + c}</text>' for c in range(pic.cols)]
    for r, label in enumerate(pic.row_labels):
        out.append(f'<text class="axis" x="{left - 6}" y="{top + r * CELL + CELL / 2 + 4}" '
                   f'font-size="10" text-anchor="end" fill="#777">{label}</text>')
    out.append('<g class="grid">')
    out += [_cell_svg(cell, left + cell.col * CELL, top + cell.row * CELL) for cell in pic.cells]
    out.append("</g>")
    for r in pic.separators:
        out.append(f'<line class="slice" x1="{left - 4}" y1="{top + r * CELL}" '
                   f'x2="{left + pic.cols * CELL + 4}" y2="{top + r * CELL}" stroke="#000" '
                   f'stroke-width="2.5"/>')
    if pic.subtiles:
        out.append('<g class="subtiles" fill="none" stroke="#d00" stroke-width="2">')
        for r0, c0, nr, nc in pic.subtiles:
            out.append(f'<rect class="subtile" x="{left + c0 * CELL + 2}" y="{top + r0 * CELL + 2}" '
                       f'width="{nc * CELL - 4}" height="{nr * CELL - 4}"/>')
        out.append("</g>")
    if pic.cells:
        out.append(_borders_svg("tile-border", cell_tiles(pic), left, top, CELL))
    return out


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The ``[start, stop)`` runs of True in a 1-D boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def border_segments(labels: np.ndarray) -> list[tuple[str, int, int, int]]:
    """The edges between cells of different ``labels`` (2-D) and around the labelled area
    (cells labelled -2 are outside it), merged into runs: ``("V", col, row0, row1)`` is the
    line left of column ``col`` from row ``row0`` to ``row1``; ``("H", row, col0, col1)`` the
    line above row ``row``.

    >>> border_segments(np.array([[0, 0, 1]]))
    [('V', 0, 0, 1), ('V', 2, 0, 1), ('V', 3, 0, 1), ('H', 0, 0, 3), ('H', 1, 0, 3)]
    """
    padded = np.pad(labels, 1, constant_values=-2)
    inside = padded != -2
    out = []
    vertical = (padded[:, 1:] != padded[:, :-1]) & (inside[:, 1:] | inside[:, :-1])
    for c in range(vertical.shape[1]):
        out += [("V", c, a, b) for a, b in _runs(vertical[1:-1, c])]
    horizontal = (padded[1:, :] != padded[:-1, :]) & (inside[1:, :] | inside[:-1, :])
    for r in range(horizontal.shape[0]):
        out += [("H", r, a, b) for a, b in _runs(horizontal[r, 1:-1])]
    return out


def cell_tiles(pic: Picture) -> np.ndarray:
    """The tile id of every drawn cell as a rows x columns array."""
    return np.array([c.tile for c in pic.cells], dtype=np.int64).reshape(pic.rows, pic.cols)


def _borders_svg(cls: str, labels: np.ndarray, left: float, top: float, size: float) -> str:
    """One thick path along the :func:`border_segments` of ``labels``."""
    steps = [f"M{left + k * size} {top + a * size}V{top + b * size}" if kind == "V" else
             f"M{left + a * size} {top + k * size}H{left + b * size}"
             for kind, k, a, b in border_segments(labels)]
    return (f'<path class="{cls}" d="{"".join(steps)}" fill="none" stroke="#000" stroke-width="2.5" '
            f'stroke-linecap="square"/>')


def _cell_svg(cell: Cell, x: int, y: int) -> str:
    coords = "" if cell.tile_coord is None else (
        f' data-tilecoord="{_coord(cell.tile_coord)}" data-intilecoord="{_coord(cell.intile_coord)}"')
    return (f'<g class="cell" data-index="{_coord(cell.index)}" data-offset="{cell.offset}" '
            f'data-tile="{cell.tile}" data-intile="{cell.intile}"{coords}>'
            f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{color(cell.tile)}" '
            f'stroke="#444" stroke-width="0.5"/>'
            f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 4}" font-size="{_font(cell.offset)}" '
            f'text-anchor="middle">{cell.offset}</text></g>')


def _strip_svg(pic: Picture, f: _Frame) -> list[str]:
    """The memory-order strip: its caption, one rect per slot, and row offsets."""
    left, per_row = f.left, f.per_row
    out = [f'<text class="strip-caption" x="{MARGIN}" y="{f.strip_top - 10}" font-size="12">'
           f'memory order: {pic.slots} slots, {pic.padding} padding (white)</text>',
           '<g class="strip">']
    for k, (tile, held) in enumerate(zip(pic.slot_tiles, pic.slot_index)):
        x, y = left + (k % per_row) * SLOT, f.strip_top + (k // per_row) * SLOT
        extra = ' class="slot pad" stroke-dasharray="2,2"' if held is None else \
            f' class="slot" data-index="{_coord(held)}"'
        out.append(f'<rect{extra} data-offset="{pic.strip_start + k}" x="{x}" y="{y}" width="{SLOT}" '
                   f'height="{SLOT}" fill="{color(tile)}" stroke="#888" stroke-width="0.5"/>')
    out.append("</g>")
    for row in range(f.strip_rows):
        out.append(f'<text class="axis" x="{left - 6}" y="{f.strip_top + row * SLOT + 13}" '
                   f'font-size="9" text-anchor="end" fill="#777">{pic.strip_start + row * per_row}</text>')
    if pic.tile_elements and pic.slots:
        labels = np.full(f.strip_rows * per_row, -2, dtype=np.int64)
        labels[:pic.slots] = (pic.strip_start + np.arange(pic.slots)) // pic.tile_elements
        out.append(_borders_svg("strip-border", labels.reshape(f.strip_rows, per_row), left,
                                f.strip_top, SLOT))
    return out


def _font(offset: int) -> int:
    digits = len(str(offset))
    return 12 if digits <= 3 else max(7, 12 - 2 * (digits - 3))
