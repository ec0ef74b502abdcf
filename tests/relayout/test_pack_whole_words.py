"""E(4) whole words (8 codes a 4-byte column word, adjacent columns) whose rows of lines do not
continue the columns' logical rows (a sub-tile's rows the first 8 of a ragged minor dim:
u4[39,70,71,11]{1,3,2,0:T(8,128)(8,1)E(4)}, rows of lines 11 bytes on): 4 columns at a time in
registers (``short_words`` in ``_pack_words.h``), not word by word. Raw tasks against the
slot-by-slot model with guard bytes either side of both buffers (ragged column counts, rows of
lines 9 to 40 bytes on, negative column strides, kinds 0 and 2, signed and unsigned), and the
public calls on layouts of that shape against the definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout.relayout import _pack_path as pack_path
from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.relayout._memo import TargetMemo

from .test_pack import _path, codes, random_data, reference
from .test_pack_bits import _round_trip
from .test_pack_kernel import GUARD

pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(nc=st.integers(1, 40), rows=st.integers(1, 24), step=st.integers(9, 40),
       extra=st.sampled_from([0, 3, 64]), reverse=st.booleans(), kind=st.sampled_from([0, 2]),
       seed=st.integers(0, 99), pad=st.integers(0, 15), signed=st.booleans())
def test_whole_nibble_words_with_far_rows_match_the_model(nc: int, rows: int, step: int, extra: int,
                                                          reverse: bool, kind: int, seed: int, pad: int,
                                                          signed: bool) -> None:
    # column c's logical row holds `rows` words of 8 codes `step` bytes apart (the rest of each
    # step another task's codes), the columns side by side in the buffer, a row of lines apart
    line = (rows - 1) * step + 8 + extra
    lbase = np.random.default_rng(seed).integers(0, 256, nc * line + 2 * GUARD).astype(np.uint8)
    logical = np.lib.stride_tricks.as_strided(lbase[GUARD:], (rows, nc, 8), (step, line, 1))
    if reverse:
        logical = logical[:, ::-1]
    nbytes = rows * nc * 4 + 12
    task = (kind, 8, 0, (rows, nc, 8), (nc * 8, 8, 1), logical.strides)
    _round_trip(task, logical, lbase, 4, nbytes, pad, signed, 1)


@pytest.mark.parametrize("text", [
    "u4[39,70,71,11]{1,3,2,0:T(8,128)(8,1)E(4)}", "s4[3,21,5,9]{1,3,2,0:T(8,128)(8,1)E(4)}",
    "s4[2,133,7,15]{1,3,2,0:T(8,128)(8,1)E(4)}", "u4[4,6,30,12]{1,3,2,0:T(8,128)(8,1)E(4)}"])
def test_ragged_sub_tile_layouts_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    t = as_target(text)
    rng = np.random.default_rng(len(text))
    _path(monkeypatch, "pack")
    data = random_data(t, rng)
    pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 16))
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
    assert to_physical(data, text, pad_value=pad, out=out, threads=1) is out
    assert np.array_equal(out, reference(data, text, pad)), text
    back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
    assert np.array_equal(from_physical(out, text, out=back, threads=1), codes(data, t)), text


@pytest.mark.parametrize("text", ["u4[16,4,8,256]{3,0,1,2:T(8,128)(8,1)E(4)}",
                                  "s4[9,6,5,200]{3,0,1,2:T(8,128)(8,1)E(4)}",
                                  "u4[6,32,64,32]{1,3,0,2:T(8,128)(8,1)E(4)}",
                                  "s4[4,16,80,32]{1,3,0,2:T(8,128)(8,1)E(4)}"])
@pytest.mark.parametrize("threads", [1, 2])
def test_reordered_far_rows_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                                 threads: int) -> None:
    # sub-tile rows far apart (FAR_ROWS lowered so that small arrays have them): the axes
    # continuing the columns' run, two of them, just outside the columns (_reading_on); columns
    # 2 KiB apart whose rows of lines a next dim continues (_far_lines)
    monkeypatch.setattr(pack_path, "FAR_ROWS", 1024)
    monkeypatch.setattr(pack_path, "PACK_TASKS", TargetMemo())
    t = as_target(text)
    rng = np.random.default_rng(threads)
    _path(monkeypatch, "pack")
    data = random_data(t, rng)
    pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 16))
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)
    assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
    assert np.array_equal(out, reference(data, text, pad)), text
    back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
    assert np.array_equal(from_physical(out, text, out=back, threads=threads), codes(data, t)), text
