"""Start-up of the `tensorlayout` command against `python -c 'import numpy'`, in fresh processes.

Every command runs as ``python -m tensorlayout ARGS`` (``sys.executable``, so no pyenv shim and no
console-script wrapper; the console script ``tensorlayout`` runs the same ``cli.main`` without
``runpy``), output to /dev/null. Per round each command runs once, numpy's import in between
each, and the order within a round alternates, so all of them share the machine's noise; the
wall time of each process (fork to exit) is recorded. It prints per command the median time,
the spread (least-largest) and the median of its ratios to the numpy runs next to it; then the
same for the CPU time of the process (user + system, from ``getrusage``), which other load on
the machine disturbs less than wall time.

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

    python benchmarks/bench_startup.py [--rounds 15] [--setting cached|uncached|both] [--package DIR]
        [--compare DIR]

(``--package`` times another tree's ``tensorlayout`` package directory; ``--compare`` times a second
one alternately in the same run, e.g. an older commit's exported with ``git archive``: before and
after under the same load.)
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one process running ``argv`` (start to exit); it must succeed."""
    t, c = time.perf_counter(), _cpu()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, _cpu() - c


def package_copy(package: Path, root: Path, compiled: bool) -> Path:
    """A copy of ``package`` under ``root`` (the PYTHONPATH entry to use), compiled or not."""
    shutil.copytree(package, root / "tensorlayout", ignore=shutil.ignore_patterns("__pycache__"))
    if compiled:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "tensorlayout")],
                       check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    return root


Series = dict[str, tuple[list[float], list[float]]]  # label -> (times, ratios to the numpy run before)
Job = tuple[str, list[str], dict[str, str]]  # label, argv, environment


def measure(anchor_env: dict[str, str], jobs: list[Job], rounds: int) -> tuple[Series, Series]:
    """Wall and CPU times per job label, each with its ratios to the numpy run just before it."""
    labels = [NUMPY[0], *(label for label, _, _ in jobs)]
    wall: Series = {label: ([], []) for label in labels}
    cpu: Series = {label: ([], []) for label in labels}
    for _, argv, env in [("", NUMPY[1], anchor_env), *jobs]:  # warm the file cache
        run(argv, env)
    for r in range(rounds):
        for label, argv, env in (jobs if r % 2 == 0 else jobs[::-1]):
            anchor, mine = run(NUMPY[1], anchor_env), run(argv, env)
            for k, series in enumerate((wall, cpu)):
                series[NUMPY[0]][0].append(anchor[k])
                series[label][0].append(mine[k])
                series[label][1].append(mine[k] / anchor[k])
    return wall, cpu


def report(title: str, results: Series) -> None:
    print(f"\n{title} per process, ms (median, least-largest), ratio to `import numpy`")
    for label, (times, ratios) in results.items():
        ms = [1e3 * t for t in times]
        ratio = f"{statistics.median(ratios):5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else ""
        print(f"  {label:28} {statistics.median(ms):6.1f} ({min(ms):5.1f}-{max(ms):6.1f})  {ratio}")


def _env(root: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "120"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--setting", choices=("cached", "uncached", "both"), default="both")
    parser.add_argument("--package", type=Path, default=PACKAGE, help="the tensorlayout package to time")
    parser.add_argument("--compare", type=Path, metavar="PACKAGE",
                        help="also time this package, alternately in the same run (before/after)")
    args = parser.parse_args()
    settings = ("cached", "uncached") if args.setting == "both" else (args.setting,)
    print(f"python {sys.version.split()[0]}, {args.rounds} rounds, commands run as `python -m tensorlayout`, "
          f"package {args.package}" + (f", [compare] = package {args.compare}" if args.compare else ""))
    for setting in settings:
        with tempfile.TemporaryDirectory() as tmp:
            env = _env(package_copy(args.package, Path(tmp) / "a", compiled=setting == "cached"))
            jobs: list[Job] = [(label, argv, env) for label, argv in COMMANDS]
            if args.compare:
                other = _env(package_copy(args.compare, Path(tmp) / "b", compiled=setting == "cached"))
                jobs = [job for label, argv in COMMANDS
                        for job in ((label, argv, env), (f"{label} [compare]", argv, other))]
            wall, cpu = measure(env, jobs, args.rounds)
            report(f"{setting}, wall time", wall)
            report(f"{setting}, CPU time", cpu)


if __name__ == "__main__":
    main()
