"""Pictures of layouts: SVG and an HTML page with a hover read-out.

``to_svg(target)`` draws the logical grid (the last two dims) with each cell colored by its
tile and labelled with its physical offset, red boxes around the innermost sub-tiles, and
beneath it the memory-order strip of every physical slot, padding white. ``to_html`` embeds
the SVG in a page whose script shows, for the cell under the mouse, its logical index,
offset, tile index and in-tile index (and highlights its slot in the strip); the page also
reads ``#hover=I,J`` from its address to show one cell without a mouse.

``target`` is an XLA shape (text or :class:`~tensorlayout.xla.Shape`) or a
:class:`~tensorlayout.relayout.PhysicalTarget` — the protocol CuTe/TLA layouts plug into.
``target_from_text`` is the one place that turns command-line text into a target.

Seed Figure 1:

>>> svg = to_svg("f32[3,5]{1,0:T(2,2)}")
>>> svg.count('class="cell"'), svg.count('class="slot pad"'), 'data-offset="17"' in svg
(15, 9, True)
"""

from __future__ import annotations

import json
from html import escape

import numpy as np

from tensorlayout.errors import UnsupportedError
from tensorlayout.relayout import PhysicalTarget, as_target
from tensorlayout.render._draw import MAX_CELLS, MAX_SLOTS, Cell, Picture, picture, svg
from tensorlayout.xla.types import ELEMENT_TYPES

__all__ = [
    "MAX_CELLS",
    "MAX_SLOTS",
    "Cell",
    "Picture",
    "is_xla_text",
    "picture",
    "target_from_text",
    "to_html",
    "to_svg",
]


def is_xla_text(text: str) -> bool:
    """True for XLA array shape text: an element type name followed by ``[``.

    >>> is_xla_text("bf16[8,128]{1,0:T(8,128)(2,1)}"), is_xla_text("(4,8):(8,1)")
    (True, False)
    """
    head = text.strip().split("[", 1)
    return len(head) == 2 and head[0].strip() in ELEMENT_TYPES


def target_from_text(text: str, *, tla: str | None = None, rows: int | None = None,
                     cols: int | None = None, dtype: str = "f16") -> PhysicalTarget:
    """The target named by command-line ``text``: an XLA shape or a CuTe layout; with ``tla``,
    the TLA format of a ``rows`` x ``cols`` matrix of ``dtype`` (``text`` is then ignored).

    >>> target_from_text("f32[3,5]{1,0:T(2,2)}").physical_elements
    24
    >>> target_from_text("", tla="zN", rows=8, cols=12).logical_shape
    (8, 12)
    """
    from tensorlayout.relayout import from_cute

    if tla is not None:
        from tensorlayout.cute import tla as tla_formats
        if rows is None or cols is None:
            raise UnsupportedError("a TLA format needs rows and cols")
        return from_cute(tla_formats.make_format(tla, rows, cols, dtype),
                         element_bits=tla_formats.element_bits(dtype))
    if is_xla_text(text):
        return PhysicalTarget.from_xla(text.strip())
    return from_cute(text.strip())


def _picture(target: object, tile_ids: np.ndarray | None) -> Picture:
    t = target_from_text(target) if isinstance(target, str) else as_target(target)
    return picture(t, tile_ids, t.subtile_elements)


def to_svg(target: object, *, tile_ids: np.ndarray | None = None) -> str:
    """An SVG picture of ``target``; ``tile_ids`` (one per logical element, C order)
    overrides the tile coloring (default: offset // tile size).

    >>> to_svg("f32[4,8]{1,0:T(2,4)(2,1)}").count('class="subtile"')
    16
    """
    return svg(_picture(target, tile_ids))


_SCRIPT = """
(function () {
  var info = document.getElementById('info');
  var cells = document.querySelectorAll('g.cell');
  var lit = [];
  function show(g) {
    lit.forEach(function (e) { e.classList.remove('lit'); });
    lit = [g];
    g.classList.add('lit');
    var off = g.getAttribute('data-offset');
    var slot = document.querySelector('rect.slot[data-offset="' + off + '"]');
    if (slot) { slot.classList.add('lit'); lit.push(slot); }
    info.textContent = 'index (' + g.getAttribute('data-index') + ')  offset ' + off +
      '  tile ' + g.getAttribute('data-tile') + '  in-tile ' + g.getAttribute('data-intile');
    info.setAttribute('data-shown', g.getAttribute('data-index'));
  }
  cells.forEach(function (g) {
    g.addEventListener('mouseenter', function () { show(g); });
  });
  var m = /hover=([0-9,]+)/.exec(decodeURIComponent(location.hash));
  if (m) {
    var g = document.querySelector('g.cell[data-index="' + m[1] + '"]');
    if (g) { show(g); }
  }
  document.getElementById('count').textContent = cells.length + ' cells drawn';
})();
"""


def to_html(target: object, *, tile_ids: np.ndarray | None = None) -> str:
    """A standalone HTML page: the SVG plus a hover read-out (see the module doc).

    >>> page = to_html("f32[3,5]{1,0:T(2,2)}")
    >>> page.startswith("<!DOCTYPE html>"), 'id="info"' in page
    (True, True)
    """
    pic = _picture(target, tile_ids)
    facts = {"title": pic.title, "rows": pic.rows, "cols": pic.cols, "slots": pic.slots,
             "padding": pic.padding, "notes": list(pic.notes)}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(pic.title)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
#info {{ font-family: monospace; font-size: 15px; min-height: 1.4em; margin: 0.5em 0; }}
g.cell {{ cursor: crosshair; }}
g.cell.lit rect, rect.slot.lit {{ stroke: #000; stroke-width: 3; }}
</style>
</head>
<body>
<h1 style="font-size:18px">{escape(pic.title)}</h1>
<div id="info">hover a cell to see its index, offset, tile and in-tile index</div>
<div id="count"></div>
{svg(pic)}
<script type="application/json" id="facts">{escape(json.dumps(facts), quote=False)}</script>
<script>{_SCRIPT}</script>
</body>
</html>
"""
