"""The explorer page: one HTML file, its style and script inline (no network, no CDN).

The script keeps the whole state in the address (``#q=...&view=...&win=...``), asks for the
answer of a state (:func:`tensorlayout.explore._api.answer`) from the precomputed answers the
page carries, else from the local server (``api?...``), and shows it: the views as buttons, the
view's pictures, a one-line error under the box for bad input, a read-out of the cell under the
mouse (with the cells it is linked to lit in the other panels) and the time the view took.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

__all__ = ["EXAMPLES", "page"]

#: The inputs the page offers as examples (each a link that fills the box).
EXAMPLES = (
    "f32[3,5]{1,0:T(2,2)}",
    "((4,2),(4,3)):((4,16),(1,32))",
    "Sw<3,3,3> o _0 o (8,64):(64,1)",
    "make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN, (2,2,1))",
    "tensor<16x16xf16, #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
    "warpsPerCTA = [2, 1], order = [1, 0]}>>",
    "to_linear_layout(BlockedLayout([1, 2], [4, 8], [4, 1], [1, 0]), [32, 32])",
    "(d0, d1) -> (d1 * 16 + d0), domain: d0 in [0, 15], d1 in [0, 7]",
    "logical_divide((8,8):(8,1),(2,4))",
    "blocked_product((2,2):(1,2),(3,4):(1,3))",
    "right_inverse((4,8):(8,1))",
)

_STYLE = """
body { font-family: sans-serif; margin: 1em 1.5em; color: #222; }
h1 { font-size: 18px; margin: 0 0 .5em 0; }
#bar { display: flex; flex-wrap: wrap; gap: .4em .8em; align-items: center; }
#q { font-family: monospace; font-size: 15px; width: min(100%, 62em); padding: .3em; }
#bar label { font-size: 13px; }
#bar input.small { width: 7em; font-family: monospace; }
#error { color: #b00020; font-family: monospace; min-height: 1.3em; margin: .3em 0; white-space: pre; }
#views button { margin: .2em .3em .2em 0; padding: .25em .7em; border: 1px solid #888; background: #f4f4f4;
  border-radius: 3px; cursor: pointer; }
