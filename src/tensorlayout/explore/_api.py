"""The explorer's one question: given the page state (the input text, the view and its
settings), what does the page show? The answer is JSON, the same whether the local server
computes it live or a saved page carries it precomputed.

>>> a = answer({"q": "(4,8):(8,1)", "view": "grid"})
>>> a["ok"], a["kind"], a["view"], 'class="cell"' in a["html"]
(True, 'layout', 'grid', True)
>>> answer({"q": "f32[3,5"})["error"]
"ParseError: expected ',' or ']' in the dimensions at line 1, column 8, but got end of input"
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from tensorlayout.cli._target import Target
from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.explore._ops import OP_VIEWS
from tensorlayout.explore._read import Entry, read
from tensorlayout.explore._views import VIEWS, draw, views_of

__all__ = ["STATE_KEYS", "answer", "canonical", "shape_of", "state_key"]

#: The page state: the input, the view and the settings views read (all strings).
STATE_KEYS = ("q", "view", "shape", "win", "dtype", "access", "tile", "tpu", "zoom")
#: Settings that change what the server computes (zoom is the page's own).
_COMPUTED = tuple(k for k in STATE_KEYS if k != "zoom")


def canonical(state: Mapping[str, str]) -> dict[str, str]:
    """The state's computed settings, empty ones left out."""
    return {k: str(state[k]).strip() for k in _COMPUTED if str(state.get(k, "") or "").strip()}


def state_key(state: Mapping[str, str]) -> str:
    """The key a saved page stores an answer under (the page's script builds the same string).

    >>> state_key({"view": "grid", "q": "8:1", "zoom": "2"})
    '[["q","8:1"],["view","grid"]]'
    """
    return json.dumps(sorted(canonical(state).items()), separators=(",", ":"), ensure_ascii=False)


def _one_line(err: BaseException) -> str:
    return f"{type(err).__name__}: " + " ".join(p.strip() for p in str(err).splitlines() if p.strip())


def shape_of(text: str) -> list[int] | None:
    """The tensor shape typed in the shape field (``16,16`` or ``16x16``; empty: None).

    >>> shape_of("16x32"), shape_of("")
    ([16, 32], None)
    """
    if not text:
        return None
    try:
        dims = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    except ValueError:
        raise LayoutError(f"the shape is dims like 16,16, got {text!r}") from None
    return dims or None


def _result_entry(entry: Entry) -> Entry:
    """An operation's result as a layout entry (its grid and notations)."""
    result = entry.obj.result
    return Entry("layout", Target("cute", result, str(result)), str(result))


def _menu(entry: Entry) -> list[tuple[str, str]]:
    if entry.kind == "op":
        return [(n, label) for n, (label, _) in OP_VIEWS.items()] + \
            [(n, f"result: {VIEWS[n].label}") for n in views_of(_result_entry(entry))]
    return [(n, VIEWS[n].label) for n in views_of(entry)]


def _draw(entry: Entry, view: str, state: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    if entry.kind == "op" and view in OP_VIEWS:
        return OP_VIEWS[view][1](entry, state)
    target = _result_entry(entry) if entry.kind == "op" else entry
    return draw(view, target, state), {}


def answer(state: Mapping[str, str]) -> dict[str, Any]:
    """What the page shows for ``state`` (see the module doc): ``ok`` and the input's kind,
    title, views (name, label), the view drawn (``html``; ``links`` for operations; its
    ``view_error`` instead when this view cannot be drawn for it) and the time it took; or
    ``ok`` false and the one-line ``error`` of a bad input."""
    start = time.perf_counter()
    st = canonical(state)
    try:
        entry = read(st.get("q", ""), shape_of(st.get("shape", "")))
    except TensorLayoutError as err:
        return {"ok": False, "error": _one_line(err), "state": st}
    menu = _menu(entry)
    names = [n for n, _ in menu]
    view = st["view"] if st.get("view") in names else names[0]
    out: dict[str, Any] = {"ok": True, "kind": entry.kind, "title": entry.title, "views": menu, "view": view,
                           "state": st}
    try:
        out["html"], out["links"] = _draw(entry, view, st)
    except TensorLayoutError as err:
        out["html"], out["links"], out["view_error"] = "", {}, _one_line(err)
    out["ms"] = round(1000 * (time.perf_counter() - start), 1)
    return out
