"""The HTML page of any picture whose cells carry their facts: the SVG and a hover read-out.

Every picture kind draws each cell as ``<g class="cell">`` with ``data-*`` attributes (its
index, thread, value, warp, offset, bank, phase, lane, box, sector, ...). The page's script
prints the attributes of the cell under the mouse in the order they are written
(``data-index`` as ``index (i,j)``; ``data-m``/``data-n`` are left out beside it) and lights
the cell and every cell of the same thread. ``#hover=I,J`` in the address shows the first
cell of index ``(I,J)`` without a mouse.

>>> page = svg_page('<svg><title>t</title><g class="cell" data-index="0,1" data-thread="3"></g></svg>')
>>> page.startswith("<!DOCTYPE html>"), 'id="info"' in page, ">t</h1>" in page
(True, True, True)
"""

from __future__ import annotations

import re
from html import escape, unescape

__all__ = ["svg_page"]

_SCRIPT = """
(function () {
  var info = document.getElementById('info');
  var cells = document.querySelectorAll('g.cell');
  var lit = [];
  function facts(g) {
    var out = [];
    var hasIndex = g.hasAttribute('data-index');
    Array.prototype.forEach.call(g.attributes, function (a) {
      if (a.name.indexOf('data-') !== 0) { return; }
      var key = a.name.slice(5);
      if (hasIndex && (key === 'm' || key === 'n')) { return; }
      out.push(key === 'index' ? 'index (' + a.value + ')' : key + ' ' + a.value);
    });
    return out.join('  ');
  }
  function clear() { lit.forEach(function (e) { e.classList.remove('lit'); }); lit = []; }
  function show(g) {
    clear();
    var t = g.getAttribute('data-thread');
    var same = t === null || t === '-1' ? [g] :
      document.querySelectorAll('g.cell[data-thread="' + t + '"]');
    Array.prototype.forEach.call(same, function (e) { e.classList.add('lit'); lit.push(e); });
    info.textContent = facts(g);
    info.setAttribute('data-shown', g.getAttribute('data-index') || '');
  }
  cells.forEach(function (g) { g.addEventListener('mouseenter', function () { show(g); }); });
  var m = /hover=([0-9,]+)/.exec(decodeURIComponent(location.hash));
  if (m) {
    var g = document.querySelector('g.cell[data-index="' + m[1] + '"]');
    if (g) { show(g); }
  }
  document.getElementById('count').textContent = cells.length + ' cells drawn';
})();
"""

_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


def svg_page(svg: str, title: str = "") -> str:
    """A standalone HTML page: ``svg`` and the hover read-out of its cells (see the module doc);
    ``title`` defaults to the SVG's own."""
    found = _TITLE.search(svg)
    head = title or (unescape(found.group(1)) if found else "tensorlayout picture")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(head)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
#info {{ font-family: monospace; font-size: 15px; min-height: 1.4em; margin: 0.5em 0; white-space: pre; }}
g.cell {{ cursor: crosshair; }}
g.cell.lit rect {{ stroke: #000; stroke-width: 3; }}
</style>
</head>
<body>
<h1 style="font-size:18px">{escape(head)}</h1>
<div id="info">hover a cell to see what it holds</div>
<div id="count"></div>
{svg}
<script>{_SCRIPT}</script>
</body>
</html>
"""
