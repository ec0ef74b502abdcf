"""A fuzz campaign over every entry point, each chunk in its own subprocess.

    python -m tests.fuzz.campaign --per-entry 20000 [--jobs 2] [--seed 17] [--only cli]
    python -m tests.fuzz.campaign --show cli:123      # print input 123 of target cli

Prints, per entry point: inputs tried, non-library exceptions, memory errors, timeouts,
round-trip failures and crashes (a chunk whose process dies is counted, and the run goes on
after the input that killed it), then the first reproducer of each failure class.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from tests.fuzz import _cli, _runner
from tests.fuzz._runner import Failure, Report
from tests.fuzz._targets import TARGETS

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ("exception", "memory", "timeout", "roundtrip", "crash")


def _worker(name: str, seed: int, start: int, count: int, progress: str) -> None:
    """Run one chunk and print its report as JSON; the index of the input under way is
    written to ``progress`` so that the parent can name the input that killed us."""
    target = TARGETS[name]
    fd = os.open(progress, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    report = Report(name)
    for i in range(start, start + count):
        os.pwrite(fd, f"{i:>20}".encode(), 0)
        report.merge(_runner.run(target, seed, i, 1))
    os.close(fd)
    out = {"report": {"tried": report.tried, "failures": {k: asdict(f) for k, f in report.failures.items()}},
           "exit_codes": dict(_cli.EXIT_CODES)}
    print(json.dumps(out))


def _chunk(name: str, seed: int, start: int, count: int) -> tuple[Report, dict[int, int]]:
    """Run ``count`` inputs from ``start`` in subprocesses, restarting after each crash."""
    report, codes = Report(name), dict[int, int]()
    while count > 0:
        with tempfile.NamedTemporaryFile(prefix="tl-fuzz-") as progress:
            cmd = [sys.executable, "-m", "tests.fuzz.campaign", "--worker", name, str(start), str(count),
                   "--seed", str(seed), "--progress", progress.name]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=os.environ.copy(),
                                  timeout=None)
            if proc.returncode == 0:
                data = json.loads(proc.stdout.strip().splitlines()[-1])
                report.merge(_from_json(name, data["report"]))
                for code, n in data["exit_codes"].items():
                    codes[int(code)] = codes.get(int(code), 0) + n
                return report, codes
            done = int(Path(progress.name).read_text() or start)
        killer = _runner.short_repr(_runner.make_input(TARGETS[name], seed, done))
        last = proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else ""
        crash = Failure("crash", 1, f"input #{done}: {killer}", last)
        report.merge(Report(name, done - start + 1, {f"crash (exit {proc.returncode})": crash}))
        count -= done - start + 1
        start = done + 1
    return report, codes


def _from_json(name: str, data: dict[str, object]) -> Report:
    failures = data["failures"]
    assert isinstance(failures, dict)
    tried = data["tried"]
    assert isinstance(tried, int)
    return Report(name, tried, {k: Failure(**v) for k, v in failures.items()})


def _table(reports: list[Report], seconds: dict[str, float]) -> str:
    head = ("| entry point | inputs | non-library exceptions | memory errors | timeouts "
            "| round-trip failures | crashes | failure classes | seconds |")
    rows = [head, "|" + "---|" * 9]
    for r in reports:
        counts = " | ".join(f"{r.count(c):,}" for c in COLUMNS)
        secs = seconds[r.target]
        rows.append(f"| `{r.target}` | {r.tried:,} | {counts} | {len(r.failures)} | {secs:.0f} |")
    return "\n".join(rows)


def campaign(per_entry: int, seed: int, jobs: int, chunk: int, only: list[str]) -> int:
    names = only or list(TARGETS)
    reports, seconds, codes = [], dict[str, float](), dict[int, int]()
    with ThreadPoolExecutor(jobs) as pool:
        for name in names:
            t0 = time.monotonic()
            total = Report(name)
            futures = [pool.submit(_chunk, name, seed, s, min(chunk, per_entry - s))
                       for s in range(0, per_entry, chunk)]
            for fut in futures:
                rep, c = fut.result()
                total.merge(rep)
                for k, v in c.items():
                    codes[k] = codes.get(k, 0) + v
            seconds[name] = time.monotonic() - t0
            reports.append(total)
            print(f"# {name}: {total.tried} inputs, {len(total.failures)} failure classes, "
                  f"{seconds[name]:.0f} s", file=sys.stderr, flush=True)
            for key, f in total.failures.items():  # at once: a long run may be stopped before the table
                print(f"#   [{f.kind} x{f.count}] {key}: {f.reproducer} -- {f.message}",
                      file=sys.stderr, flush=True)
    print(_table(reports, seconds))
    if codes:
        print(f"\nCLI exit codes: {dict(sorted(codes.items()))} (2 = bad invocation, refused)")
    print("\nFirst reproducer of each failure class:")
    for r in reports:
        for key, f in r.failures.items():
            print(f"- `{r.target}` [{f.kind} x{f.count}] {key}\n  - {f.reproducer}\n  - {f.message}")
    return 1 if any(r.failures for r in reports) else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.campaign", description=__doc__.split("\n")[0])
    p.add_argument("--per-entry", type=int, default=20_000, help="inputs per entry point")
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--jobs", type=int, default=2, help="subprocesses at a time")
    p.add_argument("--chunk", type=int, default=2_000, help="inputs per subprocess")
    p.add_argument("--only", action="append", default=[], choices=list(TARGETS), help="entry point(s)")
    p.add_argument("--show", metavar="TARGET:I", help="print input I of TARGET and check it")
    p.add_argument("--worker", nargs=3, metavar=("TARGET", "START", "COUNT"), help=argparse.SUPPRESS)
    p.add_argument("--progress", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.seed, int(args.worker[1]), int(args.worker[2]), args.progress)
        return 0
    if args.show:
        name, _, i = args.show.rpartition(":")
        value = _runner.make_input(TARGETS[name], args.seed, int(i))
        print(_runner.short_repr(value, limit=10**6))
        print(_runner.run(TARGETS[name], args.seed, int(i), 1).summary())
        return 0
    return campaign(args.per_entry, args.seed, args.jobs, args.chunk, args.only)


if __name__ == "__main__":
    sys.exit(main())
