"""tensorlayout.jax against a real JAX (skipped without the ``jax`` extra)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tensorlayout import jax as tj  # noqa: E402
from tensorlayout.cli import main  # noqa: E402
from tensorlayout.errors import TensorLayoutError  # noqa: E402
from tensorlayout.xla import array_size, byte_size_of_elements  # noqa: E402

# 64-bit types need jax_enable_x64 (a global switch); their names are checked separately
DTYPES = ["bool", "int4", "uint4", "int8", "uint8", "int16", "int32", "uint32", "float16",
          "bfloat16", "float32", "complex64", "float8_e4m3fn", "float8_e5m2",
          "float8_e4m3b11fnuz"]


@pytest.mark.parametrize("name", DTYPES)
def test_element_type_of_matches_the_compiled_module(name: str) -> None:
    x = jnp.zeros((3, 5), jnp.dtype(name))
    param = tj.module_of(lambda a: a, x).entry.parameters[0]
    assert tj.element_type_of(x.dtype) == param.shape.element_type.name


def test_element_type_of_64_bit_names() -> None:
    assert [tj.element_type_of(jnp.dtype(n)) for n in ("int64", "uint64", "float64", "complex128")] \
        == ["s64", "u64", "f64", "c128"]


def test_shape_of_array_and_format() -> None:
    x = jnp.arange(24, dtype=jnp.float32).reshape(2, 3, 4)
    shape = tj.shape_of(x)
    assert shape.to_string(with_layout=True) == "f32[2,3,4]{2,1,0}"
    assert byte_size_of_elements(shape) == x.nbytes
    compiled = jax.jit(lambda a: a.T).lower(x).compile()
    out_format = compiled.output_formats
    got = tj.shape_of(out_format, x.dtype, (4, 3, 2))
    root = tj.module_of(lambda a: a.T, x).entry.root
    assert got.layout is not None and root.shape.layout is not None
    assert got.layout.minor_to_major == root.shape.layout.minor_to_major
    for bad in ((object(), "float32", (2,)), (object(),), ("text",)):
        with pytest.raises(TensorLayoutError, match=r"expected a"):
            tj.shape_of(*bad)


def test_compiled_shapes() -> None:
    a, b = jnp.ones((2, 3)), jnp.ones((4,), jnp.bfloat16)
    compiled = jax.jit(lambda x, y: (x.T, y * 2)).lower(a, b).compile()
    args, results = tj.compiled_shapes(compiled)
    assert [s.to_string(with_layout=True) for s in args] == ["f32[2,3]{1,0}", "bf16[4]{0}"]
    module = tj.module_of(lambda x, y: (x.T, y * 2), a, b)
    layout = module.attributes["entry_computation_layout"]
    assert [str(s.to_string(with_layout=True)) for s in results] == \
        [s.to_string(with_layout=True) for s in layout.result.tuple_shapes]


def test_module_text_lowered_and_compiled() -> None:
    x = jnp.ones((8, 16), jnp.bfloat16)
    lowered = tj.module_of(lambda a: jnp.tanh(a) * 2, x, compiled=False)
    compiled = tj.module_of(lambda a: jnp.tanh(a) * 2, x)
    assert {i.opcode for i in lowered.entry.instructions} >= {"tanh", "multiply"}
    assert compiled.entry.parameters[0].shape.to_string() == "bf16[8,16]"


def test_report_of_a_jitted_function() -> None:
    x = jnp.ones((2048, 4), jnp.int32)
    r = tj.report(lambda a: jnp.cumsum(a, axis=1), x, tpu=True)
    names = [b.name for b in r.padding.buffers]
    assert names and set(r.maps) >= set(names)
    param = next(b for b in r.padding.buffers if b.report.shape.dimensions == (2048, 4))
    assert param.report.allocated_bytes == array_size(param.report.shape)
    assert param.report.logical_bytes == x.nbytes
    assert all(isinstance(v, tuple) for v in r.linearized.values())


SCRIPT = """
import jax, jax.numpy as jnp
@jax.jit
def step(x, w):
    return jnp.tanh(x @ w).sum(axis=0)
print(step(jnp.ones((8, 16)), jnp.ones((16, 4))).shape)
"""


def test_real_dump_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump"
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={dump}", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True, capture_output=True,
                   timeout=240)
    assert main(["maps", str(dump), "--module", "jit_step", "--json", "--shapes"]) == 0
    out, err = capsys.readouterr()
    assert "non-HLO files" in err
    module = json.loads(out)["modules"][0]
    assert module["module"] == "jit_step" and module["summary"]["instructions"] > 0
    assert main(["padding", str(dump), "--module", "jit_step", "--tpu", "v5e", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["modules"][0]
    assert data["allocated_bytes"] > data["logical_bytes"] > 0
