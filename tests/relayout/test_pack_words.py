"""The packing kernel's words path (``pack_words_k`` / ``unpack_words_k`` in ``_pack.c``): a
transposing layout's sub-tile whose 8 slots are 8 contiguous logical bytes (one 64-bit word per
column), 16 columns a block for every row of lines, a kind-2 task's gaps in the same stores.
Called directly with word-shaped tasks against the slow model of ``test_pack_kernel`` (guards
either side of both buffers), and through ``to_physical``/``from_physical`` on random
transposing layouts against the definition and the numpy path, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference
from .test_pack_kernel import ERRORS, GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), gap=st.sampled_from([0, 1, 3, 4, 12, 60]), nc=st.integers(1, 40),
       nr=st.integers(1, 11), shift=st.integers(0, 3), reverse=st.booleans(), seed=st.integers(0, 99),
       kind=st.sampled_from([0, 2]), pad=st.integers(0, 15), signed=st.booleans())
def test_word_tasks_match_the_model(bits: int, gap: int, nc: int, nr: int, shift: int, reverse: bool,
                                    seed: int, kind: int, pad: int, signed: bool) -> None:
    # columns nc of 8 contiguous logical bytes (a logical row each), rows of lines nr continuing
    # them; P = bits + gap bytes a column, the rows of lines side by side in the buffer
    per = 8 // bits
    P = bits + gap
    lbase = np.random.default_rng(seed).integers(0, 256, nc * nr * 8 + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + nc * nr * 8].reshape(nc, nr * 8)
    if reverse:  # negative column strides: the kernel walks back through memory
        logical = logical[::-1]
    L = logical.strides[0]
    nbytes = nr * nc * P + shift
    task = (kind, shift * per, 0, (nr, nc, 8), (nc * P * per, P * per, 1), (8, L, 1))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    try:
        kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False)
    except ERRORS:  # (a word-shaped task is always whole bytes and inside)
        pytest.fail("a word-shaped task inside both buffers was refused")
    event(f"kind {kind}, gaps {gap > 0}")
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    lback, back = _guarded(nc * nr * 8, 0x5A)
    back2 = back.reshape(nc, nr * 8)[::-1] if reverse else back.reshape(nc, nr * 8)
    kernel.unpack(back2, packed, [(0, *task[1:])], bits, nbytes * per, signed)
    want_back = _codes(logical, bits, signed)
    assert np.array_equal(back2.view(np.int8) if signed else back2, want_back)
    assert (lback[:GUARD] == 0x5A).all() and (lback[GUARD + nc * nr * 8:] == 0x5A).all()


def test_word_tasks_outside_are_refused() -> None:
    packed = np.zeros(64, np.uint8)
    logical = np.zeros((16, 8), np.uint8)
    task = (0, 0, 0, (1, 16, 8), (128, 8, 1), (8, 8, 1))  # 16 columns of 4 bytes: 64 bytes
    kernel.pack(packed, logical, [task], 4, 128, 0)
    with pytest.raises(IndexError, match="packed buffer"):
        kernel.pack(packed, logical, [(0, 2, 0, *task[3:])], 4, 128, 0)
    with pytest.raises(IndexError, match="logical array"):
        kernel.pack(packed, logical, [(0, 0, 1, *task[3:])], 4, 128, 0)
    with pytest.raises(IndexError, match="packed buffer"):  # kind 2: the last column's gap too
        kernel.pack(packed, logical, [(2, 0, 0, (1, 16, 8), (128, 16, 1), (8, 8, 1))], 4, 128, 0)


def _transposing(rng: np.random.Generator, etype: str, sub: str) -> str:
    rank = int(rng.integers(2, 4))
    dims = [int(rng.integers(1, 70)) for _ in range(rank)]
    dims[int(rng.integers(0, rank))] = int(rng.integers(8, 200))
    m2m = [int(k) for k in rng.permutation(rank)]
    if m2m[0] == rank - 1:  # a transposing layout: the logical minor dim not the physical minor one
        m2m = m2m[1:] + m2m[:1]
    return f"{etype}[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}:T(8,128){sub}}}"


SUBS = {"s4": "(8,1)E(4)", "u4": "(8,1)E(4)", "u2": "(16,1)E(2)", "u1": "(32,1)E(1)"}


@pytest.mark.parametrize("etype", sorted(SUBS))
@pytest.mark.parametrize("threads", [1, 3])
def test_transposing_layouts_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, etype: str,
                                                            threads: int) -> None:
    rng = np.random.default_rng(threads)
    words = 0
    for _ in range(12):
        text = _transposing(rng, etype, SUBS[etype])
        t = as_target(text)
        whole, rest, _ = pack_path._make_tasks(t, random_data(t, rng).strides, True, 2)
        words += any(task[3][-1:] == (8,) and task[5][-1:] == (1,) for task in whole + rest)
        data = random_data(t, rng)
        pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 1 << t.packed_bits))
        want = reference(data, text, pad)
        _path(monkeypatch, "numpy")
        assert np.array_equal(to_physical(data, text, pad_value=pad), want), text
        _path(monkeypatch, "pack")
        out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
        assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
        assert np.array_equal(out, want), text
        back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
        assert np.array_equal(from_physical(out, text, out=back, threads=threads), codes(data, t)), text
    assert words > 0  # the words path ran


def test_word_tasks_are_chosen_for_transposing_sub_tiles() -> None:
    t = as_target("u1[3000,4000]{0,1:T(8,128)(32,1)E(1)}")
    whole, _, _ = pack_path._make_tasks(t, (4000, 1), True, 1)
    # rows of lines (continuing the logical rows, 8 bytes on), then columns one group apart
    assert whole[0][3][-3:] == (500, 128, 8) and whole[0][4][-2:] == (32, 1)
    assert whole[0][5][-3:] == (8, 4000, 1)
    assert whole[0][0] == 2  # the group's pad slots in the same stores


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), n=st.integers(1, 7), gap=st.sampled_from([0, 1, 3]),
       nc=st.integers(1, 40), seed=st.integers(0, 99), pad=st.integers(0, 15), signed=st.booleans(),
       serial=st.booleans())
def test_short_word_tasks_match_the_model(bits: int, n: int, gap: int, nc: int, seed: int, pad: int,
                                          signed: bool, serial: bool) -> None:
    # fewer than 8 rows a word: packed of kind 2 (the word's other codes the column's gap), the
    # logical array ending with the last column's n bytes (no whole word to read there)
    per = 8 // bits
    P = bits + gap
    lbase = np.random.default_rng(seed).integers(0, 256, nc * n + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + nc * n].reshape(nc, n)
    nbytes = nc * P
    task = (2, 0, 0, (nc, n), (P * per, 1), (n, 1))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * per, pad, serial, False, 1 if serial else 3)
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    lback, back = _guarded(nc * n, 0x5A)
    kernel.unpack(back.reshape(nc, n), packed, [(0, *task[1:])], bits, nbytes * per, signed)
    low = logical.astype(np.int64) & ((1 << bits) - 1)
    if signed:
        low -= (low >> (bits - 1)) << bits
    got = back.reshape(nc, n)
    assert np.array_equal(got.view(np.int8) if signed else got, low.astype(np.int8 if signed else np.uint8))
    assert (lback[:GUARD] == 0x5A).all() and (lback[GUARD + nc * n:] == 0x5A).all()


SHORT = ["u4[900,5]{0,1:T(8,128)(8,1)E(4)}", "s4[301,3]{0,1:T(8,128)(8,1)E(4)}",
         "u1[200,5]{0,1:T(8,128)(32,1)E(1)}", "s4[7,130,6]{1,0,2:T(8,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", SHORT)
def test_short_minor_dims_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    t = as_target(text)
    rng = np.random.default_rng(len(text))
    data = random_data(t, rng)
    pad = -1 if t.signed else 1
    want = reference(data, text, pad)
    _path(monkeypatch, "numpy")
    assert np.array_equal(to_physical(data, text, pad_value=pad), want)
    _path(monkeypatch, "pack")
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
    assert to_physical(data, text, pad_value=pad, out=out, threads=3) is out
    assert np.array_equal(out, want)
    back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
    assert np.array_equal(from_physical(out, text, out=back, threads=3), codes(data, t))
