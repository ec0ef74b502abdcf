"""The views of one input, each an HTML fragment built from render's pictures and the CLI's texts.

A view is a rule in :data:`VIEWS`: which kinds of input it applies to and the function that
draws it from the :class:`~tensorlayout.explore._read.Entry` and the page state (window, element
bits, access, tile, shape). A view that cannot be drawn for this input raises a
TensorLayoutError whose message the page shows in place of the picture.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from html import escape
from typing import Any

import numpy as np

from tensorlayout import convert, render, triton
from tensorlayout.cli import _show_as
from tensorlayout.cli import _triton as cli_triton
from tensorlayout.cli._target import Target
from tensorlayout.cli._window import Window, parse_window
from tensorlayout.cli.padding import shape_text
from tensorlayout.core.intmath import prod
from tensorlayout.cute import ComposedLayout, Layout, size
from tensorlayout.cute.swizzle import parse_layout
from tensorlayout.cute.tla import element_bits
from tensorlayout.errors import TensorLayoutError, UnsupportedError
from tensorlayout.explore._read import Entry
from tensorlayout.gpu import TVLayout
from tensorlayout.gpu.banks import shared_core, vector_access
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA
from tensorlayout.indexing import IndexingMap
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.render._triton import is_distributed
from tensorlayout.triton import LinearLayout
from tensorlayout.xla import Shape
from tensorlayout.xla.padding import padding_report

__all__ = ["VIEWS", "View", "notation_rows", "panel", "pre", "state_window"]

State = Mapping[str, str]


@dataclass(frozen=True)
class View:
    """A view: its label, the input kinds it applies to, and its drawer ``(entry, state) -> html``."""

    label: str
    kinds: frozenset[str]
    draw: Callable[[Entry, State], str]
    applies: Callable[[Entry], bool] = lambda entry: True


def pre(text: str, cls: str = "text") -> str:
    """Text as a preformatted block."""
    return f'<pre class="{cls}">{escape(text)}</pre>'


def panel(name: str, title: str, body: str) -> str:
    """One labelled panel (``data-panel`` names it for the hover links between panels)."""
    return (f'<div class="panel" data-panel="{escape(name)}"><div class="ptitle">{escape(title)}</div>'
            f"{body}</div>")


def state_window(state: State, dims: tuple[int, ...]) -> Window | None:
    """The window the state asks for (``win=A:B,C:D`` as ``show --window`` reads it), or None."""
    text = state.get("win", "").strip()
    return parse_window(text, dims) if text else None


def _bits(state: State) -> int:
    return element_bits(state.get("dtype", "f16") or "f16")


# ---------------------------------------------------------------- layouts (XLA, CuTe, TLA)


def _target(entry: Entry) -> Target:
    assert isinstance(entry.obj, Target)
    return entry.obj


#: An indexing map's grid is drawn by evaluating it at every point: at most this many.
MAP_POINTS = 1 << 14


def _map_target(m: IndexingMap) -> PhysicalTarget:
    """A map with one result over a box domain from 0 and no symbols, as explicit offsets."""
    if m.num_symbols or m.num_results != 1 or m.num_constraints:
        raise UnsupportedError("the grid of an indexing map is drawn for one result over its dims "
                               f"(no symbols, no constraints); this one has {m.num_results} results, "
                               f"{m.num_symbols} symbols, {m.num_constraints} constraints")
    bounds = [v.bounds for v in m.dim_vars]
    if any(b.lower != 0 for b in bounds):
        raise UnsupportedError("the grid of an indexing map needs each dim to start at 0")
    dims = tuple(b.upper + 1 for b in bounds)
    if prod(dims) > MAP_POINTS:
        raise UnsupportedError(f"the grid of an indexing map evaluates every point: at most {MAP_POINTS}, "
                               f"this domain has {prod(dims)}")
    offsets = [m.evaluate(list(p))[0] for p in np.ndindex(*dims)]
    return PhysicalTarget.from_offsets(dims, offsets, name=str(m.results[0]))


def _grid(entry: Entry, state: State) -> str:
    if entry.kind == "map":
        offsets = _map_target(entry.obj)
        window = state_window(state, offsets.logical_shape)
        return panel("L", f"offset {offsets.name} at each point", render.to_svg(offsets, window=window))
    if entry.kind == "triton":
        ll = entry.obj
        window = state_window(state, cli_triton.picture_dims(ll))
        return panel("L", entry.title, render.to_svg(ll, window=window))
    target = _target(entry)
    window = state_window(state, target.dims) if target.has_grid else None
    return panel("L", target.text, render.to_svg(target.layout, window=window))


def notation_rows(rows: list[tuple[str, Callable[[], str]]]) -> str:
    """A table of (notation, its text or why there is none)."""
    out = ['<table class="notations">']
    for name, text in rows:
        try:
            cell, cls = text(), "ok"
        except TensorLayoutError as err:
            cell, cls = f"none: {err}", "why"
        out.append(f'<tr><th>{escape(name)}</th><td class="{cls}" data-notation="{escape(name)}">'
                   f"<pre>{escape(cell)}</pre></td></tr>")
    return "".join(out) + "</table>"


_NOTATION_NAMES = {"xla": "XLA", "cute": "CuTe", "triton": "Triton (shared, offset -> element)",
                   "map": "indexing map"}
#: The notations shown for an XLA/CuTe target: ``show --as``'s, but its (thread, value) form of a
#: Triton layout, which the Triton rows above give.
_TARGET_NOTATIONS = tuple(n for n in _show_as.NOTATIONS if n != "cute-tv")


def _notations(entry: Entry, state: State) -> str:
    if entry.kind == "triton":
        ll = entry.obj
        dtype = state.get("dtype", "f16") or "f16"
        return notation_rows([
            ("Triton", lambda: str(ll).strip("\n")),
            ("CuTe", lambda: cli_triton.converted(ll, "cute", dtype)),
            ("CuTe, one mode per in dim", lambda: str(triton.to_cute(ll))),
            ("XLA", lambda: cli_triton.converted(ll, "xla", dtype)),
            ("indexing map", lambda: str(convert.to_indexing_map(triton.element_layout(ll)))),
            ("Triton's picture", lambda: cli_triton.show_text(ll, None))])
    if entry.kind in ("mma", "copy"):
        obj = entry.obj
        gpu_rows: list[tuple[str, Callable[[], str]]] = [("CuTe", lambda: str(obj))]
        if isinstance(obj, TiledMMA):
            gpu_rows += [(f"TV {k.upper()}", partial(_tv_text, obj, k)) for k in "abc"]
        return notation_rows(gpu_rows)
    if entry.kind == "map":
        m: IndexingMap = entry.obj
        return notation_rows([("indexing map", lambda: str(m)), ("simplified", lambda: str(m.simplify())),
                              ("result ranges", lambda: ", ".join(map(str, m.compute_result_ranges()))),
                              ("XLA / CuTe / Triton", _map_only)])
    target = _target(entry)
    return notation_rows([(_NOTATION_NAMES[n], partial(_show_as.converted, target, n))
                          for n in _TARGET_NOTATIONS])


def _tv_text(tm: TiledMMA, operand: str) -> str:
    return str(getattr(tm, f"layout_{operand}_tv")())


def _map_only() -> str:
    raise UnsupportedError("an indexing map is read here as a map; tensorlayout derives maps from "
                           "layouts (type the layout to see its map), not layouts from maps")


def _smem(entry: Entry) -> Layout | ComposedLayout:
    """The entry as a CuTe layout of shared memory: ``show --as cute``'s answer, read back."""
    lay = parse_layout(_show_as.converted(_target(entry), "cute"))
    if not isinstance(lay, (Layout, ComposedLayout)):
        raise UnsupportedError(f"{entry.title}: banks need a layout of offsets, not of coordinates")
    return lay


