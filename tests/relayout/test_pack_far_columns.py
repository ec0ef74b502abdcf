"""The packing kernel's far columns (``column_rows``, ``pack_far_staged`` / ``unpack_far_staged``
in ``_pack.c``): logically contiguous columns a line or more apart in the buffer, their rows of
lines side by side, go up to 128 rows at a time, through an L1 stage column by column where the
rows are exactly q bytes apart. Called directly with such tasks (more rows than a block, ragged
column counts, odd offsets, both signs) against the slow model of ``test_pack_kernel``, guards
either side of both buffers; and through ``to_physical``/``from_physical`` on layouts whose
logically minor dim is physically major, against the definition and the numpy path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference
from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=150, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), q=st.sampled_from([1, 2, 4]), spread=st.sampled_from([0, 4, 12]),
       far=st.sampled_from([0, 64, 200]), nc=st.integers(1, 40), nr=st.integers(1, 300),
       offset=st.integers(0, 9), signed=st.booleans(), seed=st.integers(0, 99), pad=st.integers(0, 15))
def test_far_column_tasks_match_the_model(bits: int, q: int, spread: int, far: int, nc: int, nr: int,
                                          offset: int, signed: bool, seed: int, pad: int) -> None:
    # (of kind 0: a column's gaps are other rows' bytes) a column's rows of lines pb = q + spread
    # bytes apart (side by side when spread is 0), the columns P = nr * pb + far bytes apart; the
    # logical array [nr][per*q rows][nc] at an odd start
    per = 8 // bits
    pb = q + spread
    P = nr * pb + far
    lrows = nr * q * per
    lbase = np.random.default_rng(seed).integers(0, 256, lrows * nc + offset + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD + offset:GUARD + offset + lrows * nc].reshape(lrows, nc)
    row = logical.strides[0]
    nbytes = nc * P + offset
    task = (0, offset * per, 0, (nr, nc, q * per), (pb * per, P * per, 1), (q * per * row, 1, row))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False, False)
    event(f"rows side by side {spread == 0}, far {far > 0}")
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    bbase, back = _guarded(lrows * nc + offset, 0x5A)
    back2 = back[offset:].reshape(lrows, nc)
    kernel.unpack(back2, packed, [(0, *task[1:])], bits, nbytes * per, signed)
    want_back = _codes(logical, bits, signed)
    assert np.array_equal(back2.view(np.int8) if signed else back2, want_back)
    assert (bbase[:GUARD + offset] == 0x5A).all() and (bbase[GUARD + offset + lrows * nc:] == 0x5A).all()


TEXTS = ["u4[300,16,40]{0,1,2:T(8,128)(8,1)E(4)}", "s4[131,9,35]{0,1,2:T(8,128)(8,1)E(4)}",
         "s4[260,41,17]{0,1,2:T(8,128)(8,1)E(4)}", "u1[200,8,33]{0,1,2:T(8,128)(32,1)E(1)}",
         "u2[150,16,20]{0,1,2:T(8,128)(16,1)E(2)}", "u4[140,3,18,7]{0,2,1,3:T(8,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("path", ["pack", "pack-stream"])
def test_minor_dim_major_layouts_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                                path: str) -> None:
    t = as_target(text)
    rng = np.random.default_rng(len(text))
    data = random_data(t, rng)
    pad = -1 if t.signed else 1
    want = reference(data, text, pad)
    _path(monkeypatch, "numpy")
    assert np.array_equal(to_physical(data, text, pad_value=pad), want)
    _path(monkeypatch, path)
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
    assert to_physical(data, text, pad_value=pad, out=out, threads=3) is out
    assert np.array_equal(out, want)
    back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
    assert np.array_equal(from_physical(out, text, out=back, threads=3), codes(data, t))
