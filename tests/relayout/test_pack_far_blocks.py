"""The packing kernel's AVX-512 far E(4) columns (``_pack_far.h``): a transposing layout's (8,1)
sub-tiles, 8 codes a 4-byte column word, the words of a row of lines adjacent, the logically
contiguous columns P >= 64 bytes apart, 16 rows of lines x 16 columns a block transposed in
registers (unpacking through a stage of 64 columns a logical line). Direct tasks (ragged row and
column counts, the code rows and rows of lines at any stride, gaps, reversed, odd offsets) against
the slow model with guards either side of both buffers; layouts whose minor dim is physically
major against the definition and the numpy path, threads 1 and default; buffers that begin and
end at an inaccessible page; and all of it again in a child process with
``TENSORLAYOUT_NO_AVX512`` set (the SSE2 staged columns)."""

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
from .test_pack_kernel import GUARD, _elements, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


def _logical(lbase: np.ndarray, nr: int, nc: int, order: str, gap: int, reverse: bool) -> np.ndarray:
    """A [rows of lines][8 code rows][nc columns] view inside ``lbase`` (after its guard): the code
    rows outside the rows of lines or inside them, ``gap`` bytes after each column run, reversed
    rows and code rows when ``reverse`` (the columns stay logically adjacent, stride 1)."""
    run = nc + gap
    if order == "rows-outer":
        view = lbase[GUARD:GUARD + nr * 8 * run].reshape(nr, 8, run)
    else:
        view = lbase[GUARD:GUARD + nr * 8 * run].reshape(8, nr, run).transpose(1, 0, 2)
    view = view[:, :, :nc]
    return view[::-1, ::-1] if reverse else view


def _task(logical: np.ndarray, nr: int, nc: int, P: int, offset: int) -> tuple:
    """The far columns task: rows of lines (adjacent 4-byte words), columns P bytes apart, 8 codes."""
    rls, ls, one = logical.strides
    assert one == 1
    return (0, 2 * offset, 0, (nr, nc, 8), (8, 2 * P, 1), (rls, 1, ls))


far_st = dict(nr=st.integers(1, 40), nc=st.integers(1, 150), far=st.sampled_from([0, 4, 64, 100]),
              gap=st.sampled_from([0, 1, 7, 64]), order=st.sampled_from(["rows-outer", "codes-outer"]),
              reverse=st.booleans(), offset=st.integers(0, 5), seed=st.integers(0, 99))


def _sizes(nr: int, nc: int, far: int, gap: int) -> tuple[int, int]:
    """(column stride P >= 64 bytes, logical bytes) of a case."""
    return max(64, 4 * nr) + far, nr * 8 * (nc + gap)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(**far_st, pad=st.integers(0, 15))
def test_far_blocks_pack_as_the_model(nr: int, nc: int, far: int, gap: int, order: str, reverse: bool,
                                      offset: int, seed: int, pad: int) -> None:
    P, size = _sizes(nr, nc, far, gap)
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = _logical(lbase, nr, nc, order, gap, reverse)
    nbytes = offset + nc * P
    task = _task(logical, nr, nc, P, offset)
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], 4, 2 * nbytes, pad, False, False)
    assert _model_pack(want, lbase, logical, [task], 4, pad)
    assert np.array_equal(packed, want)  # (the bytes between the columns' words kept too)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(**far_st, signed=st.booleans())
def test_far_blocks_unpack_as_the_model(nr: int, nc: int, far: int, gap: int, order: str, reverse: bool,
                                        offset: int, seed: int, signed: bool) -> None:
    P, size = _sizes(nr, nc, far, gap)
    nbytes = offset + nc * P
    packed = np.random.default_rng(seed).integers(0, 256, nbytes).astype(np.uint8)
    lbase = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    logical = _logical(lbase, nr, nc, order, gap, reverse)
    task = _task(logical, nr, nc, P, offset)
    kernel.unpack(logical, packed, [task], 4, 2 * nbytes, signed, False)
    want = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    origin = logical.__array_interface__["data"][0] - lbase.__array_interface__["data"][0]
    for slot, off in _elements(task):  # (the slow way; every other byte, guards included, kept)
        code = int(packed[slot // 2]) >> (4 * (slot % 2)) & 15
        want[origin + off] = (code ^ 8) - 8 & 0xFF if signed else code
    assert np.array_equal(lbase, want)


TEXTS = ["u4[70,59,3,3]{0,1,3,2:T(8,128)(8,1)E(4)}", "s4[19,53,37]{1,0,2:T(8,128)(8,1)E(4)}",
         "u4[9,63,71]{1,0,2:T(8,128)(8,1)E(4)}", "s4[16,100,64]{1,0,2:T(8,128)(8,1)E(4)}",
         "u4[34,30,9,5]{0,1,3,2:T(8,128)(8,1)E(4)}", "u4[18,5,17,47]{2,0,3,1:T(8,128)(8,1)E(4)}",
         "s4[8,4,40,64]{2,0,1,3:T(64,128)(8,1)E(4)}", "s4[4,16,67,130]{1,0,3,2:T(64,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, None])
def test_minor_dim_major_layouts_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                                threads: int | None) -> None:
    check_against_numpy(monkeypatch, text, threads)


PAGE_END = EDGED + """
from tensorlayout.relayout import _pack as kernel
keep = []
for nr, nc in [(16, 16), (5, 9), (17, 25), (3, 60), (21, 1)]:  # (each buffer within a page)
    P, size = max(64, 4 * nr), nr * 8 * nc
    for end in (True, False):
        m1, logical, logical2 = edged(size)
        m2, packed, packed2 = edged(nc * P)
        keep += [m1, m2]
        lg, pk = (logical, packed) if end else (logical2, packed2)
        lg[:] = np.arange(size) % 251
        task = (0, 0, 0, (nr, nc, 8), (8, 2 * P, 1), (8 * nc, 1, nc))
        kernel.pack(pk, lg, [task], 4, 2 * nc * P, 3, False, False, 1)
        lg[:] = 0
        kernel.unpack(lg, pk, [task], 4, 2 * nc * P, False, False, 1)
        assert np.array_equal(lg, np.arange(size) % 251 & 15), (nr, nc, end)
print("ok")
"""


def test_nothing_is_touched_past_the_buffers() -> None:
    # the logical codes and the packed words begin right after or end right before an
    # inaccessible page: a move outside them kills the child
    run_child_ok(PAGE_END)


@pytest.mark.skipif(bool(os.environ.get("TENSORLAYOUT_NO_AVX512")), reason="already the child")
def test_the_forms_without_avx512_match_too() -> None:
    env = {**os.environ, "TENSORLAYOUT_NO_AVX512": "1"}
    code = "from tensorlayout.relayout import _pack; print(_pack.AVX512)"
    probe = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "0", probe.stderr[-2000:]
    rerun_without_avx512(__file__)
