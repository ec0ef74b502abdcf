"""tensorlayout.triton.LinearLayout against Triton's C++ LinearLayout (through its Python binding),
side by side on the same random layouts in one run.

Needs Triton (the ``triton`` extra; the CPU wheel is enough): ``pip install 'triton>=3.9,<3.10'``.

A population of random layouts (random in dims of register/lane/warp/block, one to three out dims,
random bases) is built before any clock starts; every timed call gets its own freshly built copy
of its arguments in each library (nothing a previous call computed can answer it), except the
"asked again" row. For every layout the two libraries are timed alternately (which goes first
alternates by round), ``--rounds`` rounds of ``--calls`` calls each, in CPU time of this process; a
layout's ratio is median(ours) / median(Triton) per call (< 1: we are faster). The table gives the
median, 90th percentile and maximum of those ratios over the population. The machine may be
shared and noisy: compare ratios, not absolute times.

    python benchmarks/bench_triton.py [--layouts 150] [--rounds 5] [--calls 8]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tensorlayout import triton as tt
from tensorlayout.triton import LinearLayout

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' generators
from tests.triton._random import perm, split

try:
    from triton._C.libtriton import gluon_ir, ir
    from triton._C.libtriton.linear_layout import LinearLayout as TritonLL
    from triton.experimental.gluon import language as ttgl

    import triton
except ImportError:  # pragma: no cover
    sys.exit("Triton is missing: pip install 'triton>=3.9,<3.10'")

IN_POOL = ["register", "lane", "warp", "block"]
OUT_POOL = ["dim0", "dim1", "dim2"]

Spec = tuple[list[tuple[str, list[list[int]]]], list[str], list[int]]


def rand_spec(rng: random.Random, ins: list[str] | None = None, sizes: list[int] | None = None,
              max_in_bits: int = 12) -> Spec:
    """Random from_bases arguments: in dims from IN_POOL (in order), out dims dim0.. with sizes."""
    names = ins or sorted(rng.sample(IN_POOL, rng.randint(1, 4)), key=IN_POOL.index)
    rank = len(sizes) if sizes else rng.randint(1, 3)
    sizes = sizes or [1 << rng.randint(0, 5) for _ in range(rank)]
    budget = max_in_bits
    bases = []
    for n in names:
        k = rng.randint(0, min(5, budget))
        budget -= k
        bases.append((n, [[rng.randrange(s) for s in sizes] for _ in range(k)]))
    return bases, OUT_POOL[:rank], sizes


def surjective_spec(rng: random.Random, out: list[tuple[str, int]], ins: list[str]) -> Spec:
    """A surjective layout onto ``out``: every out bit once (in a random order and random in dims),
    mixed by random XORs, plus a few broadcast (zero) bases."""
    units = [[(1 << b) if j == i else 0 for j in range(len(out))]
             for i, (_, s) in enumerate(out) for b in range(s.bit_length() - 1)]
    rng.shuffle(units)
    for k in range(1, len(units)):  # an invertible mix keeps the span
        if rng.random() < 0.5:
            j = rng.randrange(k)
            units[k] = [a ^ b for a, b in zip(units[k], units[j])]
    units += [[0] * len(out) for _ in range(rng.randint(0, 2))]
    cuts = sorted(rng.randint(0, len(units)) for _ in range(len(ins) - 1))
    parts = [units[a:b] for a, b in zip([0, *cuts], [*cuts, len(units)])]
    return list(zip(ins, parts)), [n for n, _ in out], [s for _, s in out]


def ours(spec: Spec) -> LinearLayout:
    return LinearLayout.from_bases(spec[0], spec[1], spec[2], require_surjective=False)


def theirs(spec: Spec) -> Any:
    return TritonLL.from_bases(spec[0], spec[1], spec[2], False)


def out_dims(spec: Spec) -> list[tuple[str, int]]:
    return list(zip(spec[1], spec[2]))


# ----- the cases: (name, [per-layout (args builder)]) ----------------------------------------------
# Each generator returns (specs, call): ``call(make, *built)`` runs the operation with layouts built by
# ``make`` (ours or theirs) from ``specs``.

def gen_apply(rng: random.Random) -> tuple[list[Spec], Callable[..., Any], Any]:
    spec = rand_spec(rng)
    point = {n: rng.randrange(1 << len(v)) for n, v in spec[0]}
    return [spec], lambda a: a.apply(point), None


def gen_compose(rng: random.Random) -> tuple[list[Spec], Callable[..., Any], Any]:
    spec = rand_spec(rng)
    outer = rand_spec(rng, ins=spec[1])
    outer = ([(n, [[rng.randrange(s) for s in outer[2]] for _ in range(size.bit_length() - 1)])
              for n, size in out_dims(spec)], outer[1], outer[2])
    return [spec, outer], lambda a, b: a.compose(b), None


def gen_invert(rng: random.Random) -> tuple[list[Spec], Callable[..., Any], Any]:
    out = out_dims(rand_spec(rng))
    spec = surjective_spec(rng, out, sorted(rng.sample(IN_POOL, rng.randint(1, 3)), key=IN_POOL.index))
    spec = ([(n, [v for v in vs if any(v)]) for n, vs in spec[0]], spec[1], spec[2])  # square
    return [spec], lambda a: a.invert(), None


def gen_invert_and_compose(rng: random.Random) -> tuple[list[Spec], Callable[..., Any], Any]:
    inner = rand_spec(rng)
    outer = surjective_spec(rng, out_dims(inner), ["offset", "block"])
    return [inner, outer], lambda a, b: a.invert_and_compose(b), None


def gen_is_invertible(rng: random.Random) -> tuple[list[Spec], Callable[..., Any], Any]:
    """is_invertible on a freshly built layout: its first query (Triton computed its rank when it
    built the layout; we compute it now)."""
    spec = rand_spec(rng) if rng.random() < 0.5 else gen_invert(rng)[0][0]
    return [spec], lambda a: a.is_invertible(), None


def gen_is_invertible_again(rng: random.Random) -> tuple[list[Spec], Callable[..., Any], Any]:
    """is_invertible asked again of a layout already asked once (our rank is kept on the value)."""
    specs, call, _ = gen_is_invertible(rng)
    return specs, call, "warm"


GENERATORS = {
    "apply": gen_apply,
    "compose": gen_compose,
    "invert": gen_invert,
    "invert_and_compose": gen_invert_and_compose,
    "is_invertible (first query)": gen_is_invertible,
    "is_invertible (asked again)": gen_is_invertible_again,
}


def time_calls(fn: Callable[[Any], Any], items: list[Any]) -> float:
    """CPU time of this process per call: both libraries run in it, and on a shared, loaded
    machine the time others take the CPU away would otherwise land on whichever ran then."""
    t = time.process_time()
    for x in items:
        fn(x)
    return (time.process_time() - t) / len(items)


def side_by_side(fn_ours: Callable[[Any], Any], fn_theirs: Callable[[Any], Any],
                 mine: list[list[Any]], their: list[list[Any]]) -> tuple[float, float, float]:
    """Per round ``r``, time ``fn_ours`` over ``mine[r]`` and ``fn_theirs`` over ``their[r]``, the order
    alternating by round; returns (median ours per call, median Triton per call, their ratio)."""
    t_o, t_t = [], []
    gc.disable()
    try:
        for r, (m, t) in enumerate(zip(mine, their)):
            if r % 2:
                t_t.append(time_calls(fn_theirs, t))
                t_o.append(time_calls(fn_ours, m))
            else:
                t_o.append(time_calls(fn_ours, m))
                t_t.append(time_calls(fn_theirs, t))
    finally:
        gc.enable()
    a, b = statistics.median(t_o), statistics.median(t_t)
    return a, b, a / b


def bench_op(name: str, n: int, rounds: int, calls: int, seed: int) -> list[tuple[float, float, float]]:
    rng = random.Random(seed)
    rows = []
    while len(rows) < n:
        specs, call, warm = GENERATORS[name](rng)
        try:
            call(*[ours(s) for s in specs])
        except Exception:  # only inputs both answer are timed (our typed errors: not timed)
            continue
        mine = [[[ours(s) for s in specs] for _ in range(calls)] for _ in range(rounds)]
        their = [[[theirs(s) for s in specs] for _ in range(calls)] for _ in range(rounds)]
        if warm:
            for args in [a for r in mine + their for a in r]:
                call(*args)
        run = _star(call)
        rows.append(side_by_side(run, run, mine, their))
    return rows


def _star(call: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    return lambda args: call(*args)


def _copy(spec: Spec) -> Spec:
    return [(a, [list(v) for v in vs]) for a, vs in spec[0]], list(spec[1]), list(spec[2])


def bench_from_bases(n: int, rounds: int, calls: int, seed: int) -> list[tuple[float, float, float]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        spec = rand_spec(rng)
        mine = [[_copy(spec) for _ in range(calls)] for _ in range(rounds)]
        their = [[_copy(spec) for _ in range(calls)] for _ in range(rounds)]
        rows.append(side_by_side(ours, theirs, mine, their))
    return rows


def bench_built_and_asked(n: int, rounds: int, calls: int, seed: int) -> list[tuple[float, float, float]]:
    """from_bases then is_invertible, timed together: Triton computes the rank while it builds a
    layout, we when first asked, so this row compares the same work."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        spec = rand_spec(rng) if rng.random() < 0.5 else gen_invert(rng)[0][0]
        mine = [[_copy(spec) for _ in range(calls)] for _ in range(rounds)]
        their = [[_copy(spec) for _ in range(calls)] for _ in range(rounds)]
        rows.append(side_by_side(lambda x: ours(x).is_invertible(), lambda x: theirs(x).is_invertible(),
                                 mine, their))
    return rows


