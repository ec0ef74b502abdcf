"""The operation views: inputs and result side by side with linked colours, and the derivation.

A cell of the result is coloured like the cell of ``A`` it came from, and its entry in the links
(``links[result index] = {"A": index in A, "B": index in B}``) lets the page light those cells
when the mouse is on it. Where a result cell comes from is found from the definitions:

* ``A ∘ L`` forms (composition, the divides, coalesce) are the same operation applied to the
  identity of A's domain (``make_layout(shape(A))`` maps each coordinate to its flat index), so
  the result there gives, per cell, the flat index in A it reads;
* inverses give the index of A as their value;
* products place copies of A: each result offset is ``A(i) + T(j)`` (T the tiles of the logical
  product), split back into ``i`` and ``j``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html import escape
from typing import Any

import numpy as np

from tensorlayout import render
from tensorlayout.cute import Layout, algebra, coalesce, make_layout, size
from tensorlayout.cute.explain import Derivation, Step
from tensorlayout.errors import TensorLayoutError
from tensorlayout.explore._read import Entry
from tensorlayout.explore._views import panel, state_window

__all__ = ["LINKED_CELLS", "draw_explain", "draw_operation", "links_of"]

#: Results with more cells than this are drawn without links (the picture caps still apply).
LINKED_CELLS = 1 << 14
#: Steps drawn as pictures when they have at most this many cells (else their text only).
STEP_PICTURE_CELLS = 1024

State = Mapping[str, str]


def _dims(lay: Layout) -> tuple[int, ...]:
    """The dims render draws a CuTe layout over: its top-level mode sizes."""
    return tuple(int(size(m)) for m in lay.modes()) if isinstance(lay.shape, tuple) else (lay.size(),)


def _keys(lay: Layout) -> list[str]:
    """The ``data-index`` of each flat (colexicographic) index of ``lay``, as render writes it."""
    dims = _dims(lay)
    coords = np.unravel_index(np.arange(lay.size()), dims, order="F")
    return [",".join(str(int(c[k])) for c in coords) for k in range(lay.size())]


def _values(lay: Layout) -> np.ndarray:
    return np.array([lay(k) for k in range(lay.size())], dtype=np.int64)


def _compose_source(d: Derivation) -> np.ndarray | None:
    """Per result cell, the flat index of A it reads: the operation applied to A's identity."""
    a = d.inputs[0][1]
    assert isinstance(a, Layout)
    ident = make_layout(a.shape)
    if d.op == "coalesce":
        src = coalesce(ident)
    else:
        src = getattr(algebra, d.op)(ident, d.inputs[1][1])
    if src.size() != d.result.size():
        return None
    idx = _values(src)
    # past A's domain (a composition may extend A) the identity extends differently: no link there
    ok = (idx >= 0) & (idx < a.size())
    ok[ok] = _values(d.result)[ok] == np.array([a(int(i)) for i in idx[ok]], dtype=np.int64)
    return np.where(ok, idx, -1)


def _inverse_source(d: Derivation) -> np.ndarray | None:
    return _values(d.result)


def _product_source(d: Derivation) -> tuple[np.ndarray, np.ndarray] | None:
    """Per result cell, (the index in A, the index of the copy): offsets ``A(i) + T(j)``."""
    a, tiler = d.inputs[0][1], d.inputs[1][1]
    assert isinstance(a, Layout)
    lp = algebra.logical_product(a, tiler)
    if isinstance(tiler, tuple):
        tiles = make_layout(*(lp[i][1] for i in range(len(tiler))))
    else:
        tiles = lp[1]
    where: dict[int, tuple[int, int]] = {}
    for j in range(tiles.size()):
        t = tiles(j)
        for i in range(a.size()):
            where.setdefault(a(i) + t, (i, j))
    pairs = [where.get(v, (-1, -1)) for v in _values(d.result).tolist()]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _sources(d: Derivation) -> dict[str, np.ndarray]:
    """Per input name, the flat index in it of each result cell (-1: none)."""
    if d.op in ("right_inverse", "left_inverse"):
        src = _inverse_source(d)
        return {"A": src} if src is not None else {}
    if d.op.endswith("_product"):
        both = _product_source(d)
        return {"A": both[0], "B": both[1]} if both is not None else {}
    if d.op == "complement":
        return {}
    src = _compose_source(d)
    out = {"A": src} if src is not None else {}
    if d.op == "composition" and isinstance(d.inputs[1][1], Layout):
        out["B"] = np.arange(d.result.size())
    return out


