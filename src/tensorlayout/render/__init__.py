"""Pictures of layouts: SVG, an HTML page with a hover read-out, TikZ, PNG and PDF.

``to_svg(target)`` draws the logical grid with each cell colored by its tile and labelled
with its physical offset, red boxes around the innermost sub-tiles, and beneath it the
memory-order strip of physical slots, padding white (see :mod:`tensorlayout.render._draw`
for what is drawn for rank 0, 1 and > 2, and the caps on huge layouts). ``to_html`` embeds
the SVG in a page whose script shows, for the cell or slot under the mouse, its logical
index, offset, tile and in-tile index (numbers in memory order, and coordinates when the
layout has tiles) and highlights the cell and its slot; the page also reads ``#hover=I,J``
from its address to show one cell without a mouse.

``target`` is an XLA shape (text or :class:`~tensorlayout.xla.Shape`), a CuTe layout (text
or :class:`~tensorlayout.cute.Layout`, stride-0 broadcast modes included), a TLA layout, or a
:class:`~tensorlayout.relayout.PhysicalTarget`. ``target_from_text`` is the one place that
turns command-line text into a target. ``to_svg`` also draws GPU thread-value objects and
Triton linear layouts (:mod:`tensorlayout.render._kinds`); ``to_tikz`` writes the same
pictures as CuTe's ``print_latex`` does; ``to_png``/``to_pdf`` need the optional extra
``png``. Every picture takes ``window=`` (one ``range`` per dim). Inside IPython/Jupyter,
importing this package registers the display hooks of :mod:`tensorlayout.render.display`.

Seed Figure 1:

>>> svg = to_svg("f32[3,5]{1,0:T(2,2)}")
>>> svg.count('class="cell"'), svg.count('class="slot pad"'), 'data-offset="17"' in svg
(15, 9, True)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from html import escape

import numpy as np

from tensorlayout.convert import is_xla_text, parse_target
from tensorlayout.cute import tla as tla_formats
from tensorlayout.errors import UnsupportedError
from tensorlayout.render._coalescing import coalescing_svg, global_of
from tensorlayout.render._design import design_svg
from tensorlayout.render._draw import MAX_SLOTS, Cell, Picture, picture, svg
from tensorlayout.render._extent import MAX_CELLS, MAX_SIDE, Window, check_window
from tensorlayout.render._kinds import drawer
from tensorlayout.render._partition import partition_svg, thread_coords
from tensorlayout.render._raster import FORMATS as RASTER_FORMATS
from tensorlayout.render._raster import convert_svg
from tensorlayout.render._source import Source, source_of
from tensorlayout.render._tikz import to_tikz
from tensorlayout.render._tma import tma_boxes, tma_boxes_svg
from tensorlayout.render._triton import linear_layout_svg
from tensorlayout.render._tv import shared_banks_svg, tiled_copy_svg, tiled_mma_svg, tv_svg
from tensorlayout.render.display import register, repr_svg

__all__ = [
    "MAX_CELLS",
    "MAX_SIDE",
    "MAX_SLOTS",
    "RASTER_FORMATS",
    "Cell",
    "Picture",
    "Source",
    "Window",
    "check_window",
    "coalescing_svg",
    "design_svg",
    "global_of",
    "is_xla_text",
    "linear_layout_svg",
    "partition_svg",
    "picture",
    "register",
    "repr_svg",
    "shared_banks_svg",
    "source_of",
    "target_from_text",
    "thread_coords",
    "tiled_copy_svg",
    "tiled_mma_svg",
    "tma_boxes",
    "tma_boxes_svg",
    "to_html",
    "to_pdf",
    "to_png",
    "to_svg",
    "to_tikz",
    "tv_svg",
]


def target_from_text(text: str, *, tla: str | None = None, rows: int | None = None,
                     cols: int | None = None, dtype: str = "f16") -> object:
    """The layout named by command-line ``text``: an XLA :class:`~tensorlayout.xla.Shape` or a
    CuTe :class:`~tensorlayout.cute.Layout`; with ``tla``, the TLA format of a ``rows`` x
    ``cols`` matrix of ``dtype`` (``text`` is then ignored).

    >>> str(target_from_text(" f32[3,5]{1,0:T(2,2)} "))
    'f32[3,5]{1,0:T(2,2)}'
    >>> str(target_from_text("", tla="zN", rows=8, cols=12))
    '((16,1),(16,1)):((16,256),(1,256)) origin (8,12)'
    """
    if tla is not None:
        if rows is None or cols is None:
            raise UnsupportedError("a TLA format needs rows and cols")
        return tla_formats.make_format(tla, rows, cols, dtype)
    return parse_target(text)


def _picture(target: object, tile_ids: np.ndarray | None, window: Sequence[range] | None) -> Picture:
    return picture(source_of(target), tile_ids, window)


def to_svg(target: object, *, tile_ids: np.ndarray | None = None,
           window: Sequence[range] | None = None, title: str = "") -> str:
    """An SVG picture of ``target``; ``tile_ids`` (one per logical element, C order)
    overrides the tile coloring (default: the layout's tiles); ``window`` (one ``range`` per
    dim) draws only that part. GPU objects (TV layouts, MMA atoms, TiledMMAs, TiledCopies) and
    Triton linear layouts draw with their own drawers (:mod:`tensorlayout.render._kinds`).

    Seed Figure 2, whose red boxes are the (2,1) sub-tiles:

    >>> to_svg("f32[4,8]{1,0:T(2,4)(2,1)}").count('class="subtile"')
    16
    """
    draw = drawer(target)
    if draw is not None:
        if tile_ids is not None:
            raise UnsupportedError(f"tile_ids colour layout pictures; a {type(target).__name__} is "
                                   "coloured by thread")
        return draw(target, title=title, window=window)
    pic = _picture(target, tile_ids, window)
    return svg(replace(pic, title=title) if title else pic)


def to_png(target: object, *, window: Sequence[range] | None = None, title: str = "",
           scale: float = 1.0) -> bytes:
    """The picture :func:`to_svg` draws, as PNG bytes (``scale``: pixels per SVG unit); needs
    the optional extra ``png`` (else an :class:`~tensorlayout.errors.UnsupportedError` naming it)."""
    return convert_svg(to_svg(target, window=window, title=title), "png", scale)


def to_pdf(target: object, *, window: Sequence[range] | None = None, title: str = "") -> bytes:
    """The picture :func:`to_svg` draws, as a PDF document; needs the optional extra ``png``."""
    return convert_svg(to_svg(target, window=window, title=title), "pdf")


_SCRIPT = """
(function () {
  var info = document.getElementById('info');
  var cells = document.querySelectorAll('g.cell');
  var lit = [];
  function num(g, what) {
    var c = g.getAttribute('data-' + what + 'coord');
    var n = '#' + g.getAttribute('data-' + what);
    return c === null ? n : '(' + c + ') ' + n;
  }
  function light(e) { if (e) { e.classList.add('lit'); lit.push(e); } }
  function clear() { lit.forEach(function (e) { e.classList.remove('lit'); }); lit = []; }
  function show(g) {
    clear();
    light(g);
    var off = g.getAttribute('data-offset');
    light(document.querySelector('rect.slot[data-offset="' + off + '"]'));
    info.textContent = 'index (' + g.getAttribute('data-index') + ')  offset ' + off +
      '  tile ' + num(g, 'tile') + '  in-tile ' + num(g, 'intile');
    info.setAttribute('data-shown', g.getAttribute('data-index'));
  }
  function showSlot(s) {
    var idx = s.getAttribute('data-index');
    var g = idx === null ? null : document.querySelector('g.cell[data-index="' + idx + '"]');
    if (g) { show(g); return; }
    clear();
    light(s);
    var off = s.getAttribute('data-offset');
    info.textContent = idx === null ? 'offset ' + off + '  padding' :
      'index (' + idx + ')  offset ' + off + '  (cell not drawn)';
    info.setAttribute('data-shown', idx === null ? 'pad ' + off : idx);
  }
  cells.forEach(function (g) {
    g.addEventListener('mouseenter', function () { show(g); });
  });
  document.querySelectorAll('rect.slot').forEach(function (s) {
    s.addEventListener('mouseenter', function () { showSlot(s); });
  });
  var m = /hover=([0-9,]+)/.exec(decodeURIComponent(location.hash));
  if (m) {
    var g = document.querySelector('g.cell[data-index="' + m[1] + '"]');
    if (g) { show(g); }
  }
  document.getElementById('count').textContent = cells.length + ' cells drawn';
})();
"""


def to_html(target: object, *, tile_ids: np.ndarray | None = None,
            window: Sequence[range] | None = None) -> str:
    """A standalone HTML page: the SVG plus a hover read-out (see the module doc).

    >>> page = to_html("f32[3,5]{1,0:T(2,2)}")
    >>> page.startswith("<!DOCTYPE html>"), 'id="info"' in page
    (True, True)
    """
    pic = _picture(target, tile_ids, window)
    facts = {"title": pic.title, "rows": pic.rows, "cols": pic.cols, "slots": pic.slots,
             "padding": pic.padding, "notes": list(pic.notes)}
    facts_json = json.dumps(facts).replace("<", "\\u003c")  # no "</script>" inside the script
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(pic.title)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
#info {{ font-family: monospace; font-size: 15px; min-height: 1.4em; margin: 0.5em 0; white-space: pre; }}
g.cell {{ cursor: crosshair; }}
g.cell.lit rect, rect.slot.lit {{ stroke: #000; stroke-width: 3; }}
</style>
</head>
<body>
<h1 style="font-size:18px">{escape(pic.title)}</h1>
<div id="info">hover a cell or a slot to see its index, offset, tile and in-tile index</div>
<div id="count"></div>
{svg(pic)}
<script type="application/json" id="facts">{facts_json}</script>
<script>{_SCRIPT}</script>
</body>
</html>
"""


register()  # inside IPython/Jupyter: layouts display as pictures (a no-op elsewhere)
