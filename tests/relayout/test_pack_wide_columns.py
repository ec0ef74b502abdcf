"""The packing kernel's AVX2 columns (``columns32`` in ``_pack.c``, where the CPU has AVX2): 32
logically contiguous columns a step, adjacent (P == q) or 2 or 4 bytes apart with their gaps
owned (kind 2) or skipped (unpacking), the SSE2 blocks and tails after them. Called directly
with tile-shaped tasks of 32 columns and more against the slow model of ``test_pack_kernel``
(guards either side of both buffers), and through ``to_physical``/``from_physical`` on random
non-transposing layouts against the definition and the numpy path, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference
from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), q=st.sampled_from([1, 2, 4]), gap=st.sampled_from([0, 1, 2, 3]),
       nc=st.integers(28, 130), n0=st.integers(1, 3), offset=st.integers(0, 40), signed=st.booleans(),
       reverse=st.booleans(), seed=st.integers(0, 99), kind=st.sampled_from([0, 2]), pad=st.integers(0, 15),
       stream=st.booleans())
def test_wide_column_tasks_match_the_model(bits: int, q: int, gap: int, nc: int, n0: int, offset: int,
                                           signed: bool, reverse: bool, seed: int, kind: int, pad: int,
                                           stream: bool) -> None:
    per = 8 // bits
    rows, P = n0 * q * per, q + gap
    lbase = np.random.default_rng(seed).integers(0, 256, rows * nc + offset + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD + offset:GUARD + offset + rows * nc].reshape(rows, nc)  # odd starts
    if reverse:
        logical = logical[::-1]
    row = logical.strides[0]
    nbytes = n0 * nc * P + offset % 5
    slot0 = (offset % 5) * per
    task = (kind, slot0, 0, (n0, nc, q * per), (nc * P * per, P * per, 1), (q * per * row, 1, row))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False, stream)
    event(f"kind {kind}, P {'==' if gap == 0 else '>'} q")
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    bbase, back = _guarded(rows * nc + offset, 0x5A)
    back2 = back[offset:].reshape(rows, nc)
    back2 = back2[::-1] if reverse else back2
    kernel.unpack(back2, packed, [(0, *task[1:])], bits, nbytes * per, signed, stream)
    want_back = _codes(logical, bits, signed)
    assert np.array_equal(back2.view(np.int8) if signed else back2, want_back)
    assert (bbase[:GUARD + offset] == 0x5A).all() and (bbase[GUARD + offset + rows * nc:] == 0x5A).all()


SUBS = {"s4": "(8,1)E(4)", "u4": "(8,1)E(4)", "u2": "(16,1)E(2)", "u1": "(32,1)E(1)"}


@pytest.mark.parametrize("etype", sorted(SUBS))
@pytest.mark.parametrize("path", ["pack", "pack-stream"])
def test_row_major_layouts_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, etype: str,
                                                          path: str) -> None:
    rng = np.random.default_rng(len(etype) + len(path))
    texts = [f"{etype}[4096]{{0:T(1024)(128){SUBS[etype]}}}", f"{etype}[3000]{{0:T(1024)(128){SUBS[etype]}}}"]
    for _ in range(8):
        rank = int(rng.integers(2, 4))
        dims = [int(rng.integers(1, 40)) for _ in range(rank - 1)] + [int(rng.integers(32, 300))]
        texts.append(f"{etype}[{','.join(map(str, dims))}]{{{','.join(map(str, range(rank - 1, -1, -1)))}"
                     f":T(8,128){SUBS[etype]}}}")
    for text in texts:
        t = as_target(text)
        data = random_data(t, rng)
        pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 1 << t.packed_bits))
        want = reference(data, text, pad)
        _path(monkeypatch, "numpy")
        assert np.array_equal(to_physical(data, text, pad_value=pad), want), text
        _path(monkeypatch, path)
        out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
        assert to_physical(data, text, pad_value=pad, out=out, threads=2) is out
        assert np.array_equal(out, want), text
        back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
        assert np.array_equal(from_physical(out, text, out=back, threads=2), codes(data, t)), text
