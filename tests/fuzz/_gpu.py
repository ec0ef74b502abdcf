"""The GPU entry points: bank conflicts of random (swizzled) shared tiles under random warp
accesses, random tilings of the MMA and copy atoms, and their pictures. Inputs are plain
tuples (names, texts, ints) so that ``repr(input)`` reproduces them."""

from __future__ import annotations

import random
from typing import Any

from tensorlayout import gpu, render
from tensorlayout.gpu import COPY_ATOMS, MMA_ATOMS
from tests.fuzz import _corpus, _gen
from tests.fuzz._common import RoundTripError, ok_or_library

_BITS = (4, 8, 16, 32, 64, 128, 0, -8, 12)
_VECTOR_BITS = (32, 64, 128, 256, 16, 0, 96)
_SIDES = (1, 2, 4, 8, 16, 32, 64, 128, 3, 0, -4, 2**40)


def _pow2_side(rng: random.Random) -> int:
    return rng.choice(_SIDES) if rng.random() < 0.2 else 1 << rng.randint(0, 7)


def _smem_text(rng: random.Random, m: int, n: int) -> str:
    """A shared tile ``m x n``: row-major, maybe swizzled (CuTe's print form), or fuzzed text."""
    roll = rng.random()
    if roll < 0.15:
        return _gen.from_seeds(rng, _corpus.seeds("cute"), _gen.cute_text)
    base = f"({m},{n}):({n},1)" if rng.random() < 0.7 else f"({m},{n}):(1,{m})"
    if roll < 0.6:
        b, mm, s = rng.randint(0, 4), rng.randint(0, 4), rng.randint(-1, 5)
        base = f"Sw<{b},{mm},{s}> o _0 o {base}"
    return _gen.mutate(rng, base, 1) if rng.random() < 0.1 else base


def _banks(rng: random.Random) -> tuple[Any, ...]:
    m, n = _pow2_side(rng), _pow2_side(rng)
    return ("banks", _smem_text(rng, m, n), rng.choice(_BITS), (m, n), rng.choice(_VECTOR_BITS),
            rng.choice(("row", "column", "row", "diagonal")), rng.choice((0, 0, 0, 1, 5)))


def _thr(rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.choice((1, 1, 2, 4, 0, 3, -1)) for _ in range(rng.choice((3, 3, 3, 2, 4))))


def _mma(rng: random.Random) -> tuple[Any, ...]:
    name = rng.choice(list(MMA_ATOMS)) if rng.random() < 0.95 else _gen.random_text(rng, 12)
    perm = tuple(rng.choice((None, None, 16, 32, 64, 0, 24)) for _ in range(3))
    return "mma", name, _thr(rng), perm, rng.random() < 0.05


def _copy(rng: random.Random) -> tuple[Any, ...]:
    return ("copy", rng.choice(list(COPY_ATOMS)), rng.choice(list(MMA_ATOMS)), _thr(rng),
            rng.choice((16, 16, 8, 32, 0)), rng.choice("abc"), rng.random() < 0.05)


def make_gpu(rng: random.Random) -> tuple[Any, ...]:
    return rng.choice((_banks, _banks, _mma, _copy))(rng)


def _check_banks(smem: str, bits: int, tile: tuple[int, int], vbits: int, along: str, warp: int) -> None:
    access = ok_or_library(gpu.vector_access, tile, bits, vbits, along)
    if access is None:
        return
    report = ok_or_library(gpu.bank_conflicts, smem, bits, access, warp)
    if report is not None and not report.ideal <= report.wavefronts <= report.ideal * 32:
        raise RoundTripError(f"bank report out of range: {report.summary()}")


def _check_mma(name: str, thr: tuple[int, ...], perm: tuple[Any, ...], draw: bool) -> None:
    atom = ok_or_library(gpu.mma_atom, name)
    tiled = atom and ok_or_library(gpu.make_tiled_mma, atom, thr, perm)
    if tiled:
        for tv in (tiled.tv_a, tiled.tv_b, tiled.tv_c):
            ok_or_library(lambda f=tv: f().thread_of(0, 0))
        str(tiled)
        if draw:
            ok_or_library(render.to_svg, tiled)


def _check_copy(copy: str, mma: str, thr: tuple[int, ...], bits: int, operand: str, draw: bool) -> None:
    tiled = ok_or_library(gpu.make_tiled_mma, gpu.mma_atom(mma), thr)
    make = {"a": gpu.make_tiled_copy_a, "b": gpu.make_tiled_copy_b, "c": gpu.make_tiled_copy_c}[operand]
    tc = tiled and ok_or_library(make, gpu.copy_atom(copy), bits, tiled)
    if tc:
        ok_or_library(lambda: tc.tv_s().thread_of(0, 0))
        str(tc)
        if draw:
            ok_or_library(render.to_svg, tc)


def check_gpu(case: tuple[Any, ...]) -> None:
    """Only library errors escape; a bank report's wavefronts lie between the ideal and 32x it."""
    {"banks": _check_banks, "mma": _check_mma, "copy": _check_copy}[case[0]](*case[1:])
