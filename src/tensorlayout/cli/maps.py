"""``tensorlayout maps MODULE.hlo``: the HLO indexing maps of every instruction (or one).

Output→input by default (per output, per operand: the maps from the output index to the
operand index); ``--input-to-output`` gives per operand the maps to each output;
``--physical`` uses physical (layout-ordered) dimensions; ``--utilization`` adds how many
distinct elements of each operand are read; ``--coalescing`` adds the step in physical memory
(tiling included) between elements read by neighbouring outputs (1 = contiguous). A summary
line says how many instructions got maps and which opcodes had none ("unknown indexing").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tensorlayout.errors import ParseError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.analysis import (
    HloInstructionIndexing,
    input_to_output_indexing,
    output_to_input_indexing,
)
from tensorlayout.hlo.model import HloInstruction, HloModule

#: Modules with at least this many instructions get a progress bar on stderr.
PROGRESS_THRESHOLD = 500


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("maps", help="print the HLO indexing maps of a module's instructions",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("module", help="an HLO module text file ('-' for stdin)")
    p.add_argument("--instruction", metavar="NAME", help="only this instruction")
    p.add_argument("--input-to-output", action="store_true", help="input→output maps instead")
    p.add_argument("--physical", action="store_true", help="physical-layout dimension order")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--utilization", action="store_true", help="add operand-utilization figures")
    p.add_argument("--coalescing", action="store_true",
                   help="add, per operand, the physical step between elements read by "
                        "neighbouring outputs")
    p.set_defaults(func=run)


def _outputs(instr: HloInstruction) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def _indexings(instr: HloInstruction, args: argparse.Namespace) -> list[tuple[int, HloInstructionIndexing]]:
    if args.input_to_output:
        return [(k, input_to_output_indexing(instr, k, physical=args.physical))
                for k in range(len(instr.operands))]
    return [(o, output_to_input_indexing(instr, o, physical=args.physical)) for o in range(_outputs(instr))]


class _Progress:
    """A bar on stderr for large modules, redrawn in place on a terminal; elsewhere (a log
    file, a pipe) only the final line is written."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.enabled = total >= PROGRESS_THRESHOLD
        self.live = self.enabled and sys.stderr.isatty()
        self.step = max(1, total // 50)

    def update(self, done: int) -> None:
        if not self.enabled or (done != self.total and (not self.live or done % self.step)):
            return
        filled = 30 * done // self.total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} instructions")
        if done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _select(module: HloModule, name: str | None) -> list[HloInstruction]:
    if name:
        return [module.find_instruction(name)]
    return list(module.instructions())


def analyse(module: HloModule, args: argparse.Namespace) -> dict[str, Any]:
    """The per-instruction records and the summary the command prints."""
    instrs = _select(module, args.instruction)
    progress = _Progress(len(instrs))
    records = []
    unknown: Counter[str] = Counter()
    for done, instr in enumerate(instrs, 1):
        entries = _indexings(instr, args)
        has_unknown = any(ix.is_unknown for _, ix in entries)
        if has_unknown:
            unknown[instr.opcode] += 1
        rec: dict[str, Any] = {
            "computation": instr.parent.name if instr.parent is not None else "",
            "name": instr.name,
            "opcode": instr.opcode,
            "unknown": has_unknown,
            "indexing": [{"id": i, "operands": [[str(oi) if not oi.is_undefined else "unknown indexing"
                                                  for oi in group] for group in ix.indexing_maps]}
                         for i, ix in entries],
        }
        if args.utilization:
            from tensorlayout.hlo.utilization import operand_utilization

            rec["utilization"] = [u.as_dict() for u in operand_utilization(instr)]
        if getattr(args, "coalescing", False):
            from tensorlayout.hlo.coalescing import coalescing_report

            rec["coalescing"] = [c.as_dict() for c in coalescing_report(instr)] if instr.operands else []
        records.append(rec)
        progress.update(done)
    got = len(records) - sum(unknown.values())
    return {
        "module": module.name,
        "direction": "input_to_output" if args.input_to_output else "output_to_input",
        "physical": bool(args.physical),
        "instructions": records,
        "summary": {"instructions": len(records), "with_maps": got,
                    "unknown_by_opcode": dict(sorted(unknown.items()))},
    }


def summary_line(summary: dict[str, Any]) -> str:
    """``N of M instructions got maps; no maps for: opcode (count), ...``."""
    line = f"{summary['with_maps']} of {summary['instructions']} instructions got maps"
    missing = summary["unknown_by_opcode"]
    if missing:
        line += "; unknown indexing for: " + ", ".join(f"{op} ({n})" for op, n in missing.items())
    return line


def _text(result: dict[str, Any]) -> str:
    out = []
    label = "input" if result["direction"] == "input_to_output" else "output"
    current = None
    for rec in result["instructions"]:
        if rec["computation"] != current:
            current = rec["computation"]
            out.append(f"== {current}")
        out.append(f"{rec['name']} = {rec['opcode']}")
        for entry in rec["indexing"]:
            if len(rec["indexing"]) > 1 or label == "input":
                out.append(f"  {label} {entry['id']}:")
            for k, maps in enumerate(entry["operands"]):
                head = "operand" if label == "output" else "output"
                if not maps:
                    out.append(f"    {head} {k}: (nothing read)")
                for m in maps:
                    out.append(f"    {head} {k}: " + m.replace("\n", "\n      "))
        for u in rec.get("utilization", ()):
            exact = "" if u["exact"] else " (bound)"
            out.append(f"    utilization operand {u['operand']} {u['name']}: {u['read']}/{u['elements']} "
                       f"= {u['fraction']:.4g}{exact} [{u['method']}]")
        for c in rec.get("coalescing", ()):
            if c["known"] and c["sampled"]:
                more = "" if len(c["steps"]) == 1 else f" (of {len(c['steps'])} step sizes)"
                out.append(f"    coalescing operand {c['operand']} {c['name']}: step {c['typical_step']}"
                           f"{more}, {c['contiguous_fraction']:.0%} contiguous over {c['sampled']} "
                           "neighbours")
    out.append(summary_line(result["summary"]))
    return "\n".join(out)


def read_module_text(source: str) -> str:
    """The text of ``source`` (a path, or ``-`` for stdin); non-UTF-8 bytes are a ParseError."""
    data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        offset = len(data[: err.start].decode("utf-8", errors="replace"))
        raise ParseError(data.decode("utf-8", errors="replace"), offset, "UTF-8 text") from None


def run(args: argparse.Namespace) -> int:
    module = parse_module(read_module_text(args.module))
    result = analyse(module, args)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(_text(result))
    return 0
