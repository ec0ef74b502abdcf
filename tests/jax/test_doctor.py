"""The padding doctor: findings ranked (parameters, outputs, temporaries), their reasons, the
fixes as JAX code with the bytes they save; and, with libtpu, every size change recompiled
deviceless for TPU with ``memory_analysis()`` equal to the estimate."""

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
from tensorlayout.jax.doctor import diagnose

MODULE = """HloModule jit_f
ENTRY main {
  x = bf16[3,1000,3000]{2,1,0:T(8,128)(2,1)} parameter(0), metadata={op_name="x"}
  w = f32[125,256]{1,0:T(8,128)} parameter(1), metadata={op_name="w"}
  t = f32[3,1000,3000]{2,1,0:T(8,128)} convert(x), metadata={op_name="jit(f)/convert"}
  ROOT y = bf16[1000,125]{1,0:T(8,128)(2,1)} custom-call(t, w), custom_call_target="f"
}
"""


def test_ranking_reasons_and_fixes() -> None:
    d = diagnose(parse_module(MODULE), generation="v6e")
    assert [(f.role, f.name) for f in d.findings] == [
        ("parameter 0", "x"), ("parameter 1", "w"), ("output 0", "y"), ("temporary", "t")]
    x = d.findings[0]
    assert x.reasons == ("dim 2 (size 3000): tile 128 pads it to 3072",)
    assert x.fixes[0].change == "round dim 2 from 3000 to 3072"  # a small round-up first
    saved = [f.saved_bytes for f in x.fixes[1:]]
    assert saved == sorted(saved, reverse=True)  # then the most bytes saved
    flatten = next(f for f in x.fixes if f.change == "flatten")
    assert flatten.saved_bytes == 430080 and flatten.code == "x = x.reshape(9000000)"  # the number
    up = next(f for f in x.fixes if f.change == "round dim 2 from 3000 to 3072")
    assert up.saved_bytes == 0 and "no padding" in up.code
    w = d.findings[1]  # f32[125,256]: 125 rows pad to 128 in (8,128) tiles
    assert w.reasons == ("dim 0 (size 125): tile 8 pads it to 128",)
    assert w.fixes[0].change == "round dim 0 from 125 to 128"
    assert d.findings[2].op_name == "" and d.findings[3].op_name == "jit(f)/convert"


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.txt"
    path.write_text(MODULE)
    assert main(["doctor", str(path), "--tpu", "v6e", "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "parameter 0 x:" in out and "round dim 2 from 3000 to 3072" in out and "and 3 more buffers" in out
    assert main(["doctor", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["modules"][0]["findings"][0]["name"] == "x"


_MLP = r"""
import json, jax, jax.numpy as jnp
from tensorlayout.jax.doctor import doctor
def mlp(x, w1, b1, w2):
    return jax.nn.gelu(x @ w1 + b1) @ w2
S = jax.ShapeDtypeStruct
d = doctor(mlp, S((1000, 125), jnp.bfloat16), S((125, 300), jnp.bfloat16), S((300,), jnp.bfloat16),
           S((300, 10), jnp.bfloat16), tpu="v5e")
print(json.dumps(d.as_dict()))
"""


@pytest.mark.skipif(importlib.util.find_spec("libtpu") is None, reason="needs libtpu (the tpu extra)")
def test_doctor_recompiles_and_the_compiler_agrees() -> None:
    pytest.importorskip("jax")
    src = str(Path(__file__).parents[2] / "src")
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": src}
    run = subprocess.run([sys.executable, "-c", _MLP], capture_output=True, text=True, timeout=300,
                         check=True, env=env)
    d = json.loads(run.stdout.strip().splitlines()[-1])
    checks = d["verifications"]
    assert checks[0]["change"] == "as written" and checks[0]["disagreement_bytes"] == 0
    assert len(checks) > 4 and all(c["disagreement_bytes"] == 0 for c in checks)  # compiler == estimate
    saving = [c for c in checks
              if c["after"]["argument_size_in_bytes"] < c["before"]["argument_size_in_bytes"]]
    assert any(c["change"].startswith("every argument dim") for c in saving)  # a size change
    flat = [c for c in saving if c["change"] == "argument 0 (x.1) passed as x.reshape(125000)"]
    assert flat, saving
    before, after = flat[0]["before"], flat[0]["after"]
    assert before["argument_size_in_bytes"] - after["argument_size_in_bytes"] == 4096
    roles = [f["role"].split()[0] for f in d["findings"]]
    assert roles == sorted(roles, key=["parameter", "output", "temporary"].index)


#: ``compiled.memory_analysis()`` of the checked-in dump's program (libtpu 0.0.42, TPU v5e,
#: deviceless), printed when the dump was written.
MLP_DUMP = Path(__file__).parents[1] / "data" / "dumps" / "jit_mlp_tpu_v5e"
MLP_STATS = {"argument_size_in_bytes": 347136, "output_size_in_bytes": 32768, "temp_size_in_bytes": 0}


def test_checked_in_tpu_dump(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(MLP_DUMP), "--json"]) == 0
    [module] = json.loads(capsys.readouterr().out)["modules"]
    params = [f for f in module["findings"] if f["role"].startswith("parameter")]
    assert sorted(f["name"] for f in params) == ["b1.1", "w1.1", "w2.1", "x.1"]
    assert all(f["fixes"] and f["reasons"] for f in params)
    allocated = sum(f["allocated_bytes"] for f in params)
    assert allocated == MLP_STATS["argument_size_in_bytes"]  # every parameter pads here
    assert main(["memory", str(MLP_DUMP), "--json"]) == 0
    [mem] = json.loads(capsys.readouterr().out)["modules"]
    assert mem["by_kind"]["parameter"] == MLP_STATS["argument_size_in_bytes"]
    assert mem["by_kind"]["output"] == MLP_STATS["output_size_in_bytes"]
