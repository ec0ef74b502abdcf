"""`tensorlayout simplify MAP`: print XLA's simplification of an indexing map."""

from __future__ import annotations

import argparse
import json

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import read_argument
from tensorlayout.indexing import IndexingMap, verify_equivalent

__all__ = ["DESCRIPTION", "register", "run"]

DESCRIPTION = """\
Print XLA's simplification of an indexing map.

--preserve keeps single-point variables (XLA's kPreserve), --exact replaces XLA's unsound
constraint rewrites (negative divisors, mod merging on negative bounds) by exact ones,
--remove-unused also drops unused symbols, and --verify checks the result against the
input by enumerating the domain (or sampling it beyond --limit points, which the verdict
says); a failed check exits 1. MAP may be '-' to read the map (one or several lines, as
XLA dumps it) from stdin.

example:
  $ tensorlayout simplify '(d0) -> (d0 mod 42), domain: d0 in [53, 71]' --verify
  (d0) -> (d0 - 42), domain: d0 in [53, 71]
  verify: equivalent (all 19 points checked)
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simplify", help=HELP["simplify"], description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("map", help="indexing map text, e.g. '(d0) -> (d0 mod 42), domain: d0 in [53, 71]' "
                               "('-' reads it from stdin)")
    p.add_argument("--verify", action="store_true",
                   help="check the result against the input (exit 1 if they differ)")
    p.add_argument("--limit", type=int, default=200_000,
                   help="enumerate domains up to this many points, sample larger ones (default 200000)")
    p.add_argument("--preserve", action="store_true", help="keep variables whose range is one point")
    p.add_argument("--exact", action="store_true",
                   help="exact constraint rewrites where XLA's are unsound ('e / -c in [lo, hi]', "
                        "mod constraints on negative bounds)")
    p.add_argument("--remove-unused", action="store_true", help="also drop unused symbols")
    p.add_argument("--floordiv", action="store_true",
                   help="spell floor division 'floordiv' (older XLA and MLIR) instead of '/'")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: input, simplified and (with --verify) verify")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    m = IndexingMap.parse(read_argument(args.map, "an indexing map"))
    out = m.simplify("preserve" if args.preserve else "replace", exact=args.exact)
    if args.remove_unused:
        out = out.remove_unused_symbols()
    result = verify_equivalent(m, out, limit=max(1, args.limit)) if args.verify else None
    text = out.to_string(floordiv=args.floordiv)
    if args.json:
        facts: dict[str, object] = {"input": m.to_string(floordiv=args.floordiv), "simplified": text}
        if result is not None:
            facts["verify"] = {"equivalent": result.equivalent, "exhaustive": result.exhaustive,
                               "points_checked": result.points_checked,
                               "counterexample": list(result.counterexample)
                               if result.counterexample is not None else None,
                               "verdict": str(result)}
        print(json.dumps(facts))
    else:
        print(text)
        if result is not None:
            print(f"verify: {result}")
    return 0 if result is None or result.equivalent else 1
