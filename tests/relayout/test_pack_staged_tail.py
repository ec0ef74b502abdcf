"""The packing kernel's staged last columns (``pack_far_staged`` with fewer than 16 columns and
``lanes_inside`` in ``_pack_columns.h``): far columns whose rows of lines lie side by side pack
their last ``nc % 16`` columns through the L1 stage too, reading each row's 16 lanes whole where
every lane lies inside the logical array, else column by column as before. Direct tasks (tails of
1 to 15 columns, logical rows with and without room for the lanes, both signs of the row stride)
against the slow model of ``test_pack_kernel`` with guards either side; the same tasks in a child
whose logical array ends (and, again, begins) at a page it may not read; and layouts whose
logically minor dims are physically major (``{0,1,3,2}``: 9 columns) against the definition and
the numpy path, threads 1 and default."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout.relayout import as_target

from .test_pack import check_against_numpy
from .test_pack_kernel import GUARD, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


def _task(bits: int, q: int, nc: int, nr: int, width: int, rows_reversed: bool) -> tuple:
    """A far-columns task: nr rows of lines q bytes apart (side by side), nc columns nr*q + 40
    bytes apart, from a logical array [nr][per*q][width] (its first nc columns; the row axis
    walked backwards when ``rows_reversed``); returns (task, packed bytes, logical shape)."""
    per = 8 // bits
    P = nr * q + 40
    line = per * q * width
    r0, rls = ((nr - 1) * line, -line) if rows_reversed else (0, line)
    task = (0, 0, r0, (nr, nc, q * per), (q * per, P * per, 1), (rls, 1, width))
    return task, nc * P, (nr * per * q, width)


@settings(max_examples=200, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), q=st.sampled_from([1, 2, 4]), nc=st.integers(1, 40),
       nr=st.integers(1, 300), room=st.sampled_from([0, 3, 16, 40]), rows_reversed=st.booleans(),
       seed=st.integers(0, 99), pad=st.integers(0, 15))
def test_staged_tails_match_the_model(bits: int, q: int, nc: int, nr: int, room: int, rows_reversed: bool,
                                      seed: int, pad: int) -> None:
    task, nbytes, lshape = _task(bits, q, nc, nr, nc + room, rows_reversed)
    size = lshape[0] * lshape[1]
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size].reshape(lshape)
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * (8 // bits), pad, False, False)
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()


_PAGE_EDGES = """
import ctypes, mmap, sys
import numpy as np
sys.path[:0] = {path!r}
from tests.relayout.test_pack_staged_tail import _task
from tests.relayout.test_pack_kernel import _model_pack
import tensorlayout.relayout._pack as kernel
page = mmap.PAGESIZE
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
for bits, q, nc, nr, rows_reversed in {cases!r}:
    task, nbytes, lshape = _task(bits, q, nc, nr, nc, rows_reversed)
    span = lshape[0] * lshape[1]
    pages = -(-span // page)
    mem = mmap.mmap(-1, (pages + 2) * page)
    raw = np.frombuffer(mem, np.uint8)
    assert libc.mprotect(raw.ctypes.data, page, 0) == 0  # no access before ...
    assert libc.mprotect(raw.ctypes.data + (pages + 1) * page, page, 0) == 0  # ... nor after
    for start in ((pages + 1) * page - span, page):  # ends at the page after; begins after the first
        logical = raw[start:start + span].reshape(lshape)
        logical[...] = (np.arange(span) % 251).reshape(lshape)
        packed = np.full(nbytes, 0xA5, np.uint8)
        want = packed.copy()
        kernel.pack(packed, logical, [task], bits, nbytes * (8 // bits), 3, False, False)
        assert _model_pack(want, raw, logical, [task], bits, 3)
        assert np.array_equal(packed, want), (bits, q, nc, nr, rows_reversed, start)
print("ok")
"""


def test_staged_tails_read_inside_the_logical_array() -> None:
    # the logical rows exactly nc wide: the last rows' lanes past the tail would leave the array
    cases = [(bits, q, nc, nr, rev) for bits in (1, 2, 4) for q in (1, 2, 4) for nc in (1, 7, 9, 15, 25)
             for nr in (1, 5, 130) for rev in (False, True)]
    run = subprocess.run([sys.executable, "-c", _PAGE_EDGES.format(path=sys.path, cases=cases)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-2000:])


TEXTS = ["u4[300,29,3,3]{0,1,3,2:T(8,128)(8,1)E(4)}", "s4[140,13,25]{1,0,2:T(8,128)(8,1)E(4)}",
         "u1[200,40,5,2]{0,1,3,2:T(8,128)(32,1)E(1)}", "u2[150,20,7]{0,1,2:T(8,128)(16,1)E(2)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, None])
def test_few_far_columns_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                         threads: int | None) -> None:
    check_against_numpy(monkeypatch, text, threads, (-1,) if as_target(text).signed else (1,))
