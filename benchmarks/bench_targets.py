"""Every form of a relayout target is as fast as any other (issue 30 item 2).

The 64 KiB row of ``bench_relayout.py`` (``f32[128,128]{1,0:T(8,128)}`` into ``out=``) with
its target given as shape text, an XLA ``Shape``, the equal CuTe ``Layout``, a TLA format and
a ``PhysicalTarget``; each is timed ÷ a ``np.copyto`` of the same bytes, measured alternately
with the copy in one run (median of the rounds, and the spread). The "fresh target" rows are
the cost before targets were remembered by value: a new target for every call, as every form
but text had.

    PYTHONPATH=src python benchmarks/bench_targets.py [--rounds 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from tensorlayout.convert import xla_to_cute
from tensorlayout.cute.tla import make_format
from tensorlayout.relayout import as_target, to_physical
from tensorlayout.xla import parse_shape

TEXT = "f32[128,128]{1,0:T(8,128)}"


def _per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def rows() -> list[tuple[str, object, bool]]:
    """(label, target form, fresh target per call)."""
    shape = parse_shape(TEXT)
    tla = make_format("zN", 128, 128, "f32")
    return [
        ("text", TEXT, False),
        ("Shape", shape, False),
        ("CuTe Layout", xla_to_cute(TEXT), False),
        ("TLA zN format (its own tiling)", tla, False),
        ("PhysicalTarget", as_target(TEXT), False),
        ("Shape, fresh target (before)", shape, True),
        ("CuTe Layout, fresh target (before)", xla_to_cute(TEXT), True),
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=2000)
    args = p.parse_args()
    a = np.random.default_rng(0).random((128, 128), dtype=np.float32)
    copy_out = np.empty_like(a)
    forms = rows()
    ratios: dict[str, list[float]] = {label: [] for label, _, _ in forms}
    outs = {label: np.empty(as_target(form).physical_elements, np.float32) for label, form, _ in forms}
    for label, form, fresh in forms:  # the first call of each checks and plans
        to_physical(a, as_target(form) if fresh else form, out=outs[label])
    for _ in range(args.rounds):
        for label, form, fresh in forms:
            out = outs[label]
            calls = max(args.calls // 20, 10) if fresh else args.calls

            def call(f: object = form, o: np.ndarray = out, fresh: bool = fresh) -> object:
                return to_physical(a, as_target(f) if fresh else f, out=o)

            copies, times = [], []
            for _ in range(5):  # alternate small batches; the fastest of each side is the least disturbed
                copies.append(_per_call(lambda: np.copyto(copy_out, a), calls))
                times.append(_per_call(call, calls))
            ratios[label].append(min(times) / min(copies))
    print(f"{TEXT} into out= (64 KiB), time / np.copyto, {args.rounds} rounds alternating with the copy "
          "(fastest of 5 batches per side per round)")
    print(f"{'target given as':38} {'median':>8} {'min':>8} {'max':>8}")
    for label, rs in ratios.items():
        print(f"{label:38} {statistics.median(rs):8.2f} {min(rs):8.2f} {max(rs):8.2f}")


if __name__ == "__main__":
    main()