def _banks(entry: Entry, state: State) -> str:
    smem = _smem(entry)
    tile = shared_core(smem).shape
    if len(tile) != 2:
        raise UnsupportedError(f"banks are drawn for a 2-D tile; {entry.title} has rank {len(tile)}")
    bits, how = _bits(state), state.get("access", "row") or "row"
    access = vector_access((tile[0], tile[1]), bits, 128, how)
    svg = render.shared_banks_svg(smem, bits, access, window=state_window(state, tile))
    return panel("L", f"{entry.title}: shared memory, {bits}-bit elements, 128-bit vectors along {how}s", svg)


def _sectors(entry: Entry, state: State) -> str:
    bits = _bits(state)
    if entry.kind == "triton":
        ll = entry.obj
        glay = render.global_of(ll, None)
        dims = tuple(int(size(glay[k])) for k in range(glay.rank()))
        svg = render.coalescing_svg(ll, None, bits, window=state_window(state, dims))
        return panel("L", f"{entry.title}: warp 0's first request, {bits}-bit elements", svg)
    plain = _smem(entry)
    if not isinstance(plain, Layout) or plain.rank() != 2:
        raise UnsupportedError(f"sectors are drawn for a 2-D plain layout of the global tensor; "
                               f"got {entry.title}")
    dims = (int(size(plain[0])), int(size(plain[1])))
    how = state.get("access", "row") or "row"
    access = vector_access(dims, bits, 128, how)
    svg = render.coalescing_svg(access, plain, bits, window=state_window(state, dims))
    return panel("L", f"{entry.title} as global memory: a warp reading 128-bit vectors along {how}s", svg)


