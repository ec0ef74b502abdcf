"""XLA's own parser and validator, asked through jaxlib in a child process.

XLA aborts the whole process on some inputs (a negative tile size, ``L(0)``), so each text goes
to a worker process; a worker that dies marks its input as "crash" and is restarted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

_WORKER = r"""
import json, sys
from jaxlib import _hlo
for line in sys.stdin:
    shape = json.loads(line)
    text = "HloModule m\nENTRY e {\n ROOT p = " + shape + " parameter(0)\n}\n"
    try:
        module = _hlo.hlo_module_from_text(text)
    except Exception:
        print(json.dumps(None), flush=True)
        continue
    body = module.to_string()
    start = body.index("ROOT %p = ") + len("ROOT %p = ")
    print(json.dumps(body[start:body.index(" parameter(0)", start)]), flush=True)
"""


class XlaOracle:
    """``oracle(shape_text)`` is XLA's printed shape if XLA accepts the text, None if it rejects
    it, and ``"crash"`` if XLA aborts on it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._spare: subprocess.Popen[str] | None = None

    @staticmethod
    def _spawn() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def _start(self) -> subprocess.Popen[str]:
        # a spare worker imports jaxlib while this one answers, so a crash costs no start-up
        if self._proc is None or self._proc.poll() is not None:
            self._proc, self._spare = self._spare or self._spawn(), None
        if self._spare is None or self._spare.poll() is not None:
            self._spare = self._spawn()
        return self._proc

    def __call__(self, shape: str) -> str | None:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(shape) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            proc.wait()
            return "crash"
        answer: str | None = json.loads(line)
        return answer

    def close(self) -> None:
        for proc in (self._proc, self._spare):
            if proc is not None and proc.poll() is None:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=30)


def running_oracle() -> Iterator[XlaOracle]:
    """A test module's XLA oracle (the module is skipped without jaxlib), closed after its tests."""
    pytest.importorskip("jaxlib._hlo")
    oracle = XlaOracle()
    yield oracle
    oracle.close()
