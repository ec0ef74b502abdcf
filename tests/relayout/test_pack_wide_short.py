"""The packing kernel's AVX-512 short words (``_pack_wide.h``): E(4) words of n <= 8 codes, adjacent
4-byte column words, rows of lines R logical bytes apart (R not 8), 8 columns x 8 rows a block
gathered by byte permutes; and a task whose next task continues its words with the next m < 8
codes of each row (``joined_tail`` in ``_pack_words.h``: a ragged minor dim's two sub-tile rows)
taking it as its tail. Direct tasks (ragged row and column counts, rows close, far and
overlapping, odd offsets, reversed columns) against slow models with guards either side;
layouts whose minor dim is ragged against the definition and the numpy path, threads 1 and
default; buffers that end at an inaccessible page; and all of it again in a child process with
``TENSORLAYOUT_NO_AVX512`` set (the forms the kernel had before)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.relayout._reference import EDGED, rerun_without_avx512, run_child_ok

from .test_pack import check_against_numpy
from .test_pack_kernel import GUARD, _elements, _model_pack, check_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


def _model_unpack(memory: np.ndarray, origin: int, packed: np.ndarray, tasks: list, signed: bool) -> None:
    """Each task's codes (E(4)) into ``memory`` at ``origin`` + their logical offsets, the slow way."""
    for task in tasks:
        for slot, off in _elements(task):
            code = int(packed[slot // 2]) >> (4 * (slot % 2)) & 15
            memory[origin + off] = (code ^ 8) - 8 & 0xFF if signed else code


def _words(nr: int, nc: int, n: int, R: int, L: int, pb: int, slot: int, loff: int, kind: int) -> tuple:
    """A words task: nr rows of lines (pb bytes, R logical bytes apart) x nc adjacent column words
    (logical rows L apart) of n codes."""
    return (kind, slot, loff, (nr, nc, n), (2 * pb, 8, 1), (R, L, 1))


def _layout(nr: int, nc: int, n: int, R: int, gap: int, reverse: bool) -> tuple[int, int, int]:
    """(column stride L, first column's offset, logical bytes) for columns that do not overlap."""
    run = (nr - 1) * R + n + gap
    return (-run, (nc - 1) * run, nc * run) if reverse else (run, 0, nc * run)


words_st = dict(nr=st.integers(1, 20), nc=st.integers(4, 27), n=st.integers(1, 8), R=st.integers(0, 20),
                gap=st.integers(0, 5), spread=st.sampled_from([0, 4, 36]), offset=st.integers(0, 5),
                reverse=st.booleans(), seed=st.integers(0, 99))


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(**words_st, pad=st.integers(0, 15))
def test_short_words_pack_as_the_model(nr: int, nc: int, n: int, R: int, gap: int, spread: int, offset: int,
                                       reverse: bool, seed: int, pad: int) -> None:
    L, first, size = _layout(nr, nc, n, R, gap, reverse)
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size]
    pb = 4 * nc + spread
    nbytes = offset + nr * pb
    task = _words(nr, nc, n, R, L, pb, 2 * offset, first, 2 if n < 8 else seed % 2 * 2)
    check_pack(kernel, lbase, logical, [task], nbytes, pad)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(**words_st, signed=st.booleans())
def test_short_words_unpack_as_the_model(nr: int, nc: int, n: int, R: int, gap: int, spread: int, offset: int,
                                         reverse: bool, seed: int, signed: bool) -> None:
    R = max(R, n)  # (rows of lines that do not overlap)
    L, first, size = _layout(nr, nc, n, R, gap, reverse)
    pb = 4 * nc + spread
    nbytes = offset + nr * pb
    packed = np.random.default_rng(seed).integers(0, 256, nbytes).astype(np.uint8)
    lbase = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    logical = lbase[GUARD:GUARD + size]
    task = _words(nr, nc, n, R, L, pb, 2 * offset, first, 0)
    kernel.unpack(logical, packed, [task], 4, 2 * nbytes, signed)
    want = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    _model_unpack(want, GUARD, packed, [task], signed)
    assert np.array_equal(lbase, want)  # (the bytes between the rows' codes and the guards kept)


def _pair(nr: int, nc: int, m: int, R: int, L: int, first: int, pb: int, offset: int, kind: int) -> list:
    """A task of 8 codes a word and the next task continuing each row with m codes, its words in
    a region of the buffer after the first's."""
    a = _words(nr, nc, 8, R, L, pb, 2 * offset, first, 0 if kind == 0 else 2)
    b = _words(nr, nc, m, R, L, pb, 2 * (offset + nr * pb), first + 8, kind)
    return [a, b]


pair_st = dict(nr=st.integers(1, 20), nc=st.integers(4, 27), m=st.integers(1, 7), extra=st.integers(0, 8),
               gap=st.integers(0, 5), spread=st.sampled_from([0, 4, 36]), offset=st.integers(0, 5),
               reverse=st.booleans(), seed=st.integers(0, 99))


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(**pair_st, pad=st.integers(0, 15))
def test_joined_tails_pack_as_the_model(nr: int, nc: int, m: int, extra: int, gap: int, spread: int,
                                        offset: int, reverse: bool, seed: int, pad: int) -> None:
    R = 8 + m + extra
    L, first, size = _layout(nr, nc, 8 + m, R, gap, reverse)
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size]
    pb = 4 * nc + spread
    nbytes = offset + 2 * nr * pb
    tasks = _pair(nr, nc, m, R, L, first, pb, offset, 2)
    check_pack(kernel, lbase, logical, tasks, nbytes, pad)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(**pair_st, signed=st.booleans())
