"""``tensorlayout show '((4,2),(4,3)):((4,16),(1,32))'`` and ``show --tla zN --rows 8 --cols 12``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tensorlayout.cute import Layout, coalesce, cosize, format_grid
from tensorlayout.cute import tla as tla_mod
from tensorlayout.errors import TensorLayoutError

MAX_GRID_CELLS = 4096


def _facts(layout: Layout, origin: tuple[int, ...] | None) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "layout": str(layout), "size": layout.size(), "cosize": cosize(layout),
        "rank": layout.rank(), "depth": layout.depth(), "coalesced": str(coalesce(layout)),
    }
    if origin is not None:
        facts["origin_shape"] = list(origin)
    if layout.size() <= MAX_GRID_CELLS:
        facts["offsets"] = [int(v) for v in layout.offsets()]
    return facts


def target_layout(args: argparse.Namespace) -> tuple[Layout, tuple[int, ...] | None, str]:
    """The layout named on the command line, its origin shape (TLA) and a title."""
    if args.tla:
        if args.rows is None or args.cols is None:
            raise TensorLayoutError("--tla needs --rows and --cols")
        t = tla_mod.make_format(args.tla, args.rows, args.cols, args.dtype)
        title = f"{args.tla} {args.rows}x{args.cols} {args.dtype}: {t}"
        return t.layout, t.origin_shape, title
    layout = Layout.parse(args.target.strip())
    return layout, None, str(layout)


def run(args: argparse.Namespace) -> int:
    layout, origin, title = target_layout(args)
    if args.json:
        print(json.dumps(_facts(layout, origin)))
        return 0
    lines = [title,
             f"size {layout.size()}, cosize {cosize(layout)}, rank {layout.rank()}, "
             f"depth {layout.depth()}, coalesced {coalesce(layout)}"]
    if layout.rank() <= 2 and layout.size() <= MAX_GRID_CELLS:
        lines += format_grid(layout).splitlines()[1:]
        if origin is not None and layout.size() > origin[0] * origin[1]:
            lines.append(f"rows >= {origin[0]} or columns >= {origin[1]} lie outside the origin shape "
                         "(padding)")
    elif layout.size() <= MAX_GRID_CELLS:
        lines.append("offsets in index order: " + " ".join(str(int(v)) for v in layout.offsets()))
    else:
        lines.append(f"(grid omitted: {layout.size()} cells)")
    print("\n".join(lines))
    return 0
