"""How the cost of parse, offsets, composition, the inverses and pictures grows with their input.

Each operation runs at a geometric series of sizes. A figure is the median over ``--runs``
samples of the process's CPU time per call (CPU time, not wall time: the machine is shared),
each sample repeating the call until it has run ``--min-ms`` milliseconds; inputs are built
before the clock starts. Every call runs to its answer: no row times a typed refusal (the
benchmark stops with an error if one is raised). The growth exponent is the slope of log(time)
against log(size) between the smallest and the largest size (1 linear, 2 quadratic, 0
constant); "last step" is the slope between the last two sizes, where a superlinear term shows
first. Rows whose inputs hold integers that grow with the size print a third exponent, against
the input's size in bits (the bit lengths of its extents and strides).

The rows, all over 100-10,000 modes (n) unless said otherwise:

- ``parse``: the text of n small-int modes nested in pairs.
- ``offsets``: every offset of a 64-row layout of 2^16-2^22 elements.
- ``compose A∘size(A):1, bounded``: A has n modes of extent 2 with strides 3,5,7,9,11 repeating
  (no two modes coalesce), B the one mode ``2^n:1`` (its extent, n bits, is the only integer
  that grows). The walk runs over every mode of A for the one mode of B; the answer is A, every
  mode kept.
- ``compose by an n-mode tiler, bounded``: A has n modes ``(4,8):(3,40)``, the tiler n layouts
  ``4:2``, one per mode (C++'s by-mode composition); every int stays below 200.
- ``compose A∘A, 4^i``: A = B has n modes of extent 2 and strides 4^i: nothing coalesces and
  every mode of B is kept, with stride 16^i (i < n/2) or 2^(2i+n-1) (the input has ~n^2 bits,
  the answer ~2n^2). ``public`` is :func:`cute.composition`, which refuses a result holding an
  integer of more than 4,000 digits as soon as one is built: its sizes stop at 3,000 modes (at
  10,000 its time would be the time to that refusal). ``exact`` is the algebra's inner call,
  which builds the whole answer at every size.
- ``floor: A∘A's answer ints, 4^i``: only building the integers of that answer's strides
  (shifts of 1, no algebra): the least any exact composition of those inputs must spend, whose
  growth past ~3,000 modes is the machine's (allocating and writing tens of megabytes).
- ``right_inverse, repeated strides, bounded``: n modes of extent 2 with strides ``k mod 13``:
  C++'s exchange order of n strides with repeats, then the walk, every int bounded by the
  positions taken. No bounded layout keeps every mode here: the modes a right inverse keeps
  have the compact strides of their positions, so keeping n modes needs strides up to 2^n.
- ``right/left inverse, permuted compact``: the compact layout of n extents 2 with its modes
  in a fixed pseudo-random order (strides 2^perm(k)): the smallest strides with which an
  injective layout can have n modes, so both inverses keep every mode (input ~n^2/2 bits).
- ``right/left inverse, 4^i``: the gapped layout above: left_inverse keeps every mode,
  right_inverse stops at the first gap (so it costs its coalesce and its stride order).
- left_inverse has no bounded row: its answer is checked to be an inverse, which needs an
  injective layout (else the check runs point by point and stops at 2^16 elements), and an
  injective layout of n modes has a stride of at least 2^(n-1).
- ``picture``: a fixed 64x64 window of ``Sw<3,3,3> o _0 o (side,side):(side,1)`` over layouts
  of 2^16-2^24 elements (the exponent is taken against the element count).

    python benchmarks/bench_growth.py [--runs 5] [--min-ms 20] [--quick]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from tensorlayout import cute, render
from tensorlayout.cute.compose import _composition

MODES = (100, 300, 1000, 3000, 10000)
PUBLIC_MODES = (100, 300, 1000, 3000)  # past ~3,300 gapped modes the public composition refuses
PICTURE_SIDES = (256, 512, 1024, 2048, 4096)  # layouts of 2^16 .. 2^24 elements
OFFSET_SIZES = (1 << 16, 1 << 18, 1 << 20, 1 << 22)


def _timed(fn: Callable[[], Any], runs: int, min_ms: float) -> float:
    """Median CPU seconds per call over ``runs`` samples of at least ``min_ms`` each."""
    start = time.process_time()
    fn()
    once = time.process_time() - start
    reps = max(1, int(min_ms / 1000 / max(once, 1e-6)))
    times = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(reps):
            fn()
        times.append((time.process_time() - start) / reps)
    return statistics.median(times)


def _gapped(n: int) -> cute.Layout:
    """n modes of extent 2 with strides 4^i: nothing coalesces."""
    return cute.Layout((2,) * n, tuple(4**i for i in range(n)))


def _small_strides(n: int) -> cute.Layout:
    """n modes of extent 2, strides 3,5,7,9,11 repeating: no two coalesce."""
    return cute.Layout((2,) * n, tuple(3 + 2 * (k % 5) for k in range(n)))


def _permuted_compact(n: int) -> cute.Layout:
    """The compact layout of n extents 2, its modes in a fixed pseudo-random order."""
    order = list(range(n))
    random.Random(n).shuffle(order)
    return cute.Layout((2,) * n, tuple(1 << p for p in order))


def _text(n: int) -> str:
    """n modes of small ints, nested in pairs: ``((2,3),(4,5),...):((1,7),(13,3),...)``."""
    shape = ",".join(f"({2 + k % 5},{3 + k % 3})" for k in range(n // 2))
    stride = ",".join(f"({1 + 6 * (k % 7)},{3 + k % 11})" for k in range(n // 2))
    return f"({shape}):({stride})"


def _bits(*layouts: cute.Layout) -> int:
    """The inputs' size in bits: the bit lengths of their extents and strides."""
    return sum(abs(x).bit_length() for lay in layouts for part in (lay.shape, lay.stride)
               for x in (cute.flatten(part) if isinstance(part, tuple) else (part,)))


