"""``tensorlayout render TARGET -o OUT``: draw a layout as SVG or as an HTML page.

TARGET is an XLA array shape such as ``'f32[3,5]{1,0:T(2,2)}'``, a CuTe layout such as
``'((4,2),(4,3)):((4,16),(1,32))'``, or (with ``--tla zN --rows R --cols C --dtype f16``) an
Ascend TLA format; the format follows the suffix of OUT (``.svg`` or ``.html``). The picture
shows the logical grid colored by tile with each cell's offset, and the memory-order strip
beneath (padding white); the HTML page adds a hover read-out of index, offset, tile and
in-tile index. Rank 1 draws one row; rank > 2 stacks the slices (one row per index of all but
the last dim). At most 64x64 cells and the first 2048 slots are drawn, so any size works.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tensorlayout.errors import UnsupportedError

_FORMATS = (".svg", ".html", ".htm")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="draw a layout as SVG or HTML",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", nargs="?", default="",
                   help="XLA shape text ('f32[3,5]{1,0:T(2,2)}') or a CuTe layout ('(4,8):(8,1)')")
    p.add_argument("--tla", metavar="FORMAT", help="an Ascend TLA format: RowMajor, zN, zZ, nZ, nN, L0C …")
    p.add_argument("--rows", type=int, help="rows of the TLA matrix")
    p.add_argument("--cols", type=int, help="columns of the TLA matrix")
    p.add_argument("--dtype", default="f16", help="element type of the TLA matrix (default f16)")
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
    if not args.target and not args.tla:
        raise UnsupportedError("render needs a TARGET or --tla FORMAT --rows R --cols C")
    target = render.target_from_text(args.target, tla=args.tla, rows=args.rows, cols=args.cols,
                                     dtype=args.dtype)
    text = render.to_svg(target) if suffix == ".svg" else render.to_html(target)
    out.write_text(text, encoding="utf-8")
    return 0
