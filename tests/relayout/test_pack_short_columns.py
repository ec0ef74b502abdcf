"""The packing kernel's merged short columns (``merges`` / ``table_columns_k`` in ``_pack.c``):
fewer than 16 logically contiguous columns whose rows of lines continue their logical run go as
one run, 16 columns a block, each column's bytes at its own offset; and padding runs of slot
stride 1 (``pack_slots``) set whole bytes at once. Called directly with such tasks (the logical
array ending where the last block's vectors would read past it, reversed rows, odd offsets)
against the slow model of ``test_pack_kernel``, guards either side of both buffers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), q=st.sampled_from([1, 2, 4]), nc=st.integers(1, 15),
       nr=st.integers(2, 12), gap=st.sampled_from([0, 3, 40]), offset=st.integers(0, 9), signed=st.booleans(),
       seed=st.integers(0, 99), tight=st.booleans(), pad=st.integers(0, 15))
def test_short_column_tasks_match_the_model(bits: int, q: int, nc: int, nr: int, gap: int, offset: int,
                                            signed: bool, seed: int, tight: bool, pad: int) -> None:
    # logical [per*q rows][nr * nc] (tight: the array ends with the last row's bytes); columns P
    # bytes apart, rows of lines (continuing the columns, nc logical bytes on) nc * P + gap apart
    per = 8 // bits
    lrows, width = q * per, nr * nc + (0 if tight else 16)
    lbase = np.random.default_rng(seed).integers(0, 256, lrows * width + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + lrows * width].reshape(lrows, width)
    row = logical.strides[0]
    P = q + gap % 5
    pb = nc * P + gap
    nbytes = nr * pb + offset
    task = (0, offset * per, 0, (nr, nc, q * per), (pb * per, P * per, 1), (nc, 1, row))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False, False)
    event(f"tight {tight}")
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    bbase, back = _guarded(lrows * width, 0x5A)
    back2 = back.reshape(lrows, width)
    kernel.unpack(back2, packed, [(0, *task[1:])], bits, nbytes * per, signed)
    got = back2[:, :nr * nc]
    want_back = _codes(logical[:, :nr * nc], bits, signed)
    assert np.array_equal(got.view(np.int8) if signed else got, want_back)
    assert (back2[:, nr * nc:] == 0x5A).all()  # nothing past the run
    assert (bbase[:GUARD] == 0x5A).all() and (bbase[GUARD + lrows * width:] == 0x5A).all()


@settings(max_examples=200, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), start=st.integers(0, 40), n=st.integers(0, 60),
       rows=st.integers(1, 4), pad=st.integers(0, 15), seed=st.integers(0, 99))
def test_pad_runs_match_the_model(bits: int, start: int, n: int, rows: int, pad: int, seed: int) -> None:
    per = 8 // bits
    stride = n + 3  # rows of runs with slots between them that keep their bits
    nbytes = -(-(start + rows * stride) // per) + 1
    pbase, packed = _guarded(nbytes, 0xA5)
    packed[:] = np.random.default_rng(seed).integers(0, 256, nbytes).astype(np.uint8)
    want = packed.copy()
    task = (1, start, 0, (rows, n), (stride, 1), (0, 0))
    kernel.pack(packed, None, [task], bits, nbytes * per, pad, True, False)
    assert _model_pack(want, pbase, packed, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
