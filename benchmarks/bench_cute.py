"""tensorlayout.cute against pycute from a cold start, side by side on the same inputs in one run.

Needs pycute, which ships in the ``nvidia-cutlass`` wheel:
``pip install --no-deps nvidia-cutlass==4.2.0.0``.

Every timed call gets a fresh random input (no two calls in a run share arguments, and the
memo caches, if any, are cleared before each run), so no answer comes from a cache. Inputs are
built before the clock starts; only inputs both libraries answer correctly are timed. Each
library gets its own copy of the inputs (no shared objects), so both start equally cold. Each
figure is the median over ``--runs`` runs of the time per call; ratio = pycute / ours
(> 1: we are faster). The machine may be shared and noisy: compare ratios, not absolute times.

    python benchmarks/bench_cute.py [--runs 7] [--n 2000]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from tensorlayout import cute
from tensorlayout.cute import Layout

try:
    import pycute
except ImportError:  # pragma: no cover
    sys.exit("pycute is missing: pip install --no-deps nvidia-cutlass==4.2.0.0")


def rand_shape(rng: random.Random, depth: int = 2) -> Any:
    if depth == 0 or rng.random() < 0.5:
        return rng.choice((2, 2, 3, 4, 4, 8))
    return tuple(rand_shape(rng, depth - 1) for _k in range(rng.randint(1, 3)))


def compact(rng: random.Random, max_size: int = 4096) -> tuple[Any, Any]:
    """A random injective (shape, stride): compact strides in a random order, sometimes gaps."""
    while True:
        shape = rand_shape(rng)
        if cute.size(shape) <= max_size:
            break
    flat = cute.int_tuple.flatten(shape)
    strides, cur = [0] * len(flat), 1
    for k in rng.sample(range(len(flat)), len(flat)):
        cur *= rng.choice((1, 1, 1, 2))
        strides[k], cur = cur, cur * flat[k]
    return shape, cute.int_tuple.unflatten(strides, shape)


def fresh(x: Any) -> Any:
    """An equal copy of an IntTuple sharing no tuple or large int with ``x``.

    Each library is timed on its own copy of every input, the two built one after the other (so
    both meet the same state of the allocator): were the objects shared, whichever library ran
    second in a chunk would read them from a cache the first one had just filled (measured:
    about 25% of a logical_product call)."""
    if isinstance(x, tuple):
        return tuple([fresh(y) for y in x])
    return x + 0  # a new int object (beyond the small-int cache)


def py_of(pair: tuple[Any, Any]) -> Any:
    return pycute.Layout(fresh(pair[0]), fresh(pair[1]))


def twins(a: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Fresh copies of the arguments ``a`` for us and for pycute, built together (see fresh)."""
    mine = tuple(Layout(fresh(x.shape), fresh(x.stride)) if isinstance(x, Layout) else x for x in a)
    return mine, tuple(py_of((x.shape, x.stride)) if isinstance(x, Layout) else x for x in a)


def values(x: Any, sample: list[int]) -> list[int]:
    """The values at the sample indices below the layout's size."""
    if isinstance(x, Layout):
        n = x.size()
        return [int(x(i)) for i in sample if i < n]
    n = pycute.size(x)
    return [x(i) for i in sample if i < n]


def py_blocked_product(a: Any, b: Any) -> Any:
    """pycute has no blocked_product: C++'s definition written with pycute's own primitives."""
    r = max(len(a), len(b))
    pad = pycute.Layout(1, 0)
    a = pycute.make_layout(*([a[i] for i in range(len(a))] + [pad] * (r - len(a))))
    b = pycute.make_layout(*([b[i] for i in range(len(b))] + [pad] * (r - len(b))))
    p = pycute.logical_product(a, b)
    return pycute.make_layout(*(pycute.make_layout(p[0][i], p[1][i]) for i in range(r)))


Case = tuple[Callable[..., Any], Callable[..., Any], Callable[[random.Random], tuple[Any, ...]]]


def _pair(rng: random.Random) -> tuple[Any, ...]:
    return Layout(*compact(rng, 1 << 14)), Layout(*compact(rng, 256))


def _one(rng: random.Random) -> tuple[Any, ...]:
    return (Layout(*compact(rng)),)


CASES: dict[str, Case] = {
    "composition": (lambda a, b: cute.composition(a, b), lambda a, b: pycute.composition(a, b), _pair),
    "complement": (lambda a: cute.complement(a, 1 << 16), lambda a: pycute.complement(a, 1 << 16),
                   _one),
    "right_inverse": (cute.right_inverse, pycute.right_inverse, _one),
    "left_inverse": (cute.left_inverse, pycute.left_inverse, _one),
    "coalesce": (cute.coalesce, pycute.coalesce, _one),
    "logical_divide": (cute.logical_divide, pycute.logical_divide, _pair),
    "zipped_divide": (cute.zipped_divide, pycute.zipped_divide, _pair),
    "logical_product": (cute.logical_product, pycute.logical_product, _pair),
    "blocked_product": (cute.blocked_product, py_blocked_product, _pair),
}


