"""Relayout speed: ``to_physical`` / ``from_physical`` (and a direct ``relayout`` between two
physical layouts), each timed side by side with ``np.copyto`` of max(logical, physical) bytes
between two ready buffers — the physical limit of any relayout.

Run: ``python benchmarks/bench_relayout.py [--repeat N] [--only SUBSTRING] [--small]
[--threads N] [--align64] [--thread-min-bytes N] [--stream-min-bytes N]``, or
``--population [--samples N] [--seed S] [--min-mib A] [--max-mib B] [--quick]`` for the
population (see ``population``) instead of the rows below. Prints, per layout
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
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tensorlayout.relayout._copy as engine
from tensorlayout.cute import tla
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.relayout._direct import is_direct

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
    # beyond the issue's table: the TPU's transposed (weight) layouts of 2- and 1-byte types
    _row("bf16[4096,8192]{0,1:T(8,128)(2,1)}", np.uint16),
    _row("s8[8192,8192]{0,1:T(8,128)(4,1)}", np.int8),
    _row("s8[8192,8192]{0,1:T(8,128)}", np.int8),
    # ragged and odd shapes at other sizes: shared among threads (23 MiB), pairs off a 4-byte
    # boundary (odd rows), and a transposing layout held in cache (6 MiB)
    _row("bf16[4000,3000]{1,0:T(8,128)(2,1)}", np.uint16, "ragged 23MiB"),
    _row("bf16[4003,4001]{0,1:T(8,128)(2,1)}", np.uint16, "odd"),
    _row("f32[1000,1500]{0,1:T(8,128)}", np.float32, "6MiB"),
    # the rows issue 30 measured next to the benchmark's own (packed, 1-byte and f64 transposes)
    _row("s4[4000,6000]{0,1:T(8,128)(8,1)E(4)}", np.int8, high=8),
    _row("s8[3000,5000]{0,1:T(8,128)(4,1)}", np.int8),
    _row("f64[1000,1000]{0,1:T(8,128)}", np.float64),
    Case("relayout bf16 {1,0:T(8,128)(2,1)} -> {0,1:T(8,128)(2,1)}",
         _xla("bf16[4096,8192]{1,0:T(8,128)(2,1)}", np.uint16),
         direct_to="bf16[4096,8192]{0,1:T(8,128)(2,1)}"),
]


ROUND_SECONDS = 2e-4  # a round of a small row lasts at least this long
STEADY_CALLS = 5  # calls per round of the steady column


def paired(ours: Callable[[], object], copy: Callable[[], object], repeat: int,
           min_calls: int = 1, clock: Callable[[], float] = time.perf_counter) -> tuple[float, float, float]:
    """Best times per call of ours and of the copy, timed alternately, and the median
    per-round ratio (a round: ``min_calls`` calls, or as many as last ``ROUND_SECONDS``).
    ``clock``: wall time, or ``time.thread_time`` for one thread's CPU time (which other
    processes' turns on a shared machine leave out)."""
    start = time.perf_counter()
    copy()
    calls = max(min_calls, int(ROUND_SECONDS / max(time.perf_counter() - start, 1e-9)))
    t_ours, t_copy = [], []
    for _ in range(repeat):
        for fn, times in ((copy, t_copy), (ours, t_ours)):
            start = clock()
            for _ in range(calls):
                fn()
            times.append(max(clock() - start, 1e-9) / calls)
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


# ---- the population ------------------------------------------------------------------------
# Layouts sampled from the ones XLA's TPU compiler chose for real programs (tests/data: HLO
# after optimisation for v5e/v6e, the layouts chosen for arguments in array_sizes.tsv, the
# jit_mlp dump): their element types, ranks and tilings;
# each sample takes a random minor_to_major permutation, a tiling of its width class, and a
# shape of a random size (log-uniform in --min-mib..--max-mib), ragged or tile-aligned.

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
_LAYOUT = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]+)\]\{([0-9,]+):"
                     r"(T\([0-9,]+\)(?:\([0-9,]+\))*(?:E\([0-9]+\))?)")
