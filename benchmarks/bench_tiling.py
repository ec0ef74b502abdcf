"""XLA's symbolic tile analysis of every fusion of the project's HLO corpus, timed.

The corpus: tests/data/hlo (CPU/GPU and tpu/ modules) and every module of the dumps in
tests/data/dumps. Modules are parsed before the clock starts; each run clears the indexing
simplifier's caches first, so no map comes from an earlier run. Times
``SymbolicTileAnalysis.analyze_computation`` on each fusion's computation (tileable or not),
and, for the tileable ones, ``compute_tiled_computation`` at their first valid tiling (all tile
offsets computed). Reports the median over ``--runs`` runs per hundred fusions.

    python benchmarks/bench_tiling.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from pathlib import Path

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import HloInstruction, parse_module
from tensorlayout.indexing import clear_caches
from tensorlayout.tiling import FusionDecision, SymbolicTileAnalysis, Tiling
from tensorlayout.tiling.search import naive_tiling

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def corpus() -> list[HloInstruction]:
    """Every fusion of every parseable module of the corpus (dump side files are skipped)."""
    files = [*sorted((DATA / "hlo").rglob("*.hlo")), *sorted((DATA / "dumps").rglob("*optimizations.txt"))]
    fusions = []
    for path in files:
        try:
            module = parse_module(path.read_text())
        except TensorLayoutError:
            continue
        fusions += [i for i in module.instructions() if i.opcode == "fusion"]
    return fusions


def run_once(fusions: list[HloInstruction]) -> dict[str, object]:
    clear_caches()
    reasons: Counter[str] = Counter()
    analyses = []
    t0 = time.perf_counter()
    for f in fusions:
        a = SymbolicTileAnalysis.analyze_computation(f.fused_computation)
        if isinstance(a, FusionDecision):
            reasons[a.explain().split(" %")[0].split(" for ")[0][:50]] += 1
        else:
            analyses.append(a)
    t1 = time.perf_counter()
    tiled = 0
    for a in analyses:
        flat = naive_tiling(a)
        spec = a.get_tiling_specification()
        if not spec.constraints.is_satisfied_by(flat):
            flat = min(a.get_valid_tilings(), key=lambda t: -sum(t))
        try:
            a.compute_tiled_computation(
                Tiling.unflatten(flat, spec), compute_all_tile_offset_indexing_maps=True
            )
            tiled += 1
        except TensorLayoutError:
            pass
    t2 = time.perf_counter()
    return {
        "analyse": t1 - t0,
        "tile": t2 - t1,
        "tileable": len(analyses),
        "tiled": tiled,
        "reasons": reasons,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    fusions = corpus()
    results = [run_once(fusions) for _ in range(args.runs)]
    n = len(fusions)
    analyse = statistics.median(float(r["analyse"]) for r in results)  # type: ignore[arg-type]
    tile = statistics.median(float(r["tile"]) for r in results)  # type: ignore[arg-type]
    last = results[-1]
    print(f"{n} fusions, {last['tileable']} tileable, {last['tiled']} tiled at their naive/first valid sizes")
    print(f"analysis: {analyse:.3f} s total, {100 * analyse / n:.3f} s per hundred fusions")
    tileable = int(last["tileable"])  # type: ignore[call-overload]
    print(f"tiled computations: {tile:.3f} s total, {100 * tile / max(tileable, 1):.3f} s per hundred")
    print("not tileable, by XLA's reason:")
    for reason, count in last["reasons"].most_common():  # type: ignore[attr-defined]
        print(f"  {count:4d}  {reason}")


if __name__ == "__main__":
    main()
