"""Writes the HLO modules JAX prints for programs that tripped the parser or the analysis:
SPMD on meshes of 8 host CPU devices in a transposed or 3-D order (mesh replica groups
with an iota ``device_ids=(...)`` list), under Shardy and GSPMD; ``lax.switch`` branches
with an empty-tuple parameter; dynamic slices and gathers (maps with runtime variables);
4-bit constants; and, with ``tpu``, the same single-device programs compiled deviceless for
TPU v5e. Run as a script in a fresh process::

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python jax_modules.py OUT [tpu]
    XLA_FLAGS=--xla_force_host_platform_device_count=8 python jax_modules.py OUT --kinds cpu,shardy

Each module's text goes to ``OUT/<kind>_<n>.<name>.txt`` (``before`` and ``after``
optimizations). Not a test module: nothing runs on import.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any


def _write(out: Path, kind: str, lowered: Any, compile_: bool = True) -> None:
    n = len(list(out.glob(f"{kind}_*")))
    name = f"{kind}_{n:03d}"
    (out / f"{name}.before.txt").write_text(lowered.as_text(dialect="hlo"))
    if compile_:
        try:
            compiled = lowered.compile()
        except Exception as err:  # JAX itself rejects some output shardings under GSPMD
            (out / f"{name}.error").write_text(str(err))
            return
        (out / f"{name}.after.txt").write_text(compiled.as_text())


def single_device(out: Path, lower: Callable[..., Any], kind: str) -> None:
    import jax.numpy as jnp

    from jax import lax

    x = jnp.arange(96, dtype=jnp.float32).reshape(8, 12)
    i = jnp.int32(2)
    progs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (lambda k: lax.switch(k, [lambda: jnp.float32(1), lambda: jnp.float32(2)]), (i,)),
        (lambda a, k: lax.dynamic_slice(a, (k, k + 1), (3, 5)), (x, i)),
        (lambda a, k: lax.dynamic_update_slice(a, jnp.ones((2, 3)), (k, 0)), (x, i)),
        (lambda a, k: jnp.take(a, jnp.array([k, 1, 3]), axis=1) + 1, (x, i)),
        (lambda a, k: lax.dynamic_slice_in_dim(a, k, 4)[:, ::2].sum(), (x, i)),
        (lambda a: (a.astype(jnp.int4) + jnp.int4(3)).astype(jnp.float32), (x,)),
        (lambda a: a.astype(jnp.uint4).astype(jnp.int32) * 2, (x,)),
        (lambda a: lax.fori_loop(0, 4, lambda k, c: lax.dynamic_update_slice(
            c, lax.dynamic_slice_in_dim(c, k, 1) * 2, (k, 0)), a), (x,)),
        (lambda a, k: lax.cond(k > 1, lambda: a.T @ a, lambda: jnp.zeros((12, 12))), (x, i)),
    ]
    for fn, args in progs:
        _write(out, kind, lower(fn, *args))


def _meshes() -> dict[str, Any]:
    import numpy as np
    from jax.sharding import Mesh

    import jax

    devs = np.array(jax.devices())
    return {"t": Mesh(devs.reshape(4, 2).T, ("x", "y")),
            "xyz": Mesh(devs.reshape(4, 2).T.reshape(1, 2, 4), ("x", "y", "z")),
            "flat": Mesh(devs, ("x",))}


def spmd(out: Path, kind: str) -> None:
    for mesh in _meshes().values():
        _spmd_on(out, kind, mesh)


def _spmd_on(out: Path, kind: str, mesh: Any) -> None:
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import jax
    from jax import lax

    ax = mesh.axis_names
    spec = P(ax[-2], ax[-1]) if len(ax) > 1 else P(ax[0])
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, spec))
    both = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(ax)))
    progs = [lambda a: (a * 2).sum(0), lambda a: (a * 2).sum(1),
             lambda a: a.reshape(4, 4, 8).sum(1), lambda a: a.reshape(2, 8, 8).sum(0),
             lambda a: lax.with_sharding_constraint(a + 1, NamedSharding(mesh, P(None, ax[0])))]
    for fn in progs:
        _write(out, kind, jax.jit(fn).lower(x))
        _write(out, kind, jax.jit(fn).lower(both))
    column_sums = jax.jit(lambda a: (a * 2).sum(0))(x)  # replicated over one mesh axis
    _write(out, kind, jax.jit(lambda b: b.sum()).lower(column_sums))

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=(spec,), out_specs=spec)
    def coll(a: Any) -> Any:
        return lax.psum(a, ax[0]) + lax.pmax(a, ax)

    _write(out, kind, coll.lower(x))


#: The kinds of module written, each by its own function (the test runs them in two processes).
KINDS = ("cpu", "shardy", "gspmd", "tpu")


def write_kind(out: Path, kind: str) -> None:
    """Write the modules of one kind (see :data:`KINDS`) into ``out``."""
    import jax

    out.mkdir(parents=True, exist_ok=True)
    if kind == "cpu":
        single_device(out, lambda f, *a: jax.jit(f).lower(*a), "cpu")
    elif kind == "tpu":
        single_device(out, tpu_lower("v5e:2x2"), "tpu")
    else:
        shardy = jax.config.jax_use_shardy_partitioner
        jax.config.update("jax_use_shardy_partitioner", kind == "shardy")
        spmd(out, kind)
        jax.config.update("jax_use_shardy_partitioner", shardy)


def main(out: Path, kinds: list[str]) -> None:
    for kind in kinds:
        write_kind(out, kind)


def tpu_lower(topology: str) -> Callable[..., Any]:
    """``lower(fn, *args)`` for one chip of a deviceless TPU topology (needs libtpu)."""
    from jax.experimental import topologies
    from jax.sharding import SingleDeviceSharding

    import jax

    device = topologies.get_topology_desc(platform="tpu", topology_name=topology).devices[0]
    sharding = SingleDeviceSharding(device)

    def lower(fn: Callable[..., Any], *args: Any) -> Any:
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding) for a in args]
        return jax.jit(fn).trace(*specs).lower(lowering_platforms=("tpu",))

    return lower


if __name__ == "__main__":
    # OUT [tpu] writes every kind (tpu only when asked); OUT --kinds K1,K2 writes those
    if len(sys.argv) > 3 and sys.argv[2] == "--kinds":
        main(Path(sys.argv[1]), sys.argv[3].split(","))
    else:
        main(Path(sys.argv[1]), [k for k in KINDS if k != "tpu" or sys.argv[2:] == ["tpu"]])
