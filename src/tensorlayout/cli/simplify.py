"""``tensorlayout simplify MAP``: print XLA's simplification of an indexing map.

``--preserve`` keeps single-point variables (XLA's kPreserve), ``--exact`` uses the exact
negative-divisor constraint rewrite instead of XLA's, and ``--verify`` checks the result
against the input by enumerating (or sampling) the domain.
"""

from __future__ import annotations

import argparse

from tensorlayout.indexing import IndexingMap, verify_equivalent

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simplify", help="simplify an XLA indexing map",
                       description=__doc__.split("\n\n", 1)[0] if __doc__ else None)
    p.add_argument("map", help="indexing map text, e.g. '(d0) -> (d0 mod 42), domain: d0 in [53, 71]'")
    p.add_argument("--verify", action="store_true", help="check the result against the input")
    p.add_argument("--preserve", action="store_true", help="keep variables whose range is one point")
    p.add_argument("--exact", action="store_true",
                   help="exact rewrite of 'e / -c in [lo, hi]' constraints (XLA's is unsound)")
    p.add_argument("--remove-unused", action="store_true", help="also drop unused symbols")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    m = IndexingMap.parse(args.map)
    out = m.simplify("preserve" if args.preserve else "replace", exact_negative_divisor=args.exact)
    if args.remove_unused:
        out = out.remove_unused_symbols()
    print(out)
    if args.verify:
        result = verify_equivalent(m, out)
        print(f"verify: {result}")
        return 0 if result.equivalent else 1
    return 0
