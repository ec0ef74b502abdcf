"""How the cost of parse, offsets, composition, the inverses and pictures grows with their input.

Each operation runs at a geometric series of sizes; the figure per size is the median over
``--runs`` runs of the process's CPU time (inputs built before the clock starts; CPU time, not
wall time, because the machine is shared). The growth exponent is the slope of log(time)
against log(size) between the smallest and the largest size: 1 is linear, 2 quadratic, 0
constant. The aim (issue 33): at most 1.1 for parse, offsets and the algebra over 100-10,000
modes, and about 0 for a picture of a fixed 64x64 window over layouts of 2^16-2^24 elements.

Times include Python's big-int arithmetic where the ints grow with the size: the gapped
layouts' strides 4^i have 2i bits, so their input grows quadratically in bits, and every
operation that reads each stride once costs at least that. For those rows a second exponent is
printed against the input's size in bits (the bit lengths of its extents and strides): at most
1 means linear in what was read. The public composition refuses a result holding an integer of
more than 4,000 digits as soon as one is built (from ~3,300 gapped modes on), so its 10,000-mode
figure is the time to that refusal; the row "exact, unchecked" times the same composition
through the algebra's inner call, which builds the whole result.

    python benchmarks/bench_growth.py [--runs 3] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from tensorlayout import cute, render
from tensorlayout.cute.compose import _composition
from tensorlayout.errors import TensorLayoutError

MODES = (100, 300, 1000, 3000, 10000)
PICTURE_SIDES = (256, 512, 1024, 2048, 4096)  # layouts of 2^16 .. 2^24 elements
OFFSET_SIZES = (1 << 16, 1 << 18, 1 << 20, 1 << 22)


def _timed(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        with contextlib.suppress(TensorLayoutError):  # the time to a typed refusal counts too
            fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _gapped(n: int) -> cute.Layout:
    """n modes of extent 2 with strides 4^i: nothing coalesces, composition keeps every mode."""
    return cute.Layout((2,) * n, tuple(4**i for i in range(n)))


def _bounded(n: int) -> cute.Layout:
    """n modes 3:1 (small ints; composition answers with a typed refusal: the modes carry)."""
    return cute.Layout((3,) * n, (1,) * n)


def _text(n: int) -> str:
    """n modes of small ints, nested in pairs: ``((2,3),(4,5),...):((1,7),(13,3),...)``."""
    shape = ",".join(f"({2 + k % 5},{3 + k % 3})" for k in range(n // 2))
    stride = ",".join(f"({1 + 6 * (k % 7)},{3 + k % 11})" for k in range(n // 2))
    return f"({shape}):({stride})"


def _bits(lay: cute.Layout) -> int:
    """The input's size in bits: the bit lengths of its extents and strides."""
    return sum(abs(x).bit_length() for part in (lay.shape, lay.stride) for x in cute.flatten(part))


Case = tuple[str, tuple[int, ...], Callable[[int], Callable[[], Any]], Callable[[int], int] | None]


def cases() -> list[Case]:
    """(name, sizes, size -> the call to time with its input built already, size -> input bits
    for the rows whose ints grow with the size)."""
    def parse(n: int) -> Callable[[], Any]:
        text = _text(n)
        return lambda: cute.Layout.parse(text)

    def offsets(n: int) -> Callable[[], Any]:
        lay = cute.Layout((64, n // 64), (n // 64, 1))
        return lay.offsets

    def on_gapped(op: Callable[[cute.Layout], Any]) -> Callable[[int], Callable[[], Any]]:
        def make(n: int) -> Callable[[], Any]:
            lay = _gapped(n)
            return lambda: op(lay)
        return make

    def compose_bounded(n: int) -> Callable[[], Any]:
        lay = _bounded(n)
        return lambda: cute.composition(lay, lay)

    def inverses_repeated(n: int) -> Callable[[], Any]:
        lay = cute.Layout((2,) * n, tuple(k % 13 for k in range(n)))  # C++'s exchange order
        return lambda: (cute.right_inverse(lay), cute.left_inverse(lay))

    def picture(side: int) -> Callable[[], Any]:
        text = f"Sw<3,3,3> o _0 o ({side},{side}):({side},1)"
        return lambda: render.to_svg(text, window=(range(64), range(64)))

    def gapped_bits(n: int) -> int:
        return _bits(_gapped(n))

    return [("parse (modes)", MODES, parse, None), ("offsets (elements)", OFFSET_SIZES, offsets, None),
            ("composition, 4^i strides (modes)", MODES, on_gapped(lambda a: cute.composition(a, a)),
             gapped_bits),
            ("composition, 4^i, exact unchecked (modes)", MODES, on_gapped(lambda a: _composition(a, a)),
             gapped_bits),
            ("composition, small ints (modes)", MODES, compose_bounded, None),
            ("right+left inverse, 4^i (modes)", MODES,
             on_gapped(lambda a: (cute.right_inverse(a), cute.left_inverse(a))), gapped_bits),
            ("right inverse, 4^i (modes)", MODES, on_gapped(cute.right_inverse), gapped_bits),
            ("left inverse, 4^i (modes)", MODES, on_gapped(cute.left_inverse), gapped_bits),
            ("right+left inverse, repeated strides (modes)", MODES, inverses_repeated, None),
            ("picture 64x64 window (side; size = side^2)", PICTURE_SIDES, picture, None)]


def exponent(sizes: tuple[int, ...], times: list[float], picture: bool) -> float:
    """Slope of log time over log size (for pictures: over log side^2, the element count)."""
    scale = 2 if picture else 1
    return math.log(times[-1] / times[0]) / (scale * math.log(sizes[-1] / sizes[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="stop every series at its 4th size")
    args = ap.parse_args()
    print(f"{'operation':<46} {'sizes':<34} {'CPU seconds (median)':<44} exponent  vs input bits")
    for name, sizes, make, bits in cases():
        sizes = sizes[:4] if args.quick else sizes
        times = [max(_timed(make(n), args.runs), 1e-6) for n in sizes]
        shown = " ".join(f"{t:.4f}" for t in times)
        per_bit = f"{exponent((bits(sizes[0]), bits(sizes[-1])), times, False):.2f}" if bits else ""
        print(f"{name:<46} {','.join(map(str, sizes)):<34} {shown:<44} "
              f"{exponent(sizes, times, name.startswith('picture')):<9.2f} {per_bit}", flush=True)


if __name__ == "__main__":
    main()
