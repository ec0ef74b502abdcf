"""A JAX program whose output layout (``Format(Layout(major_to_minor=...))``) and sort make
XLA's layout assignment insert copies, compiled with its dump in ``OUT`` for CPU or deviceless
for TPU v5e. Run as a script: ``python layout_programs.py OUT cpu|tpu`` (nothing on import).
"""

from __future__ import annotations

import os
import sys
from typing import Any


def program(x: Any, w: Any) -> Any:
    import jax.numpy as jnp

    y = jnp.einsum("bij,jk->bki", x, w)
    return jnp.sort(y, axis=1), y.sum(axis=2)


def main(out: str, target: str) -> None:
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={out}"
    import jax.numpy as jnp
    from jax.experimental.layout import Format, Layout
    from jax.sharding import SingleDeviceSharding

    import jax

    if target == "tpu":
        from jax.experimental import topologies

        device = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2").devices[0]
    else:
        device = jax.devices()[0]
    sharding = SingleDeviceSharding(device)
    specs = [jax.ShapeDtypeStruct(s, jnp.float32, sharding=sharding) for s in ((4, 256, 384), (384, 512))]
    out_format = Format(Layout(major_to_minor=(2, 1, 0)), sharding)
    traced = jax.jit(program, out_shardings=(out_format, sharding)).trace(*specs)
    (traced.lower(lowering_platforms=("tpu",)) if target == "tpu" else traced.lower()).compile()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
