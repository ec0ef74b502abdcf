"""HLO modules from a file or an ``--xla_dump_to`` directory, for the commands that read modules.

XLA names dumped modules ``module_NNNN.NAME.STAGE.txt`` where STAGE is
``before_optimizations``, ``BACKEND_after_optimizations`` (``cpu_``, ``tpu_``, ``sm_8.0_gpu_``
…) or, with ``--xla_dump_hlo_pass_re``, one file per pass. A file is a module when its
first line starts with ``HloModule``; the others (buffer assignments, memory-usage reports,
live ranges, LLVM IR, objects, MLIR, debug options) are skipped with one note on stderr.

>>> stage_kind("cpu_after_optimizations"), stage_kind("before_optimizations")
('after', 'before')
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from tensorlayout.cli._io import is_folder, read_text
from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.model import HloModule

__all__ = [
    "DumpModule",
    "Progress",
    "add_module_arguments",
    "discover",
    "job_count",
    "process_modules",
    "select",
    "stage_kind",
]

#: Directories with at least this many HLO modules get a progress line on stderr.
PROGRESS_MODULES = 20
T = TypeVar("T")
_FILE_NAME = re.compile(r"module_(\d+)\.(.+)\.txt\Z")
_HEADER = re.compile(r"\s*HloModule\s+([^\s,]+)")
STAGES = ("after", "before", "all")


@dataclass(frozen=True, slots=True)
class DumpModule:
    """One HLO module file of a dump: its number, module name and stage (file-name part)."""

    path: Path
    number: int | None
    name: str
    stage: str

    @property
    def label(self) -> str:
        """``module_0006 jit_f (cpu_after_optimizations)``."""
        number = "" if self.number is None else f"module_{self.number:04d} "
        return f"{number}{self.name} ({self.stage})"


def stage_kind(stage: str) -> str:
    """``before``, ``after`` or ``pass`` (a per-pass dump) for a file-name stage."""
    if stage.endswith("before_optimizations"):  # also when the file's name part differs
        return "before"
    if stage.endswith("after_optimizations"):
        return "after"
    return "pass"


def _module_name(path: Path) -> str | None:
    """The ``HloModule`` name on the first line, or ``None`` when ``path`` is no module."""
    try:
        with path.open("rb") as f:
            head = f.read(512).decode("utf-8", errors="replace")
    except OSError:
        return None
    m = _HEADER.match(head)
    return m.group(1) if m else None


def _describe(path: Path) -> DumpModule | None:
    name = _module_name(path) if path.is_file() else None
    if name is None:
        return None
    m = _FILE_NAME.match(path.name)
    if not m:
        return DumpModule(path, None, name, path.stem)
    rest = m.group(2)
    stage = rest[len(name) + 1:] if rest.startswith(name + ".") else rest
    return DumpModule(path, int(m.group(1)), name, stage)


def _skip_kind(path: Path) -> str:
    for marker in ("buffer-assignment", "memory-usage-report", "live-range", "debug_options",
                   "ir-no-opt", "ir-with-opt", "obj-file", "mlir"):
        if marker in path.name:
            return marker
    return "directory" if path.is_dir() else (path.suffix.lstrip(".") or "other")


def discover(directory: str | Path) -> tuple[tuple[DumpModule, ...], Counter[str]]:
    """The HLO modules of a dump directory (by number, then file name) and the skipped
    files counted by kind.

    >>> discover("/nonexistent")
    Traceback (most recent call last):
    ...
    tensorlayout.errors.TensorLayoutError: not a directory: /nonexistent
    """
    root = Path(directory)
    if not root.is_dir():
        raise TensorLayoutError(f"not a directory: {root}")
    modules, skipped = [], Counter[str]()
    for path in sorted(root.iterdir()):
        found = _describe(path)
        if found is None:
            skipped[_skip_kind(path)] += 1
        else:
            modules.append(found)
    modules.sort(key=lambda m: (m.number if m.number is not None else -1, m.path.name))
    return tuple(modules), skipped


def skipped_note(skipped: Counter[str]) -> str:
    """The one-line note about skipped files (empty when none were skipped).

    >>> skipped_note(Counter({"buffer-assignment": 2, "ll": 1}))
    'tensorlayout: note: skipped 3 non-HLO files (buffer-assignment 2, ll 1)'
    """
    if not skipped:
        return ""
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"tensorlayout: note: skipped {sum(skipped.values())} non-HLO files ({kinds})"


def _matches(module: DumpModule, wanted: str) -> bool:
    if wanted.isascii() and wanted.isdigit() and len(wanted) <= 18:  # a module number
        return module.number == int(wanted)
    return wanted in (module.name, module.path.name, module.path.stem)


def select(modules: Sequence[DumpModule], wanted: str | None = None,
           stage: str = "after") -> tuple[DumpModule, ...]:
    """Modules named (or numbered) ``wanted``, of the ``stage`` kind (``after`` falls back
    to the module's ``before`` file when a module has no optimized file; ``all`` keeps all).

    >>> m = [DumpModule(Path("a"), 1, "f", "before_optimizations"),
    ...      DumpModule(Path("b"), 1, "f", "cpu_after_optimizations")]
    >>> [x.stage for x in select(m, "1")], [x.stage for x in select(m, "f", "before")]
    (['cpu_after_optimizations'], ['before_optimizations'])
    """
    if stage not in STAGES:
        raise TensorLayoutError(f"unknown stage {stage!r} (expected one of {', '.join(STAGES)})")
    chosen = [m for m in modules if wanted is None or _matches(m, wanted)]
    if wanted is not None and not chosen:
        names = ", ".join(sorted({f"{m.number} {m.name}" for m in modules})) or "none"
        raise TensorLayoutError(f"no module {wanted!r} in the dump (modules: {names})")
    if stage == "all":
        return tuple(chosen)
    kinds = {(m.number, m.name, stage_kind(m.stage)) for m in chosen}
    out = []
    for m in chosen:
        kind = stage_kind(m.stage)
        fallback = stage == "after" and kind == "before" and (m.number, m.name, "after") not in kinds
        if kind == stage or fallback or m.number is None:
            out.append(m)
    return tuple(out)


class Progress:
    """A progress line on stderr for long jobs, redrawn in place on a terminal; elsewhere
    (a log file, a pipe) one final note in the CLI's line format.

    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     Progress(3, "modules", 1).update(3)
    >>> err.getvalue()
    'tensorlayout: note: 3 modules read\\n'
    """

    def __init__(self, total: int, what: str, threshold: int) -> None:
        self.total = total
        self.what = what
        self.enabled = total >= threshold
        self.live = self.enabled and sys.stderr.isatty()
        self.step = max(1, total // 50)

    def update(self, done: int) -> None:
        if not self.enabled or (done != self.total and (not self.live or done % self.step)):
            return
        if not self.live:
            print(f"tensorlayout: note: {done} {self.what} read", file=sys.stderr)
            return
        filled = 30 * done // self.total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} {self.what}")
        if done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _job(work: Callable[[HloModule], T], path: Path) -> tuple[bool, T | str]:
    """Parse and process one dumped module: ``(True, result)`` or ``(False, error line)``."""
    try:
        return True, work(parse_module(read_text(path)))
    except TensorLayoutError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return False, f"tensorlayout: {type(err).__name__}: {path.name}: {first}"


def _results(chosen: Sequence[DumpModule], work: Callable[[HloModule], T],
             jobs: int) -> Iterator[tuple[bool, T | str]]:
    """``_job`` over the chosen modules in order; in ``jobs`` processes when more than one."""
    job = partial(_job, work)
    paths = [m.path for m in chosen]
    if jobs <= 1 or len(paths) < 2:
        yield from map(job, paths)
        return
    # spawn, not fork: a forked child of a multithreaded parent (JAX, numpy's BLAS) can deadlock
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=context) as pool:
        yield from pool.map(job, paths)


def job_count(jobs: int) -> int:
    """Worker processes for ``--jobs``: ``0`` means one per CPU.

    >>> job_count(3), job_count(0) >= 1
    (3, True)
    """
    if jobs < 0:
        raise TensorLayoutError(f"--jobs must be 0 (one per CPU) or positive, not {jobs}")
    return jobs or os.cpu_count() or 1


def process_modules(target: str, work: Callable[[HloModule], T], *, wanted: str | None = None,
                    stage: str = "after", jobs: int = 1) -> tuple[list[tuple[str, T]], int]:
    """``(label, work(module))`` for a module file (or ``-``), or for each chosen module of a
    dump directory (skipped files noted on stderr, progress for big dumps, ``jobs`` worker
    processes), and how many dumped modules failed (each reported on stderr, the rest go on).
    """
    if not is_folder(target):
        module = parse_module(read_text(target))
        if wanted is not None and wanted != module.name:
            raise TensorLayoutError(f"the file holds module {module.name!r}, not {wanted!r}")
        return [(target, work(module))], 0
    modules, skipped = discover(target)
    chosen = select(modules, wanted, stage)
    if not chosen:
        found = f"{len(modules)} module files, none of stage {stage!r}" if modules else "none"
        raise TensorLayoutError(f"no HLO module files to read in {target} ({found})")
    note = skipped_note(skipped)  # after the checks: an error stays the only line on stderr
    if note:
        print(note, file=sys.stderr)
    progress = Progress(len(chosen), "modules", PROGRESS_MODULES)
    out: list[tuple[str, T]] = []
    failed = 0
    for done, (m, (ok, value)) in enumerate(zip(chosen, _results(chosen, work, jobs),
                                                strict=True), 1):
        if ok:
            out.append((m.label, value))  # type: ignore[arg-type]
        else:
            failed += 1
            print(value, file=sys.stderr)
        progress.update(done)
    return out, failed


def add_module_arguments(p: argparse.ArgumentParser) -> None:
    """The ``MODULE`` argument and ``--module``/``--stage`` options shared by module commands."""
    p.add_argument("module", help="an HLO module text file ('-' for stdin) or an "
                                  "--xla_dump_to directory")
    p.add_argument("--module", dest="module_name", metavar="NAME",
                   help="in a dump directory: only the module with this name or number")
    p.add_argument("--stage", choices=STAGES, default="after",
                   help="in a dump directory: after optimizations (default; falls back to "
                        "before when a module has no optimized file), before, or all")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="in a dump directory: analyse modules in N processes (0: one per CPU)")