def inputs(name: str, n: int, seed: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``n`` input tuples both libraries answer with the same function (equal size, equal values at
    a sample of indices; built outside the clock).

    Only distinct inputs are kept, so no call repeats an earlier one."""
    ours_fn, py_fn, gen = CASES[name]
    rng = random.Random(seed)
    mine: list[tuple[Any, ...]] = []
    theirs: list[tuple[Any, ...]] = []
    seen: set[tuple[Any, ...]] = set()
    while len(mine) < n:
        a = gen(rng)
        if a in seen:
            continue
        seen.add(a)
        p = tuple(py_of((x.shape, x.stride)) if isinstance(x, Layout) else x for x in a)
        try:
            r_ours, r_py = ours_fn(*a), py_fn(*p)
        except Exception:
            continue
        sample = [0, 1, 2, 3, 5, 7, 11, 13, 17, 31, 63, 64, 100, 255, 256, 511, 1000, 4095, 8191]
        sample += [rng.randrange(1 << 14) for _k in range(16)]
        if cute.size(r_ours.shape) == pycute.size(r_py) and values(r_ours, sample) == values(r_py, sample):
            m, t = twins(a)
            mine.append(m)
            theirs.append(t)
    cute.clear_caches()
    return mine, theirs


CHUNK = 25


def side_by_side(ours: Callable[[Any], Any], theirs: Callable[[Any], Any], mine: list[Any],
                 their: list[Any]) -> tuple[float, float, float]:
    """Time ``ours`` and ``theirs`` alternately over chunks of ``CHUNK`` fresh inputs.

    Returns the median per-call times and the median of the per-chunk ratios: on a shared,
    oversubscribed machine the load changes slowly, so neighbouring chunks see the same load.
    Which library runs first alternates from chunk to chunk: the first one reads its inputs from
    memory, and the second may find neighbouring lines already cached.
    """
    t_ours, t_py, ratios = [], [], []
    gc.disable()
    try:
        for k in range(0, len(mine) - CHUNK + 1, CHUNK):
            if k // CHUNK % 2:
                t = time.perf_counter()
                theirs(their[k:k + CHUNK])
                b = time.perf_counter() - t
            t = time.perf_counter()
            ours(mine[k:k + CHUNK])
            a = time.perf_counter() - t
            if not k // CHUNK % 2:
                t = time.perf_counter()
                theirs(their[k:k + CHUNK])
                b = time.perf_counter() - t
            t_ours.append(a / CHUNK)
            t_py.append(b / CHUNK)
            ratios.append(b / a)
    finally:
        gc.enable()
    return statistics.median(t_ours), statistics.median(t_py), statistics.median(ratios)


def _loop(fn: Callable[..., Any]) -> Callable[[list[tuple[Any, ...]]], None]:
    def run(items: list[tuple[Any, ...]]) -> None:
        for a in items:
            fn(*a)
    return run


def bench(name: str, n: int, runs: int) -> tuple[float, float, float]:
    ours_fn, py_fn, _gen = CASES[name]
    mine: list[tuple[Any, ...]] = []
    theirs: list[tuple[Any, ...]] = []
    for r in range(runs):
        m, t = inputs(name, n, seed=r)  # fresh inputs for every call: no cache can answer
        mine += m
        theirs += t
    cute.clear_caches()
    return side_by_side(_loop(ours_fn), _loop(py_fn), mine, theirs)


def bench_construction(n: int, runs: int) -> tuple[float, float, float]:
    rng = random.Random(1000)
    pairs = [compact(rng) for _k in range(n * runs)]
    both = [(fresh(p), fresh(p)) for p in pairs]
    return side_by_side(_loop(Layout), _loop(pycute.Layout), [m for m, _ in both], [t for _, t in both])


def bench_crd2idx(n: int, runs: int) -> tuple[float, float, float]:
    rng = random.Random(2000)
    items = []
    for _k in range(n * runs):
        s, d = compact(rng)
        items.append((cute.idx2crd(rng.randrange(cute.size(s)), s), s, d))
    both = [(fresh(x), fresh(x)) for x in items]
    return side_by_side(_loop(cute.crd2idx), _loop(pycute.crd2idx), [m for m, _ in both],
                        [t for _, t in both])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--only", nargs="*", default=None, help="operations to run (default: all)")
    ns = ap.parse_args()
    print(f"{'operation (cold, fresh inputs)':32} {'ours (us)':>10} {'pycute (us)':>12} {'ratio':>7}")
    only = set(ns.only) if ns.only else None
    rows = [(name, *bench(name, ns.n, ns.runs)) for name in CASES if only is None or name in only]
    if only is None or "crd2idx" in only:
        rows.append(("crd2idx (one coordinate)", *bench_crd2idx(ns.n, ns.runs)))
    if only is None or "Layout" in only:
        rows.append(("Layout(shape, stride)", *bench_construction(ns.n, ns.runs)))
    for name, t_ours, t_py, ratio in rows:
        print(f"{name:32} {t_ours * 1e6:10.2f} {t_py * 1e6:12.2f} {ratio:6.2f}x")
    print(f"({ns.runs * ns.n} fresh inputs per operation, timed alternately in chunks of {CHUNK}; "
          "medians; shared machine, figures are noisy)")


if __name__ == "__main__":
    main()
