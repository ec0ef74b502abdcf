"""Run a fuzz target over seeded inputs and sort what went wrong into failure classes.

Input ``i`` of target ``name`` under ``seed`` is built from ``random.Random(f"{seed}:{name}:{i}")``,
so any input can be rebuilt from its number alone and chunks of a run are independent.
"""

from __future__ import annotations

import contextlib
import random
import re
import resource
import signal
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz._common import RoundTripError, Target

PER_INPUT_SECONDS = 10.0  # of CPU time (user + system): wall time on a shared machine is load
MEMORY_CAP = 4 << 30  # address-space cap while fuzzing, as in issue 17's runs


class InputTimeout(BaseException):
    """One input ran longer than its time budget (a BaseException so no handler eats it)."""


@dataclass
class Failure:
    """One failure class: how often, and the first input that showed it."""

    kind: str  # "exception", "roundtrip", "timeout" or "memory"
    count: int
    reproducer: str
    message: str


@dataclass
class Report:
    target: str
    tried: int = 0
    failures: dict[str, Failure] = field(default_factory=dict)

    def count(self, kind: str) -> int:
        return sum(f.count for f in self.failures.values() if f.kind == kind)

    def merge(self, other: Report) -> None:
        self.tried += other.tried
        for key, f in other.failures.items():
            if key in self.failures:
                self.failures[key].count += f.count
            else:
                self.failures[key] = f

    def summary(self) -> str:
        lines = [f"{self.target}: {self.tried} inputs, {len(self.failures)} failure classes"]
        for key, f in self.failures.items():
            lines.append(f"  [{f.kind} x{f.count}] {key}\n    {f.reproducer}\n    {f.message}")
        return "\n".join(lines)


def short_repr(value: Any, limit: int = 400) -> str:
    """``repr(value)`` with long runs of one character written ``'9' * 4301``."""
    if isinstance(value, str):
        parts = [m.group(0) for m in re.finditer(r"(.)\1{15,}|(?:(?!(.)\2{15}).)+", value, re.S)]
        text = " + ".join(f"{p[0]!r} * {len(p)}" if len(p) > 15 and len(set(p)) == 1 else repr(p)
                          for p in parts) or "''"
    elif isinstance(value, (tuple, list)):
        inner = ", ".join(short_repr(v, limit) for v in value)
        text = f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else (
            f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...<cut>"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/tensorlayout/" in f.filename]
    if ours:
        return f"{ours[-1].filename.rsplit('/tensorlayout/', 1)[1]}:{ours[-1].name}"
    return f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"


def classify(exc: BaseException) -> tuple[str, str]:
    """(kind, class key) of a failure."""
    if isinstance(exc, InputTimeout):
        return "timeout", "timeout"
    if isinstance(exc, RoundTripError):
        head = str(exc).split("\n")[0].split("; ")[0]  # "summary; details": the summary names the class
        msg = re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "_", head)
        return "roundtrip", f"RoundTrip {msg[:90]}"
    kind = "memory" if isinstance(exc, MemoryError) else "exception"
    return kind, f"{type(exc).__name__} at {_where(exc)}"


@contextlib.contextmanager
def guarded(memory_cap: int | None) -> Iterator[None]:
    """Cap the address space (if asked) and arm SIGPROF for per-input timeouts (CPU time: on a
    shared, loaded machine a wall-clock budget times out inputs that are merely waiting)."""
    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    if memory_cap is not None and (old_limit[1] == resource.RLIM_INFINITY or old_limit[1] > memory_cap):
        resource.setrlimit(resource.RLIMIT_AS, (memory_cap, old_limit[1]))

    def on_alarm(signum: int, frame: Any) -> None:
        raise InputTimeout

    old_handler = signal.signal(signal.SIGPROF, on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old_handler)
        resource.setrlimit(resource.RLIMIT_AS, old_limit)


def make_input(target: Target, seed: int, i: int) -> Any:
    return target.make(random.Random(f"{seed}:{target.name}:{i}"))


def run(target: Target, seed: int, start: int, count: int, *, memory_cap: int | None = MEMORY_CAP,
        seconds: float = PER_INPUT_SECONDS) -> Report:
    """Check inputs ``start .. start+count-1`` of ``target``; every escape is recorded."""
    report = Report(target.name)
    with guarded(memory_cap):
        for i in range(start, start + count):
            value = make_input(target, seed, i)
            report.tried += 1
            try:
                signal.setitimer(signal.ITIMER_PROF, seconds)
                target.check(value)
            except (Exception, InputTimeout) as exc:  # every escape is a finding
                kind, key = classify(exc)
                if key in report.failures:
                    report.failures[key].count += 1
                else:
                    msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
                    report.failures[key] = Failure(kind, 1, f"input #{i}: {short_repr(value)}", msg)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
    return report