def _padding(entry: Entry, state: State) -> str:
    lay = _target(entry).layout
    if not isinstance(lay, Shape):
        raise UnsupportedError("the padding report is for XLA shapes (try f32[3,5]{1,0:T(2,2)})")
    gen = state.get("tpu", "v5e") or "v5e"
    return pre(shape_text(padding_report(lay, generation=gen), gen))


def _tile(state: State) -> tuple[int, int]:
    text = state.get("tile", "").strip()
    try:
        m, n = (int(p) for p in text.split(","))
    except ValueError:
        raise UnsupportedError("a TV layout (thread, value) -> m + M*n needs its tile: fill in "
                               f"tile as M,N (got {text!r})") from None
    return m, n


def _tv(entry: Entry, state: State) -> str:
    obj = entry.obj
    if entry.kind == "layout":
        lay = _target(entry).layout
        if not isinstance(lay, Layout) or lay.rank() != 2:
            raise UnsupportedError("a TV layout is a rank-2 plain CuTe layout (thread, value)")
        obj = TVLayout(lay, _tile(state))
        dims: tuple[int, ...] = obj.tile
    elif isinstance(obj, TiledMMA):
        dims = obj.tile_size()
    elif isinstance(obj, TiledCopy):
        dims = obj.tv_s().tile
    else:
        dims = ()
    window = state_window(state, dims) if dims else None
    return panel("L", entry.title, render.to_svg(obj, window=window))


def _is_layout(entry: Entry) -> bool:
    return isinstance(entry.obj, Target) and entry.obj.has_grid


def _is_xla(entry: Entry) -> bool:
    return isinstance(entry.obj, Target) and isinstance(entry.obj.layout, Shape)


def _has_sectors(entry: Entry) -> bool:
    return entry.kind == "layout" or (isinstance(entry.obj, LinearLayout) and is_distributed(entry.obj))


#: Every view of one input by name, in the order the page lists them.
VIEWS: dict[str, View] = {
    "grid": View("offset grid and memory strip", frozenset({"layout", "triton", "map"}), _grid,
                 lambda e: e.kind != "layout" or _is_layout(e)),
    "tv": View("thread / value ownership", frozenset({"mma", "copy", "layout"}), _tv,
               lambda e: e.kind != "layout" or isinstance(e.obj.layout, Layout)),
    "notations": View("other notations", frozenset({"layout", "triton", "mma", "copy", "map"}), _notations),
    "banks": View("shared-memory banks", frozenset({"layout"}), _banks, _is_layout),
    "sectors": View("global-memory sectors", frozenset({"layout", "triton"}), _sectors, _has_sectors),
    "padding": View("padding", frozenset({"layout"}), _padding, _is_xla),
}


def views_of(entry: Entry) -> list[str]:
    """The names of the views that apply to ``entry``."""
    return [name for name, v in VIEWS.items() if entry.kind in v.kinds and v.applies(entry)]


def draw(name: str, entry: Entry, state: State) -> Any:
    """The HTML of view ``name`` of ``entry``."""
    return VIEWS[name].draw(entry, state)
