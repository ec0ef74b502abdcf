"""Relayout engine: every path checked against ``linear_indices`` on random shapes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlayout.errors import LayoutError, TensorLayoutError, UnsupportedError
from tensorlayout.relayout import (
    PhysicalTarget,
    from_physical,
    has_fast_path,
    relayout,
    to_physical,
)
from tensorlayout.xla import parse_shape, tiling_plan
from tensorlayout.xla.tiling import linear_indices

# (element type, numpy dtype, tiles) — the TPU formats of the seed and a few more.
FORMATS = [
    ("f32", np.float32, "T(8,128)"),
    ("f32", np.float32, "T(2,128)"),
    ("f32", np.float32, "T(4,128)"),
    ("bf16", np.uint16, "T(8,128)(2,1)"),
    ("f16", np.float16, "T(16,128)(2,1)"),
    ("s8", np.int8, "T(8,128)(4,1)"),
    ("s8", np.int8, "T(32,128)(4,1)"),
    ("u8", np.uint8, "T(32,128)(4,1)"),
    ("pred", np.bool_, "T(8,128)(4,1)"),
    ("pred", np.bool_, "T(32,128)(32,1)"),
    ("s4", np.int8, "T(8,128)(8,1)E(4)"),
    ("u4", np.uint8, "T(8,128)(8,1)E(4)"),
    ("s4", np.int8, "T(64,128)(8,1)E(4)"),
    ("s32", np.int32, "T(2,2)"),
    ("f32", np.float32, "T(2,4)(2,1)"),
    ("f32", np.float32, "T(256)"),
    ("f64", np.float64, "T(2,3)"),
    ("c64", np.complex64, "T(8,128)"),
]
RANK1 = [
    ("f32", np.float32, "T(1024)(128)(4,1)"),
    ("s8", np.int8, "T(1024)(128)(4,1)"),
    ("bf16", np.uint16, "T(1024)(128)(2,1)"),
    ("f32", np.float32, "T(8,128)"),
    ("f32", np.float32, "T(128)"),
]
ODD = [  # layouts without a strided description: the offsets path
    "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
    "f32[3,5]{1,0:T(4,3)(3,2)}",
]


def _data(type_name: str, dtype: type, dims: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if dtype is np.bool_:
        return rng.integers(0, 2, dims).astype(bool)
    if type_name == "s4":
        return rng.integers(-8, 8, dims).astype(np.int8)
    if type_name == "u4":
        return rng.integers(0, 16, dims).astype(np.uint8)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
    return rng.integers(1, 120, dims).astype(dtype)


def _unpacked(buf: np.ndarray, target: PhysicalTarget) -> np.ndarray:
    """The buffer as one entry per physical slot (sub-byte: low bits first)."""
    if not target.packed_bits:
        return buf
    bits = target.packed_bits
    lanes = [(buf >> np.uint8(k * bits)) & np.uint8((1 << bits) - 1) for k in range(8 // bits)]
    return np.stack(lanes, axis=-1).reshape(-1)[: target.physical_elements]


def _check(text: str, data: np.ndarray, pad: int = 7) -> None:
    shape = parse_shape(text)
    target = PhysicalTarget.from_xla(shape)
    buf = to_physical(data, shape, pad_value=pad)
    slots = _unpacked(buf, target)
    idx = linear_indices(shape)
    want = data.reshape(-1)
    if target.packed_bits:
        want = (want.astype(np.int64) & ((1 << target.packed_bits) - 1)).astype(np.uint8)
        pad &= (1 << target.packed_bits) - 1
    assert slots.size == target.physical_elements
    assert (slots[idx] == want).all(), text
    padding = np.ones(target.physical_elements, dtype=bool)
    padding[idx] = False
    assert (slots[padding] == (bool(pad) if data.dtype == np.bool_ else pad)).all(), text
    back = from_physical(buf, shape)
    assert back.shape == data.shape and (back == data).all(), text


dims2 = st.tuples(st.integers(1, 70), st.integers(1, 300))


@given(fmt=st.sampled_from(FORMATS), dims=dims2, transposed=st.booleans(), seed=st.integers(0, 99))
def test_rank2_formats_match_linear_indices(fmt: tuple, dims: tuple[int, int], transposed: bool,
                                            seed: int) -> None:
    type_name, dtype, tiles = fmt
    m2m = "0,1" if transposed else "1,0"
    text = f"{type_name}[{dims[0]},{dims[1]}]{{{m2m}:{tiles}}}"
    _check(text, _data(type_name, dtype, dims, np.random.default_rng(seed)))


@given(fmt=st.sampled_from(FORMATS), dims=st.tuples(st.integers(1, 5), st.integers(1, 20),
                                                      st.integers(1, 140)),
       perm=st.permutations([0, 1, 2]), seed=st.integers(0, 99))
def test_rank3_any_minor_to_major(fmt: tuple, dims: tuple[int, ...], perm: list[int], seed: int) -> None:
    type_name, dtype, tiles = fmt
    text = f"{type_name}[{','.join(map(str, dims))}]{{{','.join(map(str, perm))}:{tiles}}}"
    _check(text, _data(type_name, dtype, dims, np.random.default_rng(seed)))


@given(fmt=st.sampled_from(RANK1), n=st.integers(1, 3000), seed=st.integers(0, 99))
def test_rank1_formats(fmt: tuple, n: int, seed: int) -> None:
    type_name, dtype, tiles = fmt
    _check(f"{type_name}[{n}]{{0:{tiles}}}", _data(type_name, dtype, (n,), np.random.default_rng(seed)))


@pytest.mark.parametrize("text", ODD)
def test_layouts_without_strided_view_use_offsets(text: str) -> None:
    shape = parse_shape(text)
    assert not has_fast_path(PhysicalTarget.from_xla(shape))
    _check(text, _data("f32", np.float32, shape.dimensions, np.random.default_rng(1)))


@pytest.mark.parametrize("text", ["f32[5,9]{1,0:T(2,4)(3,1)}", "f32[7]{0:T(4)(8)}"])
def test_sub_tile_wider_than_its_digit_keeps_the_strided_view(text: str) -> None:
    # The (3,1) sub-tile re-tiles an in-tile digit of extent 2: the digit's value sits whole in
    # the sub-tile (padded to 3), so each dim is still one mixed radix (with a gap of padding).
    shape = parse_shape(text)
    assert has_fast_path(PhysicalTarget.from_xla(shape))
    _check(text, _data("f32", np.float32, shape.dimensions, np.random.default_rng(1)))


@pytest.mark.parametrize("text", [
    "f32[3,5]{1,0:T(2,2)}", "bf16[16,256]{1,0:T(8,128)(2,1)}", "s8[40,300]{1,0:T(8,128)(4,1)}",
    "f32[9,130]{0,1:T(8,128)}", "f32[100]{0:T(1024)(128)(4,1)}", "f32[]{:T(256)}", "f32[5,6]{1,0}",
])
def test_fast_path_and_matches_naive_recipe(text: str) -> None:
    shape = parse_shape(text)
    assert has_fast_path(PhysicalTarget.from_xla(shape))
    data = _data("f32", np.float32, shape.dimensions, np.random.default_rng(2))
    if text.startswith("bf16"):
        data = data.astype(np.uint16)
    elif text.startswith("s8"):
        data = data.astype(np.int8)
    assert (to_physical(data, text) == tiling_plan(shape).apply(data)).all()


def test_seed_figure_1_buffer() -> None:
    a = np.arange(15, dtype=np.int32).reshape(3, 5)
    buf = to_physical(a, "s32[3,5]{1,0:T(2,2)}", pad_value=-1)
    assert buf.tolist() == [0, 1, 5, 6, 2, 3, 7, 8, 4, -1, 9, -1,
                            10, 11, -1, -1, 12, 13, -1, -1, 14, -1, -1, -1]


def test_seed_figure_2_buffer() -> None:
    a = np.arange(32, dtype=np.int16).reshape(4, 8)
    buf = to_physical(a, "s16[4,8]{1,0:T(2,4)(2,1)}")
    assert buf[:8].tolist() == [0, 8, 1, 9, 2, 10, 3, 11]


def test_s4_packs_low_nibble_first() -> None:
    a = np.array([[1, -2, 3, 4]], dtype=np.int8)
    buf = to_physical(a, "s4[1,4]{1,0:E(4)}")
    assert buf.dtype == np.uint8 and buf.tolist() == [0xE1, 0x43]
    assert from_physical(buf, "s4[1,4]{1,0:E(4)}").tolist() == [[1, -2, 3, 4]]


def test_non_contiguous_input_and_output_buffer() -> None:
    text = "bf16[24,300]{1,0:T(8,128)(2,1)}"
    base = np.random.default_rng(3).integers(0, 1000, (48, 600)).astype(np.uint16)
    view = base[::2, ::2]
    out = np.empty(PhysicalTarget.from_xla(text).physical_elements, dtype=np.uint16)
    assert to_physical(view, text, out=out) is out
    assert (out[linear_indices(parse_shape(text))] == view.reshape(-1)).all()
    back = np.empty((24, 300), dtype=np.uint16)
    assert from_physical(out, text, out=back) is back and (back == view).all()


@pytest.mark.parametrize("src, dst", list(itertools.permutations([
    "f32[20,260]{1,0:T(8,128)}", "f32[20,260]{0,1:T(8,128)}", "f32[20,260]{1,0:T(2,128)}",
    "f32[20,260]{1,0}"], 2)))
def test_relayout_between_layouts(src: str, dst: str) -> None:
    a = np.random.default_rng(4).standard_normal((20, 260)).astype(np.float32)
    converted = relayout(to_physical(a, src), src, dst, pad_value=0)
    assert (converted == to_physical(a, dst)).all()
    assert (relayout(converted, dst, None) == a).all()
    assert (relayout(a, None, dst) == to_physical(a, dst)).all()


def test_from_offsets_hook_round_trips() -> None:
    offsets = np.array([3, 0, 5, 1, 4, 2])
    t = PhysicalTarget.from_offsets((2, 3), offsets, physical_elements=8)
    a = np.arange(6, dtype=np.int64).reshape(2, 3) + 10
    buf = to_physical(a, t, pad_value=-1)
    assert buf.tolist() == [11, 13, 15, 10, 14, 12, -1, -1]
    assert (from_physical(buf, t) == a).all()


def test_from_digits_matches_offsets() -> None:
    # A zN-like blocked layout of a 6x10 matrix: 2x4 blocks, blocks column-major.
    t = PhysicalTarget.from_digits((6, 10), [[(3, 8), (2, 4)], [(3, 24), (4, 1)]],
                                   physical_elements=72)
    assert has_fast_path(t)
    a = np.arange(60, dtype=np.float64).reshape(6, 10)
    buf = to_physical(a, t, pad_value=-1)
    assert (buf[t.offsets] == a.reshape(-1)).all()
    pad = np.ones(72, bool)
    pad[t.offsets] = False
    assert (buf[pad] == -1).all() and (from_physical(buf, t) == a).all()


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"expected a PhysicalTarget,|"
            r"f32\[3,5\]\{1,0\}: elements are|"
            r"f32\[3,5\]\{1,0\}: expected a|"
            r"f32\[3,5\]\{1,0\}: expected an|"
            r"offsets are not distinct:|"
            r"relayout needs an array|"
            r"s4\[4\]\{0:E\(4\)\}: packed 4-bit|"
            r"shape f32\[<=3\]\{0\} has")


@pytest.mark.parametrize("call, error", [
    (lambda: to_physical(np.zeros((3, 4), np.float32), "f32[3,5]{1,0}"), LayoutError),
    (lambda: to_physical(np.zeros((3, 5), np.float64), "f32[3,5]{1,0}"), LayoutError),
    (lambda: from_physical(np.zeros(14, np.float32), "f32[3,5]{1,0}"), LayoutError),
    (lambda: to_physical(np.zeros(3, np.float32), "(f32[3], s8[2])"), UnsupportedError),
    (lambda: to_physical(np.zeros(3, np.float32), 42), UnsupportedError),
    (lambda: from_physical(np.zeros(3, np.float32), "s4[4]{0:E(4)}"), LayoutError),
    (lambda: PhysicalTarget.from_offsets((2,), [0, 0]), LayoutError),
    (lambda: to_physical(np.zeros(3, np.float32), "f32[<=3]"), LayoutError),
])
def test_bad_input_raises_library_errors(call: object, error: type) -> None:
    with pytest.raises(error, match=MESSAGES) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, TensorLayoutError)


ENGINES = {  # (use the C kernel, non-temporal stores from this many bytes)
    "kernel": (True, 1 << 60), "kernel-streaming": (True, 1), "numpy": (False, 1 << 60)}


def _engine(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    import tensorlayout.relayout._copy as engine
    import tensorlayout.relayout._numpy_path as numpy_path

    use_kernel, stream_min = ENGINES[name]
    if use_kernel and not engine.kernel_available():
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    monkeypatch.setattr(engine, "USE_KERNEL", use_kernel)
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", stream_min)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # exercise the thread pool too
    monkeypatch.setattr(numpy_path, "BLOCK_BYTES", 4096)


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("text, dtype", [
    ("bf16[40,300]{1,0:T(8,128)(2,1)}", np.uint16), ("s8[70,260]{1,0:T(32,128)(4,1)}", np.int8),
    ("f16[33,129]{0,1:T(16,128)(2,1)}", np.float16), ("pred[9,130]{1,0:T(8,128)(4,1)}", np.bool_),
    ("f32[17,300]{1,0:T(8,128)}", np.float32), ("f64[5,7,9]{0,2,1:T(2,4)(2,1)}", np.float64),
    ("u8[64,256]{1,0:T(32,128)(8,1)}", np.uint8), ("c64[10,130]{1,0:T(8,128)(2,1)}", np.complex64),
    ("f32[16]{0:T(4)(2)}", np.float32), ("f32[3,5]{1,0:T(2,2)}", np.float32),
])
def test_every_engine(monkeypatch: pytest.MonkeyPatch, engine: str, text: str, dtype: type) -> None:
    _engine(monkeypatch, engine)
    shape = parse_shape(text)
    _check(text, _data(text.split("[")[0], dtype, shape.dimensions, np.random.default_rng(5)))


@pytest.mark.parametrize("engine", list(ENGINES))
def test_every_engine_on_tla_formats(monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    from tensorlayout.cute import tla

    _engine(monkeypatch, engine)
    a = np.random.default_rng(6).integers(0, 100, (37, 70)).astype(np.float16)
    for tag in ("zN", "nZ", "zZ", "nN", "RowMajor", "ColumnMajor"):
        fmt = tla.make_format(tag, 37, 70, "f16")
        buf = to_physical(a, fmt, pad_value=-1)
        offsets = [tla.crd2offset((i, j), fmt) for i in range(37) for j in range(70)]
        assert (buf[offsets] == a.reshape(-1)).all(), tag
        assert (from_physical(buf, fmt) == a).all(), tag


def test_reversed_and_unaligned_inputs() -> None:
    text = "bf16[24,300]{1,0:T(8,128)(2,1)}"
    base = np.random.default_rng(7).integers(0, 1000, (24, 300)).astype(np.uint16)
    want = to_physical(base, text)
    assert (to_physical(base[::-1, ::-1].copy()[::-1, ::-1], text) == want).all()
    flipped = base[::-1, ::-1]  # negative strides
    assert (to_physical(flipped, text) == to_physical(flipped.copy(), text)).all()
    raw = np.zeros(base.nbytes + 1, np.uint8)
    unaligned = raw[1:].view(np.uint16).reshape(24, 300)  # numpy marks it unaligned
    unaligned[...] = base
    assert not unaligned.flags.aligned
    assert (to_physical(unaligned, text) == want).all()
    out = np.zeros((24, 300), np.uint16)
    assert (from_physical(want, text, out=out[::-1][::-1]) == base).all()


def test_kernel_checks_every_box_against_both_arrays() -> None:
    import tensorlayout.relayout._copy as engine

    if not engine.kernel_available():
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    src = np.arange(12, dtype=np.int32)
    dst = np.zeros(12, dtype=np.int32)
    engine._kernel.copy(dst, src, [(0, 0, (3, 4), (4, 12), (16, 4))])  # a 4x3 transpose
    assert dst.tolist() == src.reshape(3, 4).T.reshape(-1).tolist()
    for bad in [(4, 0, (12,), (4,), (4,)), (0, -4, (3,), (4,), (4,)), (0, 0, (2,), (4,), (48,)),
                (0, 0, (2, 2), (4,), (4, 4))]:
        with pytest.raises((IndexError, ValueError), match=r"copy: a task"):
            engine._kernel.copy(dst, src, [bad])


def test_strided_physical_buffer() -> None:
    text = "bf16[24,300]{1,0:T(8,128)(2,1)}"
    a = np.random.default_rng(8).integers(0, 1000, (24, 300)).astype(np.uint16)
    buf = to_physical(a, text)
    assert (from_physical(buf, text) == a).all()
    spaced = np.zeros(2 * buf.size, np.uint16)
    spaced[::2] = buf
    assert (from_physical(spaced[::2], text) == a).all()  # same target, other buffer strides


def test_overlapping_output_is_safe() -> None:
    text = "s32[8,8]{0,1}"
    a = np.arange(64, dtype=np.int32).reshape(8, 8)
    flat = a.reshape(-1)  # out aliases the input array
    want = to_physical(a.copy(), text)
    assert (to_physical(a, text, out=flat) == want).all()
