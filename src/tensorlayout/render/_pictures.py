"""The pictures of any drawable object, by format: :func:`to_svg`, :func:`to_html` (the SVG and
a hover read-out), :func:`to_png` and :func:`to_pdf`; and :func:`target_from_text`, the one
place that turns command-line text into a target.

A swizzled layout without tiles is coloured by swizzle chunk: each cell by the ``2^M``-element
chunk its offset falls in (``(offset >> M) mod 2^B`` of ``Sw<B,M,S>``; 16 bytes of 16-bit
elements for ``Sw<3,3,3>``), so the XOR's permutation of the chunks shows row by row.

>>> to_svg("f32[3,5]{1,0:T(2,2)}").count('class="cell"')
15
>>> pic = to_svg("Sw<1,2,2> o _0 o (2,8):(8,1)")
>>> [pic.count(f'data-tile="{k}"') for k in range(3)]
[8, 8, 0]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from html import escape

import numpy as np

from tensorlayout.convert import parse_target
from tensorlayout.core.intmath import prod
from tensorlayout.cute import ComposedLayout, Swizzle
from tensorlayout.cute import tla as tla_formats
from tensorlayout.errors import UnsupportedError
from tensorlayout.render._draw import Picture, picture, svg
from tensorlayout.render._kinds import drawer
from tensorlayout.render._page import svg_page
from tensorlayout.render._raster import convert_svg
from tensorlayout.render._source import Source, source_of

__all__ = ["MAX_CHUNKED", "target_from_text", "to_html", "to_pdf", "to_png", "to_svg"]

#: swizzled layouts of up to this many elements are coloured by swizzle chunk
MAX_CHUNKED = 1 << 18


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


def _chunked(target: object, src: Source) -> Source:
    """A swizzled layout without tiles coloured by swizzle chunk (see the module doc)."""
    lay = parse_target(target) if isinstance(target, str) else target
    if not (isinstance(lay, ComposedLayout) and isinstance(lay.outer, Swizzle) and lay.outer.bits > 0):
        return src
    elements = prod(src.shape)
    if src.tile_ids is not None or src.split is not None or not src.shape or not 0 < elements <= MAX_CHUNKED:
        return src  # tiles already coloured, a scalar (one cell), or too many cells to colour
    sw = lay.outer
    idx = np.indices(src.shape, dtype=np.int64).reshape(len(src.shape), -1).T
    chunks = (src.offsets(idx) >> sw.base) & ((1 << sw.bits) - 1)
    note = (f"colour: the {1 << sw.base}-element chunk of each offset, (offset >> {sw.base}) mod "
            f"{1 << sw.bits}, that Sw<{sw.bits},{sw.base},{sw.shift}> permutes (16 bytes of "
            f"{128 >> sw.base}-bit elements)")
    return replace(src, tile_ids=chunks, notes=(*src.notes, note))


def _picture(target: object, tile_ids: np.ndarray | None, window: Sequence[range] | None) -> Picture:
    src = source_of(target)
    return picture(src if tile_ids is not None else _chunked(target, src), tile_ids, window)


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
            window: Sequence[range] | None = None, title: str = "") -> str:
    """A standalone HTML page: the SVG plus a hover read-out (see the module doc).

    >>> page = to_html("f32[3,5]{1,0:T(2,2)}")
    >>> page.startswith("<!DOCTYPE html>"), 'id="info"' in page
    (True, True)

    GPU objects and Triton layouts get the page of :func:`~tensorlayout.render._page.svg_page`,
    whose read-out prints each cell's facts (thread, value, warp, ...).
    """
    draw = drawer(target)
    if draw is not None:
        if tile_ids is not None:
            raise UnsupportedError(f"tile_ids colour layout pictures; a {type(target).__name__} is "
                                   "coloured by thread")
        return svg_page(draw(target, title=title, window=window))
    pic = _picture(target, tile_ids, window)
    pic = replace(pic, title=title) if title else pic
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

