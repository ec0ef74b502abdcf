"""The packing kernel's faster words forms (``_pack_bits.h``): E(4) nibble blocks (4 columns x 4
rows of lines packed and transposed in registers, short blocks at the logical array's end word by
word; a ragged sub-tile's short words 4 columns at a time), E(1) bit blocks (16 columns x 8 rows
of lines: movemasks and byte transposes) and joined columns (columns whose logical bytes follow
each other, one staged run). Raw tasks of those shapes against the slot-by-slot model of
``test_pack_kernel`` with guard bytes either side of both buffers (ragged column counts, 1..20
rows of lines, negative strides, logical rows longer than the task reads, signed and unsigned,
pad codes), and the public calls on the transposing layouts they serve against the definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference
from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


def _round_trip(task: tuple, logical: np.ndarray, lbase: np.ndarray, bits: int, nbytes: int, pad: int,
                signed: bool, threads: int) -> None:
    """Pack ``task`` into a guarded buffer of garbage against the model, then unpack it back."""
    per = 8 // bits
    pbase, packed = _guarded(nbytes, 0xA5)
    packed[:] = np.random.default_rng(nbytes).integers(0, 256, nbytes)
    want = packed.copy()
    kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False, False, threads)
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    back_base = np.full(lbase.size, 0x5A, np.uint8)
    origin = logical.__array_interface__["data"][0] - lbase.__array_interface__["data"][0]
    back = np.lib.stride_tricks.as_strided(back_base[origin:], logical.shape, logical.strides)
    kernel.unpack(back, packed, [(0, *task[1:])], bits, nbytes * per, signed, False, threads)
    assert np.array_equal(back.view(np.int8) if signed else back, _codes(logical, bits, signed))
    # (only the task's bytes written: the rest of the logical memory keeps its 0x5A)
    touched = np.zeros(lbase.size, bool)
    np.lib.stride_tricks.as_strided(touched[origin:], logical.shape, logical.strides)[...] = True
    assert (back_base[~touched] == 0x5A).all()


@settings(max_examples=400, suppress_health_check=list(HealthCheck), deadline=None)
@given(nc=st.integers(1, 40), nr=st.integers(1, 20), extra=st.sampled_from([0, 0, 8, 24]),
       reverse=st.booleans(), seed=st.integers(0, 99), pad=st.integers(0, 15), signed=st.booleans(),
       threads=st.sampled_from([1, 2]))
def test_nibble_blocks_match_the_model(nc: int, nr: int, extra: int, reverse: bool, seed: int, pad: int,
                                       signed: bool, threads: int) -> None:
    # nc columns of 8 contiguous codes (a logical row each, `extra` bytes more than read), nr
    # rows of lines continuing them; the columns side by side (4 bytes) in the buffer
    lbase = np.random.default_rng(seed).integers(0, 256, nc * (nr * 8 + extra) + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + nc * (nr * 8 + extra)].reshape(nc, nr * 8 + extra)[:, :nr * 8]
    if reverse:  # negative column strides
        logical = logical[::-1]
    L = logical.strides[0]
    nbytes = nr * nc * 4
    task = (0, 0, 0, (nr, nc, 8), (nc * 8, 8, 1), (8, L, 1))
    event(f"columns % 4 {nc % 4}, rows % 4 {nr % 4}")
    _round_trip(task, logical, lbase, 4, nbytes, pad, signed, threads)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(P=st.sampled_from([1, 2, 4]), nc=st.integers(14, 50), nr=st.integers(6, 20),
       extra=st.sampled_from([0, 8]), reverse=st.booleans(), kind=st.sampled_from([0, 2]),
       seed=st.integers(0, 99), pad=st.integers(0, 1), signed=st.booleans(), threads=st.sampled_from([1, 2]))
def test_bit_blocks_match_the_model(P: int, nc: int, nr: int, extra: int, reverse: bool, kind: int, seed: int,
                                    pad: int, signed: bool, threads: int) -> None:
    # E(1): nc columns of 8 codes a row of lines (a logical row each), nr rows of lines continuing
    # them, the columns P bytes apart (kind 2: the P - 1 bytes after each column's its gap), the
    # buffer ending at the last column's byte (a 16-column block reads whole words only inside)
    if kind == 0 and P > 1:
        kind = 2 if seed % 2 else 0  # (kind 0 with gaps: the words path; both run)
    size = nc * (nr * 8 + extra)
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size].reshape(nc, nr * 8 + extra)[:, :nr * 8]
    if reverse:
        logical = logical[::-1]
    nbytes = (nr * nc - 1) * P + 1 if kind == 0 else nr * nc * P
    task = (kind, 0, 0, (nr, nc, 8), (nc * P * 8, P * 8, 1), (8, logical.strides[0], 1))
    event(f"P {P}, kind {kind}")
    _round_trip(task, logical, lbase, 1, nbytes, pad, signed, threads)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(n=st.integers(1, 7), nc=st.integers(1, 30), rows=st.integers(1, 4), extra=st.sampled_from([0, 0, 5]),
       reverse=st.booleans(), seed=st.integers(0, 99), pad=st.integers(0, 15), signed=st.booleans())
def test_short_nibble_words_match_the_model(n: int, nc: int, rows: int, extra: int, reverse: bool, seed: int,
                                            pad: int, signed: bool) -> None:
    # E(4) words of n < 8 codes (a ragged sub-tile's rows): columns a logical row each (n bytes
    # read, `extra` more there), side by side in the buffer, rows of lines a row of words apart;
    # packed of kind 2 (the word's other codes the pad code), the buffer ending at the last
    # column's bytes when unpacking (kind 0: no whole word to read there)
    size = rows * nc * (n + extra)
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size].reshape(rows, nc, n + extra)[:, :, :n]
    if reverse:
        logical = logical[:, ::-1]
    task = (2, 0, 0, (rows, nc, n), (nc * 8, 8, 1), (logical.strides[0], logical.strides[1], 1))
    _round_trip(task, logical, lbase, 4, rows * nc * 4, pad, signed, 1)
    # unpacking from a buffer that ends inside the last word
    nbytes = (rows * nc - 1) * 4 + -(-n // 2)
    packed = np.random.default_rng(seed + 1).integers(0, 256, nbytes + GUARD).astype(np.uint8)[:nbytes]
    back = np.zeros((rows, nc, n), np.uint8)
    task = (0, 0, 0, (rows, nc, n), (nc * 8, 8, 1), back.strides)
    kernel.unpack(back, packed, [task], 4, nbytes * 2, signed)
    codes4 = np.stack([packed & 15, packed >> 4], axis=1).reshape(-1)
    slots = np.arange(rows * nc * n).reshape(rows, nc, n)
    want = codes4[(slots // n) * 8 + slots % n]
    if signed:
        assert np.array_equal(back.view(np.int8), ((want.astype(np.int16) ^ 8) - 8).astype(np.int8))
    else:
        assert np.array_equal(back, want)


@settings(max_examples=200, suppress_health_check=list(HealthCheck), deadline=None)
@given(nc=st.integers(1, 40), nr=st.integers(1, 12), outer=st.integers(1, 3), seed=st.integers(0, 99),
       signed=st.booleans())
def test_nibble_blocks_under_an_outer_axis(nc: int, nr: int, outer: int, seed: int, signed: bool) -> None:
    # an axis outside the rows of lines (a tile column of tiles): each of its rows a block of its own
    size = outer * nc * nr * 8
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size].reshape(outer, nc, nr * 8)
    nbytes = outer * nr * nc * 4 + 12
    task = (0, 24, 0, (outer, nr, nc, 8), (nr * nc * 8, nc * 8, 8, 1), (nc * nr * 8, 8, nr * 8, 1))
    _round_trip(task, logical, lbase, 4, nbytes, 3, signed, 1)


@settings(max_examples=400, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), n=st.integers(1, 8), gap=st.integers(0, 8), nc=st.sampled_from(
       [1, 2, 3, 7, 16, 33, 100, 4097, 9000]), rows=st.integers(1, 3), kind=st.sampled_from([0, 2]),
       seed=st.integers(0, 99), pad=st.integers(0, 15), signed=st.booleans(), threads=st.sampled_from([1, 2]))
def test_joined_columns_match_the_model(bits: int, n: int, gap: int, nc: int, rows: int, kind: int, seed: int,
                                        pad: int, signed: bool, threads: int) -> None:
    # nc columns of n codes, the columns' logical bytes one after the other (a logical row of
    # nc * n bytes a row of lines), P = q + gap bytes a column (at most 8; kind 0 packs whole
    # bytes of 8 codes); runs longer than the stage (4097 and 9000 columns) included
    per = 8 // bits
    q = -(-n * bits // 8)
    P = q + gap
    if kind == 0:
        n, q = 8, bits
        P = max(P, q)
    if P > 8:
        P = 8
    event(f"kind {kind}, bits {bits}")
    size = rows * nc * n
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size].reshape(rows, nc, n)
    nbytes = rows * nc * P
    task = (kind, 0, 0, (rows, nc, n), (nc * P * per, P * per, 1), (nc * n, n, 1))
    _round_trip(task, logical, lbase, bits, nbytes, pad, signed, threads)


SUBS = {"s4": "(8,1)E(4)", "u4": "(8,1)E(4)", "u1": "(32,1)E(1)", "u2": "(16,1)E(2)"}


@pytest.mark.parametrize("text", [
    "s4[4000,600]{0,1:T(8,128)(8,1)E(4)}", "s4[56,95]{0,1:T(8,128)(8,1)E(4)}",
    "s4[5,12,21,157]{1,3,0,2:T(64,128)(8,1)E(4)}", "u4[203,8,67]{1,0,2:T(8,128)(8,1)E(4)}",
    "s4[2048,64]{0,1:T(64,128)(8,1)E(4)}", "s4[3,5]{0,1:T(8,128)(8,1)E(4)}",
    "u1[4096,4]{0,1:T(8,128)(32,1)E(1)}", "u1[1000,3]{0,1:T(8,128)(32,1)E(1)}",
    "u1[9,700,5]{1,0,2:T(8,128)(32,1)E(1)}", "u2[777,6]{0,1:T(8,128)(16,1)E(2)}",
    "s4[1001,7]{0,1:T(8,128)(8,1)E(4)}", "s4[300,8]{0,1:T(8,128)(8,1)E(4)}",
    "u1[693,205]{0,1:T(8,128)(32,1)E(1)}"])
@pytest.mark.parametrize("threads", [1, 3])
def test_transposing_layouts_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                                  threads: int) -> None:
    t = as_target(text)
    rng = np.random.default_rng(threads)
    for path in ("pack", "pack-stream"):
        _path(monkeypatch, path)
        data = random_data(t, rng)
        pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 1 << t.packed_bits))
        out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
        assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
        assert np.array_equal(out, reference(data, text, pad)), (text, path)
        back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
        got = from_physical(out, text, out=back, threads=threads)
        assert np.array_equal(got, codes(data, t)), (text, path)
        flipped = data[::-1]  # negative logical strides
        assert np.array_equal(to_physical(flipped, text, pad_value=pad, threads=threads),
                              reference(flipped, text, pad)), (text, path)
