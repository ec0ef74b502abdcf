"""``tensorlayout maps MODULE``: the HLO indexing maps of every instruction (or one).

MODULE is an HLO text file or an ``--xla_dump_to`` directory (``--module`` picks one of its
modules by name or number, ``--stage`` the before/after-optimization file).

Output→input by default (per output, per operand: the maps from the output index to the
operand index); ``--input-to-output`` gives per operand the maps to each output;
``--physical`` uses physical (layout-ordered) dimensions; ``--utilization`` adds how many
distinct elements of each operand are read; ``--coalescing`` adds the step in physical memory
(tiling included) between elements read by neighbouring outputs (1 = contiguous); ``--shapes`` shows each
instruction's and operand's shape, layout, logical and allocated bytes (always in JSON);
``--linearized`` adds the maps to each operand's tiled offset. A summary line says how
many instructions got maps and which opcodes had none ("unknown indexing").
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from functools import partial
from typing import Any

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import is_folder
from tensorlayout.cli.dump import Progress, add_module_arguments, job_count, process_modules
from tensorlayout.errors import HloError, LayoutError
from tensorlayout.hlo import HloInstructionIndexing, input_to_output_indexing, output_to_input_indexing
from tensorlayout.hlo.coalescing import coalescing_report
from tensorlayout.hlo.model import HloInstruction, HloModule
from tensorlayout.hlo.physical import linearized_output_to_input
from tensorlayout.hlo.utilization import operand_utilization
from tensorlayout.xla.padding import human_bytes
from tensorlayout.xla.shape import Shape
from tensorlayout.xla.sizes import array_size, byte_size_of_elements

#: Modules with at least this many instructions get a progress bar on stderr.
PROGRESS_THRESHOLD = 500


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("maps", help=HELP["maps"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_module_arguments(p)
    p.add_argument("--instruction", metavar="NAME", help="only this instruction")
    p.add_argument("--fusion", metavar="NAME",
                   help="only this fusion instruction and the instructions of its computation")
    p.add_argument("--input-to-output", action="store_true", help="input→output maps instead")
    p.add_argument("--physical", action="store_true", help="physical-layout dimension order")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--utilization", action="store_true", help="add operand-utilization figures")
    p.add_argument("--coalescing", action="store_true",
                   help="add, per operand, the physical step between elements read by "
                        "neighbouring outputs")
    p.add_argument("--shapes", action="store_true",
                   help="show each instruction's and operand's shape, layout and bytes")
    p.add_argument("--linearized", action="store_true",
                   help="add the maps from the output index to each operand's tiled offset")
    p.set_defaults(func=run)


def _outputs(instr: HloInstruction) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def _indexings(instr: HloInstruction, args: argparse.Namespace) -> list[tuple[int, HloInstructionIndexing]]:
    if args.input_to_output:
        return [(k, input_to_output_indexing(instr, k, physical=args.physical))
                for k in range(len(instr.operands))]
    return [(o, output_to_input_indexing(instr, o, physical=args.physical)) for o in range(_outputs(instr))]


def _select(module: HloModule, name: str | None, fusion: str | None = None) -> list[HloInstruction]:
    if fusion:
        instr = module.find_instruction(fusion)
        if instr.opcode != "fusion":
            raise LayoutError(f"instruction {fusion!r} is a {instr.opcode}, not a fusion")
        return [instr, *instr.fused_computation.instructions]
    if name:
        return [module.find_instruction(name)]
    return list(module.instructions())


def _bytes(shape: Shape) -> tuple[int | None, int | None]:
    """Logical and allocated bytes of the array leaves of ``shape`` (None: unbounded dims)."""
    try:
        leaves = [s for s in shape.leaves() if s.is_array or s.is_buffer]
        return (sum(byte_size_of_elements(s) for s in leaves), sum(array_size(s) for s in leaves))
    except LayoutError:
        return None, None


def shape_facts(shape: Shape | None) -> dict[str, Any]:
    """``shape`` (dims only), ``layout`` and byte sizes of one instruction or operand shape.

    >>> shape_facts(Shape.parse("f32[8,2]{0,1:T(2,128)}"))["allocated_bytes"]
    1024
    """
    if shape is None:
        return {"shape": None, "layout": None, "logical_bytes": None, "allocated_bytes": None}
    logical, allocated = _bytes(shape)
    layout = shape.layout if shape.is_array else None
    return {"shape": shape.to_string(), "layout": None if layout is None else str(layout),
            "logical_bytes": logical, "allocated_bytes": allocated}


def _operand_facts(instr: HloInstruction) -> list[dict[str, Any]]:
    shapes = instr.operand_shapes or tuple(o.shape for o in instr.operands)
    return [{"name": name, **shape_facts(shapes[k] if k < len(shapes) else None)}
            for k, name in enumerate(instr.operand_names)]


def _maps_text(ix: HloInstructionIndexing) -> list[list[str]]:
    return [[str(oi) if not oi.is_undefined else "unknown indexing" for oi in group]
            for group in ix.indexing_maps]


def analyse(module: HloModule, args: argparse.Namespace) -> dict[str, Any]:
    """The per-instruction records and the summary the command prints."""
    instrs = _select(module, args.instruction, getattr(args, "fusion", None))
    progress = Progress(len(instrs), "instructions", PROGRESS_THRESHOLD)
    records = []
    unknown: Counter[str] = Counter()
    for done, instr in enumerate(instrs, 1):
        entries = _indexings(instr, args)
        has_unknown = any(ix.is_unknown for _, ix in entries)
        if has_unknown:
            unknown[instr.opcode] += 1
        records.append(_record(instr, entries, has_unknown, args))
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


def _record(instr: HloInstruction, entries: list[tuple[int, HloInstructionIndexing]],
            has_unknown: bool, args: argparse.Namespace) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "computation": instr.parent.name if instr.parent is not None else "",
        "name": instr.name,
        "opcode": instr.opcode,
        **shape_facts(instr.shape),
        "operands": _operand_facts(instr),
        "unknown": has_unknown,
        "indexing": [{"id": i, "operands": _maps_text(ix)} for i, ix in entries],
    }
    if getattr(args, "linearized", False):
        rec["linearized"] = [{"id": o, "operands": _maps_text(linearized_output_to_input(instr, o))}
                             for o in range(_outputs(instr))]
    if args.utilization:
        rec["utilization"] = [u.as_dict() for u in operand_utilization(instr)]
    if getattr(args, "coalescing", False):
        rec["coalescing"] = [c.as_dict() for c in coalescing_report(instr)] if instr.operands else []
    return rec


def summary_line(summary: dict[str, Any]) -> str:
    """``N of M instructions got maps; no maps for: opcode (count), ...``."""
    line = f"{summary['with_maps']} of {summary['instructions']} instructions got maps"
    missing = summary["unknown_by_opcode"]
    if missing:
        line += "; unknown indexing for: " + ", ".join(f"{op} ({n})" for op, n in missing.items())
    return line


def _size_text(facts: dict[str, Any]) -> str:
    if facts["shape"] is None:
        return "(shape unknown)"
    layout = "" if facts["layout"] in (None, "{}") else facts["layout"]
    if facts["logical_bytes"] is None:
        return f"{facts['shape']}{layout} (size unbounded)"
    return (f"{facts['shape']}{layout} ({human_bytes(facts['logical_bytes'])} logical, "
            f"{human_bytes(facts['allocated_bytes'])} allocated)")


def _map_lines(entries: list[dict[str, Any]], label: str, prefix: str = "") -> list[str]:
    out = []
    for entry in entries:
        if len(entries) > 1 or label == "input":
            out.append(f"  {label} {entry['id']}:")
        for k, maps in enumerate(entry["operands"]):
            head = prefix + ("operand" if label == "output" else "output")
            if not maps:
                out.append(f"    {head} {k}: (nothing read)")
            for m in maps:
                out.append(f"    {head} {k}: " + m.replace("\n", "\n      "))
    return out


def _figure_lines(rec: dict[str, Any]) -> list[str]:
    out = []
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
    return out


def _text(result: dict[str, Any], shapes: bool = False) -> str:
    out = []
    label = "input" if result["direction"] == "input_to_output" else "output"
    current = None
    for rec in result["instructions"]:
        if rec["computation"] != current:
            current = rec["computation"]
            out.append(f"== {current}")
        out.append(f"{rec['name']} = {rec['opcode']}" + (f"  {_size_text(rec)}" if shapes else ""))
        if shapes:
            out += [f"    operand {k} {o['name']}: {_size_text(o)}" for k, o in enumerate(rec["operands"])]
        out += _map_lines(rec["indexing"], label)
        out += _map_lines(rec.get("linearized", []), "output", "linearized ")
        out += _figure_lines(rec)
    out.append(summary_line(result["summary"]))
    return "\n".join(out)


def _has_instruction(module: HloModule, name: str) -> bool:
    try:
        module.find_instruction(name)
    except HloError:
        return False
    return True


def module_result(args: argparse.Namespace, module: HloModule) -> dict[str, Any] | None:
    """What ``maps`` reports for one module; ``None`` when it lacks the instruction (or
    fusion) asked for and the target is a dump directory (other modules may have it)."""
    wanted = args.instruction or args.fusion
    if wanted and is_folder(args.module) and not _has_instruction(module, wanted):
        return None
    return analyse(module, args)


def run(args: argparse.Namespace) -> int:
    many = is_folder(args.module)
    found, failed = process_modules(args.module, partial(module_result, args),
                                    wanted=args.module_name, stage=args.stage,
                                    jobs=job_count(args.jobs))
    results = [(label, r) for label, r in found if r is not None]
    if many and not results and not failed and (args.instruction or args.fusion):
        raise HloError(f"no module of {args.module} has an instruction "
                       f"{args.instruction or args.fusion!r}")
    for label, result in ([] if args.json else results):
        if many:
            print(f"### {label}")
        print(_text(result, args.shapes))
    if args.json:
        body = {"modules": [{"file": label, **r} for label, r in results]} if many else results[0][1]
        print(json.dumps(body, indent=1))
    return 2 if failed else 0
