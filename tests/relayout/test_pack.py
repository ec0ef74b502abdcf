"""Sub-byte packed layouts (``E(4)``, ``E(2)``, ``E(1)``) through the compiled ``_pack`` kernel and
through the numpy path, against a brute-force reference written from the definition: slot
``offset(x)`` holds the low ``bits`` bits of ``a[x]``, every other slot the pad code, ``8 // bits``
slots per byte with the first in the low bits, the last byte's unused bits 0; reading back
sign-extends for signed types. Random layouts, ragged edges, pad values, strided, read-only and
aliased inputs, wrong sizes and thread counts; the kernel's own bounds checks are fuzzed in
``test_pack_kernel.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._copy as engine
import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.errors import TensorLayoutError
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.xla import linear_indices, parse_shape

from ..bridge.strategies import xla_shapes
from ..bridge.test_relayout_fuzz import _strided

# the compiled kernel (where built), the same with non-temporal stores, the numpy fallback
PATHS = ["pack", "pack-stream", "numpy"]


def _path(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    monkeypatch.setattr(pack_path, "USE_PACK", path != "numpy")
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # the thread pool too
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1 if path == "pack-stream" else 1 << 62)


def reference(data: np.ndarray, text: str, pad: int) -> np.ndarray:
    """The packed bytes of ``data`` under ``text``, from the definition."""
    t = PhysicalTarget.from_xla(text)
    bits = t.packed_bits
    per, mask = 8 // bits, (1 << bits) - 1
    slots = np.full(-(-t.physical_elements // per) * per, pad & mask, dtype=np.int64)
    slots[t.physical_elements:] = 0
    slots[linear_indices(parse_shape(text))] = data.reshape(-1).astype(np.int64) & mask
    weights = 1 << (np.arange(per, dtype=np.int64) * bits)
    return (slots.reshape(-1, per) * weights).sum(axis=1).astype(np.uint8)


def codes(data: np.ndarray, t: PhysicalTarget) -> np.ndarray:
    """What reading back gives: the low bits, sign-extended for signed types."""
    low = data.astype(np.int64) & ((1 << t.packed_bits) - 1)
    if t.signed:
        low -= (low >> (t.packed_bits - 1)) << t.packed_bits
    return low.astype(np.int8 if t.signed else np.uint8)


def random_data(t: PhysicalTarget, rng: np.random.Generator, dtype: type = np.int8) -> np.ndarray:
    bits = t.packed_bits
    low, high = (-(1 << (bits - 1)), 1 << (bits - 1)) if t.signed else (0, 1 << bits)
    if dtype is np.bool_:
        return rng.integers(0, 2, t.logical_shape).astype(bool)
    if np.dtype(dtype).kind == "u":
        low, high = 0, high - low
    return rng.integers(low, high, t.logical_shape).astype(dtype)


def round_trip(text: str, rng: np.random.Generator, threads: int) -> tuple[np.ndarray, int]:
    """Random codes packed into a buffer of random bytes and read back into a filled array,
    both checked against the definition; the codes and pad value, for further checks."""
    t = as_target(text)
    data = random_data(t, rng)
    pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 1 << t.packed_bits))
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)
    assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
    assert np.array_equal(out, reference(data, text, pad)), text
    back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
    assert np.array_equal(from_physical(out, text, out=back, threads=threads), codes(data, t)), text
    return data, pad


def check_against_numpy(monkeypatch: pytest.MonkeyPatch, text: str, threads: int | None,
                        pads: tuple[int, ...] = ()) -> None:
    """For each of ``pads`` (default: both edge pad values): the numpy path's buffer is the
    definition's, and the pack kernel's (into random bytes, on ``threads``) is too, and reads
    back into a filled array."""
    t = as_target(text)
    rng = np.random.default_rng(threads or 0)
    for pad in pads or ((0, -1) if t.signed else (0, (1 << t.packed_bits) - 1)):
        data = random_data(t, rng)
        want = reference(data, text, pad)
        _path(monkeypatch, "numpy")
        assert np.array_equal(to_physical(data, text, pad_value=pad), want)
        _path(monkeypatch, "pack")
        out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
        assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
        assert np.array_equal(out, want), pad
        back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
        assert np.array_equal(from_physical(out, text, out=back, threads=threads), codes(data, t))


def strided(data: np.ndarray, how: str) -> np.ndarray:
    """The same values behind other strides (the bridge fuzz's variants, and column-major)."""
    if how == "fortran":
        return data.T.copy().T  # (np.asfortranarray makes a 0-d array 1-d)
    return _strided(data, how)


HOWS = ["plain", "reversed", "gapped", "fortran", "readonly"]


@settings(suppress_health_check=list(HealthCheck), deadline=None)
@given(shape=xla_shapes(max_rank=3, max_dim=40), how=st.sampled_from(HOWS), path=st.sampled_from(PATHS),
       dtype=st.sampled_from([np.int8, np.uint8, np.int16, np.int64, np.bool_]), seed=st.integers(0, 99))
def test_random_packed_layouts_match_the_reference(monkeypatch: pytest.MonkeyPatch, shape: object,
                                                   how: str, path: str, dtype: type, seed: int) -> None:
    _path(monkeypatch, path)
    try:
        t = as_target(shape)
        text = str(shape)
        parse_shape(text)
    except TensorLayoutError:
        assume(False)  # invalid layouts are the parser's tests
        return
    assume(t.packed_bits and (dtype is not np.bool_ or not t.signed))
    rng = np.random.default_rng(seed)
    data = random_data(t, rng, dtype)
    low = -(1 << (t.packed_bits - 1)) if t.signed else 0
    pad = int(rng.integers(low, low + (1 << t.packed_bits)))
    buf = to_physical(strided(data, how), t, pad_value=pad)
    assert buf.dtype == np.uint8 and np.array_equal(buf, reference(data, text, pad)), text
    back = from_physical(strided(buf, "readonly" if how == "readonly" else "plain"), t)
    assert back.shape == data.shape and np.array_equal(back, codes(data, t)), text
    out = strided(np.zeros(t.logical_shape, back.dtype), "gapped" if how == "gapped" else "fortran")
    assert from_physical(buf, t, out=out) is out and np.array_equal(out, codes(data, t)), text


# TPU formats and their neighbours, with ragged edges: every inner loop of the kernel
# (columns with 16-column blocks and tails, contiguous words, bytes, slot by slot).
FORMATS = [
    "s4[37,301]{1,0:T(8,128)(8,1)E(4)}",
    "u4[64,256]{1,0:T(8,128)(8,1)E(4)}",
    "s4[16,1024]{1,0:T(8,128)(8,1)E(4)}",
    "u1[32,1024]{1,0:T(8,128)(32,1)E(1)}",
    "u2[16,1040]{1,0:T(8,128)(4,1)E(2)}",
    "u1[16,1024]{1,0:T(8,128)E(1)}",
    "s2[16,1024]{1,0:T(8,128)E(2)}",
    "s4[16,1024]{1,0:T(8,128)E(4)}",
    "s2[4,4000]{1,0:E(2)}",
    "s4[37,301]{0,1:T(8,128)(8,1)E(4)}",
    "s4[20,1024]{0,1:T(8,128)(8,1)E(4)}",
    "u1[9,2048]{0,1:T(8,128)(8,1)E(1)}",
    "s4[29,300]{1,0:T(8,128)(2,1)E(4)}",
    "u4[21,530]{1,0:T(8,128)E(4)}",
    "s4[3,7,45]{2,1,0:T(8,128)(8,1)E(4)}",
    "u2[45,300]{1,0:T(8,128)(4,1)E(2)}",
    "s2[45,300]{1,0:T(8,128)(4,1)E(2)}",
    "u1[40,300]{1,0:T(8,128)(32,1)E(1)}",
    "s1[19,129]{1,0:T(8,128)(32,1)E(1)}",
    "u1[70,250]{1,0:T(32,128)(32,1)E(1)}",
    "u1[9,77]{1,0:T(8,128)E(1)}",
    "s4[1001]{0:T(1024)E(4)}",
    "u4[5,9]{1,0:T(3,3)E(4)}",
    "s4[5,9]{1,0:T(2,3)E(4)}",
    "s4[7,10]{1,0:E(4)}",
    "u1[3]{0:E(1)}",
    "s4[]{:E(4)}",
    # pieces a tile apart for many rows at once (staged_blocks): ragged blocks and stages
    "s4[70,1100]{0,1:T(8,128)(8,1)E(4)}",
    "u1[45,700]{0,1:T(8,128)(32,1)E(1)}",
    "s4[43,5,300]{0,2,1:T(8,128)(8,1)E(4)}",
    "s4[300,17,40]{0,1,2:T(8,128)(8,1)E(4)}",  # columns far apart, 16 rows at once
    "u1[130,40,70]{0,1,2:T(8,128)(32,1)E(1)}",
]


@pytest.mark.parametrize("text", FORMATS)
@pytest.mark.parametrize("path", PATHS)
def test_formats_match_the_reference(monkeypatch: pytest.MonkeyPatch, text: str, path: str) -> None:
    _path(monkeypatch, path)
    t = as_target(text)
    data = random_data(t, np.random.default_rng(len(text)))
    for pad in {0, -1 if t.signed else (1 << t.packed_bits) - 1}:
        buf = to_physical(data, text, pad_value=pad)
        assert np.array_equal(buf, reference(data, text, pad))
        assert np.array_equal(from_physical(buf, text), codes(data, t))
        assert np.array_equal(relayout(buf, text, None), codes(data, t))


@pytest.mark.parametrize("text", FORMATS[:12])
def test_values_outside_the_element_range_keep_their_low_bits(monkeypatch: pytest.MonkeyPatch,
                                                              text: str) -> None:
    t = as_target(text)
    data = np.random.default_rng(7).integers(-128, 128, t.logical_shape).astype(np.int8)
    results = []
    for path in PATHS:
        _path(monkeypatch, path)
        results.append(to_physical(data, text))
    assert all(np.array_equal(r, reference(data, text, 0)) for r in results)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_do_not_depend_on_threads(monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    _path(monkeypatch, "pack")
    for text in ("s4[77,300]{1,0:T(8,128)(8,1)E(4)}", "u1[41,300]{1,0:T(8,128)(32,1)E(1)}",
                 "u2[45,300]{0,1:T(8,128)(4,1)E(2)}"):
        t = as_target(text)
        data = random_data(t, np.random.default_rng(threads))
        want = reference(data, text, 1)
        assert np.array_equal(to_physical(data, text, pad_value=1, threads=threads), want)
        monkeypatch.setenv("TENSORLAYOUT_THREADS", str(threads))
        assert np.array_equal(from_physical(want, text), codes(data, t))


@pytest.mark.parametrize("path", PATHS)
def test_ready_buffers_and_aliasing(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    _path(monkeypatch, path)
    text = "s4[16,256]{1,0:T(8,128)(8,1)E(4)}"
    t = as_target(text)
    data = random_data(t, np.random.default_rng(5))
    out = np.full(t.buffer_bytes, 0x55, np.uint8)
    assert to_physical(data, text, out=out) is out and np.array_equal(out, reference(data, text, 0))
    # the logical array inside the output buffer: read before written
    base = np.zeros(data.size, np.uint8)
    view = base.view(np.int8).reshape(t.logical_shape)
    view[...] = data
    to_physical(view, text, out=base[: t.buffer_bytes])
    assert np.array_equal(base[: t.buffer_bytes], reference(data, text, 0))
    # ... and the other way round: the packed buffer inside the logical output
    packed = reference(data, text, 0)
    base = np.zeros(data.size, np.int8)
    base.view(np.uint8)[: packed.size] = packed
    out2 = base.reshape(t.logical_shape)
    from_physical(base.view(np.uint8)[: packed.size], text, out=out2)
    assert np.array_equal(out2, data)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text", ["s4[37,301]{1,0:T(8,128)(8,1)E(4)}", "u1[40,300]{1,0:T(8,128)(32,1)E(1)}"])
def test_wrong_buffers_are_typed_errors(monkeypatch: pytest.MonkeyPatch, path: str, text: str) -> None:
    _path(monkeypatch, path)
    t = as_target(text)
    n = t.buffer_bytes or 0
    data = random_data(t, np.random.default_rng(1), np.uint8 if not t.signed else np.int8)
    for extra in (-3, -1, 1, 8):
        with pytest.raises(TensorLayoutError,
            match=r"\)\}: expected a packed buffer of 7680 bytes, but got 76"):
            from_physical(np.zeros(n + extra, np.uint8), text)
        with pytest.raises(TensorLayoutError,
            match=r"\)\}: out must be a writeable C-contiguous array of 7680"):
            to_physical(data, text, out=np.zeros(n + extra, np.uint8))
    bad_outs = [np.zeros(n, np.int16)[: n], np.zeros(2 * n, np.uint8)[::2], _readonly(np.zeros(n, np.uint8))]
    for bad in bad_outs:
        with pytest.raises(TensorLayoutError,
            match=r"\)\}: out must be a writeable C-contiguous array of 7680"):
            to_physical(data, text, out=bad)
    logical = np.int8 if t.signed else np.uint8
    for bad in [np.zeros(t.logical_shape, np.int16), np.zeros(t.logical_shape[::-1], logical),
                _readonly(np.zeros(t.logical_shape, logical))]:
        with pytest.raises(TensorLayoutError, match=r"\)\}: out must be a writeable array of shape \("):
            from_physical(np.zeros(n, np.uint8), text, out=bad)
    with pytest.raises(TensorLayoutError,
        match=r"\)\}: a packed buffer must hold bytes \(uint8\), but got uint16"):
        from_physical(np.zeros(n, np.uint16), text)
    with pytest.raises(TensorLayoutError, match=r"-bit elements need an integer array, but got float32"):
        to_physical(np.zeros(t.logical_shape, np.float32), text)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def test_the_kernel_path_runs_where_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fast path is taken (not silently the numpy one) when the kernel is there
    if not pack_path.pack_available():
        pytest.skip("the _pack extension is not built")
    calls: list[str] = []
    monkeypatch.setattr(pack_path, "_pack", _Spy(pack_path._pack, calls))
    text = "s4[37,301]{1,0:T(8,128)(8,1)E(4)}"
    buf = to_physical(random_data(as_target(text), np.random.default_rng(0)), text)
    from_physical(buf, text)
    assert "pack" in calls and "unpack" in calls


class _Spy:
    def __init__(self, module: object, calls: list[str]) -> None:
        self.module, self.calls = module, calls

    def __getattr__(self, name: str) -> object:
        self.calls.append(name)
        return getattr(self.module, name)


@pytest.mark.thorough
@settings(max_examples=3000, suppress_health_check=list(HealthCheck), deadline=None)
@given(shape=xla_shapes(max_rank=4, max_dim=70), how=st.sampled_from(HOWS), seed=st.integers(0, 10**6))
def test_long_fuzz_both_paths_agree(monkeypatch: pytest.MonkeyPatch, shape: object, how: str,
                                    seed: int) -> None:
    try:
        t = as_target(shape)
    except TensorLayoutError:
        return
    assume(t.packed_bits and t.physical_elements <= 1 << 24)  # (the reference takes 8 bytes a slot)
    data = random_data(t, np.random.default_rng(seed))
    text = str(shape)
    for path in PATHS:
        _path(monkeypatch, path)
        buf = to_physical(strided(data, how), t, pad_value=-1 if t.signed else 1)
        assert np.array_equal(buf, reference(data, text, -1 if t.signed else 1)), text
        assert np.array_equal(from_physical(buf, t), codes(data, t)), text
