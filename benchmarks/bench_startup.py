"""Start-up of the `tensorlayout` command against `python -c 'import numpy'`, in fresh processes.

Every command runs as ``python -m tensorlayout ARGS`` (``sys.executable``, so no pyenv shim and no
console-script wrapper; the console script ``tensorlayout`` runs the same ``cli.main`` without
``runpy``), output to /dev/null. Per round each command runs once, numpy's import in between
each, and the order within a round alternates, so all of them share the machine's noise; the
wall time of each process (fork to exit) is recorded. It prints per command the median time,
the spread (least-largest) and the median of its ratios to the numpy runs next to it.

Two settings, each over a private copy of ``src/tensorlayout`` (its C extensions included) put
first on PYTHONPATH, with PYTHONDONTWRITEBYTECODE=1 so that no run writes bytecode:

* cached: the copy is compiled first (``compileall``, as ``pip install`` does), so every module
  of the package loads from its ``.pyc``;
* uncached: the copy has no bytecode, so every module of the package is compiled on each run
  (what running from a source tree with PYTHONDONTWRITEBYTECODE=1 does).

In both, numpy and the standard library load from their installed bytecode, as for any user: an
empty PYTHONPYCACHEPREFIX would make Python ignore every ``__pycache__``, numpy's included, and
so time the anchor uncached too. The aim (issue 30, item 8) is ``show`` of an XLA shape within
1.3x of numpy's import in both settings.

    python benchmarks/bench_startup.py [--rounds 15] [--setting cached|uncached|both]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tensorlayout"

NUMPY = ("import numpy", [sys.executable, "-c", "import numpy"])
_TL = [sys.executable, "-m", "tensorlayout"]
COMMANDS = [
    ("show XLA shape", [*_TL, "show", "f32[3,5]{1,0:T(2,2)}"]),
    ("show CuTe layout", [*_TL, "show", "((4,2),(4,3)):((4,16),(1,32))"]),
    ("show Triton text", [*_TL, "show", "tensor<4x16xf16, #ttg.blocked<{sizePerThread = [1, 2], "
                          "threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>>"]),
    ("show --index", [*_TL, "show", "bf16[16,256]{1,0:T(8,128)(2,1)}", "--index", "2,3"]),
    ("--help", [*_TL, "--help"]),
]


def wall(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from start to exit of one process running ``argv``; it must succeed."""
    t = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def package_copy(root: Path, compiled: bool) -> Path:
    """A copy of the package under ``root`` (the PYTHONPATH entry to use), compiled or not."""
    shutil.copytree(PACKAGE, root / "tensorlayout", ignore=shutil.ignore_patterns("__pycache__"))
    if compiled:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "tensorlayout")],
                       check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    return root


def measure(env: dict[str, str], rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per command label: its times and its ratios to the numpy run just before it."""
    out: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label, _ in [NUMPY, *COMMANDS]}
    for argv in (NUMPY[1], COMMANDS[0][1]):  # warm the file cache
        wall(argv, env)
    for r in range(rounds):
        for label, argv in (COMMANDS if r % 2 == 0 else COMMANDS[::-1]):
            anchor = wall(NUMPY[1], env)
            mine = wall(argv, env)
            out[NUMPY[0]][0].append(anchor)
            out[label][0].append(mine)
            out[label][1].append(mine / anchor)
    return out


def report(setting: str, results: dict[str, tuple[list[float], list[float]]]) -> None:
    print(f"\n{setting}: wall time per process, ms (median, least-largest), ratio to `import numpy`")
    for label, (times, ratios) in results.items():
        ms = [1e3 * t for t in times]
        ratio = f"{statistics.median(ratios):5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else ""
        print(f"  {label:18} {statistics.median(ms):6.1f} ({min(ms):5.1f}-{max(ms):6.1f})  {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--setting", choices=("cached", "uncached", "both"), default="both")
    args = parser.parse_args()
    settings = ("cached", "uncached") if args.setting == "both" else (args.setting,)
    print(f"python {sys.version.split()[0]}, {args.rounds} rounds, commands run as `python -m tensorlayout`")
    for setting in settings:
        with tempfile.TemporaryDirectory() as tmp:
            root = package_copy(Path(tmp), compiled=setting == "cached")
            env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "120"}
            env.pop("PYTHONPYCACHEPREFIX", None)
            report(setting, measure(env, args.rounds))


if __name__ == "__main__":
    main()