#: width classes: the element types of each, and the numpy dtype its logical arrays have
CLASSES: dict[str, dict[str, type]] = {
    "8B": {"f64": np.float64, "s64": np.int64, "u64": np.uint64},
    "4B": {"f32": np.float32, "s32": np.int32, "u32": np.uint32},
    "2B": {"bf16": np.uint16, "f16": np.float16, "s16": np.int16, "u16": np.uint16},
    "1B": {"s8": np.int8, "u8": np.uint8, "f8e4m3fn": np.uint8, "f8e5m2": np.uint8},
    "E(4)": {"s4": np.int8, "u4": np.uint8},
    "pred/E(1)": {"pred": np.bool_, "u1": np.uint8},
}
#: tilings the data has none of: u1's packed bits (as the rows above)
EXTRA = [("u1", 2, "T(8,128)(32,1)E(1)")]


@dataclass(frozen=True)
class Seen:
    etype: str
    rank: int
    tiling: str


def seen_layouts() -> dict[str, list[Seen]]:
    """The compiler's (element type, rank, tiling) choices in the TPU test data, per class."""
    files = [*sorted((DATA / "hlo" / "tpu").glob("*.opt.hlo")), DATA / "hlo" / "tpu" / "array_sizes.tsv",
             *sorted((DATA / "dumps").glob("*tpu*/*after_optimizations.txt"))]
    found: set[Seen] = {Seen(e, r, t) for e, r, t in EXTRA}
    for f in files:
        for etype, dims, _, tiling in _LAYOUT.findall(f.read_text()):
            found.add(Seen(etype, dims.count(",") + 1, tiling))
    by_class: dict[str, list[Seen]] = {c: [] for c in CLASSES}
    for s in sorted(found, key=lambda s: (s.etype, s.rank, s.tiling)):
        for c, types in CLASSES.items():
            if s.etype in types:
                by_class[c].append(s)
    return {c: found for c, found in by_class.items() if found}


def _tile_rank(tiling: str) -> int:
    return tiling[2:tiling.index(")")].count(",") + 1


def _dims(rng: np.random.Generator, rank: int, elements: float, ragged: bool) -> list[int]:
    """``rank`` dims of about ``elements`` in all: ragged (any size) or powers of two."""
    weights = rng.dirichlet(np.full(rank, 2.0)) if rank > 1 else np.ones(1)
    dims = []
    for w in weights:
        n = max(1.0, elements ** w)
        if ragged:
            dims.append(max(1, int(n * rng.uniform(0.8, 1.25)) | int(rng.integers(0, 2))))
        else:
            dims.append(1 << max(0, round(np.log2(n))))
    return dims


def _text(etype: str, dims: list[int], m2m: list[int], tiling: str) -> str:
    return f"{etype}[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}:{tiling}}}"


@dataclass
class Sample:
    cls: str
    text: str
    dtype: type
    relayout_to: str | None  # a second tiling of the shape that relayout reaches in one pass


def sample(rng: np.random.Generator, seen: dict[str, list[Seen]], lo_mib: float, hi_mib: float,
           max_padding: float = 2.0) -> Sample:
    """One layout of the population (its physical buffer at most ``max_padding`` times the
    logical array: the sampled tilings of tiny real dims pad large shapes without bound)."""
    cls = str(rng.choice(list(seen)))
    choices = seen[cls]
    while True:
        s = choices[int(rng.integers(len(choices)))]
        rank = max(s.rank, _tile_rank(s.tiling))
        bits = as_target(f"{s.etype}[1]{{0}}").element_bits
        elements = float(np.exp(rng.uniform(np.log(lo_mib), np.log(hi_mib)))) * 2**23 / bits
        dims = _dims(rng, rank, elements, bool(rng.integers(0, 2)))
        m2m = [int(k) for k in rng.permutation(rank)]
        text = _text(s.etype, dims, m2m, s.tiling)
        t = as_target(text)
        logical = t.size * max(bits, 8) // 8
        if not (lo_mib / 2 <= logical / 2**20 <= hi_mib * 1.5) or _bytes(t, bits) > max_padding * logical:
            continue
        pair_rng = np.random.default_rng(int(rng.integers(2**62)))  # one draw, whatever is_direct says
        return Sample(cls, text, CLASSES[cls][s.etype], _second(pair_rng, choices, s, dims, t))


def _bytes(t: object, bits: int) -> int:
    return t.buffer_bytes if t.packed_bits else t.physical_elements * max(bits, 8) // 8  # type: ignore