#views button.on { background: #2b5797; color: #fff; border-color: #2b5797; }
#readout { font-family: monospace; font-size: 14px; min-height: 1.3em; margin: .3em 0; white-space: pre; }
#timing { font-size: 12px; color: #666; }
#content.stale { opacity: .35; }
.view-error { color: #b00020; font-family: monospace; }
.side { display: flex; flex-wrap: nowrap; gap: 1em; align-items: flex-start; }
.side .panel { flex: 0 1 auto; min-width: 6em; }
.panel { border: 1px solid #ddd; padding: .4em; overflow: auto; max-width: 100%; }
.ptitle { font-family: monospace; font-size: 13px; margin-bottom: .3em; }
.why { font-size: 12px; color: #555; margin-bottom: .3em; }
.step { border-left: 3px solid #2b5797; padding-left: .6em; margin: .8em 0; }
table.notations th { text-align: left; vertical-align: top; padding-right: 1em; font-size: 13px; }
table.notations td pre { margin: .2em 0; }
table.notations td.why pre { color: #8a4b00; white-space: pre-wrap; }
g.cell { cursor: crosshair; }
g.cell.lit rect, rect.slot.lit { stroke: #000; stroke-width: 3; }
g.cell.linked rect { stroke: #d00; stroke-width: 3; }
#examples a { font-family: monospace; font-size: 12px; display: block; margin: .15em 0; }
"""

_SCRIPT = r"""
(function () {
  'use strict';
  var PRE = JSON.parse(document.getElementById('precomputed').textContent);
  var KEYS = ['q', 'view', 'shape', 'win', 'dtype', 'access', 'tile', 'tpu', 'zoom'];
  var LOCAL = ['zoom'];
  var $ = function (id) { return document.getElementById(id); };
  var state = {}, links = {}, back = {}, seq = 0, shownSeq = 0;
  function readHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ''));
    var s = {};
    KEYS.forEach(function (k) { var v = p.get(k); if (v !== null && v.trim() !== '') { s[k] = v; } });
    return s;
  }
  function writeHash() {
    var p = new URLSearchParams();
    KEYS.forEach(function (k) { if (state[k]) { p.set(k, state[k]); } });
    history.replaceState(null, '', '#' + p.toString());
    $('link').href = location.href;
  }
  function keyOf(s) {
    var items = [];
    KEYS.forEach(function (k) {
      if (LOCAL.indexOf(k) < 0 && s[k] && s[k].trim() !== '') { items.push([k, s[k].trim()]); }
    });
    items.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
    return JSON.stringify(items);
  }
  function fields() {
    ['q', 'shape', 'win', 'dtype', 'access', 'tile', 'tpu'].forEach(function (k) {
      $(k).value = state[k] || '';
    });
    applyZoom();
  }
  function applyZoom() {
    $('content').style.zoom = state.zoom || '1';
    $('zoomv').textContent = (state.zoom || '1') + 'x';
  }
  function showViews(ans) {
    var nav = $('views');
    nav.innerHTML = '';
    (ans.views || []).forEach(function (v) {
      var b = document.createElement('button');
      b.textContent = v[1];
      b.setAttribute('data-view', v[0]);
      if (v[0] === ans.view) { b.className = 'on'; }
      b.addEventListener('click', function () { state.view = v[0]; update(); });
      nav.appendChild(b);
    });
  }
  function show(ans, t0, mySeq) {
    if (mySeq < shownSeq) { return; }
    shownSeq = mySeq;
    var content = $('content');
    if (!ans.ok) {
      $('error').textContent = ans.error;
      content.classList.add('stale');
      document.body.setAttribute('data-status', 'error');
      return;
    }
    $('error').textContent = '';
    content.classList.remove('stale');
    showViews(ans);
    content.innerHTML = ans.view_error ?
      '<div class="view-error">' + escapeHtml(ans.view_error) + '</div>' : ans.html;
    links = ans.links || {};
    back = {};
    Object.keys(links).forEach(function (r) {
      Object.keys(links[r]).forEach(function (n) {
        var k = n + ' ' + links[r][n];
        (back[k] = back[k] || []).push(r);
      });
    });
    $('readout').textContent = 'hover a cell to read it';
    $('readout').removeAttribute('data-shown');
    var ms = performance.now() - t0;
    $('timing').textContent = ans.kind + ' · ' + (ans.title || '') + ' · shown in ' + ms.toFixed(0) + ' ms' +
      (ans.ms !== undefined ? ' (computed in ' + ans.ms + ' ms)' : ' (precomputed)');
    $('timing').setAttribute('data-ms', ms.toFixed(1));
    document.body.setAttribute('data-status', 'shown');
    document.body.setAttribute('data-shown-key', keyOf(state));
    document.body.setAttribute('data-view', ans.view);
  }
  function escapeHtml(t) { var d = document.createElement('div'); d.textContent = t; return d.innerHTML; }
  function update() {
    writeHash();
    var t0 = performance.now(), mySeq = ++seq, key = keyOf(state);
    document.body.setAttribute('data-status', 'loading');
    if (Object.prototype.hasOwnProperty.call(PRE, key)) { show(PRE[key], t0, mySeq); return; }
    if (!/^https?:/.test(location.protocol)) {
      show({ok: false, error: 'this saved page has no precomputed answer for this input or view: ' +
        'run `tensorlayout explore` for live views'}, t0, mySeq);
      return;
    }
    var p = new URLSearchParams();
    KEYS.forEach(function (k) { if (LOCAL.indexOf(k) < 0 && state[k]) { p.set(k, state[k]); } });
    fetch('api?' + p.toString()).then(function (r) { return r.json(); }).then(function (ans) {
      show(ans, t0, mySeq);
    }, function (err) { show({ok: false, error: 'the explorer server did not answer: ' + err}, t0, mySeq); });
  }
  function attrs(g) {
    var out = [];
    Array.prototype.forEach.call(g.attributes, function (a) {
      if (a.name.indexOf('data-') === 0) { out.push(a.name.slice(5) + ' ' + a.value); }
    });
    return out.join('  ');
  }
  function cellKey(g) {
    var i = g.getAttribute('data-index');
    if (i !== null) { return i; }
    var m = g.getAttribute('data-m'), n = g.getAttribute('data-n');
    return m !== null ? m + ',' + n : null;
  }
  function clearLit() {
    document.querySelectorAll('#content .lit, #content .linked').forEach(function (e) {
      e.classList.remove('lit'); e.classList.remove('linked');
    });
  }
  function light(panel, idx, cls) {
    var p = document.querySelector('#content .panel[data-panel="' + panel + '"]');
    if (!p) { return; }
    var g = p.querySelector('g.cell[data-index="' + idx + '"]');
    if (g) { g.classList.add(cls); }
  }
  function hover(g) {
    clearLit();
    g.classList.add('lit');
    var panel = g.closest('.panel'), name = panel ? panel.getAttribute('data-panel') : '';
    var key = cellKey(g), text = (name && name !== 'L' ? name + ' ' : '') + attrs(g);
    if (name === 'R' && links[key]) {
      var from = links[key];
      text += '  <- ' + Object.keys(from).map(function (n) {
        light(n, from[n], 'linked');
        return n + ' (' + from[n] + ')';
      }).join(' ');
    } else if (name && back[name + ' ' + key]) {
      back[name + ' ' + key].forEach(function (r) { light('R', r, 'linked'); });
      text += '  -> R ' + back[name + ' ' + key].map(function (r) { return '(' + r + ')'; }).join(' ');
    }
    var off = g.getAttribute('data-offset');
    var strip = panel ? panel.querySelector('rect.slot[data-offset="' + off + '"]') : null;
    if (strip) { strip.classList.add('lit'); }
    $('readout').textContent = text;
    $('readout').setAttribute('data-shown', (name || '') + ' ' + key);
  }
  $('content').addEventListener('mouseover', function (ev) {
    var g = ev.target.closest ? ev.target.closest('g.cell') : null;
    if (g) { hover(g); }
  });
  ['q', 'shape', 'win', 'tile', 'tpu'].forEach(function (k) {
    $(k).addEventListener('input', function () { state[k] = $(k).value; update(); });
  });
  ['dtype', 'access'].forEach(function (k) {
    $(k).addEventListener('change', function () { state[k] = $(k).value; update(); });
  });
  function zoomBy(f) {
    var z = Math.min(4, Math.max(0.25, parseFloat(state.zoom || '1') * f));
    state.zoom = String(Math.round(z * 100) / 100);
    if (state.zoom === '1') { delete state.zoom; }
    writeHash(); applyZoom();
  }
  $('zoomin').addEventListener('click', function () { zoomBy(1.25); });
  $('link').addEventListener('click', function (ev) {
    ev.preventDefault();
    if (navigator.clipboard) { navigator.clipboard.writeText(location.href).catch(function () {}); }
  });
  $('zoomout').addEventListener('click', function () { zoomBy(0.8); });
  document.querySelectorAll('#examples a').forEach(function (a) {
    a.addEventListener('click', function (ev) {
      ev.preventDefault(); state = {q: a.getAttribute('data-q')}; fields(); update();
    });
  });
  window.addEventListener('hashchange', function () {
    var s = readHash();
    if (keyOf(s) !== keyOf(state) || (s.zoom || '') !== (state.zoom || '')) { state = s; fields(); update(); }
  });
  state = readHash();
  if (!state.q) { state.q = document.body.getAttribute('data-first'); }
  fields();
  update();
})();
"""

_DTYPES = ("", "f32", "bf16", "f8e4m3fn", "s8", "f64")


def _options(values: Sequence[str], labels: Mapping[str, str]) -> str:
    return "".join(f'<option value="{escape(v)}">{escape(labels.get(v, v))}</option>' for v in values)


def page(precomputed: Mapping[str, Any] | None = None, examples: Sequence[str] = EXAMPLES,
         title: str = "tensorlayout explore") -> str:
    """The explorer page; ``precomputed`` maps state keys to answers (a saved page carries all
    of its views; the served page none), ``examples`` are the inputs listed as links (the
    first is shown when the address names none).

    >>> html = page()
    >>> html.startswith("<!DOCTYPE html>"), 'id="q"' in html, "http" in html.split("<script>")[0]
    (True, True, False)
    """
    data = json.dumps(dict(precomputed or {}), separators=(",", ":")).replace("<", "\\u003c")
    links = "".join(f'<a href="#" data-q="{escape(e)}">{escape(e)}</a>' for e in examples)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body data-first="{escape(examples[0] if examples else '')}">
<h1>{escape(title)}</h1>
<div id="bar">
<input id="q" spellcheck="false" autocomplete="off" aria-label="layout"
 placeholder="XLA shape, CuTe layout, Triton/Gluon layout, indexing map, atom, or logical_divide(A, T)">
<label>shape <input id="shape" class="small" placeholder="16,16"></label>
<label>window <input id="win" class="small" placeholder="0:8,0:64"></label>
<label>tile <input id="tile" class="small" placeholder="M,N"></label>
<label>dtype <select id="dtype">{_options(_DTYPES, {"": "f16"})}</select></label>
<label>access <select id="access">{_options(("", "column"), {"": "row"})}</select></label>
<label>TPU <input id="tpu" class="small" placeholder="v5e"></label>
<button id="zoomout" title="zoom out">-</button><span id="zoomv">1x</span>
<button id="zoomin" title="zoom in">+</button>
<a id="link" href="#" title="this view's address: copy it to share the view">link to this view</a>
</div>
<div id="error" role="alert"></div>
<nav id="views"></nav>
<div id="readout"></div>
<div id="timing"></div>
<div id="content"></div>
<h2 style="font-size:14px">examples</h2>
<div id="examples">{links}</div>
<script type="application/json" id="precomputed">{data}</script>
<script>{_SCRIPT}</script>
</body>
</html>
"""
