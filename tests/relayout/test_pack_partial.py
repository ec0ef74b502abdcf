"""The packing kernel's partial columns (``partial`` in ``_pack.c``, ``_owning_disjoint`` in
``_pack_path``): columns of n rows, n not a multiple of the codes a byte holds (a ragged
sub-tile: s4[5,5,N]{2,1,0:T(8,128)(8,1)E(4)} holds 5 of 8 rows), packed of kind 2 in whole bytes
(the partial byte's other slots and the gap the pad code) and unpacked reading the partial byte
whole. Called directly against the slow model of ``test_pack_kernel`` (guards either side of
both buffers, odd offsets, both signs), and through ``to_physical``/``from_physical`` on ragged
layouts against the definition and the numpy path, into garbage buffers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from .test_pack import check_against_numpy
from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), n=st.integers(1, 31), extra=st.integers(0, 2), nc=st.integers(1, 40),
       nr=st.integers(1, 3), offset=st.integers(0, 9), signed=st.booleans(), seed=st.integers(0, 99),
       pad=st.integers(0, 15), serial=st.booleans())
def test_partial_column_tasks_match_the_model(bits: int, n: int, extra: int, nc: int, nr: int, offset: int,
                                              signed: bool, seed: int, pad: int, serial: bool) -> None:
    # (kind 2 of whole-byte groups: accepted off the serial call too, as whole-byte tasks)
    per = 8 // bits
    q = -(-n // per)
    if q > 8:
        return
    G = (q + extra) * per  # the column group: n rows, then padding
    lrows = nr * n
    lbase = np.random.default_rng(seed).integers(0, 256, lrows * nc + offset + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD + offset:GUARD + offset + lrows * nc].reshape(lrows, nc)
    row = logical.strides[0]
    nbytes = nr * nc * G // per + offset
    task = (2, offset * per, 0, (nr, nc, n), (nc * G, G, 1), (n * row, 1, row))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * per, pad, serial, False, 1 if serial else 3)
    event(f"whole bytes {n % per == 0}")
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    bbase, back = _guarded(lrows * nc + offset, 0x5A)
    back2 = back[offset:].reshape(lrows, nc)
    kernel.unpack(back2, packed, [(0, *task[1:])], bits, nbytes * per, signed)
    want_back = _codes(logical, bits, signed)
    assert np.array_equal(back2.view(np.int8) if signed else back2, want_back)
    assert (bbase[:GUARD + offset] == 0x5A).all() and (bbase[GUARD + offset + lrows * nc:] == 0x5A).all()


TEXTS = ["s4[5,5,300]{2,1,0:T(8,128)(8,1)E(4)}", "u4[3,7,200]{2,1,0:T(8,128)(8,1)E(4)}",
         "s4[13,1000]{1,0:T(8,128)(8,1)E(4)}", "u2[5,333]{1,0:T(8,128)(16,1)E(2)}",
         "u1[13,300]{1,0:T(8,128)(8,1)E(1)}", "u1[3,5,257]{2,1,0:T(8,128)(32,1)E(1)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_ragged_sub_tiles_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                         threads: int) -> None:
    check_against_numpy(monkeypatch, text, threads)
