"""``tensorlayout tiles MODULE``: XLA's symbolic tiling of every fusion (or one).

MODULE is an HLO text file ('-' for stdin) or an ``--xla_dump_to`` directory, as for ``maps``.
Per fusion: the tiling parameters (the root's output dimensions, then one per dot contracting
dimension), the constraints on their tile sizes, and each instruction's symbolic tile
(offsets, sizes and strides as functions of the tile sizes ``d0, d1, ...``) -- or the reason
XLA's ``SymbolicTileAnalysis`` gives for not tiling it. ``--tile 16,64`` adds the tiled
computation for those sizes (every tile's sizes, strides and offsets per program id);
``--search`` ranks XLA's candidate sizes (powers of two and the full extent) that satisfy the
constraints by padding waste and bytes read per output element, and says whether the naive
power-of-two choice (at most 64 per parameter) breaks them.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import Any

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import UsageError, is_folder
from tensorlayout.cli.dump import add_module_arguments, job_count, process_modules
from tensorlayout.errors import HloError, TensorLayoutError
from tensorlayout.hlo.model import HloInstruction, HloModule
from tensorlayout.tiling.search import naive_tiling, nearest_valid, rank_tilings
from tensorlayout.tiling.symbolic_tile import symbolic_map_to_string
from tensorlayout.tiling.symbolic_tile_analysis import FusionDecision, SymbolicTileAnalysis, input_space
from tensorlayout.tiling.symbolic_tiled_hlo import SymbolicTiledHloInstruction
from tensorlayout.tiling.tiling_specification import Tiling

#: How many ranked tilings ``--search`` prints per fusion (JSON has them all).
SHOWN = 5


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tiles",
        help=HELP["tiles"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_module_arguments(p)
    p.add_argument("--fusion", metavar="NAME", help="only this fusion instruction")
    p.add_argument(
        "--tile",
        metavar="SIZES",
        help="tile sizes, one per tiling parameter (e.g. 16,64): print the tiled computation",
    )
    p.add_argument("--search", action="store_true", help="rank the valid tile sizes")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _sizes(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        sizes = tuple(int(t) for t in text.replace(" ", "").split(","))
    except ValueError:
        raise UsageError(f"--tile wants comma-separated integers, got {text!r}") from None
    if any(s < 1 for s in sizes):
        raise UsageError(f"--tile sizes must be positive, got {text!r}")
    return sizes


def _fusions(module: HloModule, name: str | None) -> list[HloInstruction]:
    """The fusions of the non-fusion computations (the kernels), or the one named."""
    if name:
        instr = module.find_instruction(name)
        if instr.opcode != "fusion":
            raise HloError(f"instruction {name!r} is a {instr.opcode}, not a fusion")
        return [instr]
    return [
        i
        for c in module.computations
        if not c.is_fusion_computation
        for i in c.instructions
        if i.opcode == "fusion"
    ]


def _tile_record(t: SymbolicTiledHloInstruction, depth: int) -> dict[str, Any]:
    tile = t.symbolic_tile
    assert tile is not None
    rec: dict[str, Any] = {
        "name": t.hlo.name,
        "opcode": t.hlo.opcode,
        "depth": depth,
        "offsets": symbolic_map_to_string(tile.offset_map),
        "sizes": symbolic_map_to_string(tile.size_map),
        "strides": symbolic_map_to_string(tile.stride_map),
        "indexing_map": str(t.indexing_map),
    }
    if not tile.constraints.is_always_satisfied():
        rec["constraints"] = tile.constraints.to_string(tile.tile_map.num_dims)
    return rec


def _tiles(instrs: Any, depth: int = 0, region_of: str | None = None) -> list[dict[str, Any]]:
    """Each instruction's tile, def before use; a dot's loop body and a concatenate's branches
    come first, one level deeper, each record naming its region (``dot.1 region 0``)."""
    out = []
    for t in instrs:
        for k, region in enumerate(t.regions):
            out += _tiles(region, depth + 1, f"{t.hlo.name} region {k}")
        if t.fusion_analysis is not None:
            out += _tiles(t.fusion_analysis.instructions, depth + 1, f"{t.hlo.name} nested computation")
        out.append({**_tile_record(t, depth), "region": region_of})
    return out


def _tiled(analysis: SymbolicTileAnalysis, sizes: tuple[int, ...]) -> dict[str, Any]:
    spec = analysis.get_tiling_specification()
    try:
        tiling = Tiling.unflatten(sizes, spec)
        computation = analysis.compute_tiled_computation(tiling, compute_all_tile_offset_indexing_maps=True)
    except TensorLayoutError as e:
        return {"tile_sizes": list(sizes), "error": str(e)}
    return {
        "tile_sizes": list(sizes),
        "num_output_tiles": computation.num_output_tiles,
        "num_output_tiles_per_dim": list(computation.num_output_tiles_per_dim),
        "text": computation.to_string(),
    }


def _search(analysis: SymbolicTileAnalysis) -> dict[str, Any]:
    ranked = rank_tilings(analysis)
    naive = naive_tiling(analysis)
    constraints = analysis.get_tiling_specification().constraints
    nearest = nearest_valid(naive, ranked)
    return {
        "nearest_valid": None if nearest is None else list(nearest.tiling),
        "naive": list(naive),
        "naive_satisfies_constraints": constraints.is_satisfied_by(naive),
        "ranked": [r.as_dict() for r in ranked],
    }


def fusion_record(instr: HloInstruction, sizes: tuple[int, ...] | None, search: bool) -> dict[str, Any]:
    """What ``tiles`` reports for one fusion."""
    comp = instr.fused_computation
    rec: dict[str, Any] = {
        "fusion": instr.name,
        "kind": instr.fusion_kind,
        "computation": comp.name,
        "shape": str(instr.shape),
    }
    analysis = SymbolicTileAnalysis.analyze_computation(comp)
    if isinstance(analysis, FusionDecision):
        return {**rec, "tileable": False, "reason": analysis.explain()}
    spec = analysis.get_tiling_specification()
    rec.update(
        {
            "tileable": True,
            "parameters": [{"instruction": h.name, "count": n} for h, n in spec.parameter_mapping],
            "input_space": input_space(spec),
            "constraints": spec.constraints.to_string(spec.num_parameters),
            "tiles": _tiles(analysis.get_symbolic_tiled_hlo_computation()),
        }
    )
    if sizes is not None:
        rec["tiled"] = _tiled(analysis, sizes)
    if search:
        rec["search"] = _search(analysis)
    return rec


def module_result(args: argparse.Namespace, module: HloModule) -> dict[str, Any] | None:
    """Every fusion's record; None when a dump module lacks the fusion asked for."""
    if args.fusion and is_folder(args.module):
        try:
            module.find_instruction(args.fusion)
        except HloError:
            return None
    records = [fusion_record(f, _sizes(args.tile), args.search) for f in _fusions(module, args.fusion)]
    tileable = sum(r["tileable"] for r in records)
    return {
        "module": module.name,
        "fusions": records,
        "summary": {"fusions": len(records), "tileable": tileable},
    }


