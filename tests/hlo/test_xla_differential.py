"""Mutated corpus modules through XLA's own parser (jaxlib) and ours, side by side.

XLA's parser aborts the process on some malformed input (a CHECK in ``CreateReshape``), so it
runs in a child process that is restarted when it dies. Asserted: only library errors escape
ours, and every module XLA accepts parses here. The other direction is counted, not asserted
(``python -m tests.differential_counts hlo`` prints it by class): we do not check which
attribute names each opcode allows (they change between XLA versions: dump_syntax.hlo holds
TPU-dump attributes jaxlib 0.10.2 refuses), nor array constants against their shapes.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module

DATA = Path(__file__).resolve().parents[1] / "data" / "hlo"
_PIECES = [*"{}[]()=,:% \n_x-019", "ROOT ", "s1", "f32[2]", "/*c*/", "\u00b2"]
_WORKER = """
import json, sys
from jaxlib import _hlo
for line in sys.stdin:
    try:
        _hlo.hlo_module_from_text(json.loads(line))
        err = None
    except Exception as e:
        err = str(e)
    sys.stdout.write(json.dumps(err) + "\\n")
    sys.stdout.flush()
"""


def corpus_texts() -> list[str]:
    """The corpus modules the mutations start from (the ones under 12,000 characters)."""
    return [p.read_text() for p in sorted(DATA.glob("*.hlo")) if len(p.read_text()) < 12000]


def mutants(seed: int, count: int) -> list[str]:
    """``count`` corpus modules with one or two random insertions, deletions or replacements."""
    rng = random.Random(seed)
    texts = corpus_texts()
    out = []
    for _ in range(count):
        t = rng.choice(texts)
        for _ in range(rng.randint(1, 2)):
            p, piece = rng.randrange(len(t)), rng.choice(_PIECES)
            t = (t[:p] + piece + t[p:], t[:p] + t[p + rng.randint(1, 4):], t[:p] + piece + t[p + 1:])[
                rng.randrange(3)]
        out.append(t)
    return out


class XlaHlo:
    """jaxlib's parser in a child process: ``accepts(text)`` is True, False or None (it crashed);
    ``error(text)`` is None, XLA's message, or ``"crash"``."""

    def __init__(self) -> None:
        self.proc = self._start()

    @staticmethod
    def _start() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def error(self, text: str) -> str | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(text) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self.proc.wait()
            self.proc = self._start()
            return "crash"
        answer: str | None = json.loads(line)
        return answer

    def accepts(self, text: str) -> bool | None:
        err = self.error(text)
        return None if err == "crash" else err is None

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _run(seed: int, count: int) -> dict[str, int]:
    pytest.importorskip("jaxlib._hlo")
    xla = XlaHlo()
    counts = {"both accept": 0, "both reject": 0, "only we accept": 0, "xla crashed": 0}
    rejected_valid = []
    try:
        for text in mutants(seed, count):
            theirs = xla.accepts(text)
            try:
                parse_module(text)
                ours = True
            except TensorLayoutError:
                ours = False
            if theirs is None:
                counts["xla crashed"] += 1
            elif theirs and not ours:
                rejected_valid.append(text)
            else:
                key = {(True, True): "both accept", (False, False): "both reject"}.get((theirs, ours))
                counts[key or "only we accept"] += 1
    finally:
        xla.close()
    assert rejected_valid == [], f"{len(rejected_valid)} modules XLA accepts fail here"
    return counts


def test_mutated_modules_xla_accepts_parse_here() -> None:
    counts = _run(seed=7, count=60)
    assert counts["both accept"] + counts["both reject"] > 0


@pytest.mark.thorough
def test_mutated_modules_xla_accepts_parse_here_long() -> None:
    counts = _run(seed=11, count=5000)
    print(counts)
