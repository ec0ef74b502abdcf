"""Relayout fuzz: random layouts, dtypes, strides and buffers through both copy paths, checked
against a brute-force reference written from the definition (``buf[offset(x)] = a[x]``, every
other slot ``pad_value``). Only the library's own errors may escape, and nothing may crash:
the kernel checks every box against both arrays before touching memory.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tensorlayout.cute import tla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.xla import linear_indices

from .strategies import xla_shapes

DTYPES = {8: [np.uint8, np.int8, np.bool_], 16: [np.uint16, np.float16], 32: [np.float32, np.int32],
          64: [np.float64, np.int64, np.complex64], 128: [np.complex128]}
ENGINES = [True, False]  # the C kernel, the numpy path


def _engine(monkeypatch: pytest.MonkeyPatch, use_kernel: bool) -> None:
    import tensorlayout.relayout._copy as engine

    monkeypatch.setattr(engine, "USE_KERNEL", use_kernel)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # the thread pool too


def _reference(data: np.ndarray, offsets: np.ndarray, slots: int, pad: object) -> np.ndarray:
    buf = np.full(slots, pad, dtype=data.dtype)
    buf[offsets] = data.reshape(-1)
    return buf


def _strided(data: np.ndarray, how: str) -> np.ndarray:
    """The same values behind other strides: a reversed view, a padded view, read-only."""
    if how == "reversed" and data.ndim:
        return np.ascontiguousarray(data[::-1])[::-1]
    if how == "gapped" and data.ndim:
        wide = np.zeros((*data.shape[:-1], 2 * data.shape[-1]), dtype=data.dtype)
        wide[..., ::2] = data
        return wide[..., ::2]
    if how == "readonly":
        data = data.copy()
        data.setflags(write=False)
    return data


@settings(suppress_health_check=list(HealthCheck))
@given(shape=xla_shapes(max_rank=3, max_dim=40), how=st.sampled_from(["plain", "reversed", "gapped",
                                                                        "readonly"]),
       use_kernel=st.sampled_from(ENGINES), seed=st.integers(0, 99))
def test_xla_layouts_match_the_reference(monkeypatch: pytest.MonkeyPatch, shape: object, how: str,
                                         use_kernel: bool, seed: int) -> None:
    _engine(monkeypatch, use_kernel)
    try:
        target = as_target(shape)
        offsets = linear_indices(shape)  # type: ignore[arg-type]
    except TensorLayoutError:
        return  # invalid layouts are the parser's tests
    assume(not target.packed_bits)
    dtype = DTYPES[target.element_bits][seed % len(DTYPES[target.element_bits])]
    data = np.random.default_rng(seed).integers(0, 100, target.logical_shape).astype(dtype)
    pad = 1 if dtype is np.bool_ else 7
    buf = to_physical(_strided(data, how), target, pad_value=pad)
    assert np.array_equal(buf, _reference(data, offsets, target.physical_elements, pad))
    back = from_physical(_strided(buf, how if how != "gapped" else "plain"), target)
    assert back.shape == data.shape and np.array_equal(back, data)


@settings(suppress_health_check=list(HealthCheck))
@given(tag=st.sampled_from(["zN", "nZ", "zZ", "nN", "RowMajor", "ColumnMajor"]),
       rows=st.integers(1, 40), cols=st.integers(1, 70), use_kernel=st.sampled_from(ENGINES))
def test_tla_formats_match_the_reference(monkeypatch: pytest.MonkeyPatch, tag: str, rows: int,
                                         cols: int, use_kernel: bool) -> None:
    _engine(monkeypatch, use_kernel)
    fmt = tla.make_format(tag, rows, cols, "f16")
    target = as_target(fmt)
    data = np.random.default_rng(rows * cols).integers(0, 100, (rows, cols)).astype(np.float16)
    offsets = np.array([tla.crd2offset((i, j), fmt) for i in range(rows) for j in range(cols)])
    buf = to_physical(data, fmt, pad_value=-1)
    assert np.array_equal(buf, _reference(data, offsets, target.physical_elements, -1))
    assert np.array_equal(relayout(buf, fmt, None), data)


@settings(suppress_health_check=list(HealthCheck))
@given(shape=xla_shapes(max_rank=3, max_dim=12), extra=st.integers(-3, 3).filter(bool),
       use_kernel=st.sampled_from(ENGINES))
def test_wrong_sizes_are_typed_errors(monkeypatch: pytest.MonkeyPatch, shape: object, extra: int,
                                      use_kernel: bool) -> None:
    _engine(monkeypatch, use_kernel)
    try:
        target = as_target(shape)
    except TensorLayoutError:
        return
    assume(not target.packed_bits and target.element_bits == 32)
    n = target.physical_elements + extra
    assume(n >= 0)
    with pytest.raises(TensorLayoutError, match=r": expected a buffer of"):
        from_physical(np.zeros(n, np.float32), target)
    with pytest.raises(TensorLayoutError, match=r": out must be a writeable C-contiguous array of"):
        to_physical(np.zeros(target.logical_shape, np.float32), target, out=np.zeros(n, np.float32))
    bad_shape = (*target.logical_shape[:-1], target.logical_shape[-1] + 1) if target.logical_shape \
        else (1,)
    with pytest.raises(TensorLayoutError, match=r": expected an array of shape \("):
        to_physical(np.zeros(bad_shape, np.float32), target)


@pytest.mark.parametrize("pad", ["x", None, 2**70, 1.5, 1j, [0]])
def test_pad_values_that_do_not_fit_are_typed_errors(pad: object) -> None:
    with pytest.raises(TensorLayoutError, match="pad_value"):
        to_physical(np.zeros((3, 5), np.int32), "s32[3,5]{1,0:T(2,2)}", pad_value=pad)


@pytest.mark.parametrize("text, dtype, pad", [("u8[3,5]{1,0:T(2,2)}", np.uint8, -1),
                                              ("s4[3,5]{1,0:T(2,2)E(4)}", np.int8, 8),
                                              ("s4[3,5]{1,0:T(2,2)E(4)}", np.int8, 1j)])
def test_pad_values_outside_the_element_range(text: str, dtype: type, pad: object) -> None:
    with pytest.raises(TensorLayoutError, match="pad_value"):
        to_physical(np.zeros((3, 5), dtype), text, pad_value=pad)


@pytest.mark.parametrize("dtype", [object, "V4"])
def test_object_and_void_dtypes_are_refused(dtype: object) -> None:
    with pytest.raises(TensorLayoutError, match="object or void"):
        to_physical(np.zeros((3, 5), dtype=dtype), "f32[3,5]{1,0:T(2,2)}")
    with pytest.raises(TensorLayoutError, match="object or void"):
        from_physical(np.zeros(24, dtype=dtype), "f32[3,5]{1,0:T(2,2)}")


@pytest.mark.parametrize("use_kernel", ENGINES)
def test_rank0_targets(monkeypatch: pytest.MonkeyPatch, use_kernel: bool) -> None:
    # used to copy from a temporary scalar: an IndexError, or a dangling view read back as None
    _engine(monkeypatch, use_kernel)
    assert to_physical(np.array(1.5), "f64[]").tolist() == [1.5]
    assert from_physical(np.array([2.5]), "f64[]").tolist() == 2.5
    assert to_physical(np.array(3, np.int8), "s8[]{:T(256)}", pad_value=-1).tolist()[:2] == [3, -1]


def test_huge_buffers_are_refused_before_allocating() -> None:
    with pytest.raises(TensorLayoutError, match="bytes"):
        to_physical(np.zeros((1, 1), np.float32), "f32[1,1]{1,0:T(1048576,1048576)}")


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_do_not_depend_on_threads(monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    _engine(monkeypatch, True)
    data = np.random.default_rng(3).integers(0, 100, (33, 300)).astype(np.uint16)
    text = "bf16[33,300]{0,1:T(8,128)(2,1)}"
    want = _reference(data, linear_indices(text), as_target(text).physical_elements, 0)
    assert np.array_equal(to_physical(data, text, threads=threads), want)
    monkeypatch.setenv("TENSORLAYOUT_THREADS", str(threads))
    assert np.array_equal(from_physical(want, text), data)


def test_a_format_name_where_a_target_is_expected_says_how_to_make_one() -> None:
    with pytest.raises(TensorLayoutError, match=r"make_format\('zN', rows, cols, dtype\)"):
        to_physical(np.zeros((2, 2), np.float16), "zN")


def test_every_target_kind_refuses_another_element_width() -> None:
    # a float32 array into an f16 zN format used to come back laid out with f16 fractals
    with pytest.raises(TensorLayoutError, match="16 bits"):
        to_physical(np.zeros((40, 72), np.float32), tla.make_format("zN", 40, 72, "f16"))
    with pytest.raises(TensorLayoutError, match="16 bits"):
        to_physical(np.zeros((40, 72), np.float32), "f16[40,72]{0,1:T(16,16)(16,1)}")