def _second(rng: np.random.Generator, choices: list[Seen], s: Seen, dims: list[int], t: object,
            tries: int = 12) -> str | None:
    """Another tiling and permutation of the same element type and shape that ``relayout``
    copies to in one pass, if one of a few draws is."""
    same = [c for c in choices if c.etype == s.etype and _tile_rank(c.tiling) <= len(dims)]
    for _ in range(tries):
        c = same[int(rng.integers(len(same)))]
        text = _text(s.etype, dims, [int(k) for k in rng.permutation(len(dims))], c.tiling)
        u = as_target(text)
        if u != t and is_direct(t, u) and _bytes(u, u.element_bits) <= 2 * _bytes(t, t.element_bits):  # type: ignore
            return text
    return None


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: type, etype: str) -> np.ndarray:
    """Random logical data: any bits for floats, in range for packed and pred elements."""
    dt = np.dtype(dtype)
    raw = np.frombuffer(rng.bytes(int(np.prod(shape)) * dt.itemsize), dt if dt != np.bool_ else np.uint8)
    if dt == np.bool_:
        return (raw & 1).astype(np.bool_).reshape(shape)
    if etype in ("s4", "u4", "u1"):
        mask = 1 if etype == "u1" else 15
        return ((raw & mask) - (8 if etype == "s4" else 0)).astype(dt).reshape(shape)
    return raw.copy().reshape(shape)


def _major_first(text: str) -> tuple[int, ...]:
    """The dims of a layout text, most major first (its minor_to_major reversed)."""
    m2m = text[text.index("{") + 1:text.index(":")]
    return tuple(int(k) for k in reversed(m2m.split(",")))


@dataclass
class Row:
    name: str
    default: float  # ours / copy, default threads
    one: float  # ours / copy, threads=1
    vs_numpy: float  # ours / numpy's transposing copy, both one thread
    vs_numpy_pad: float  # ours / numpy's transposing copy and a fill of the target's padding bytes
    vs_path: float  # ours / numpy making the same moves (the library's numpy path), both one thread
    mib: float


def _numpy_transpose(src: np.ndarray, perm: tuple[int, ...]) -> Callable[[], object]:
    """numpy's own transposing copy of ``src`` into a C-contiguous array of its axes ``perm``."""
    view = src.transpose(perm)
    out = np.empty(view.shape, src.dtype)
    return lambda: np.copyto(out, view)


def _padded_anchor(numpy_copy: Callable[[], object], pad_bytes: int) -> Callable[[], object]:
    """``numpy_copy`` followed by ``ndarray.fill`` of ``pad_bytes`` bytes (the target's padding)."""
    pad = np.empty(pad_bytes, np.uint8)

    def copy_and_fill() -> None:
        numpy_copy()
        pad.fill(0)
    return copy_and_fill


def _sample_rows(s: Sample, rng: np.random.Generator, repeat: int, clock: Callable[[], float],
                 only: str = "") -> list[Row]:
    """The rows of one sample: both directions, and the one-pass relayout if it has one (those
    whose name holds ``only``; the data is drawn for every sample, so the sample stays the same)."""
    t = as_target(s.text)
    etype = s.text[:s.text.index("[")]
    data = _data(rng, t.logical_shape, s.dtype, etype)
    buf = to_physical(data, t)
    assert (from_physical(buf, t).view(np.uint8) == data.view(np.uint8)).all()
    order = _major_first(s.text)
    ordered = np.ascontiguousarray(data.transpose(order))
    calls = [("to", lambda th: to_physical(data, t, out=out_buf, threads=th),
              _numpy_transpose(data, order), max(buf.nbytes, data.nbytes), buf.nbytes - data.nbytes),
             ("from", lambda th: from_physical(buf, t, out=out_arr, threads=th),
              _numpy_transpose(ordered, tuple(int(k) for k in np.argsort(order))),
              max(buf.nbytes, data.nbytes), 0)]
    out_buf, out_arr = np.empty_like(buf), np.empty_like(data)
    if s.relayout_to is not None:
        u = as_target(s.relayout_to)
        want = to_physical(data, u)
        out_dst = np.empty_like(want)
        assert (relayout(buf, t, u).view(np.uint8) == want.view(np.uint8)).all()
        dst_order = _major_first(s.relayout_to)
        calls.append((f"-> {s.relayout_to[s.relayout_to.index('{'):]}",
                      lambda th: relayout(buf, t, u, out=out_dst, threads=th),
                      _numpy_transpose(ordered, tuple(order.index(k) for k in dst_order)),
                      max(buf.nbytes, want.nbytes), want.nbytes - data.nbytes))
    rows = []
    for direction, ours, numpy_copy, moved, pad_bytes in calls:
        if only not in f"{s.text} {direction}":
            continue
        src = np.full(moved, 1, dtype=np.uint8)
        dst = np.empty_like(src)
        copy = lambda: np.copyto(dst, src)  # noqa: B023, E731
        default = paired(lambda: ours(None), copy, repeat)[2]  # noqa: B023
        one = paired(lambda: ours(1), copy, repeat, clock=clock)[2]  # noqa: B023
        vs_numpy = paired(lambda: ours(1), numpy_copy, repeat, clock=clock)[2]  # noqa: B023
        vs_pad = vs_numpy if pad_bytes <= 0 else paired(
            lambda: ours(1), _padded_anchor(numpy_copy, pad_bytes), repeat, clock=clock)[2]  # noqa: B023
        vs_path = paired(lambda: ours(1), _numpy_path(ours), repeat, clock=clock)[2]  # noqa: B023
        rows.append(Row(f"{s.text} {direction}", default, one, vs_numpy, vs_pad, vs_path, moved / 2**20))
    return rows


