"""Benchmark of tensorlayout.hlo.parse_module: the HLO corpus and a synthetic large module.

Run: python benchmarks/bench_hlo_parse.py [N]   (N = synthetic instruction count, default 100000)
"""

from __future__ import annotations

import sys
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


def _time(text: str) -> tuple[float, int]:
    start = time.perf_counter()
    module = parse_module(text)
    return time.perf_counter() - start, module.instruction_count


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    files = sorted(DATA.glob("*.hlo")) + sorted((DATA / "tpu").glob("*.hlo"))
    total_t, total_n, largest = 0.0, 0, (0.0, 0, "")
    for path in files:
        seconds, count = _time(path.read_text())
        total_t += seconds
        total_n += count
        largest = max(largest, (seconds, count, path.name))
    print(f"corpus: {len(files)} files, {total_n} instructions in {total_t:.3f} s "
          f"= {total_n / total_t:,.0f} instructions/s")
    print(f"  slowest file: {largest[2]} ({largest[1]} instructions) in {largest[0] * 1000:.1f} ms")
    text = synthetic_module(n)
    seconds, count = _time(text)
    print(f"synthetic: {count} instructions ({len(text) / 1e6:.1f} MB) in {seconds:.2f} s "
          f"= {count / seconds:,.0f} instructions/s")
    half_seconds, half_count = _time(synthetic_module(n // 2))
    print(f"linearity: {half_count} instructions in {half_seconds:.2f} s; ratio of times "
          f"{seconds / half_seconds:.2f} for ratio of sizes {count / half_count:.2f}")


if __name__ == "__main__":
    main()
