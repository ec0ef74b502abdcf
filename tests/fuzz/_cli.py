"""The CLI as a fuzz target: ``tensorlayout.cli.main(argv)`` in-process, output captured.

A bad invocation must print exactly one line ``tensorlayout: <Kind>: ...`` on stderr and
exit 2 (a dump folder: one such line per failed module); anything else (a traceback, an
``InternalError`` exit 3, several lines) is a failure.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

from tensorlayout import cli
from tests.fuzz import _corpus, _gen, _triton
from tests.fuzz._common import RoundTripError

ONE_LINE = re.compile(r"tensorlayout: [A-Za-z]+(?:Error|Warning)?: [^\n]*\n\Z")
# Kinds a bad input may report: the library's errors, usage and file errors.
BAD_KINDS = re.compile(r"tensorlayout: (?!InternalError|MemoryError)[A-Za-z]+: ")
OPTIONS = {
    "show": ("--index", "--offset", "--window", "--max-width", "--json", "--as", "--tla", "--rows",
             "--cols", "--dtype", "--tpu", "--shape"),
    "simplify": ("--verify", "--limit", "--preserve", "--exact", "--remove-unused", "--json"),
    "maps": ("--instruction", "--fusion", "--input-to-output", "--physical", "--json", "--utilization",
             "--coalescing", "--shapes", "--linearized", "--module", "--stage"),
    "render": ("-o", "--format", "--tla", "--rows", "--cols", "--dtype", "--shape", "--scale", "--mma",
               "--copy", "--banks", "--access", "--window"),
    "padding": ("--json",),
}
_VALUES = ("0", "1", "2,3", "-1", "0:4,1:3", "9" * 4301, str(2**64), "²", "", "x", "zN", "VectorLayout",
           "cute", "xla", "map", "triton", "html", "svg", "tikz", "png", "-", "1:", ":", "0:0", "3,", "after",
           "all", "8,8", "16,32", "16", "v5e", "row", "column", "SM80_16x8x16_F16F16F16F16_TN",
           "SM75_U32x4_LDSM_N")


#: Exit codes seen by :func:`cli_check` in this process (2 = a bad invocation refused).
EXIT_CODES: Counter[int] = Counter()


@cache
def _scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="tl-fuzz-cli-"))


def _hlo_file(rng: random.Random) -> str:
    path = _scratch() / f"m{rng.randrange(8)}.hlo"
    path.write_text(_gen.hlo_mutate(rng, rng.choice(_corpus.hlo_texts())) if rng.random() < 0.7
                    else rng.choice(_corpus.hlo_texts()))
    return str(path)


def _dump_dir(rng: random.Random) -> str:
    """A directory of two module files (read as an --xla_dump_to folder), rebuilt per input."""
    folder = _scratch() / "dump"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name in ("module_0000.jit_a.before_optimizations.txt",
                 "module_0001.jit_b.cpu_after_optimizations.txt"):
        (folder / name).write_text(_gen.hlo_mutate(rng, rng.choice(_corpus.hlo_texts())))
    return str(folder)


def _positional(rng: random.Random, command: str) -> str:
    if command == "simplify":
        return _gen.from_seeds(rng, _corpus.seeds("map"), _gen.map_text)
    if command == "maps":
        roll = rng.random()
        return _hlo_file(rng) if roll < 0.9 else _dump_dir(rng) if roll < 0.97 else "/nonexistent"
    roll = rng.random()
    if roll < 0.15 and command in ("show", "render"):
        return _triton.make_triton(rng)
    if roll < 0.55:
        return _gen.from_seeds(rng, _corpus.seeds("shape"), _gen.shape_text)
    return _gen.from_seeds(rng, _corpus.seeds("cute"), _gen.cute_text)


def cli_input(rng: random.Random) -> list[str]:
    """A command line: a command, maybe a target, a few options with mostly odd values."""
    command = rng.choice((*OPTIONS, *OPTIONS, "bogus", "", "--version"))
    argv = [command] if command else []
    if command in OPTIONS and rng.random() < 0.9:
        argv.append(_positional(rng, command))
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        argv.append(rng.choice(OPTIONS.get(command, ("--help", "-x"))))
        if rng.random() < 0.7:
            argv.append(rng.choice(_VALUES) if rng.random() < 0.8 else _gen.random_text(rng, 8))
    if command == "render" and "-o" not in argv:
        argv += ["-o", "-"]
    return argv


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``tensorlayout argv`` run in this process, in an empty
    folder of its own (``-o`` takes fuzzed file names: they must not land in the checkout, and
    a relative target must not find the scratch files of other inputs)."""
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory(prefix="tl-fuzz-cwd-") as cwd, contextlib.chdir(cwd), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse --help / --version
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def cli_check(argv: list[str]) -> None:
    """Fails unless the invocation succeeded (0/1) or was refused in the one-line format (2)."""
    code, _, err = run_cli(argv)
    EXIT_CODES[code] += 1
    if "Traceback" in err:
        raise RoundTripError(f"traceback on stderr: {err[-300:]!r}")
    if code in (0, 1):
        return
    if code != 2 or not _refusal(argv, err):
        raise RoundTripError(f"CLI {_verdict(code, err)}; exit {code}, stderr {err[:300]!r}")


def _refusal(argv: list[str], err: str) -> bool:
    """One ``tensorlayout: Kind: ...`` line; a dump folder reports one such line per module
    that failed (after a ``tensorlayout: note: ...`` line about skipped files)."""
    folder = any(a.endswith("/dump") for a in argv)
    lines = err.splitlines(keepends=True) if folder else [err]
    return bool(lines) and all(ONE_LINE.match(x) and BAD_KINDS.match(x) for x in lines)


def _verdict(code: int, err: str) -> str:
    """A short name of what went wrong, the failure class of a bad CLI run."""
    kind = re.match(r"tensorlayout: (?:InternalError: )?([A-Za-z]+)", err)
    lines = "one line" if err.count("\n") == 1 else "several lines"
    return f"{'internal error' if code == 3 else 'bad exit'} {kind.group(1) if kind else 'no kind'} {lines}"
