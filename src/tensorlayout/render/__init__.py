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

Names load on first use (a module ``__getattr__`` over :data:`_LAZY`): importing the package
costs nothing until a picture is drawn, and a command that draws no picture never pays for the
GPU and Triton drawers.

Seed Figure 1:

>>> svg = to_svg("f32[3,5]{1,0:T(2,2)}")
>>> svg.count('class="cell"'), svg.count('class="slot pad"'), 'data-offset="17"' in svg
(15, 9, True)
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
    from tensorlayout.convert import is_xla_text
    from tensorlayout.render._coalescing import coalescing_svg, global_of
    from tensorlayout.render._design import design_svg
    from tensorlayout.render._draw import MAX_SLOTS, Cell, Picture, picture
    from tensorlayout.render._extent import MAX_CELLS, MAX_SIDE, Window, check_window
    from tensorlayout.render._page import svg_page
    from tensorlayout.render._partition import partition_svg, thread_coords
    from tensorlayout.render._pictures import target_from_text, to_html, to_pdf, to_png, to_svg
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
    "convert_svg",
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
    "svg_page",
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

#: name -> (module, attribute): where each public name lives
_LAZY: dict[str, tuple[str, str]] = {
    "target_from_text": ("tensorlayout.render._pictures", "target_from_text"),
    "to_html": ("tensorlayout.render._pictures", "to_html"),
    "to_pdf": ("tensorlayout.render._pictures", "to_pdf"),
    "to_png": ("tensorlayout.render._pictures", "to_png"),
    "to_svg": ("tensorlayout.render._pictures", "to_svg"),
    "coalescing_svg": ("tensorlayout.render._coalescing", "coalescing_svg"),
    "global_of": ("tensorlayout.render._coalescing", "global_of"),
    "design_svg": ("tensorlayout.render._design", "design_svg"),
    "MAX_SLOTS": ("tensorlayout.render._draw", "MAX_SLOTS"),
    "Cell": ("tensorlayout.render._draw", "Cell"),
    "Picture": ("tensorlayout.render._draw", "Picture"),
    "picture": ("tensorlayout.render._draw", "picture"),
    "MAX_CELLS": ("tensorlayout.render._extent", "MAX_CELLS"),
    "MAX_SIDE": ("tensorlayout.render._extent", "MAX_SIDE"),
    "Window": ("tensorlayout.render._extent", "Window"),
    "check_window": ("tensorlayout.render._extent", "check_window"),
    "svg_page": ("tensorlayout.render._page", "svg_page"),
    "partition_svg": ("tensorlayout.render._partition", "partition_svg"),
    "thread_coords": ("tensorlayout.render._partition", "thread_coords"),
    "RASTER_FORMATS": ("tensorlayout.render._raster", "FORMATS"),
    "convert_svg": ("tensorlayout.render._raster", "convert_svg"),
    "Source": ("tensorlayout.render._source", "Source"),
    "source_of": ("tensorlayout.render._source", "source_of"),
    "to_tikz": ("tensorlayout.render._tikz", "to_tikz"),
    "tma_boxes": ("tensorlayout.render._tma", "tma_boxes"),
    "tma_boxes_svg": ("tensorlayout.render._tma", "tma_boxes_svg"),
    "linear_layout_svg": ("tensorlayout.render._triton", "linear_layout_svg"),
    "shared_banks_svg": ("tensorlayout.render._tv", "shared_banks_svg"),
    "tiled_copy_svg": ("tensorlayout.render._tv", "tiled_copy_svg"),
    "tiled_mma_svg": ("tensorlayout.render._tv", "tiled_mma_svg"),
    "tv_svg": ("tensorlayout.render._tv", "tv_svg"),
    "register": ("tensorlayout.render.display", "register"),
    "repr_svg": ("tensorlayout.render.display", "repr_svg"),
    "is_xla_text": ("tensorlayout.convert", "is_xla_text"),
}


def __getattr__(name: str) -> Any:
    """Load ``name`` from its module on first use (and keep it here)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if "IPython" in sys.modules:  # inside IPython/Jupyter: layouts display as pictures
    import_module("tensorlayout.render.display").register()