def _numpy_path(ours: Callable[[int | None], object]) -> Callable[[], object]:
    """``ours`` on one thread through the library's numpy path (no compiled kernel): numpy's own
    strided copies making the same moves, padding included — the like-for-like numpy anchor, also
    for pairs whose axes are in the same order (where the transposing copy is a plain copy)."""
    def numpy_moves() -> None:
        engine.USE_KERNEL = False
        try:
            ours(1)
        finally:
            engine.USE_KERNEL = True
    return numpy_moves


def _summary(rows: list[Row]) -> None:
    for label, get, marks in (("default threads, ours / copy", lambda r: r.default, ISSUE_MARKS),
                              ("threads=1, ours / copy", lambda r: r.one, ISSUE_MARKS),
                              ("threads=1, ours / numpy's transposing copy", lambda r: r.vs_numpy, (1.0,)),
                              ("threads=1, ours / numpy's transposing copy and a fill of the padding",
                               lambda r: r.vs_numpy_pad, (1.0,)),
                              ("threads=1, ours / numpy making the same moves (the library's numpy path)",
                               lambda r: r.vs_path, (1.0,))):
        values = np.array([get(r) for r in rows])
        p = np.percentile(values, [50, 90, 95])
        above = ", ".join(f"above {m:g}x {int((values > m).sum())}" for m in marks)
        print(f"\n{label}: n {len(values)}  median {p[0]:.2f}  p90 {p[1]:.2f}  p95 {p[2]:.2f}  "
              f"max {values.max():.2f}  ({above})")
        print("  by size: " + "; ".join(_band(rows, get, lo, hi) for lo, hi in SIZE_BANDS))
        for r in sorted(rows, key=get, reverse=True)[:5]:
            print(f"  {get(r):6.2f}  {r.name} ({r.mib:.1f} MiB)")


#: The ratios a copy's each summary counts the rows above (issue 30's aims: a p95 of 1.5x, a max
#: of 2x; against numpy's own copies, 1x).
ISSUE_MARKS = (1.5, 2.0)


#: The size bands the summary splits each distribution into (MiB, the row's bytes moved): in
#: cache, around the last-level cache, beyond it.
SIZE_BANDS = ((0.0, 4.0), (4.0, 16.0), (16.0, float("inf")))


def _band(rows: list[Row], get: Callable[[Row], float], lo: float, hi: float) -> str:
    """One band's rows (``lo`` <= MiB < ``hi``): count, median, p95, max."""
    values = np.array([get(r) for r in rows if lo <= r.mib < hi])
    name = f"<{hi:g} MiB" if not lo else f"{lo:g}-{hi:g} MiB" if hi != float("inf") else f">={lo:g} MiB"
    if not len(values):
        return f"{name} n 0"
    p = np.percentile(values, [50, 95])
    return f"{name} n {len(values)} median {p[0]:.2f} p95 {p[1]:.2f} max {values.max():.2f}"


