"""tensorlayout.xla index math, measured side by side in one run.

* ``linear_indices`` (the physical offset of every logical element) of 16M-element arrays in the
  seed's TPU formats, against ``np.arange`` of the same length (the cost of writing the int64
  answer at all) and against the naive recipe (pad-reshape-transpose of an index array).
* scalar ``linear_index`` per call, and ``parse_shape`` of long shape texts.

    python benchmarks/bench_xla.py
"""

from __future__ import annotations

import timeit

import numpy as np

from tensorlayout.xla import linear_index, linear_indices, parse_shape, tiling_plan

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


def main() -> None:
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
