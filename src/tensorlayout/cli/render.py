"""``tensorlayout render TARGET -o OUT``: draw a layout as SVG or as an HTML page.

TARGET is an XLA array shape such as ``'f32[3,5]{1,0:T(2,2)}'``; the format follows the
suffix of OUT (``.svg`` or ``.html``). The picture shows the logical grid colored by tile
with each cell's offset, and the memory-order strip beneath (padding white); the HTML page
adds a hover read-out of index, offset, tile and in-tile index.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tensorlayout.errors import UnsupportedError

_FORMATS = (".svg", ".html", ".htm")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="draw a layout as SVG or HTML",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", help="XLA shape text, e.g. 'f32[3,5]{1,0:T(2,2)}'")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; .svg or .html chooses the format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tensorlayout import render

    out = Path(args.output)
    suffix = out.suffix.lower()
    if suffix not in _FORMATS:
        raise UnsupportedError(f"cannot tell the picture format of {str(out)!r}: "
                               f"use a name ending in .svg or .html")
    target = render.target_from_text(args.target)
    text = render.to_svg(target) if suffix == ".svg" else render.to_html(target)
    out.write_text(text, encoding="utf-8")
    return 0
