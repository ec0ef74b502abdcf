"""StableHLO (what ``jax.jit(f).lower(...).as_text()`` prints by default) is recognised with
one typed line naming the JAX calls that print HLO, which then parses; a missing dump
directory or module file is a FileNotFoundError, not a shape error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.errors import ParseError
from tensorlayout.hlo import parse_module

SAMPLE = """#loc1 = loc("a")
module @jit_block attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> loc("a")) -> (tensor<3xf32>) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""

_LOWER = r"""
import sys
import jax, jax.numpy as jnp
lowered = jax.jit(lambda a, w: jnp.tanh(a @ w)).lower(jnp.ones((8, 125), jnp.bfloat16),
                                                      jnp.ones((125, 3), jnp.bfloat16))
sep = "\n=====\n"
sys.stdout.write(lowered.as_text() + sep + lowered.as_text(debug_info=True) + sep
                 + lowered.as_text(dialect="hlo") + sep + lowered.compiler_ir("hlo").as_hlo_text())
"""


def test_stablehlo_text_is_refused_with_the_command_that_gives_hlo() -> None:
    with pytest.raises(ParseError, match=r"StableHLO \(MLIR\) text; print HLO with .*dialect='hlo'"):
        parse_module(SAMPLE)


def test_what_jax_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("jax")
    run = subprocess.run([sys.executable, "-c", _LOWER], env={**os.environ, "JAX_PLATFORMS": "cpu"},
                         capture_output=True, text=True, timeout=120, check=True)
    stable, debug, *hlo = run.stdout.split("\n=====\n")
    for text in (stable, debug):
        with pytest.raises(ParseError, match="compiler_ir"):
            parse_module(text)
        path = tmp_path / "lowered.mlir"
        path.write_text(text)
        assert main(["padding", str(path), "--tpu"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "dialect='hlo'" in err
    for text in hlo:  # the commands it names give HLO that parses
        assert [i.opcode for i in parse_module(text).entry.instructions][-1] == "tanh"


def test_missing_paths_are_file_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for target in ("/no/such/dump_dir", "module_0001.jit_f.txt"):
        assert main(["padding", target]) == 2
        assert "FileNotFoundError: No such file or directory" in capsys.readouterr().err
    assert main(["padding", "f32[3]", "--tpu"]) == 0  # a shape is still a shape
