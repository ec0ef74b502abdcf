"""One-pass ``relayout`` on random pairs of layouts, byte for byte against the definition
(every logical element read at the source's offset and written at the destination's, every
other slot the pad value) and against the two-pass recipe (``from_physical`` then
``to_physical``): permutations, tilings with (2,1)/(4,1) sub-tiles, ragged and
power-of-two sizes, identical pairs (two equal targets, and one target to itself), pad
values, ``out=`` buffers inside guarded memory, repeated calls (the kernel's small calls)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import PhysicalTarget, from_physical, relayout, to_physical
from tensorlayout.relayout import _direct as direct
from tensorlayout.relayout._direct import is_direct

TYPES = {"u8": np.uint8, "s8": np.int8, "pred": np.uint8, "bf16": np.uint16, "s16": np.int16,
         "f32": np.float32, "u32": np.uint32, "s64": np.int64, "f64": np.float64}
SUBTILES = {1: ["", "(4,1)", "(2,1)"], 2: ["", "(2,1)"], 4: [""], 8: [""]}
GUARD = 37  # items on each side of an out= buffer, which no call may touch


def _tiling(rng: np.random.Generator, rank: int, width: int) -> str:
    """A power-of-two tiling for ``rank`` dims (maybe none), sometimes with a sub-tile."""
    kind = int(rng.integers(4))
    if kind == 0:
        return ""
    if kind == 1 or rank == 1:
        tile = f"T({1 << int(rng.integers(0, 11))})"
    else:
        tile = f"T({1 << int(rng.integers(0, 6))},{1 << int(rng.integers(0, 8))})"
    sub = SUBTILES[width][int(rng.integers(len(SUBTILES[width])))]
    return f":{tile}{sub}"


def _text(etype: str, dims: list[int], rng: np.random.Generator) -> str:
    m2m = ",".join(str(int(k)) for k in rng.permutation(len(dims)))
    width = np.dtype(TYPES[etype]).itemsize
    return f"{etype}[{','.join(map(str, dims))}]{{{m2m}{_tiling(rng, len(dims), width)}}}"


def _pair(seed: int) -> tuple[PhysicalTarget, PhysicalTarget, np.dtype]:
    """Two layouts of one random shape (the same one, as two targets, one time in six)."""
    rng = np.random.default_rng(seed)
    etype = str(rng.choice(list(TYPES)))
    rank = int(rng.integers(1, 4))
    if rng.integers(2):
        dims = [int(rng.integers(1, 40 if rank > 1 else 3000)) for _ in range(rank)]
    else:
        dims = [1 << int(rng.integers(0, 6 if rank > 1 else 12)) for _ in range(rank)]
    s = _text(etype, dims, rng)
    d = s if rng.integers(6) == 0 else _text(etype, dims, rng)
    return PhysicalTarget.from_xla(s), PhysicalTarget.from_xla(d), np.dtype(TYPES[etype])


def _source(src: PhysicalTarget, data: np.ndarray, seed: int) -> np.ndarray:
    """The buffer of ``data`` under ``src``, its padding slots random (never the pad value's
    business: a one-pass copy must not carry them over)."""
    rng = np.random.default_rng(seed)
    buf = np.frombuffer(rng.bytes(src.physical_elements * data.itemsize), data.dtype).copy()
    buf[src.offsets] = data.reshape(-1)
    return buf


def _definition(dst: PhysicalTarget, data: np.ndarray, pad: int) -> np.ndarray:
    want = np.full(dst.physical_elements, pad, data.dtype)
    want[dst.offsets] = data.reshape(-1)
    return want


def _cases(count: int) -> list[tuple[PhysicalTarget, PhysicalTarget, np.dtype, int]]:
    """``count`` random pairs that nest (one pass when ``MIN_RUN`` allows), with their seeds."""
    out = []
    seed = 0
    while len(out) < count:
        s, d, dtype = _pair(seed)
        if direct._refined(s, d) is not None:
            out.append((s, d, dtype, seed))
        seed += 1
    return out


CASES = _cases(80)


@pytest.fixture(params=[1, None], ids=["every-nesting-pair", "min-run"])
def min_run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """One pass for every nesting pair (short runs too), or as ``MIN_RUN`` decides."""
    if request.param is not None:
        for name in ("MIN_RUN", "MIN_RUN_BYTES", "MIN_COMMON_BYTES"):
            monkeypatch.setattr(direct, name, request.param)


def _bytes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def test_random_pairs_match_the_definition_and_the_two_passes(engine_mode: str, min_run: None) -> None:
    for s, d, dtype, seed in CASES:
        data = np.frombuffer(np.random.default_rng(seed).bytes(s.size * dtype.itemsize), dtype)
        data = data.reshape(s.logical_shape)
        buf = _source(s, data, seed + 1)
        pad = seed % 5
        want = _definition(d, data, pad)
        two_pass = to_physical(from_physical(buf, s), d, pad_value=pad)
        got = relayout(buf, s, d, pad_value=pad, threads=1 + seed % 3)
        assert np.array_equal(_bytes(two_pass), _bytes(want)), (s, d)
        assert np.array_equal(_bytes(got), _bytes(want)), (s, d, is_direct(s, d))


def test_repeated_calls_into_out_buffers_touch_nothing_else(min_run: None) -> None:
    # default engine settings: the second and third calls of a kind run as the kernel's small calls
    for s, d, dtype, seed in CASES[:40]:
        data = np.frombuffer(np.random.default_rng(seed).bytes(s.size * dtype.itemsize), dtype)
        buf = _source(s, data.reshape(s.logical_shape), seed + 1)
        pad = -1 if dtype.kind == "i" else 3
        want = _definition(d, data.reshape(s.logical_shape), pad)
        for call in range(3):
            store = np.full(d.physical_elements + 2 * GUARD, 9, dtype)
            out = store[GUARD:GUARD + d.physical_elements]
            assert relayout(buf, s, d, pad_value=pad, out=out) is out
            assert np.array_equal(_bytes(out), _bytes(want)), (s, d, call)
            assert (store[:GUARD] == 9).all() and (store[GUARD + d.physical_elements:] == 9).all()
            assert np.array_equal(_bytes(relayout(buf, s, d, pad_value=pad)), _bytes(want))


def test_a_target_relaid_out_to_itself_is_a_copy_with_fresh_padding() -> None:
    t = PhysicalTarget.from_xla("f32[2,512,256,4]{2,0,3,1:T(4,128)}")  # half of it padding
    data = np.random.default_rng(0).random(t.logical_shape, dtype=np.float32)
    buf = _source(t, data, 1)
    for _ in range(2):
        got = relayout(buf, t, t, pad_value=-1)
        assert np.array_equal(_bytes(got), _bytes(_definition(t, data, -1)))
        assert got is not buf


def test_the_prepared_copy_fills_the_whole_buffer_first_when_mostly_padding() -> None:
    half = PhysicalTarget.from_xla("f32[2,512,256,4]{2,0,3,1:T(4,128)}")
    little = PhysicalTarget.from_xla("s8[39,497,192]{1,2,0:T(4,128)(4,1)}")
    other = PhysicalTarget.from_xla("s8[39,497,192]{1,2,0:T(8,128)(4,1)}")
    for s, d, whole, how in ((half, half, True, "data"), (little, other, False, "data"),
                             (little, little, False, "all")):  # the same offsets: one copy, then the padding
        data = np.zeros(s.physical_elements, np.dtype(f"u{s.element_bits // 8}"))
        prepared = engine.prepare_direct(s, d, data, np.empty(d.physical_elements, data.dtype))
        got = (prepared.fill_whole, prepared.how, prepared.padded, bool(prepared.refill))
        assert got == (whole, how, how != "all", how == "all")


def test_runs_shorter_than_a_page_are_not_streamed() -> None:
    t = PhysicalTarget.from_xla("u8[4096,64]{1,0:T(4,128)(4,1)}")  # 256-byte runs
    flat = PhysicalTarget.from_xla("u8[262144]{0:T(1024)}")
    data = np.zeros(t.physical_elements, np.uint8)
    assert not engine.prepare_direct(t, t, data, np.empty_like(data)).stream
    dense = np.zeros(flat.physical_elements, np.uint8)
    assert engine.prepare_direct(flat, flat, dense, np.empty_like(dense)).stream


@pytest.mark.parametrize(("src", "dst"), [
    ("pred[19,6,308]{2,0,1:T(8,128)(4,1)}", "pred[19,6,308]{2,0,1:T(32,128)(4,1)}"),  # 3 rows of 4
    ("s8[5,39,192]{2,1,0:T(4,128)(4,1)}", "s8[5,39,192]{2,1,0:T(8,128)(4,1)}"),
    ("bf16[5,33,130]{2,1,0:T(8,128)(2,1)}", "bf16[5,33,130]{2,1,0:T(16,128)(2,1)}"),  # 1 row of 2
])
def test_ragged_subtile_rows_copied_whole_then_refilled(engine_mode: str, src: str, dst: str) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    assert direct.over_extents(s, d) != s.logical_shape and is_direct(s, d)
    dtype = np.dtype(np.uint16 if s.element_bits == 16 else np.uint8)
    raw = np.random.default_rng(1).bytes(s.size * dtype.itemsize)
    data = np.frombuffer(raw, dtype).reshape(s.logical_shape)
    buf = _source(s, data, 2)  # random padding, which the copy carries over and the refill replaces
    prepared = engine.prepare_direct(s, d, buf, np.empty(d.physical_elements, dtype))
    assert prepared.how == "over" and prepared.refill
    for pad in (0, 5):
        assert np.array_equal(_bytes(relayout(buf, s, d, pad_value=pad)), _bytes(_definition(d, data, pad)))


def test_a_ragged_row_mostly_padding_is_not_copied_whole() -> None:
    s = PhysicalTarget.from_xla("s8[105,260]{1,0:T(4,128)(4,1)}")  # 1 row of 4: 3 slots to refill
    assert direct.over_extents(s, s) == s.logical_shape


@pytest.mark.parametrize(("src", "dst", "one_pass"), [
    ("f32[64,64]{1,0:T(4,4)}", "f32[64,64]{0,1:T(4,4)}", True),  # 16-byte runs, no sub-tiles
    ("u16[64,64]{1,0:T(4,4)}", "u16[64,64]{0,1:T(4,4)}", True),  # 8 bytes
    ("u8[64,64]{1,0:T(4,4)}", "u8[64,64]{0,1:T(4,4)}", False),  # 4 bytes
    ("bf16[64,256]{1,0:T(8,128)(2,1)}", "bf16[64,256]{0,1:T(8,128)}", False),  # a sub-tile against none
    ("s8[64,256]{1,0:T(8,128)(4,1)}", "s8[64,256]{0,1:T(8,128)}", False),
    ("bf16[64,32,2]{0,2,1:T(4,128)(2,1)}", "bf16[64,32,2]{1,2,0:T(4,128)(2,1)}", True),  # both (2,1)
    ("s8[64,256]{1,0:T(8,128)(4,1)}", "s8[64,256]{1,0:T(8,128)(4,1)}", True),  # to itself
])
def test_one_pass_or_two_as_measured(src: str, dst: str, one_pass: bool) -> None:
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    assert is_direct(s, d) == one_pass
    data = np.arange(s.size).astype(np.dtype(f"u{s.element_bits // 8}")).reshape(s.logical_shape)
    want = to_physical(data, d, pad_value=1)
    assert np.array_equal(relayout(to_physical(data, s), s, d, pad_value=1), want)


@pytest.mark.parametrize("text", ["s8[5,39,192]{2,1,0:T(4,128)(4,1)}", "f32[2,64,256,4]{2,0,3,1:T(4,128)}",
                                  "bf16[700]{0:T(1024)(128)(2,1)}"])
def test_a_repeated_relayout_in_place_reads_before_it_writes(text: str) -> None:
    # out is the source buffer itself: the kernel's small calls refuse overlapping arrays, and
    # the Python path copies the source before the padding is written
    t = PhysicalTarget.from_xla(text)
    dtype = np.dtype(f"u{t.element_bits // 8}")
    raw = np.random.default_rng(3).bytes(t.size * dtype.itemsize)
    data = np.frombuffer(raw, dtype).reshape(t.logical_shape)
    want = _definition(t, data, 7)
    for _ in range(3):
        buf = _source(t, data, 4)
        assert relayout(buf, t, t, pad_value=7, out=buf) is buf
        assert np.array_equal(_bytes(buf), _bytes(want))
        half = _source(t, data, 5)  # out overlapping a shifted source
        store = np.concatenate([half, np.zeros(3, dtype)])
        got = relayout(store[:t.physical_elements], t, t, pad_value=7, out=store[3:])
        assert np.array_equal(_bytes(got), _bytes(want))


def test_a_target_with_remembered_one_pass_calls_pickles_and_deep_copies() -> None:
    t = PhysicalTarget.from_xla("s8[9,49,192]{1,2,0:T(4,128)(4,1)}")
    buf = np.zeros(t.physical_elements, np.int8)
    for _ in range(2):
        relayout(buf, t, t)
    assert t._direct[t]._calls and t._direct[t]._small_calls
    for other in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        pair = next(iter(other._direct.values()))
        assert not pair._calls and not pair._small_calls  # remade on first use
        assert np.array_equal(relayout(buf, other, other, pad_value=1), relayout(buf, t, t, pad_value=1))


def test_to_physical_fills_a_buffer_mostly_padding_whole_first() -> None:
    t = PhysicalTarget.from_xla("f32[2,64,256,4]{2,0,3,1:T(4,128)}")  # half padding, 512 KiB
    data = np.random.default_rng(6).random(t.logical_shape, dtype=np.float32)
    buf = np.full(t.physical_elements, 5, np.float32)
    assert engine.prepare(t, data, buf, True).fill_whole
    for _ in range(3):  # the Python path, then the kernel's small call
        got = to_physical(data, t, pad_value=-1, out=buf)
        assert np.array_equal(_bytes(got), _bytes(_definition(t, data, -1)))
