"""`tensorlayout render TARGET -o OUT`: draw a layout as SVG or as an HTML page."""

from __future__ import annotations

import argparse
from pathlib import Path

from tensorlayout import render
from tensorlayout.cli._io import STDIO, write_output
from tensorlayout.cli._target import add_target_arguments, target_of
from tensorlayout.errors import UnsupportedError

__all__ = ["DESCRIPTION", "register", "run"]

_FORMATS = {".svg": "svg", ".html": "html", ".htm": "html"}

DESCRIPTION = """\
Draw a layout: the logical grid colored by tile with each cell's offset, and the
memory-order strip beneath (padding white); the HTML page adds a hover read-out of index,
offset, tile and in-tile index. Rank 1 draws one row; rank > 2 stacks the slices (one row
per index of all but the last dim). At most 64x64 cells and the first 2048 slots are drawn,
so any size works.

TARGET is an XLA shape ('f32[3,5]{1,0:T(2,2)}'), a CuTe layout
('((4,2),(4,3)):((4,16),(1,32))'), or '-' to read it from stdin; --tla FORMAT --rows R
--cols C [--dtype T] names an Ascend TLA format instead. The picture format follows the
suffix of OUT (.svg or .html); '-o -' writes to stdout, SVG unless --format html.

examples:
  tensorlayout render 'f32[4,8]{1,0:T(2,4)(2,1)}' -o fig2.html
  tensorlayout render --tla zN --rows 8 --cols 12 -o - > zn.svg
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="draw a layout as SVG or HTML",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; .svg or .html chooses the format; '-' is stdout")
    p.add_argument("--format", choices=("svg", "html"),
                   help="the picture format (default: from the suffix of OUT; svg for stdout)")
    p.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output == STDIO:
        return "svg"
    suffix = Path(args.output).suffix.lower()
    if suffix not in _FORMATS:
        raise UnsupportedError(f"cannot tell the picture format of {args.output!r}: use a name "
                               "ending in .svg or .html, or --format")
    return _FORMATS[suffix]


def run(args: argparse.Namespace) -> int:
    kind = _format(args)
    target = target_of(args, missing=UnsupportedError)
    text = render.to_svg(target.layout) if kind == "svg" else render.to_html(target.layout)
    write_output(args.output, text)
    return 0
