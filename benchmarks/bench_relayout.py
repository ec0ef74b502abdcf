"""Relayout speed: ``to_physical`` / ``from_physical`` of a 64 MiB array, side by side with
(a) ``np.copyto`` of the same bytes (the physical limit) and (b) the naive numpy
pad → reshape → transpose recipe (``tiling_plan(shape).apply`` and its inverse).

Run: ``python benchmarks/bench_relayout.py [--repeat N] [--mib M]``. Prints, per format and
direction, the best times and the two ratios (ours / copy: the median over rounds in which
ours and the copy are timed one after the other; ours / naive), plus the ratio of the numpy
fallback path (used when the C kernel could not be built). The aim is ours / copy <= 1.5
and ours / naive < 1.

To add a format (e.g. the fp16 zN TLA format once ``tensorlayout.cute`` provides it), append
a ``Case`` to ``CASES`` below: a name, a function ``(mib) -> (PhysicalTarget-like, logical
numpy array)`` and optionally the naive recipe pair ``(to_fn, from_fn)``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensorlayout.relayout import PhysicalTarget, as_target, from_physical, to_physical
from tensorlayout.xla import parse_shape, tiling_plan

Naive = tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]


@dataclass
class Case:
    name: str
    make: Callable[[int], tuple[object, np.ndarray]]
    naive: Callable[[object], Naive] | None = None


def _xla_case(type_name: str, dtype: type, layout: str) -> Callable[[int], tuple[object, np.ndarray]]:
    def make(mib: int) -> tuple[object, np.ndarray]:
        item = np.dtype(dtype).itemsize
        cols = 8192
        rows = mib * (1 << 20) // (item * cols)
        shape = parse_shape(f"{type_name}[{rows},{cols}]{{1,0:{layout}}}")
        rng = np.random.default_rng(0)
        data = rng.integers(0, 120, size=(rows, cols)).astype(dtype)
        return shape, data
    return make


def _xla_naive(shape: object) -> Naive:
    """The pad → reshape → transpose recipe and its inverse (reshape → transpose → slice)."""
    plan = tiling_plan(shape)  # type: ignore[arg-type]

    def to_fn(x: np.ndarray) -> np.ndarray:
        return plan.apply(x)

    def from_fn(buf: np.ndarray) -> np.ndarray:
        y = buf.reshape(plan.tiled_dims)
        for step in reversed(plan.steps):
            inv = np.argsort(step.permutation)
            y = y.transpose(inv).reshape(step.padded_dims)
            y = y[tuple(slice(0, m) for m in step.merged_dims)]
            y = y.reshape(step.input_dims[len(step.input_dims) - len(step.input_dims):])
        inv = np.argsort(plan.physical_order)
        return np.ascontiguousarray(y.reshape([plan.logical_dims[d] for d in plan.physical_order])
                                    .transpose(inv))
    return to_fn, from_fn


def _zn_case(mib: int) -> tuple[object, np.ndarray]:
    """An fp16 zN matrix (Ascend TLA): 16 x 16 fractals, row-major inside, column-major between."""
    from tensorlayout.cute import tla
    cols = 8192
    rows = mib * (1 << 20) // (2 * cols)
    data = np.random.default_rng(0).integers(0, 120, size=(rows, cols)).astype(np.float16)
    return tla.make_format("zN", rows, cols, "f16"), data


def _zn_naive(target_like: object) -> Naive:
    """zN by hand: pad to whole fractals, split (R/16, 16, C/C0, C0), put fractal columns first."""
    rows, cols = target_like.origin_shape  # type: ignore[attr-defined]
    c0 = 16
    pr, pc = -(-rows // 16) * 16, -(-cols // c0) * c0

    def to_fn(x: np.ndarray) -> np.ndarray:
        if (pr, pc) != x.shape:
            x = np.pad(x, ((0, pr - rows), (0, pc - cols)))
        return np.ascontiguousarray(x.reshape(pr // 16, 16, pc // c0, c0).transpose(2, 0, 1, 3)).reshape(-1)

    def from_fn(buf: np.ndarray) -> np.ndarray:
        y = buf.reshape(pc // c0, pr // 16, 16, c0).transpose(1, 2, 0, 3).reshape(pr, pc)
        return np.ascontiguousarray(y[:rows, :cols])
    return to_fn, from_fn


# The formats of the issue:
# Case("f16 zN (TLA)", make=<target + array>, naive=<recipe or None>).
CASES: list[Case] = [
    Case("bf16 T(8,128)(2,1)", _xla_case("bf16", np.uint16, "T(8,128)(2,1)"), _xla_naive),
    Case("f32  T(8,128)", _xla_case("f32", np.float32, "T(8,128)"), _xla_naive),
    Case("s8   T(8,128)(4,1)", _xla_case("s8", np.int8, "T(8,128)(4,1)"), _xla_naive),
    Case("f16  zN (TLA)", _zn_case, _zn_naive),
]


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def paired(ours: Callable[[], object], copy: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Best times of ours and of the copy, timed alternately, and the median of the per-round
    ratios (robust to the other load of a noisy machine)."""
    t_ours, t_copy = [], []
    for _ in range(repeat):
        t_copy.append(best_of(copy, 1))
        t_ours.append(best_of(ours, 1))
    ratios = sorted(o / c for o, c in zip(t_ours, t_copy))
    return min(t_ours), min(t_copy), ratios[len(ratios) // 2]


def run(repeat: int, mib: int) -> None:
    import tensorlayout.relayout._copy as engine

    workers = engine._pool()
    print(f"relayout of {mib} MiB arrays, {repeat} rounds; copy kernel "
          f"{'built' if engine.kernel_available() else 'MISSING (numpy path)'}, "
          f"{workers._max_workers if workers else 1} threads from "
          f"{engine.THREAD_MIN_BYTES >> 20} MiB, non-temporal stores from "
          f"{engine.STREAM_MIN_BYTES >> 20} MiB")
    print("ratios: ours/copy = median over rounds of ours vs np.copyto timed alternately "
          "(aim <= 1.5); ours/naive = best vs best (aim < 1); numpy/copy = the fallback path")
    print(f"{'format':22} {'direction':13} {'copy ms':>8} {'naive ms':>9} {'ours ms':>8} "
          f"{'/copy':>6} {'/naive':>7} {'numpy/copy':>11}")
    for case in CASES:
        target_like, data = case.make(mib)
        target: PhysicalTarget = as_target(target_like)
        buf = to_physical(data, target)
        assert (from_physical(buf, target) == data).all()
        out_buf = np.empty_like(buf)
        out_arr = np.empty_like(data)
        flat_src = np.ascontiguousarray(data).reshape(-1)
        flat_dst = np.empty_like(flat_src)
        naive = case.naive(target_like) if case.naive else None
        if naive is not None:
            assert (naive[0](data) == buf).all() and (naive[1](buf) == data).all()
        rows = (
            ("to_physical", lambda: to_physical(data, target, out=out_buf),  # noqa: B023
             None if naive is None else (lambda: naive[0](data))),  # noqa: B023
            ("from_physical", lambda: from_physical(buf, target, out=out_arr),  # noqa: B023
             None if naive is None else (lambda: naive[1](buf))),  # noqa: B023
        )
        for direction, ours_fn, naive_fn in rows:
            copy_fn = lambda: np.copyto(flat_dst, flat_src)  # noqa: B023, E731
            ours, copy, ratio = paired(ours_fn, copy_fn, repeat)
            nv = best_of(naive_fn, max(1, repeat // 3)) if naive_fn else float("nan")
            engine.USE_KERNEL = False
            fallback = paired(ours_fn, copy_fn, max(1, repeat // 3))[2]
            engine.USE_KERNEL = True
            print(f"{case.name:22} {direction:13} {copy * 1e3:8.2f} {nv * 1e3:9.2f} {ours * 1e3:8.2f} "
                  f"{ratio:6.2f} {ours / nv:7.2f} {fallback:11.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="rounds per measurement")
    parser.add_argument("--mib", type=int, default=64, help="array size in MiB")
    args = parser.parse_args()
    run(args.repeat, args.mib)


if __name__ == "__main__":
    main()
