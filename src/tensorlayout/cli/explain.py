"""`tensorlayout explain 'OP(A, B)'`: a CuTe algebra result derived step by step."""

from __future__ import annotations

import argparse
import json

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import read_argument
from tensorlayout.cute.explain import OPERATIONS, explain, format_derivation

__all__ = ["DESCRIPTION", "register", "run"]

DESCRIPTION = f"""\
Derive a CuTe layout-algebra result from its definition, one named step per line, each with its
layout: a divide as the composition with the tiler and its complement, a product as the block
beside the complement of the block composed with the tiler, an inverse with its check, by-mode
tilers mode by mode. The result is the library's own (checked against CuTe's C++).

OP is one of: {', '.join(sorted(OPERATIONS))}. Layouts are CuTe text (shape:stride); a
tiler is a shape '(2,4)' (by mode, as make_shape(2,4)), a layout '4:2', or a tuple of layouts
'(2:1,4:2)'.

examples:
  tensorlayout explain 'logical_divide((8,8):(8,1),(2,4))'
  tensorlayout explain 'blocked_product((2,2):(1,2),(3,4):(1,3))'
  tensorlayout explain 'complement(4:2,24)' --json
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help=HELP["explain"],
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("expression", metavar="OP(ARGS)",
                   help="the operation, e.g. 'logical_divide((8,8):(8,1),(2,4))' ('-' reads it from stdin)")
    p.add_argument("--json", action="store_true", help="print the steps as one JSON object")
    p.set_defaults(func=run)


def _text(v: object) -> str:
    return "(" + ",".join(_text(x) for x in v) + ")" if isinstance(v, tuple) else str(v)


def run(args: argparse.Namespace) -> int:
    d = explain(read_argument(args.expression, "an operation such as logical_divide((8,8):(8,1),(2,4))"))
    if args.json:
        print(json.dumps({"expression": d.expression, "inputs": {n: _text(v) for n, v in d.inputs},
                          "steps": [{"name": s.name, "formula": s.formula, "value": _text(s.value),
                                     "why": s.why} for s in d.steps], "result": str(d.result)}))
    else:
        print(format_derivation(d))
    return 0
