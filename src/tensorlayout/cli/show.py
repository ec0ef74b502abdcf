"""``tensorlayout show TARGET``: describe where every element of a layout lives.

TARGET is an XLA shape (``'f32[3,5]{1,0:T(2,2)}'``), a CuTe layout
(``'((4,2),(4,3)):((4,16),(1,32))'``) or, with ``--tla zN --rows R --cols C --dtype T``,
an Ascend TLA format. ``--as xla|cute|map`` prints the same layout in another notation.
"""

from __future__ import annotations

import argparse
from importlib import import_module

from tensorlayout.convert import is_xla_text
from tensorlayout.errors import TensorLayoutError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="show where each element of a layout lives",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", nargs="?", help="XLA shape text or CuTe layout text")
    p.add_argument("--json", action="store_true", help="print the facts as JSON")
    p.add_argument("--tla", metavar="FORMAT",
                   help="an Ascend TLA format: RowMajor, ColumnMajor, zN, zZ, nZ, nN, L0C")
    p.add_argument("--rows", type=int, help="rows of the TLA matrix")
    p.add_argument("--cols", type=int, help="columns of the TLA matrix")
    p.add_argument("--dtype", default="f16", help="element type of the TLA matrix (default f16)")
    p.add_argument("--as", dest="as_", choices=("xla", "cute", "map"),
                   help="print the layout in another notation")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.as_:
        handler = "tensorlayout.cli._show_as"
    elif args.tla:
        handler = "tensorlayout.cli._show_cute"
    elif args.target is None:
        raise TensorLayoutError("show needs a TARGET (XLA shape or CuTe layout) or --tla FORMAT")
    elif is_xla_text(args.target):
        handler = "tensorlayout.cli._show_xla"
    else:
        handler = "tensorlayout.cli._show_cute"
    return int(import_module(handler).run(args) or 0)