Make = Callable[[int], tuple[Callable[[], Any], int]]  # size -> (the call, its input's bits)


def _on(build: Callable[[int], cute.Layout], op: Callable[[cute.Layout], Any]) -> Make:
    def make(n: int) -> tuple[Callable[[], Any], int]:
        lay = build(n)
        return (lambda: op(lay)), _bits(lay)
    return make


def _answer_ints(n: int) -> tuple[Callable[[], Any], int]:
    def build() -> list[int]:
        return [1 << (4 * i) if 2 * i < n else 1 << (2 * i + n - 1) for i in range(n)]
    return build, _bits(_gapped(n))


def _compose_identity(n: int) -> tuple[Callable[[], Any], int]:
    a, b = _small_strides(n), cute.Layout(2**n, 1)
    return (lambda: cute.composition(a, b)), _bits(a, b)


def _compose_tiler(n: int) -> tuple[Callable[[], Any], int]:
    a = cute.Layout(((4, 8),) * n, ((3, 40),) * n)
    tiler = (cute.Layout(4, 2),) * n
    return (lambda: cute.composition(a, tiler)), _bits(a, *tiler)


def _parse(n: int) -> tuple[Callable[[], Any], int]:
    text = _text(n)
    return (lambda: cute.Layout.parse(text)), 0


def _offsets(n: int) -> tuple[Callable[[], Any], int]:
    return cute.Layout((64, n // 64), (n // 64, 1)).offsets, 0


def _picture(side: int) -> tuple[Callable[[], Any], int]:
    text = f"Sw<3,3,3> o _0 o ({side},{side}):({side},1)"
    return (lambda: render.to_svg(text, window=(range(64), range(64)))), 0


Case = tuple[str, tuple[int, ...], Make, bool]  # name, sizes, maker, whether ints grow


def cases() -> list[Case]:
    """The rows, in the order printed (see the module docstring for what each measures)."""
    return [
        ("parse (modes)", MODES, _parse, False),
        ("offsets (elements)", OFFSET_SIZES, _offsets, False),
        ("compose A∘size(A):1, bounded", MODES, _compose_identity, False),
        ("compose by an n-mode tiler, bounded", MODES, _compose_tiler, False),
        ("compose A∘A, 4^i, exact", MODES, _on(_gapped, lambda a: _composition(a, a)), True),
        ("compose A∘A, 4^i, public", PUBLIC_MODES, _on(_gapped, lambda a: cute.composition(a, a)), True),
        ("floor: A∘A's answer ints, 4^i", MODES, _answer_ints, True),
        ("right_inverse, repeated strides, bounded", MODES,
         _on(lambda n: cute.Layout((2,) * n, tuple(k % 13 for k in range(n))), cute.right_inverse), False),
        ("right_inverse, permuted compact", MODES, _on(_permuted_compact, cute.right_inverse), True),
        ("left_inverse, permuted compact", MODES, _on(_permuted_compact, cute.left_inverse), True),
        ("right_inverse, 4^i", MODES, _on(_gapped, cute.right_inverse), True),
        ("left_inverse, 4^i", MODES, _on(_gapped, cute.left_inverse), True),
        ("picture 64x64 window (side; size = side^2)", PICTURE_SIDES, _picture, False),
    ]


def slope(xs: tuple[int, int], ys: tuple[float, float]) -> float:
    """Slope of log y over log x between two points."""
    return math.log(ys[1] / ys[0]) / math.log(xs[1] / xs[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--min-ms", type=float, default=20.0, help="CPU milliseconds per sample at least")
    ap.add_argument("--quick", action="store_true", help="stop every series at its 4th size")
    ap.add_argument("--only", default="", help="run only the rows whose name contains this")
    args = ap.parse_args()
    print(f"{'operation':<44} {'sizes':<27} {'CPU ms per call (median)':<38} "
          "exponent  last step  vs input bits")
    for name, sizes, make, grows in cases():
        if args.only not in name:
            continue
        sizes = sizes[:4] if args.quick else sizes
        times, bits = [], []
        for n in sizes:
            fn, b = make(n)
            times.append(max(_timed(fn, args.runs, args.min_ms), 1e-9))
            bits.append(b)
        scale = 2 if name.startswith("picture") else 1
        ends = (sizes[0] ** scale, sizes[-1] ** scale)
        per_bit = f"{slope((bits[0], bits[-1]), (times[0], times[-1])):.2f}" if grows else ""
        shown = " ".join(f"{1000 * t:.3g}" for t in times)
        print(f"{name:<44} {','.join(map(str, sizes)):<27} {shown:<38} "
              f"{slope(ends, (times[0], times[-1])):<9.2f} "
              f"{slope((sizes[-2] ** scale, sizes[-1] ** scale), (times[-2], times[-1])):<10.2f} {per_bit}",
              flush=True)


if __name__ == "__main__":
    main()
