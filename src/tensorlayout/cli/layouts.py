"""``tensorlayout layouts DIR``: the copies and transposes XLA's layout assignment inserted.

For each module of an ``--xla_dump_to`` directory with both a before- and an
after-optimization file (or one optimized module FILE, optionally with ``--before FILE``):
every ``copy`` that changes a layout or memory space, ``copy-start``, physical
``transpose`` and dim-permuting ``bitcast`` (free) of the optimized module, the instruction
whose operand layout forced it (or the entry result layout), whether XLA inserted it (it is
not in the unoptimized module) and the bytes it reads and writes, most first.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import is_folder, read_text
from tensorlayout.cli.dump import discover, select, stage_kind
from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.model import HloModule
from tensorlayout.jax.layouts import LayoutChange, layout_changes
from tensorlayout.xla.padding import binary_bytes


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("layouts", help=HELP["layouts"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", help="an --xla_dump_to directory or an optimized HLO module file")
    p.add_argument("--before", metavar="FILE", help="the unoptimized module (with a module FILE)")
    p.add_argument("--module", dest="module_name", metavar="NAME",
                   help="in a directory: only the module with this name or number")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _pairs(args: argparse.Namespace) -> list[tuple[str, HloModule, HloModule | None]]:
    if not is_folder(args.target):
        before = parse_module(read_text(args.before)) if args.before else None
        return [(args.target, parse_module(read_text(args.target)), before)]
    modules, _ = discover(args.target)
    chosen = select(modules, args.module_name, "all")
    befores = {(m.number, m.name): m.path for m in chosen if stage_kind(m.stage) == "before"}
    out = []
    for m in chosen:
        if stage_kind(m.stage) == "after":
            path: Path | None = befores.get((m.number, m.name))
            out.append((m.label, parse_module(m.path.read_text()),
                        parse_module(path.read_text()) if path else None))
    if not out:
        raise TensorLayoutError(f"no optimized module in {args.target}")
    return out


def changes_text(label: str, changes: tuple[LayoutChange, ...], has_before: bool) -> str:
    """The text printed for one module."""
    moved = sum(c.bytes_moved for c in changes)
    out = [f"== {label}: {len(changes)} relayouts, {binary_bytes(moved)} moved"]
    if not has_before:
        out.append("  (no unoptimized module: whether XLA inserted each is not known)")
    for c in changes:
        origin = (", inserted by XLA" if c.inserted else ", in the program") if has_before else ""
        out.append(f"  {c.name} ({c.kind}{origin}): {binary_bytes(c.bytes_moved)} moved"
                   + (f"  {c.op_name}" if c.op_name else ""))
        out.append(f"    {c.operand} -> {c.result}")
        out.append(f"    forced by {c.forced_by}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    results = [(label, layout_changes(after, before), before is not None)
               for label, after, before in _pairs(args)]
    if args.json:
        print(json.dumps({"modules": [{"module": label, "has_before": has,
                                       "changes": [c.as_dict() for c in ch]}
                                      for label, ch, has in results]}, indent=1))
    else:
        print("\n".join(changes_text(label, ch, has) for label, ch, has in results))
    return 0
