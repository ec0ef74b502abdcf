"""The packing kernel's SSE2 forms where the CPU has AVX2: ``TENSORLAYOUT_PACK_SSE2`` set at import
turns the AVX2 moves off (``_pack.AVX2`` then 0), and the kernel's public-call tests of the forms
that have both (nibble and bit blocks, adjacent and owned columns, far lines, joined words of 3
codes) run again in a child process that way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

kernel = pytest.importorskip("tensorlayout.relayout._pack")

HERE = Path(__file__).resolve().parent
FILES = ("test_pack_bits.py", "test_pack_wide_columns.py", "test_pack_far_lines.py",
         "test_pack_join_words.py")


def test_the_sse2_forms_match_the_definition() -> None:
    env = {**os.environ, "TENSORLAYOUT_PACK_SSE2": "1"}
    code = "from tensorlayout.relayout import _pack; print(_pack.AVX2)"
    probe = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "0", probe.stderr[-2000:]
    files = [str(HERE / f) for f in FILES]
    args = [sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", "-k", "definition", *files]
    run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, cwd=HERE.parent.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
