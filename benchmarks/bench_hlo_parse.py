"""Benchmark of tensorlayout.hlo.parse_module: the HLO corpus and a synthetic large module.

Run: python benchmarks/bench_hlo_parse.py [N] [--repeat R]

N is the largest synthetic module (default 100000 instructions); modules of N/4, N/2 and N
instructions are parsed R times each (default 3, best kept) and the growth exponent of the
time is reported (1.0 = linear).
"""

from __future__ import annotations

import argparse
import gc
import math
import time
from pathlib import Path

from tensorlayout.hlo import parse_module

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
    starts from the same heap (parse_module itself switches the cyclic GC off while it runs)."""
    best, count = float("inf"), 0
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        module = parse_module(text)
        best = min(best, time.perf_counter() - start)
        count = module.instruction_count
        del module
    return best, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=100_000, help="largest synthetic module size")
    ap.add_argument("--repeat", type=int, default=3, help="runs per size (best is reported)")
    args = ap.parse_args()
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
