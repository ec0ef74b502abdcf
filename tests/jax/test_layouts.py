"""Layout assignment explained on a real before/after dump pair: a JAX program whose output
layout is fixed by ``Format(Layout(major_to_minor=(2, 1, 0)))`` (XLA ``{0,1,2}``) and which
sorts along a middle dim; XLA's layout assignment inserts a copy for the result layout and
one for the sort's operand (CPU, and TPU v5e compiled deviceless when libtpu is installed)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.hlo import parse_module
from tensorlayout.jax.layouts import layout_changes

SCRIPT = Path(__file__).parent / "layout_programs.py"


def _dump(out: Path, target: str) -> Path:
    pytest.importorskip("jax")
    subprocess.run([sys.executable, str(SCRIPT), str(out), target], capture_output=True, timeout=180,
                   env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=True)
    return out


def _run(capsys: pytest.CaptureFixture[str], out: Path) -> list[dict[str, object]]:
    assert main(["layouts", str(out), "--module", "jit_program", "--json"]) == 0
    [module] = json.loads(capsys.readouterr().out)["modules"]
    assert module["has_before"]
    changes: list[dict[str, object]] = module["changes"]
    return changes


_OUT = (4 * 512 * 256) * 4  # f32[4,512,256]


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_copies_of_a_real_dump_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str) -> None:
    if target == "tpu" and importlib.util.find_spec("libtpu") is None:
        pytest.skip("needs libtpu (the tpu extra)")
    changes = _run(capsys, _dump(tmp_path, target))
    result = [c for c in changes if c["forced_by"] == "the entry result layout"]
    assert len(result) == 1 and result[0]["inserted_by_xla"] and result[0]["kind"] == "relayout"
    assert str(result[0]["result_shape"]).startswith("f32[4,512,256]{0,1,2")
    sort = [c for c in changes if "(sort, operand 0)" in str(c["forced_by"])]
    assert sort and all(c["opcode"] == "copy" for c in sort)
    if target == "cpu":  # untiled: a copy reads and writes the array once each
        assert result[0]["bytes_moved"] == 2 * _OUT
    else:  # the TPU result layout puts the size-4 dim in the lanes: 32x the bytes written
        assert result[0]["bytes_moved"] == _OUT + 32 * _OUT
        assert any(c["kind"] == "memory-space" for c in changes)
    assert main(["layouts", str(tmp_path), "--module", "jit_program"]) == 0
    text = capsys.readouterr().out
    assert "forced by the entry result layout" in text and "MiB moved" in text


def test_without_the_unoptimized_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.txt"
    path.write_text("HloModule m\nENTRY e {\n  p = f32[8,128]{1,0} parameter(0)\n"
                    "  t = f32[128,8]{1,0} transpose(p), dimensions={1,0}\n"
                    "  ROOT d = f32[128,128]{1,0} dot(t, p), lhs_contracting_dims={1},"
                    " rhs_contracting_dims={0}\n}\n")
    [c] = layout_changes(parse_module(path.read_text()))
    assert (c.name, c.kind, c.forced_by, c.inserted, c.bytes_moved) == \
        ("t", "transpose", "d (dot, operand 0)", False, 8192)
    assert main(["layouts", str(path)]) == 0
    assert "whether XLA inserted each is not known" in capsys.readouterr().out