def population(samples: int, seeds: list[int], repeat: int, lo_mib: float, hi_mib: float, cpu: bool = False,
               only: str = "") -> None:
    """The population benchmark: ``samples`` sampled layouts (see ``sample``), each timed in
    both directions and in a one-pass relayout where one was drawn, with default threads and
    threads=1 against a copy of max(logical, physical) bytes, and on one thread against
    numpy's transposing copy (the logical array into its minor_to_major order: a layout's
    tiling aside, the same permutation), and against that copy followed by a fill of the bytes
    the target's padding adds (then numpy writes as many bytes as the relayout does), and
    against numpy making the very same moves (the library's numpy path): medians of alternate
    rounds, then the distributions.
    ``cpu``: the one-thread columns in CPU time (``time.thread_time``; steadier on a busy
    machine), default threads always in wall time. ``only``: time just the rows whose name holds it.
    Several ``seeds``: ``samples`` layouts drawn from each, one distribution of all their rows."""
    seen = seen_layouts()
    print(f"relayout population: {samples} layouts per seed, seeds {','.join(map(str, seeds))}, "
          f"{lo_mib}-{hi_mib} MiB, {repeat} rounds "
          f"per ratio; copy kernel {'built' if engine.kernel_available() else 'MISSING'}; one-thread "
          f"columns in {'CPU' if cpu else 'wall'} time")
    print(f"{'layout and direction':76} {'MiB':>6} {'default':>7} {'1 thr':>6} {'vs np':>6} {'np+pad':>6} "
          f"{'np path':>7}")
    rows: list[Row] = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for _ in range(samples):
            s = sample(rng, seen, lo_mib, hi_mib)
            for r in _sample_rows(s, rng, repeat, time.thread_time if cpu else time.perf_counter, only):
                rows.append(r)
                print(f"{r.name[:76]:76} {r.mib:6.1f} {r.default:7.2f} {r.one:6.2f} {r.vs_numpy:6.2f} "
                      f"{r.vs_numpy_pad:6.2f} {r.vs_path:7.2f}", flush=True)
    if rows:
        _summary(rows)


def _seeds(text: str) -> list[int]:
    """``--seed``: one seed or several separated by commas."""
    try:
        return [int(k) for k in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds are integers separated by commas, not {text!r}") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=None,
                        help="rounds per measurement (default 11; population 7)")
    parser.add_argument("--only", default="",
                        help="run the cases (population: the rows) whose name contains this")
    parser.add_argument("--small", action="store_true", help="run only the small rows (per-call cost)")
    parser.add_argument("--align64", action="store_true", help="start every array on a cache line")
    parser.add_argument("--threads", type=int, default=None, help="threads= of every call")
    parser.add_argument("--thread-min-bytes", type=int, default=None,
                        help="share copies among threads from this many bytes on (default: the library's)")
    parser.add_argument("--stream-min-bytes", type=int, default=None,
                        help="write past the cache from this many bytes on (default: the library's)")
    parser.add_argument("--population", action="store_true",
                        help="the sampled population instead of the rows")
    parser.add_argument("--samples", type=int, default=None, help="population: layouts to sample (30)")
    parser.add_argument("--seed", type=_seeds, default=[0],
                        help="population: the sampling seed, or seeds separated by commas (one distribution)")
    parser.add_argument("--min-mib", type=float, default=1.0, help="population: smallest logical size")
    parser.add_argument("--max-mib", type=float, default=None, help="population: largest logical size (64)")
    parser.add_argument("--cpu", action="store_true",
                        help="population: time the one-thread columns in CPU time (a busy machine)")
    parser.add_argument("--quick", action="store_true",
                        help="population: 12 layouts of 1-16 MiB, 5 rounds (unless given)")
    args = parser.parse_args()
    if args.population:
        quick = (12, 16.0, 5) if args.quick else (30, 64.0, 7)  # what is not given
        population(args.samples or quick[0], args.seed, args.repeat or quick[2], args.min_mib,
                   args.max_mib or quick[1], args.cpu, args.only)
        return
    run(args.repeat or 11, args.only, args.align64, args.threads, args.small, args.thread_min_bytes,
        args.stream_min_bytes)


if __name__ == "__main__":
    main()