def links_of(d: Derivation) -> dict[str, dict[str, str]]:
    """``{result index: {input name: index in that input}}`` for the page's hover links.

    >>> from tensorlayout.cute.explain import explain
    >>> links_of(explain("composition((4,4):(4,1),(2,2):(2,8))"))["1,0"]
    {'A': '2,0', 'B': '1,0'}
    """
    if d.result.size() > LINKED_CELLS:
        return {}
    try:
        sources = _sources(d)
    except TensorLayoutError:  # the identity trick needs what A needed; links are then left out
        return {}
    keys = _keys(d.result)
    inputs = {n: _keys(v) for n, v in d.inputs if isinstance(v, Layout)}
    out: dict[str, dict[str, str]] = {}
    for name, src in sources.items():
        if name not in inputs:
            continue
        for k, i in enumerate(src.tolist()):
            if 0 <= i < len(inputs[name]):
                out.setdefault(keys[k], {})[name] = inputs[name][i]
    return out


def _ids(lay: Layout, flat: np.ndarray) -> np.ndarray:
    """Tile ids over ``lay``'s drawn dims (C order) from per-flat-index values."""
    dims = _dims(lay)
    ids = np.full(dims, -1, dtype=np.int64)
    ids[np.unravel_index(np.arange(lay.size()), dims, order="F")] = flat
    return ids


def _picture(lay: Layout, ids: np.ndarray | None, state: State | None) -> str:
    window = state_window(state, _dims(lay)) if state is not None else None
    return render.to_svg(lay, tile_ids=ids, window=window)


def draw_operation(entry: Entry, state: State) -> tuple[str, dict[str, dict[str, str]]]:
    """Inputs and result side by side; the result coloured by the cell of A it came from."""
    d: Derivation = entry.obj
    links = links_of(d)
    sources = _sources(d) if links else {}
    parts = []
    for name, value in d.inputs:
        if isinstance(value, Layout) and value.size():
            own = _ids(value, np.arange(value.size())) if name in sources else None
            parts.append(panel(name, f"{name} = {value}", _picture(value, own, None)))
        else:
            parts.append(panel(name, f"{name} = {_text(value)}", ""))
    first = next(iter(sources.values()), None)
    ids = _ids(d.result, first) if first is not None else None
    parts.append(panel("R", f"{d.expression} = {d.result}", _picture(d.result, ids, state)))
    return '<div class="side">' + "".join(parts) + "</div>", links


def _text(v: Any) -> str:
    return "(" + ",".join(_text(x) for x in v) + ")" if isinstance(v, tuple) else str(v)


def _step_html(i: int, s: Step) -> str:
    value = s.value
    pic = ""
    if isinstance(value, Layout) and 0 < value.size() <= STEP_PICTURE_CELLS:
        pic = _picture(value, None, None)
    return (f'<div class="step" data-step="{escape(s.name)}"><div class="ptitle">{i}. {escape(s.name)} = '
            f"{escape(s.formula)} = <code>{escape(_text(value))}</code></div>"
            f'<div class="why">{escape(s.why)}</div>{pic}</div>')


def draw_explain(entry: Entry, state: State) -> str:
    """The derivation: the inputs, then each step with its layout (drawn when small)."""
    d: Derivation = entry.obj
    head = "".join(f"<div><code>{escape(n)} = {escape(_text(v))}</code></div>" for n, v in d.inputs)
    steps = "".join(_step_html(i, s) for i, s in enumerate(d.steps, 1))
    return (f'<div class="derivation"><div class="ptitle">{escape(d.expression)}</div>{head}{steps}'
            f'<div class="result">result: <code>{escape(str(d.result))}</code></div></div>')


#: The views of an operation: name -> (label, drawer returning html and links).
OP_VIEWS: dict[str, tuple[str, Callable[[Entry, State], tuple[str, dict[str, dict[str, str]]]]]] = {
    "op": ("inputs and result", draw_operation),
    "explain": ("derivation step by step", lambda e, s: (draw_explain(e, s), {})),
}
