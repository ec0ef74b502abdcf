"""``tensorlayout show TARGET --as xla|cute|map``: the same layout in another notation.

``--as cute`` of an XLA shape is the CuTe layout over its padded domain, and of a TLA format
its shape:stride (the origin shape is the map's domain); ``--as xla`` of a CuTe or TLA layout
is an XLA shape placing every element at the same offset, or why none exists.
"""

from __future__ import annotations

import argparse

from tensorlayout import convert
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.xla import Shape


def _source(args: argparse.Namespace) -> Shape | Layout | tla.TlaLayout:
    if args.tla:
        if args.rows is None or args.cols is None:
            raise TensorLayoutError("--tla needs --rows and --cols")
        return tla.make_format(args.tla, args.rows, args.cols, args.dtype)
    if args.target is None:
        raise TensorLayoutError("show --as needs a TARGET or --tla FORMAT")
    return convert.parse_target(args.target)


def run(args: argparse.Namespace) -> int:
    src = _source(args)
    if args.as_ == "map":
        print(convert.to_indexing_map(src))
    elif args.as_ == "cute":
        print(convert.xla_to_cute(src) if isinstance(src, Shape) else
              (src.layout if isinstance(src, tla.TlaLayout) else src))
    elif isinstance(src, tla.TlaLayout):
        print(convert.tla_to_xla(args.tla, args.rows, args.cols, args.dtype))
    elif isinstance(src, Layout):
        print(convert.cute_to_xla(src))
    else:  # already XLA: its canonical print
        print(src)
    return 0
