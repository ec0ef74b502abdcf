"""Benchmark of tensorlayout.hlo.parse_module: the HLO corpus and a synthetic large module.

Run: python benchmarks/bench_hlo_parse.py [N] [--repeat R] [--rounds K]

First the corpus against XLA's own C++ parser (jaxlib's ``hlo_module_from_text``): every file
is parsed by both, alternately (which one goes first alternates from file to file), K rounds;
the figure is the median over rounds of (our corpus time / jaxlib's corpus time), with the
spread (min-max), by wall time and by CPU time (steadier on a shared machine). Then parse plus
every instruction's output→input maps (caches cleared first), in instructions per second
(median of K rounds, wall and CPU).

N is the largest synthetic module (default 100000 instructions); modules of N/4, N/2 and N
instructions are parsed R times each (default 3, best kept) and the growth exponent of the
time is reported (1.0 = linear).
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import time
from pathlib import Path

from tensorlayout.hlo import analysis, parse_module
from tensorlayout.hlo.analysis import output_to_input_indexing
from tensorlayout.indexing import clear_caches

try:
    from jaxlib import _hlo as jaxlib_hlo
except ImportError:  # pragma: no cover
    jaxlib_hlo = None

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "hlo"


def synthetic_module(n: int) -> str:
    """A module with ``n`` instructions in the shapes XLA prints (metadata, layouts, fusions)."""
    lines = [
        "HloModule synthetic, is_scheduled=true, "
        "entry_computation_layout={(f32[128,256]{1,0})->f32[128,256]{1,0}}",
        "",
        "%add_f32 (a: f32[], b: f32[]) -> f32[] {",
        "  %a = f32[] parameter(0)",
        "  %b = f32[] parameter(1)",
        "  ROOT %s = f32[] add(f32[] %a, f32[] %b)",
        "}",
        "",
        "%fused_computation (param_0: f32[128,256]) -> f32[256,128] {",
        "  %param_0 = f32[128,256]{1,0:T(8,128)} parameter(0)",
        "  ROOT %transpose.0 = f32[256,128]{1,0:T(8,128)} transpose(%param_0), dimensions={1,0}",
        "}",
        "",
        "ENTRY %main (p: f32[128,256]) -> f32[128,256] {",
        "  %p = f32[128,256]{1,0} parameter(0), metadata={op_name=\"p\"}",
    ]
    prev = "p"
    kinds = 6
    for i in range(n - 5):
        name = f"i.{i}"
        k = i % kinds
        meta = f'metadata={{op_name="jit(f)/op_{i}" source_file="f.py" source_line={i}}}'
        if k == 0:
            line = f"  %{name} = f32[128,256]{{1,0}} add(%{prev}, %p), {meta}"
        elif k == 1:
            line = (f"  %{name} = f32[128,256]{{1,0}} multiply(f32[128,256]{{1,0}} %{prev}, "
                    f"f32[128,256]{{1,0}} %p), {meta}")
        elif k == 2:
            line = (f"  %{name} = f32[128,256]{{1,0}} fusion(%{prev}), kind=kLoop, calls=%fused_computation, "
                    f'{meta}, backend_config={{"flag_configs":[],"outer":{{"x":"{i}"}}}}')
        elif k == 3:
            line = (f"  %{name} = f32[128,256]{{1,0}} slice(%{prev}), slice={{[0:128:1], [0:256:1]}}, "
                    f"sharding={{devices=[4,2]<=[8]}}")
        elif k == 4:
            line = f"  %{name} = f32[128,256]{{1,0}} transpose(%{prev}), dimensions={{0,1}}, {meta}"
        else:
            line = f"  %{name} = f32[128,256]{{1,0:T(8,128)}} copy(%{prev})"
        lines.append(line)
        prev = name
    lines.append(f"  ROOT %out = f32[128,256]{{1,0}} copy(%{prev})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _time(text: str, repeat: int = 1) -> tuple[float, int]:
    """Best of ``repeat`` parses; garbage from earlier runs is collected first, so every run
    starts from the same heap (the cyclic GC stays on while the parse runs, as in a user's program)."""
    best, count = float("inf"), 0
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        module = parse_module(text)
        best = min(best, time.perf_counter() - start)
        count = module.instruction_count
        del module
    return best, count


def _corpus() -> list[str]:
    return [p.read_text() for p in sorted(DATA.glob("*.hlo")) + sorted((DATA / "tpu").glob("*.hlo"))]


def _median_spread(values: list[float], fmt: str, unit: str = "") -> str:
    return f"{statistics.median(values):{fmt}}{unit} (spread {min(values):{fmt}}-{max(values):{fmt}})"


def against_jaxlib(texts: list[str], rounds: int) -> None:
    """Per round: each file parsed by both parsers alternately; ratio = our total / jaxlib's.

    Both wall time and CPU time (``time.process_time``: steadier on a shared machine) are
    summed per parser; each ratio is the median over rounds, with its spread.
    """
    if jaxlib_hlo is None:
        print("jaxlib is missing: no comparison with XLA's C++ parser")
        return
    wall: list[float] = []
    cpu: list[float] = []
    ours_rate, theirs_rate = [], []
    count = sum(parse_module(t).instruction_count for t in texts)
    for r in range(rounds):
        gc.collect()
        mine = [0.0, 0.0]  # wall, cpu
        theirs = [0.0, 0.0]
        for k, text in enumerate(texts):
            for first in ((0, 1) if (k + r) % 2 else (1, 0)):
                start, start_cpu = time.perf_counter(), time.process_time()
                if first:
                    parse_module(text)
                else:
                    jaxlib_hlo.hlo_module_from_text(text)
                took = (time.perf_counter() - start, time.process_time() - start_cpu)
                total = mine if first else theirs
                total[0] += took[0]
                total[1] += took[1]
        wall.append(mine[0] / theirs[0])
        cpu.append(mine[1] / theirs[1])
        ours_rate.append(count / mine[0])
        theirs_rate.append(count / theirs[0])
    print(f"HLO parse vs jaxlib hlo_module_from_text ({len(texts)} files, {count} instructions, "
          f"{rounds} rounds, alternating): ours/jaxlib = {_median_spread(wall, '.2f', 'x')} wall, "
          f"{_median_spread(cpu, '.2f', 'x')} CPU; ours {statistics.median(ours_rate):,.0f} instr/s, "
          f"jaxlib {statistics.median(theirs_rate):,.0f} instr/s (wall)")


def parse_and_maps(texts: list[str], rounds: int) -> None:
    """Parse every file and compute every instruction's output→input maps (output 0), caches
    (the indexing layer's and the maps remembered by value) cleared before each round; rates
    by wall time and by CPU time."""
    rates: list[float] = []
    cpu_rates: list[float] = []
    for _ in range(rounds):
        clear_caches()
        analysis.clear_caches()
        gc.collect()
        count = 0
        start, start_cpu = time.perf_counter(), time.process_time()
        for text in texts:
            for instr in parse_module(text).instructions():
                output_to_input_indexing(instr)
                count += 1
        rates.append(count / (time.perf_counter() - start))
        cpu_rates.append(count / (time.process_time() - start_cpu))
    print(f"parse + every instruction's maps: {_median_spread(rates, ',.0f')} instructions/s wall, "
          f"{_median_spread(cpu_rates, ',.0f')} per CPU second (median of {rounds}; aim >= 40,000)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=100_000, help="largest synthetic module size")
    ap.add_argument("--repeat", type=int, default=3, help="runs per size (best is reported)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the jaxlib comparison")
    ap.add_argument("--no-synthetic", action="store_true", help="skip the synthetic modules")
    args = ap.parse_args()
    texts = _corpus()
    against_jaxlib(texts, args.rounds)
    parse_and_maps(texts, args.rounds)
    if args.no_synthetic:
        return
    files = sorted(DATA.glob("*.hlo")) + sorted((DATA / "tpu").glob("*.hlo"))
    total_t, total_n, largest = 0.0, 0, (0.0, 0, "")
    for path in files:
        seconds, count = _time(path.read_text(), args.repeat)
        total_t += seconds
        total_n += count
        largest = max(largest, (seconds, count, path.name))
    print(f"corpus: {len(files)} files, {total_n} instructions in {total_t:.3f} s "
          f"= {total_n / total_t:,.0f} instructions/s (best of {args.repeat} per file)")
    print(f"  slowest file: {largest[2]} ({largest[1]} instructions) in {largest[0] * 1000:.1f} ms")
    sizes = [args.n // 4, args.n // 2, args.n]
    points = []
    for n in sizes:
        text = synthetic_module(n)
        seconds, count = _time(text, args.repeat)
        points.append((count, seconds))
        print(f"synthetic: {count:>7} instructions ({len(text) / 1e6:5.1f} MB) in {seconds:5.2f} s "
              f"= {seconds / count * 1e6:5.1f} us/instruction")
    # least-squares slope of log(time) against log(size): 1.0 means linear
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    verdict = "linear" if exponent < 1.15 else "SUPER-LINEAR"
    print(f"linearity: time grows as size^{exponent:.2f} over {points[0][0]}..{points[-1][0]} "
          f"instructions (log-log fit; best of {args.repeat}, gc collected before each run) -> {verdict}")


if __name__ == "__main__":
    main()
