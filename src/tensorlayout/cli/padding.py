"""``tensorlayout padding TARGET``: why arrays take more bytes than their elements, and what would not.

TARGET is an XLA shape (without a layout it gets the TPU default layout of ``--tpu GEN``),
an HLO module file or an ``--xla_dump_to`` directory. For a shape: logical and allocated
bytes, the ratio, which tile pads each dimension and by how much, and the cheapest other
layouts, transposes and reshapes with their exact allocated bytes under the TPU's tiling
rules. For a module: every buffer (entry parameters and instruction results, aliases left
out) sorted by wasted bytes, with totals; ``--tpu GEN`` lays untiled buffers (a CPU or GPU
dump) out as that TPU would.
"""

from __future__ import annotations

import argparse
import errno
import json
from functools import partial

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import STDIO, file_path
from tensorlayout.cli.dump import add_module_arguments, job_count, process_modules
from tensorlayout.hlo.model import HloModule
from tensorlayout.jax import module_padding
from tensorlayout.xla.layout import memory_space_name
from tensorlayout.xla.padding import (
    PaddingReport,
    PaddingSummary,
    human_bytes,
    padding_report,
    tpu_shape,
)
from tensorlayout.xla.shape import parse_shape
from tensorlayout.xla.tpu import GENERATIONS, canonical_generation


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("padding", help=HELP["padding"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_module_arguments(p)
    p.add_argument("--tpu", metavar="GEN", nargs="?", const="v5e",
                   help=f"TPU generation whose rules apply ({', '.join(GENERATIONS)}; "
                        "default v5e)")
    p.add_argument("--alternatives", type=int, default=5, metavar="N",
                   help="cheaper layouts/reshapes to list per shape (default 5)")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="buffers to list per module in text output (default 20; JSON has all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _ratio(report: PaddingReport) -> str:
    return f"{report.ratio:.1f}x" if report.logical_bytes else "-"


def shape_text(report: PaddingReport, generation: str) -> str:
    """The text printed for one shape."""
    out = [report.shape.to_string(with_layout=True),
           f"  logical    {human_bytes(report.logical_bytes)} ({report.logical_bytes} bytes)",
           f"  allocated  {human_bytes(report.allocated_bytes)} ({report.allocated_bytes} bytes), "
           f"{_ratio(report)}, padding {human_bytes(report.waste)}"]
    if report.dimensions:
        out.append("  padding by dimension (most minor first):")
    for d in report.dimensions:
        name = "a dim the tile adds" if d.dimension is None else f"dim {d.dimension}"
        if not d.tile_size:
            out.append(f"    {name} (size {d.size}): not tiled")
            continue
        pads = (f"pads it to {d.padded_size} ({d.factor:.3g}x)" if d.padded_size > d.size
                else "no padding")
        out.append(f"    {name} (size {d.size}): tile {d.tile_size}, {pads}")
    if report.alternatives:
        out.append(f"  cheaper alternatives (TPU {generation} rules):")
    elif report.waste:
        out.append("  no cheaper layout, transpose or reshape found")
    for a in report.alternatives:
        ratio = a.allocated_bytes / report.logical_bytes if report.logical_bytes else 1.0
        out.append(f"    {a.kind:<9}  {a.change}: {a.shape.to_string(with_layout=True)} "
                   f"{human_bytes(a.allocated_bytes)} ({ratio:.2g}x)")
    return "\n".join(out)


def summary_text(label: str, summary: PaddingSummary, top: int, tpu: bool = True) -> str:
    """The text printed for one module: totals (a sum over buffers, not memory use), a note
    for an untiled module read without ``--tpu``, then the most wasteful buffers."""
    logical, allocated = summary.logical_bytes, summary.allocated_bytes
    ratio = f"{allocated / logical:.2f}x" if logical else "-"
    out = [f"== {label}",
           f"{len(summary.buffers)} buffers: {human_bytes(logical)} logical, "
           f"{human_bytes(allocated)} allocated ({ratio}), padding {human_bytes(allocated - logical)}",
           "  (every buffer summed, without liveness or sharing; 'tensorlayout memory DIR' reads "
           "XLA's buffer assignment)"]
    if not tpu and not any(b.report.shape.layout is not None and b.report.shape.layout.tiles
                           for b in summary.buffers):
        out.append("  note: no tiled layouts here (a CPU or GPU module): add --tpu [GEN] for the "
                   "padding a TPU would add")
    spaces = summary.by_memory_space()
    if len(spaces) > 1:
        out += [f"  {memory_space_name(space)}: {human_bytes(lo)} logical, {human_bytes(al)} "
                f"allocated" for space, (lo, al) in spaces.items()]
    for b in summary.buffers[:top]:
        r = b.report
        line = (f"  {human_bytes(r.waste):>9} padding  {human_bytes(r.allocated_bytes):>9} "
                f"allocated  {_ratio(r):>6}  {b.name}: {r.shape.to_string(with_layout=True)}")
        if r.padded_dimensions:
            line += f"  pads dim {','.join(map(str, r.padded_dimensions))}"
        if r.alternatives:
            best = r.alternatives[0]
            line += f"; best: {best.change} -> {human_bytes(best.allocated_bytes)}"
        out.append(line)
    if len(summary.buffers) > top:
        out.append(f"  ... {len(summary.buffers) - top} more buffers (--top N, or --json)")
    return "\n".join(out)


def _shape_target(text: str, generation: str, limit: int) -> PaddingReport:
    shape = parse_shape(text)
    if "{" not in text[text.rfind("]"):] and shape.is_array:
        shape = tpu_shape(shape, generation=generation)
    return padding_report(shape, generation=generation, limit=limit)


def _is_module_target(target: str) -> bool:
    """A file or directory to read (an XLA shape has no '/' and no file suffix); a path that
    does not exist is a FileNotFoundError, not a shape error."""
    if target == STDIO or (bool(target) and file_path(target).exists()):
        return True
    if "/" in target or target.endswith(_FILE_SUFFIXES):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", target)
    return False


#: Endings that make a missing target a file name rather than a shape.
_FILE_SUFFIXES = (".txt", ".hlo", ".mlir", ".pb", ".json")


def module_summary(generation: str, tpu: bool, limit: int,
                   module: HloModule) -> tuple[str, PaddingSummary]:
    """The module's name and padding summary (one job of a dump directory)."""
    return module.name, module_padding(module, generation=generation, tpu=tpu, limit=limit)


def run(args: argparse.Namespace) -> int:
    generation = canonical_generation(args.tpu)
    limit = max(args.alternatives, 0)
    if not _is_module_target(args.module):
        report = _shape_target(args.module.strip(), generation, limit)
        if args.json:
            print(json.dumps({"generation": generation, **report.as_dict()}, indent=1))
        else:
            print(shape_text(report, generation))
        return 0
    work = partial(module_summary, generation, args.tpu is not None, limit)
    found, failed = process_modules(args.module, work, wanted=args.module_name,
                                    stage=args.stage, jobs=job_count(args.jobs))
    if args.json:
        modules = [{"file": label, "module": name, **summary.as_dict()}
                   for label, (name, summary) in found]
        print(json.dumps({"generation": generation, "modules": modules}, indent=1))
    else:
        for label, (_, summary) in found:
            print(summary_text(label, summary, args.top, args.tpu is not None))
    return 2 if failed else 0