def apply_all_ours(a: LinearLayout) -> Any:
    return a.apply_all()


def _digits(i: int, sizes: list[int]) -> list[int]:
    out = []
    for s in sizes:
        out.append(i % s)
        i //= s
    return out


def apply_all_theirs(a: Any) -> Any:
    names = [n for n, _ in a.bases]
    sizes = [1 << len(v) for _, v in a.bases]
    total = 1
    for s in sizes:
        total *= s
    return [a.apply(dict(zip(names, _digits(i, sizes)))) for i in range(total)]


def bench_apply_all(n: int, rounds: int, seed: int) -> list[tuple[float, float, float]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        spec = rand_spec(rng, max_in_bits=10)
        rows.append(side_by_side(apply_all_ours, apply_all_theirs, [[ours(spec)] for _ in range(rounds)],
                                 [[theirs(spec)] for _ in range(rounds)]))
    return rows


# ----- encodings -> linear layout -----------------------------------------------------------------
def rand_encoding(rng: random.Random) -> tuple[str, dict[str, Any], list[int]]:
    """One of blocked / NVMMA v2 / swizzled shared / NVMMA shared (Gluon field names) and a shape."""
    kind = rng.choice(["BlockedLayout", "NVMMADistributedLayout", "SwizzledSharedLayout",
                       "NVMMASharedLayout"])
    rank = 2 if kind.startswith("NVMMA") else rng.randint(1, 3)
    shape = [1 << rng.randint(3, 7) for _ in range(rank)]
    if kind == "BlockedLayout":
        args: dict[str, Any] = {"size_per_thread": [1 << rng.randint(0, 2) for _ in range(rank)],
                                "threads_per_warp": split(rng, 5, rank),
                                "warps_per_cta": split(rng, rng.randint(0, 3), rank),
                                "order": perm(rng, rank)}
    elif kind == "NVMMADistributedLayout":
        args = {"version": [2, 0], "warps_per_cta": split(rng, rng.randint(0, 3), 2), "instr_shape": [16, 8]}
    elif kind == "SwizzledSharedLayout":
        args = {"vec": 1 << rng.randint(0, 3), "per_phase": 1 << rng.randint(0, 2),
                "max_phase": 1 << rng.randint(0, 3), "order": perm(rng, rank)}
    else:
        bits = rng.choice([8, 16, 32])
        swz = rng.choice([0, 32, 64, 128])
        args = {"swizzle_byte_width": swz, "element_bitwidth": bits, "rank": 2}
        shape = [max(s, 8) for s in shape]
        shape[1] = max(shape[1], 8 * swz // bits)
    return kind, args, shape


class GluonBuilder:
    """Gluon's builder with a context (what ``to_linear_layout`` needs)."""

    def __init__(self) -> None:
        self.ctx = ir.context()
        ir.load_dialects(self.ctx)
        self.builder = gluon_ir.GluonOpBuilder(self.ctx)

    def to_linear_layout(self, item: tuple[Any, list[int]]) -> Any:
        layout, shape = item
        return self.builder.to_linear_layout(layout._to_ir(self.builder), shape)


def bench_encodings(n: int, rounds: int, calls: int, seed: int) -> list[tuple[float, float, float]]:
    rng = random.Random(seed)
    gluon = GluonBuilder()
    rows = []
    while len(rows) < n:
        kind, args, shape = rand_encoding(rng)
        try:
            getattr(tt, kind)(**args).to_linear_layout(shape)
            gluon.to_linear_layout((getattr(ttgl, kind)(**args), shape))
        except Exception:
            continue
        mine = [[(getattr(tt, kind)(**args), list(shape)) for _ in range(calls)] for _ in range(rounds)]
        their = [[(getattr(ttgl, kind)(**args), list(shape)) for _ in range(calls)] for _ in range(rounds)]
        rows.append(side_by_side(lambda x: x[0].to_linear_layout(x[1]), gluon.to_linear_layout, mine, their))
    return rows


def summary(name: str, rows: list[tuple[float, float, float]]) -> str:
    ratios = sorted(r for _, _, r in rows)
    p90 = ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))]
    t_o = statistics.median(a for a, _, _ in rows) * 1e6
    t_t = statistics.median(b for _, b, _ in rows) * 1e6
    return (f"{name:34} {t_o:10.2f} {t_t:10.2f} {statistics.median(ratios):8.2f}x {p90:7.2f}x "
            f"{ratios[-1]:7.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layouts", type=int, default=150, help="random layouts per operation")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=8, help="calls per round (each on fresh arguments)")
    ap.add_argument("--only", nargs="*", default=None, help="operations to run (default: all)")
    ns = ap.parse_args()
    only = set(ns.only) if ns.only else None
    print(f"Python {platform.python_version()}, Triton {triton.__version__}, {platform.machine()}; "
          f"{ns.layouts} random layouts per row, {ns.rounds} alternating rounds of {ns.calls} calls")
    print(f"{'operation':34} {'ours (us)':>10} {'Triton(us)':>10} {'median':>9} {'p90':>8} {'max':>8}")
    print(f"{'':34} {'':>10} {'':>10} {'(ours / Triton time per call, over the layouts)':>27}")
    for i, name in enumerate(GENERATORS):
        if only is None or name in only:
            print(summary(name, bench_op(name, ns.layouts, ns.rounds, ns.calls, seed=i)), flush=True)
    if only is None or "from_bases" in only:
        print(summary("from_bases", bench_from_bases(ns.layouts, ns.rounds, ns.calls, seed=100)), flush=True)
    if only is None or "from_bases + is_invertible" in only:
        rows = bench_built_and_asked(ns.layouts, ns.rounds, ns.calls, seed=150)
        print(summary("from_bases + is_invertible", rows), flush=True)
    if only is None or "apply_all" in only:
        rows = bench_apply_all(max(10, ns.layouts // 5), ns.rounds, seed=200)
        print(summary("apply_all vs Triton apply per point", rows), flush=True)
    if only is None or "encodings" in only:
        rows = bench_encodings(ns.layouts, ns.rounds, ns.calls, seed=300)
        print(summary("encoding.to_linear_layout", rows), flush=True)
    print("(ratio < 1: tensorlayout is faster; apply_all: one batched call against one binding call per "
          "input point; encodings: ours from its layout object, Triton's Gluon builder from Gluon's, "
          "_to_ir included; shared machine, figures are noisy)")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: Triton's nanobind module reports "leaks" at exit