def test_joined_tails_unpack_as_the_model(nr: int, nc: int, m: int, extra: int, gap: int, spread: int,
                                          offset: int, reverse: bool, seed: int, signed: bool) -> None:
    R = 8 + m + extra
    L, first, size = _layout(nr, nc, 8 + m, R, gap, reverse)
    pb = 4 * nc + spread
    nbytes = offset + 2 * nr * pb
    packed = np.random.default_rng(seed).integers(0, 256, nbytes).astype(np.uint8)
    lbase = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    logical = lbase[GUARD:GUARD + size]
    tasks = _pair(nr, nc, m, R, L, first, pb, offset, 0)
    kernel.unpack(logical, packed, tasks, 4, 2 * nbytes, signed)
    want = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    _model_unpack(want, GUARD, packed, tasks, signed)
    assert np.array_equal(lbase, want)


def test_a_pair_not_continuing_is_not_joined() -> None:
    # the second task's codes 9 bytes on, not 8: each task moves its own codes only
    nr, nc, R, pb = 8, 8, 12, 32
    logical = np.arange(nc * 96, dtype=np.uint8)
    a = _words(nr, nc, 8, R, 96, pb, 0, 0, 2)
    b = _words(nr, nc, 3, R, 96, pb, 2 * nr * pb, 9, 2)
    packed, want = np.zeros(2 * nr * pb, np.uint8), np.zeros(2 * nr * pb, np.uint8)
    kernel.pack(packed, logical, [a, b], 4, 4 * nr * pb, 7, False, False)
    assert _model_pack(want, logical, logical, [a, b], 4, 7)
    assert np.array_equal(packed, want)


TEXTS = ["u4[3,70,13,11]{1,3,2,0:T(8,128)(8,1)E(4)}", "s4[2,21,9,13]{1,3,2,0:T(8,128)(8,1)E(4)}",
         "s4[3,9,10,15]{1,3,2,0:T(8,128)(8,1)E(4)}", "u4[2,33,7,9]{1,3,2,0:T(8,128)(8,1)E(4)}",
         "s4[4,5,3,7]{1,3,2,0:T(8,128)(8,1)E(4)}", "u4[5,12,6,17]{1,3,2,0:T(8,128)(8,1)E(4)}",
         "u4[3,10,4,20]{1,3,2,0:T(8,128)(8,1)E(4)}", "s4[2,131,3,12]{1,3,2,0:T(8,128)(8,1)E(4)}",
         "u4[4,19,21,5]{1,3,0,2:T(16,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, None])
def test_ragged_minor_layouts_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                            threads: int | None) -> None:
    check_against_numpy(monkeypatch, text, threads)


PAGE_END = EDGED + """
from tensorlayout.relayout import _pack as kernel
for nr, nc, n, R in [(8, 8, 8, 11), (9, 13, 3, 11), (8, 16, 5, 7), (3, 5, 8, 17), (17, 9, 1, 2)]:
    run = (nr - 1) * R + n
    size, pb = nc * run, 4 * nc
    keep = []
    for end in (True, False):
        m1, logical, logical2 = edged(size)
        m2, packed, packed2 = edged(nr * pb)
        keep += [m1, m2]
        lg, pk = (logical, packed) if end else (logical2, packed2)
        lg[:] = np.arange(size) % 251
        task = (2 if n < 8 else 0, 0, 0, (nr, nc, n), (2 * pb, 8, 1), (R, run, 1))
        kernel.pack(pk, lg, [task], 4, 2 * nr * pb, 3, False, False, 1)
        lg[:] = 0
        kernel.unpack(lg, pk, [(0, *task[1:])], 4, 2 * nr * pb, False, False, 1)
        at = [j * R + i for j in range(nr) for i in range(n)]
        want = (np.arange(size) % 251 & 15).reshape(nc, run)[:, at]
        got = lg.reshape(nc, run)[:, at]
        assert np.array_equal(got, want), (nr, nc, n, R, end)
print("ok")
"""


def test_nothing_is_touched_past_the_buffers() -> None:
    # the codes (packing: read; unpacking: written) and the packed buffer begin right after or end
    # right before an inaccessible page: a move outside them kills the child
    run_child_ok(PAGE_END)


@pytest.mark.skipif(bool(os.environ.get("TENSORLAYOUT_NO_AVX512")), reason="already the child")
def test_the_forms_without_avx512_match_too() -> None:
    env = {**os.environ, "TENSORLAYOUT_NO_AVX512": "1"}
    code = "from tensorlayout.relayout import _pack; print(_pack.AVX512)"
    probe = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "0", probe.stderr[-2000:]
    rerun_without_avx512(__file__)
