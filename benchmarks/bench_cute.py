"""tensorlayout.cute against pycute, side by side on the same inputs in one run.

Needs pycute, which ships in the ``nvidia-cutlass`` wheel:
``pip install --no-deps nvidia-cutlass==4.2.0`` (the ``[bench]`` extra pins it).
Prints the best-of-N time per call for both and the ratio pycute / ours (> 1: we are faster),
and checks that both give the same function on every input.

    python benchmarks/bench_cute.py
"""

from __future__ import annotations

import sys
import timeit

import numpy as np

from tensorlayout import cute
from tensorlayout.cute import Layout

try:
    import pycute
except ImportError:  # pragma: no cover
    sys.exit("pycute is missing: pip install --no-deps nvidia-cutlass==4.2.0")


def py_layout(text: str) -> pycute.Layout:
    ours = Layout.parse(text)
    return pycute.Layout(ours.shape, ours.stride)


def py_values(layout: pycute.Layout) -> list[int]:
    return [layout(i) for i in range(pycute.size(layout))]


def best(stmt, number: int) -> float:
    return min(timeit.repeat(stmt, number=number, repeat=7)) / number


def cold(fn):
    """Call ``fn`` with the algebra caches cleared first, so each call really computes."""
    def call():
        cute.clear_caches()
        return fn()
    return call


A = "(128,128):(128,1)"
TEXTS = {"A": A, "B": "(16,8):(1,16)", "H": "((8,16),(8,16)):((1,64),(8,1024))", "t0": "(4,2):(1,8)",
         "t1": "(2,4):(4,1)", "C": "(4,8):(1,512)", "b0": "(4,8):(8,1)", "b1": "(32,16):(1,32)"}
L = {k: Layout.parse(v) for k, v in TEXTS.items()}  # inputs are built once, outside the timing
P = {k: py_layout(v) for k, v in TEXTS.items()}
CASES = [
    ("composition", lambda: cute.composition(L["A"], L["B"]),
     lambda: pycute.composition(P["A"], P["B"])),
    ("composition by-mode tiler", lambda: cute.composition(L["H"], (L["t0"], L["t1"])),
     lambda: pycute.composition(P["H"], (P["t0"], P["t1"]))),
    ("complement", lambda: cute.complement(L["C"], 16384),
     lambda: pycute.complement(P["C"], 16384)),
    ("logical_divide", lambda: cute.logical_divide(L["A"], (16, 8)),
     lambda: pycute.logical_divide(P["A"], (pycute.Layout(16, 1), pycute.Layout(8, 1)))),
    ("blocked_product", lambda: cute.blocked_product(L["b0"], L["b1"]),
     lambda: py_blocked_product(P["b0"], P["b1"])),
]


def py_blocked_product(a: pycute.Layout, b: pycute.Layout) -> pycute.Layout:
    """pycute has no blocked_product: C++'s definition written with pycute's own primitives."""
    r = max(len(a), len(b))
    pad = pycute.Layout(1, 0)
    a = pycute.make_layout(*([a[i] for i in range(len(a))] + [pad] * (r - len(a))))
    b = pycute.make_layout(*([b[i] for i in range(len(b))] + [pad] * (r - len(b))))
    p = pycute.logical_product(a, b)
    return pycute.make_layout(*(pycute.make_layout(p[0][i], p[1][i]) for i in range(r)))


def main() -> None:
    print(f"{'op':28} {'ours(us)':>10} {'cold(us)':>10} {'pycute(us)':>11} {'ratio':>7} "
          f"{'ratio cold':>10}")
    # 'ours' is the memoised (warm) call, 'cold' clears the caches before every call
    for name, ours, theirs in CASES:
        a, b = ours(), theirs()
        same = [int(v) for v in a.offsets()] == py_values(b)
        t_ours = best(ours, 2000)
        t_cold = best(cold(ours), 500)
        t_py = best(theirs, 500)
        print(f"{name:28} {t_ours*1e6:10.2f} {t_cold*1e6:10.2f} {t_py*1e6:11.2f} "
              f"{t_py/t_ours:7.1f}x {t_py/t_cold:9.1f}x {'same' if same else 'DIFFERENT'}")

    # crd2idx over every coordinate of a 128x128 layout
    hier = TEXTS["H"]
    for name, text in (("crd2idx 128x128 (m,n)", A), ("crd2idx ((8,16),(8,16))", hier)):
        bench_crd2idx(name, Layout.parse(text), py_layout(text))


def bench_crd2idx(name: str, lay: Layout, pl: pycute.Layout) -> None:
    m = np.repeat(np.arange(128), 128)
    n = np.tile(np.arange(128), 128)
    ours_v = cute.crd2idx((m, n), lay.shape, lay.stride)
    coords = list(zip(m.tolist(), n.tolist()))
    same = ours_v.tolist() == [pycute.crd2idx(c, pl.shape, pl.stride) for c in coords]
    t_vec = best(lambda: cute.crd2idx((m, n), lay.shape, lay.stride), 20)
    t_loop = best(lambda: [cute.crd2idx(c, lay.shape, lay.stride) for c in coords], 3)
    t_py = best(lambda: [pycute.crd2idx(c, pl.shape, pl.stride) for c in coords], 3)
    print(f"{name:28} vectorised {t_vec*1e3:7.3f} ms, per-coordinate loop {t_loop*1e3:7.1f} ms, "
          f"pycute loop {t_py*1e3:7.1f} ms: ratio {t_py/t_vec:6.1f}x (vectorised), "
          f"{t_py/t_loop:4.1f}x (loop) {'same' if same else 'DIFFERENT'}")

if __name__ == "__main__":
    main()
