"""Relayout speed: ``to_physical`` / ``from_physical`` (and a direct ``relayout`` between two
physical layouts), each timed side by side with ``np.copyto`` of max(logical, physical) bytes
between two ready buffers — the physical limit of any relayout.

Run: ``python benchmarks/bench_relayout.py [--repeat N] [--only SUBSTRING] [--small]
[--threads N] [--align64] [--thread-min-bytes N] [--stream-min-bytes N]``. Prints, per layout
and direction, the best times and the ratio ours / copy: the median over rounds in which one
call of ours and one copy run one after the other (robust to a noisy machine). A round of a
small row (``--small`` runs only those, which measure the per-call cost) makes enough calls to
last ``ROUND_SECONDS``: one call of a few microseconds is below the timer's noise.

``steady`` is the same ratio with rounds of ``STEADY_CALLS`` back-to-back calls of each: each
operation's cost in a loop of its own (each call pays for the lines its previous call left
dirty, and finds whatever of its data the cache kept). In ``ratio``'s one-call rounds each call
follows the other operation instead: ``np.copyto`` (glibc's memcpy stores through the cache
below its 288 MiB non-temporal threshold here) leaves dirty lines for the next call to write
back, the kernel's streamed stores leave none (measured once here: a 16 MiB ``pred``
to_physical took 5% longer after a copy than after a read-only sweep, the copy after ours 0.3%).
``numpy`` is ``ratio`` for the fallback path (used when the C kernel
could not be built). Every call writes into a ready ``out=`` buffer: by default as numpy
allocates it (``np.empty_like``, which here starts 16 bytes past a cache line); ``--align64``
starts every array on a 64-byte line, as the buffers the library allocates itself do. The aim
is ours / copy <= 1.5 for every row.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensorlayout.cute import tla
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical

Make = Callable[[], tuple[object, np.ndarray]]


@dataclass
class Case:
    name: str
    make: Make  # (target-like, logical array)
    direct_to: object | None = None  # a second target: time relayout(buf, target, direct_to)
    small: bool = False  # a few MiB at most: the per-call cost shows


def _xla(text: str, dtype: type, high: int = 120) -> Make:
    def make() -> tuple[object, np.ndarray]:
        dims = tuple(int(n) for n in text[text.index("[") + 1:text.index("]")].split(","))
        data = np.random.default_rng(0).integers(0, high, size=dims).astype(dtype)
        return text, data
    return make


def _row(text: str, dtype: type, note: str = "", high: int = 120, small: bool = False) -> Case:
    """The case of the XLA layout ``text`` over ``dtype`` data, named by the text (and ``note``)."""
    return Case(f"{text} {note}".rstrip(), _xla(text, dtype, high), small=small)


def _zn(rows: int, cols: int) -> Make:
    def make() -> tuple[object, np.ndarray]:
        data = np.random.default_rng(0).integers(0, 120, size=(rows, cols)).astype(np.float16)
        return tla.make_format("zN", rows, cols, "f16"), data
    return make


CASES: list[Case] = [
    _row("bf16[4096,8192]{1,0:T(8,128)(2,1)}", np.uint16),
    _row("f32[4096,4096]{1,0:T(8,128)}", np.float32),
    _row("s8[8192,8192]{1,0:T(8,128)(4,1)}", np.int8),
    _row("bf16[1000,3000]{1,0:T(8,128)(2,1)}", np.uint16, "ragged"),
    _row("f32[4096,4096]{0,1:T(8,128)}", np.float32),
    _row("f32[256,64,512]{0,2,1:T(8,128)}", np.float32),
    _row("f32[64,32,128]{0,2,1:T(8,128)}", np.float32, "1MiB", small=True),
    _row("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}", np.int8, high=8),
    _row("pred[4096,4096]{1,0:T(8,128)(4,1)}", np.bool_, high=2),
    _row("u1[4096,4096]{1,0:T(8,128)(32,1)E(1)}", np.uint8, high=2),
    Case("f16 zN 4096x4096 (TLA)", _zn(4096, 4096)),
    _row("f32[128,128]{1,0:T(8,128)}", np.float32, "64KiB", small=True),
    # beyond the table: the TPU's transposed (weight) layouts of 2- and 1-byte types
    _row("bf16[4096,8192]{0,1:T(8,128)(2,1)}", np.uint16),
    _row("s8[8192,8192]{0,1:T(8,128)(4,1)}", np.int8),
    _row("s8[8192,8192]{0,1:T(8,128)}", np.int8),
    # ragged and odd shapes at other sizes: shared among threads (23 MiB), pairs off a 4-byte
    # boundary (odd rows), and a transposing layout held in cache (6 MiB)
    _row("bf16[4000,3000]{1,0:T(8,128)(2,1)}", np.uint16, "ragged 23MiB"),
    _row("bf16[4003,4001]{0,1:T(8,128)(2,1)}", np.uint16, "odd"),
    _row("f32[1000,1500]{0,1:T(8,128)}", np.float32, "6MiB"),
    Case("relayout bf16 {1,0:T(8,128)(2,1)} -> {0,1:T(8,128)(2,1)}",
         _xla("bf16[4096,8192]{1,0:T(8,128)(2,1)}", np.uint16),
         direct_to="bf16[4096,8192]{0,1:T(8,128)(2,1)}"),
]


ROUND_SECONDS = 2e-4  # a round of a small row lasts at least this long
STEADY_CALLS = 5  # calls per round of the steady column


def paired(ours: Callable[[], object], copy: Callable[[], object], repeat: int,
           min_calls: int = 1) -> tuple[float, float, float]:
    """Best times per call of ours and of the copy, timed alternately, and the median
    per-round ratio (a round: ``min_calls`` calls, or as many as last ``ROUND_SECONDS``)."""
    start = time.perf_counter()
    copy()
    calls = max(min_calls, int(ROUND_SECONDS / max(time.perf_counter() - start, 1e-9)))
    t_ours, t_copy = [], []
    for _ in range(repeat):
        for fn, times in ((copy, t_copy), (ours, t_ours)):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times.append((time.perf_counter() - start) / calls)
    ratios = sorted(o / c for o, c in zip(t_ours, t_copy))
    return min(t_ours), min(t_copy), ratios[len(ratios) // 2]


def _like(x: np.ndarray, align: bool) -> np.ndarray:
    """A copy of ``x``: as numpy allocates it, or starting on a 64-byte cache line."""
    if not align:
        return x.copy()
    raw = np.empty(x.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


def _rows(case: Case, target_like: object, data: np.ndarray, align: bool, threads: int | None
          ) -> list[tuple[str, Callable[[], object], int]]:
    """(direction, the timed call, bytes it moves) for one case; checks the results first."""
    target = as_target(target_like)
    data = _like(data, align)
    buf = _like(to_physical(data, target), align)
    assert (from_physical(buf, target) == data).all()
    out_buf, out_arr = _like(buf, align), _like(data, align)
    moved = max(buf.nbytes, data.nbytes)
    if case.direct_to is not None:
        dst = as_target(case.direct_to)
        out_dst = _like(to_physical(data, dst), align)
        assert (relayout(buf, target, dst) == to_physical(data, dst)).all()
        return [("relayout", lambda: relayout(buf, target, dst, out=out_dst, threads=threads), moved)]
    return [("to_physical", lambda: to_physical(data, target, out=out_buf, threads=threads), moved),
            ("from_physical", lambda: from_physical(buf, target, out=out_arr, threads=threads), moved)]


def run(repeat: int, only: str, align: bool = False, threads: int | None = None,
        small: bool = False, thread_min_bytes: int | None = None,
        stream_min_bytes: int | None = None) -> None:
    import tensorlayout.relayout._copy as engine

    if thread_min_bytes is not None:  # to measure the threshold where threads pay off
        engine.THREAD_MIN_BYTES = thread_min_bytes
    if stream_min_bytes is not None:  # ... and where non-temporal stores do
        engine.STREAM_MIN_BYTES = stream_min_bytes

    print(f"relayout, {repeat} rounds per row; copy kernel "
          f"{'built' if engine.kernel_available() else 'MISSING (numpy path)'}; arrays "
          f"{'on 64-byte lines' if align else 'as numpy allocates them'}; threads "
          f"{'default' if threads is None else threads} from {engine.THREAD_MIN_BYTES} bytes")
    print("ratio = median over rounds of ours vs np.copyto of max(logical, physical) bytes, "
          f"timed alternately (aim <= 1.5); steady = the same in rounds of {STEADY_CALLS} back-to-back "
          "calls; "
          "numpy = ratio for the fallback path")
    print(f"{'layout':58} {'direction':13} {'MiB':>6} {'copy ms':>8} {'ours ms':>8} {'ratio':>6} "
          f"{'steady':>6} {'numpy':>6}")
    for case in CASES:
        if only not in case.name or (small and not case.small):
            continue
        target_like, data = case.make()
        for direction, ours_fn, moved in _rows(case, target_like, data, align, threads):
            src = np.full(moved, 1, dtype=np.uint8)  # written pages (zero pages read for free)
            dst = np.empty_like(src)
            copy_fn = lambda: np.copyto(dst, src)  # noqa: B023, E731
            ours, copy, ratio = paired(ours_fn, copy_fn, repeat)
            steady = paired(ours_fn, copy_fn, max(3, repeat // 2), STEADY_CALLS)[2]
            engine.USE_KERNEL = False
            fallback = paired(ours_fn, copy_fn, max(1, repeat // 3))[2]
            engine.USE_KERNEL = True
            print(f"{case.name:58} {direction:13} {moved / 2**20:6.1f} {copy * 1e3:8.4f} "
                  f"{ours * 1e3:8.4f} {ratio:6.2f} {steady:6.2f} {fallback:6.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=11, help="rounds per measurement")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--small", action="store_true", help="run only the small rows (per-call cost)")
    parser.add_argument("--align64", action="store_true", help="start every array on a cache line")
    parser.add_argument("--threads", type=int, default=None, help="threads= of every call")
    parser.add_argument("--thread-min-bytes", type=int, default=None,
                        help="share copies among threads from this many bytes on (default: the library's)")
    parser.add_argument("--stream-min-bytes", type=int, default=None,
                        help="write past the cache from this many bytes on (default: the library's)")
    args = parser.parse_args()
    run(args.repeat, args.only, args.align64, args.threads, args.small, args.thread_min_bytes,
        args.stream_min_bytes)


if __name__ == "__main__":
    main()
