"""``tensorlayout memory DIR``: memory as the compiler sees it, from an ``--xla_dump_to`` directory.

For each optimized module: XLA's buffer assignment (the ``…-buffer-assignment.txt`` XLA
writes beside it) split into parameters, outputs, temporaries, constants and thread-local
buffers, per memory space (S(0) HBM, S(1) VMEM, …), with the live peak (the largest sum of
the values live at one step of the schedule, from ``…-live-range.txt``); then each
allocation with its values, their shapes, ``op_name`` and Python source line. ``--tpu GEN``
gives every value the TPU default layout and prints the TPU size beside XLA's (what a TPU
would allocate for a CPU or GPU dump). Sizes in KiB/MiB/GiB as XLA's reports print them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import is_folder
from tensorlayout.cli.dump import DumpModule, discover, select
from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.jax.memory import Allocation, MemoryReport, memory_report
from tensorlayout.xla.layout import memory_space_name
from tensorlayout.xla.padding import binary_bytes
from tensorlayout.xla.tpu import GENERATIONS, canonical_generation


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help=HELP["memory"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dump", help="an --xla_dump_to directory")
    p.add_argument("--module", dest="module_name", metavar="NAME",
                   help="only the module with this name or number")
    p.add_argument("--tpu", metavar="GEN", nargs="?", const="v5e",
                   help=f"estimate the TPU sizes ({', '.join(GENERATIONS)}; default v5e)")
    p.add_argument("--space", type=int, metavar="N", help="only allocations in memory space N")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="allocations to list per module (default 20; JSON has all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def sibling(module: DumpModule, suffix: str) -> Path:
    """The report XLA wrote beside a module file (``…after_optimizations-<suffix>.txt``)."""
    return module.path.with_name(module.path.name[:-len(".txt")] + f"-{suffix}.txt")


def reports(directory: str, wanted: str | None, tpu: bool,
            generation: str) -> list[tuple[DumpModule, MemoryReport]]:
    """The memory report of every optimized module of ``directory`` that has a buffer assignment."""
    if not is_folder(directory):
        raise FileNotFoundError(2, "No such directory (expected an --xla_dump_to directory)", directory)
    modules, _ = discover(directory)
    chosen = [m for m in select(modules, wanted, "after") if sibling(m, "buffer-assignment").exists()]
    if not chosen:
        raise TensorLayoutError(f"no optimized module with a buffer assignment in {directory}"
                                + (f" named {wanted!r}" if wanted else "")
                                + " (XLA writes …-buffer-assignment.txt beside each optimized "
                                  "module when run with --xla_dump_to)")
    out = []
    for m in chosen:
        live = sibling(m, "live-range")
        out.append((m, memory_report(parse_module(m.path.read_text()),
                                     sibling(m, "buffer-assignment").read_text(),
                                     live.read_text() if live.exists() else None,
                                     tpu=tpu, generation=generation)))
    return out


_PLURALS = (("parameter", "parameters"), ("output", "outputs"), ("temporary", "temporaries"),
            ("constant", "constants"), ("thread-local", "thread-local"), ("other", "other"))


def _totals(report: MemoryReport) -> list[str]:
    kinds = report.by_kind()
    parts = [f"{plural} {binary_bytes(kinds[kind])}" for kind, plural in _PLURALS if kind in kinds]
    total = sum(kinds.values())
    out = [f"  XLA allocates {binary_bytes(total)}: " + ", ".join(parts)]
    spaces = report.by_memory_space()
    if len(spaces) > 1 or 0 not in spaces:
        out.append("  by memory space: " + ", ".join(f"{memory_space_name(s)} {binary_bytes(b)}"
                                                     for s, b in spaces.items()))
    if report.live_peak is not None:
        out.append(f"  live peak (at one step of the schedule): {binary_bytes(report.live_peak)}")
    if report.tpu_allocations:
        tpu_total = sum(report.tpu_allocations.values())
        out.append(f"  TPU estimate: {binary_bytes(tpu_total)} allocated ({_ratio(tpu_total, total)} of "
                   f"XLA's), live peak {binary_bytes(report.tpu_live_peak or 0)}")
    return out


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}x" if b else "-"


def _allocation_lines(report: MemoryReport, a: Allocation) -> list[str]:
    what = f"parameter {a.parameter}" if a.parameter is not None else a.kind
    tpu = report.tpu_allocation_size(a)
    size = binary_bytes(a.size) + (f" (TPU {binary_bytes(tpu)})" if tpu is not None else "")
    out = [f"  allocation {a.index}: {size}, {what}, {memory_space_name(a.memory_space)}"]
    for v in sorted(a.values, key=lambda v: -v.size)[:8]:
        src = report.sources.get(v.instruction)
        shape = v.shape.to_string(with_layout=True) if v.shape else "?"
        tpu_v = report.tpu_sizes.get(v.id)
        line = f"    {v.instruction}{'' if v.index == '{}' else v.index}: {shape} {binary_bytes(v.size)}"
        line += f" (TPU {binary_bytes(tpu_v)})" if tpu_v is not None and tpu_v != v.size else ""
        if src and src.op_name:
            line += f"  {src.op_name}"
        if src and src.source:
            line += f"  at {src.source}"
        out.append(line)
    if len(a.values) > 8:
        out.append(f"    ... {len(a.values) - 8} more values share it")
    return out


def report_text(label: str, report: MemoryReport, top: int, tpu: bool,
                space: int | None = None) -> str:
    """The text printed for one module."""
    out = [f"== {report.module} ({label})", *_totals(report)]
    if not report.tiled and not tpu:
        out.append("  note: no tiled layouts here (a CPU or GPU compile): these are that backend's "
                   "sizes; add --tpu [GEN] for what a TPU would allocate")
    allocations = [a for a in report.allocations if space is None or a.memory_space == space]
    allocations.sort(key=lambda a: (-(report.tpu_allocation_size(a) or a.size), a.index))
    for a in allocations[:top]:
        out += _allocation_lines(report, a)
    if len(allocations) > top:
        out.append(f"  ... {len(allocations) - top} more allocations (--top N, or --json)")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    generation = canonical_generation(args.tpu)
    tpu = args.tpu is not None
    found = reports(args.dump, args.module_name, tpu, generation)
    if args.json:
        print(json.dumps({"generation": generation if tpu else None,
                          "modules": [{"file": m.path.name, **r.as_dict()} for m, r in found]},
                         indent=1))
        return 0
    print("\n".join(report_text(m.label, r, args.top, tpu, args.space) for m, r in found))
    return 0
