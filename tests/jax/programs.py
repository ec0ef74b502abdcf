"""JAX programs whose XLA dumps the differential tests parse (run as a script in a fresh
process: ``python programs.py``, with ``XLA_FLAGS=--xla_dump_to=DIR
--xla_force_host_platform_device_count=8``)."""

from __future__ import annotations

from functools import partial

import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jax
from jax import lax


def single_device() -> None:
    x = jnp.arange(96, dtype=jnp.float32).reshape(8, 12)
    idx = jnp.array([3, 1, 7])
    jax.jit(lambda a: jnp.tanh(a) * 2 + a.T.sum())(x)
    jax.jit(lambda a, w: jax.nn.softmax(a @ w, axis=-1))(x, x.T)
    jax.jit(lambda a, i: jnp.take(a, i, axis=0).cumsum(1))(x, idx)
    jax.jit(lambda a, i: a.at[i].add(1.0))(x, idx)
    jax.jit(lambda a: jnp.sort(a, axis=1)[:, ::2])(x)
    jax.jit(lambda a: lax.fori_loop(0, 3, lambda k, c: c * 1.5 + k, a))(x)
    jax.jit(lambda a: lax.cond(a.sum() > 0, jnp.sin, jnp.cos, a))(x)
    img = jnp.ones((2, 9, 9, 3), jnp.bfloat16)
    ker = jnp.ones((3, 3, 3, 4), jnp.bfloat16)
    jax.jit(lambda a, k: lax.conv_general_dilated(a, k, (2, 2), "SAME",
                                                  dimension_numbers=("NHWC", "HWIO", "NHWC")))(img, ker)
    jax.jit(lambda k: jax.random.normal(k, (4, 4)))(jax.random.key(0))
    jax.jit(lambda a: jnp.argmax(a, axis=1).astype(jnp.int8))(x)


def spmd() -> None:
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("y", None)))
    jax.jit(lambda a, b: jnp.tanh(jnp.dot(a, b, out_sharding=NamedSharding(mesh, P("x", None))))
            .sum(0))(x, w)
    auto = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    xa = jax.device_put(jnp.ones((16, 8)), NamedSharding(auto, P("x", "y")))
    jax.jit(lambda a: lax.with_sharding_constraint(a * 2, NamedSharding(auto, P(None, "x"))))(xa)
    jax.jit(lambda a: jnp.sin(a) @ a.T, out_shardings=NamedSharding(auto, P("y")))(xa)

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=(P("x", "y"),), out_specs=P("x", None))
    def reduce_y(a: jax.Array) -> jax.Array:
        return lax.psum(a, "y")

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=(P("x", "y"),), out_specs=P("x", "y"))
    def collectives(a: jax.Array) -> jax.Array:
        b = lax.all_gather(a, "x", tiled=True)
        c = lax.ppermute(a, "x", perm=[(i, (i + 1) % 4) for i in range(4)])
        d = lax.psum_scatter(b, "x", tiled=True)
        return c + d + lax.all_to_all(a, "y", 0, 0, tiled=True) + lax.pmax(a, ("x", "y"))

    reduce_y(x)
    collectives(x)


if __name__ == "__main__":
    single_device()
    spmd()