def _params_text(rec: dict[str, Any]) -> str:
    """``d0..d2 = root (3), dot (1); extents [..]``: which instruction each tile size belongs to."""
    owners = ", ".join(f"{p['instruction']} ({p['count']})" for p in rec["parameters"])
    n = len(rec["input_space"])
    names = "d0" if n == 1 else f"d0..d{n - 1}" if n else "none"
    return f"  tile sizes {names} of {owners}; extents {rec['input_space']}"


def _programs(n: int) -> str:
    return f"{n} program" + ("" if n == 1 else "s")


def _search_lines(s: dict[str, Any]) -> list[str]:
    naive = tuple(s["naive"])
    if s["naive_satisfies_constraints"]:
        verdict = "satisfies the constraints"
    else:
        near = s["nearest_valid"]
        verdict = "VIOLATES the constraints" + (f" (nearest allowed: {tuple(near)})" if near else "")
    count = len(s["ranked"])
    out = [f"  search: naive power-of-two tiling {naive} {verdict}; {count} valid tilings, best first:"]
    for r in s["ranked"][:SHOWN]:
        out.append(
            f"    {tuple(r['tiling'])}: {_programs(r['num_tiles'])}, "
            f"{r['bytes_per_tile']} bytes read per tile "
            f"({r['bytes_per_output_element']:.3g} per output element), "
            f"padding waste {r['padding_waste']:.1%}"
        )
    return out


def _fusion_text(rec: dict[str, Any]) -> list[str]:
    head = f"{rec['fusion']} ({rec['kind']}, {rec['computation']}): {rec['shape']}"
    if not rec["tileable"]:
        return [head, f"  cannot tile: {rec['reason']}"]
    out = [head, _params_text(rec), f"  constraints: {rec['constraints']}"]
    region = None
    for t in rec["tiles"]:
        pad = "  " * (t["depth"] + 2)
        if t["region"] and t["region"] != region:
            out.append(f"{pad[:-2]}{t['region']}:")
        region = t["region"]
        out.append(
            f"{pad}{t['name']} = {t['opcode']}: offsets {t['offsets'].split(' -> ')[1]} "
            f"sizes {t['sizes'].split(' -> ')[1]} strides {t['strides'].split(' -> ')[1]}"
        )
    if "tiled" in rec:
        tiled = rec["tiled"]
        if "error" in tiled:
            out.append(f"  tile sizes {tuple(tiled['tile_sizes'])}: {tiled['error']}")
        else:
            out.append(
                f"  tiled with {tuple(tiled['tile_sizes'])}: {_programs(tiled['num_output_tiles'])} "
                f"(tiles per parameter {tuple(tiled['num_output_tiles_per_dim'])})"
            )
            out += ["    " + line for line in tiled["text"].split("\n")]
    if "search" in rec:
        out += _search_lines(rec["search"])
    return out


def _text(result: dict[str, Any]) -> str:
    out: list[str] = []
    for rec in result["fusions"]:
        out += _fusion_text(rec)
    s = result["summary"]
    out.append(f"{s['tileable']} of {s['fusions']} fusions can be tiled")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    _sizes(args.tile)  # a bad --tile is a usage error before any module is read
    many = is_folder(args.module)
    found, failed = process_modules(
        args.module,
        partial(module_result, args),
        wanted=args.module_name,
        stage=args.stage,
        jobs=job_count(args.jobs),
    )
    results = [(label, r) for label, r in found if r is not None]
    if many and not results and not failed and args.fusion:
        raise HloError(f"no module of {args.module} has a fusion {args.fusion!r}")
    if args.json:
        body = {"modules": [{"file": label, **r} for label, r in results]} if many else results[0][1]
        print(json.dumps(body, indent=1))
        return 2 if failed else 0
    for label, result in results:
        if many:
            print(f"### {label}")
        print(_text(result))
    return 2 if failed else 0
