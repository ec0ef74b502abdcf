"""``tensorlayout simplify MAP``: print XLA's simplification of an indexing map.

``--preserve`` keeps single-point variables (XLA's kPreserve), ``--exact`` replaces XLA's two
unsound constraint rewrites (negative divisors, mod merging on negative bounds) by exact ones
(``simplify(exact=True)``), ``--remove-unused`` also
drops unused symbols, and ``--verify`` checks the result against the input by enumerating the
domain (or sampling it beyond ``--limit`` points, which the verdict says); a failed check exits 1.
``MAP`` may be ``-`` to read the map (one or several lines, as XLA dumps it) from stdin.

    $ tensorlayout simplify '(d0) -> (d0 mod 42), domain: d0 in [53, 71]' --verify
    (d0) -> (d0 - 42), domain: d0 in [53, 71]
    verify: equivalent (all 19 points checked)
"""

from __future__ import annotations

import argparse
import sys

from tensorlayout.indexing import IndexingMap, verify_equivalent

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simplify", help="simplify an XLA indexing map",
                       description="Print XLA's simplification of an indexing map.")
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.map == "-" else args.map
    m = IndexingMap.parse(text)
    out = m.simplify("preserve" if args.preserve else "replace", exact=args.exact)
    if args.remove_unused:
        out = out.remove_unused_symbols()
    print(out)
    if args.verify:
        result = verify_equivalent(m, out, limit=max(1, args.limit))
        print(f"verify: {result}")
        return 0 if result.equivalent else 1
    return 0
