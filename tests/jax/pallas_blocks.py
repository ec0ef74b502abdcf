"""Asks the Pallas TPU lowering (jax.experimental.pallas, ``lower(lowering_platforms=("tpu",))``
on CPU, no TPU needed) whether each block shape lowers: reads ``[[block, array, dtype], ...]``
JSON on stdin, prints ``["ok" | "ValueError: ...", ...]``. Rank-1 blocks need the TPU's
sublane count, which the lowering asks the default device for: with libtpu (``tpu`` argument)
a deviceless v5e device is made the default. Run as a script (nothing runs on import)."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any


def lowers(block: list[int | None], array: list[int], dtype: str) -> str:
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    import jax

    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...]

    grid = tuple(-(-a // (b or 1)) for a, b in zip(array, block))
    spec = pl.BlockSpec(tuple(block), lambda *g: g)
    shape = jax.ShapeDtypeStruct(tuple(array), getattr(jnp, dtype))
    call = pl.pallas_call(kernel, out_shape=shape, grid=grid, in_specs=[spec], out_specs=spec)
    try:
        jax.jit(call).trace(shape).lower(lowering_platforms=("tpu",))
    except ValueError as err:
        return "ValueError: " + str(err).split("\n")[0]
    return "ok"


def main() -> None:
    cases = json.load(sys.stdin)
    context: Any = contextlib.nullcontext()
    if len(sys.argv) > 1 and sys.argv[1] == "tpu":
        from jax.experimental import topologies

        import jax

        device = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2").devices[0]
        context = jax.default_device(device)
    with context:
        print(json.dumps([lowers(*case) for case in cases]))


if __name__ == "__main__":
    main()
