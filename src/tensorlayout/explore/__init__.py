"""The explorer: one page (served locally, or saved as a self-contained file) that reads any
notation the library reads and shows its views, operations and derivations live.

:func:`answer` is the page's one question (the state in, the view as JSON out); :func:`serve`
runs the local server (``tensorlayout explore``); :func:`saved_page` is the page with every
view of the given inputs precomputed, to open from disk (``tensorlayout explore ... -o page.html``).

>>> a = answer({"q": "logical_divide((8,8):(8,1),(2,4))", "view": "op"})
>>> a["kind"], [name for name, _ in a["views"]][:2], a["links"]["2,0"]
('op', ['op', 'explain'], {'A': '2,0'})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tensorlayout.errors import TensorLayoutError
from tensorlayout.explore._api import STATE_KEYS, answer, shape_of, state_key
from tensorlayout.explore._page import EXAMPLES, page
from tensorlayout.explore._read import Entry, read
from tensorlayout.explore._server import HOST, make_server

__all__ = ["EXAMPLES", "HOST", "STATE_KEYS", "Entry", "answer", "make_server", "page", "read", "saved_page",
           "shape_of", "state_key"]


def _answers(text: str, settings: Mapping[str, str]) -> dict[str, Any]:
    """Every view of one input, keyed as the page looks them up (the default view twice:
    with and without its name)."""
    base = {**settings, "q": text}
    first = answer(base)
    if not first["ok"]:
        raise TensorLayoutError(f"{text!r}: {first['error']}")
    out = {state_key(base): first}
    for name, _label in first["views"]:
        state = {**base, "view": name}
        out[state_key(state)] = first if name == first["view"] else answer(state)
    return out


def saved_page(texts: Sequence[str], settings: Mapping[str, str] | None = None) -> str:
    """The explorer page for ``texts`` with every view precomputed, to open from disk without
    the server (``settings``: the shape, dtype, ... each view is drawn with). A text the
    library cannot read raises its TensorLayoutError.

    >>> html = saved_page(["(4,8):(8,1)"])
    >>> 'data-q="(4,8):(8,1)"' in html, "api?" in html
    (True, True)
    """
    if not texts:
        raise TensorLayoutError("a saved page needs at least one layout")
    pre: dict[str, Any] = {}
    for text in texts:
        pre.update(_answers(text, dict(settings or {})))
    return page(pre, examples=list(texts))


