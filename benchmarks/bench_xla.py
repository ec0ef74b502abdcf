"""tensorlayout.xla index math, measured side by side in one run.

* ``linear_indices`` (the physical offset of every logical element) of 16M-element arrays in the
  seed's TPU formats, against ``np.arange`` of the same length (the cost of writing the int64
  answer at all) and against the naive recipe (pad-reshape-transpose of an index array).
* scalar ``linear_index`` / ``multi_index`` per call against numpy's ``ravel_multi_index`` /
  ``unravel_index`` on the same dims, and ``parse_shape`` of long shape texts.

Ratios are measured alternately with their anchor in one run (which one goes first alternates
from chunk to chunk); each ratio is the median over chunks, with the spread (min-max).

    python benchmarks/bench_xla.py [--chunks 9]
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
from collections.abc import Callable

import numpy as np

from tensorlayout.xla import linear_index, linear_indices, multi_index, parse_shape, tiling_plan

SHAPES = [
    "bf16[4096,4096]{1,0:T(8,128)(2,1)}",
    "f32[4096,4096]{1,0:T(8,128)}",
    "s8[4096,4096]{1,0:T(32,128)(4,1)}",
    "f32[8,2048,1024]{2,0,1:T(8,128)}",
]


def best(fn, number: int = 1, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def naive(shape) -> np.ndarray:
    """Offsets by the recipe: lay out an arange in physical order, then invert the permutation."""
    n = 1
    for d in shape.dimensions:
        n *= d
    phys = tiling_plan(shape).apply(np.arange(n, dtype=np.int64).reshape(shape.dimensions), -1)
    phys = phys.reshape(-1)
    out = np.empty(n, dtype=np.int64)
    keep = phys >= 0
    out[phys[keep]] = np.nonzero(keep)[0]
    return out


def alternate(ours: Callable[[], object], anchor: Callable[[], object], chunks: int,
              number: int) -> tuple[float, float, float, float, float]:
    """``ours`` and ``anchor`` timed alternately, ``number`` calls per chunk: median time per call of
    ours and of the anchor, then the median, least and largest ratio ours/anchor over chunks."""
    mine, theirs, ratios = [], [], []
    for k in range(chunks):
        for which in ((0, 1) if k % 2 else (1, 0)):
            fn = ours if which else anchor
            t = time.perf_counter()
            for _ in range(number):
                fn()
            took = (time.perf_counter() - t) / number
            (mine if which else theirs).append(took)
        ratios.append(mine[-1] / theirs[-1])
    return statistics.median(mine), statistics.median(theirs), statistics.median(ratios), \
        min(ratios), max(ratios)


def _row(name: str, r: tuple[float, float, float, float, float], unit: float, label: str) -> None:
    print(f"{name:44} ours {r[0] * unit:9.2f} {label}  anchor {r[1] * unit:9.2f} {label}  "
          f"ours/anchor {r[2]:5.2f}x (spread {r[3]:.2f}-{r[4]:.2f})")


def ratios(chunks: int) -> None:
    """The issue's lines: per-call index math and the 16M-element offsets against numpy."""
    print("index math against numpy, alternating in one run (median of chunks):")
    for text in SHAPES[:2]:
        shape = parse_shape(text)
        dims = shape.dimensions
        n = int(np.prod(dims))
        _row(f"linear_indices {text}", alternate(lambda s=shape: linear_indices(s),
                                                 lambda n=n: np.arange(n, dtype=np.int64), chunks, 1),
             1e3, "ms")
    shape = parse_shape(SHAPES[0])
    dims = shape.dimensions
    idx = (4000, 123)
    off = linear_index(shape, idx)
    _row("linear_index per call vs ravel_multi_index",
         alternate(lambda: linear_index(shape, idx), lambda: np.ravel_multi_index(idx, dims), chunks, 5000),
         1e6, "us")
    _row("multi_index per call vs unravel_index",
         alternate(lambda: multi_index(shape, off), lambda: np.unravel_index(off, dims), chunks, 5000),
         1e6, "us")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--chunks", type=int, default=9)
    ap.add_argument("--only-ratios", action="store_true")
    args = ap.parse_args()
    ratios(args.chunks)
    if args.only_ratios:
        return
    print(f"{'shape':40} {'ours ms':>8} {'arange ms':>9} {'naive ms':>9} {'ours/arange':>11} "
          f"{'naive/ours':>10}")
    for text in SHAPES:
        shape = parse_shape(text)
        n = int(np.prod(shape.dimensions))
        ours = best(lambda s=shape: linear_indices(s), repeat=3)
        floor = best(lambda n=n: np.arange(n, dtype=np.int64), repeat=3)
        slow = best(lambda s=shape: naive(s), repeat=2)
        assert np.array_equal(linear_indices(shape).reshape(-1), naive(shape))
        print(f"{text:40} {ours*1e3:8.1f} {floor*1e3:9.1f} {slow*1e3:9.1f} {ours/floor:10.2f}x "
              f"{slow/ours:9.1f}x")
    shape = parse_shape(SHAPES[0])
    t = best(lambda: linear_index(shape, (4095, 4095)), number=20000)
    print(f"linear_index per call: {t*1e6:.2f} us")
    text = "(" + ",".join(["bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}"] * 200) + ")"
    parse_shape.cache_clear()
    t = best(lambda: (parse_shape.cache_clear(), parse_shape(text)), number=20)
    print(f"parse_shape of a 200-element tuple shape ({len(text)} chars): {t*1e3:.2f} ms")


if __name__ == "__main__":
    main()
