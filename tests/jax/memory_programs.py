"""A JAX block (matmuls of odd sizes in bf16, a softmax over its rows) compiled with its XLA
dump in ``OUT``, for CPU or deviceless for TPU v5e; prints ``compiled.memory_analysis()`` as
JSON. Run as a script: ``python memory_programs.py OUT cpu|tpu`` (nothing runs on import).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def block(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
    import jax

    h = jax.nn.gelu(x @ w1 + b1)
    s = jax.nn.softmax(h @ h.T, axis=-1)
    return (s @ h) @ w2


SHAPES = [(1000, 125), (125, 300), (300,), (300, 10)]


def main(out: str, target: str) -> None:
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={out}"
    import jax.numpy as jnp

    import jax

    sharding = None
    if target == "tpu":
        from jax.experimental import topologies
        from jax.sharding import SingleDeviceSharding

        device = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2").devices[0]
        sharding = SingleDeviceSharding(device)
    specs = [jax.ShapeDtypeStruct(s, jnp.bfloat16, sharding=sharding) for s in SHAPES]
    traced = jax.jit(block).trace(*specs)
    lowered = traced.lower(lowering_platforms=("tpu",)) if target == "tpu" else traced.lower()
    stats = lowered.compile().memory_analysis()
    print(json.dumps({k: getattr(stats, k) for k in dir(stats) if k.endswith("_in_bytes")}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
