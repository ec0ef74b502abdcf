"""``tensorlayout show TARGET --as xla|cute|map``: the same layout in another notation."""

from __future__ import annotations

import argparse

from tensorlayout import convert
from tensorlayout.cli.show import is_xla_text
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.xla import parse_shape


def _source(args: argparse.Namespace) -> object:
    if args.tla:
        if args.rows is None or args.cols is None:
            raise TensorLayoutError("--tla needs --rows and --cols")
        return tla.make_format(args.tla, args.rows, args.cols, args.dtype)
    if args.target is None:
        raise TensorLayoutError("show --as needs a TARGET or --tla FORMAT")
    text = args.target.strip()
    return parse_shape(text) if is_xla_text(text) else Layout.parse(text)


def run(args: argparse.Namespace) -> int:
    src = _source(args)
    if args.as_ == "map":
        print(convert.to_indexing_map(src))
    elif args.as_ == "cute":
        print(convert.xla_to_cute(src) if not isinstance(src, (Layout, tla.TlaLayout)) else
              (src.layout if isinstance(src, tla.TlaLayout) else src))
    elif args.tla:
        print(convert.tla_to_xla(args.tla, args.rows, args.cols, args.dtype))
    elif isinstance(src, Layout):
        print(convert.cute_to_xla(src))
    else:
        print(src)
    return 0
