"""The kernel's plain transposes of 8-byte items in blocks of whole lines (_kernel_words.h)
against a brute-force reference: layouts through the public calls (1 and 3 threads), and
hand-made tasks through the raw entry point: any extents (past whole 8 x 8 blocks), rows any
distance apart (2 KiB and 4 KiB multiples among them), any start, and nothing outside the box
written."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tests.relayout._reference import kernel_or_skip, reference_buffer

LAYOUTS = ["f64[67,133]{0,1:T(1,128)}", "s64[100,66]{0,1:T(1,128)}", "f64[41,530]{0,1:T(8,128)}",
           "s64[37,40,3]{1,2,0:T(2,128)}", "f64[9,300,17]{0,2,1:T(1,128)}"]
DTYPES = {"f64": np.float64, "s64": np.int64}


def _data(text: str, seed: int) -> np.ndarray:
    t = as_target(text)
    rng = np.random.default_rng(seed)
    return rng.integers(-(1 << 62), 1 << 62, t.logical_shape).astype(DTYPES[text[:text.index("[")]])


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_word_transposes_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    data = _data(text, len(text))
    want = reference_buffer(data, text, 0)
    buf = to_physical(data, as_target(text), threads=threads)
    assert np.array_equal(buf.view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(want, as_target(text), threads=threads).view(np.uint8),
                          data.view(np.uint8))


@pytest.mark.parametrize("threads", [1, 3])
def test_word_transpose_relayout(engine_mode: str, threads: int) -> None:
    src, dst = "f64[67,133]{0,1:T(1,128)}", "f64[67,133]{1,0:T(8,128)}"
    data = _data(src, 3)
    out = relayout(reference_buffer(data, src, 0), as_target(src), as_target(dst), threads=threads)
    assert np.array_equal(out.view(np.uint8), reference_buffer(data, dst, 0).view(np.uint8))


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> int:
    return sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) + item


def _row_stride(rng: np.random.Generator, n: int) -> int:
    """Bytes between rows of n 8-byte items: just past the row, or a 2 KiB / 4 KiB multiple."""
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return 8 * (n + int(rng.integers(0, 9)))
    unit = 2048 if kind == 1 else 4096
    return -(-8 * n // unit) * unit


@pytest.mark.parametrize("seed", range(24))
def test_raw_word_transposes(seed: int) -> None:
    # dst[g, a, b] = src[g, b, a] of 8-byte items, the g axis apart on both sides (not running
    # on), at any 8-byte start; the bytes around every row keep their values
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    ng, na, nb = int(rng.integers(1, 4)), int(rng.integers(8, 90)), int(rng.integers(8, 90))
    da, sb = _row_stride(rng, nb), _row_stride(rng, na)
    dg, sg = da * na + 64 * int(rng.integers(0, 3)), sb * nb + 64 * int(rng.integers(0, 3))
    shape, ds, ss = (ng, na, nb), (dg, da, 8), (sg, 8, sb)
    d_off, s_off = 8 * int(rng.integers(0, 16)), 8 * int(rng.integers(0, 16))
    src = rng.integers(0, 1 << 62, (s_off + _extent(shape, ss, 8) + 64) // 8).astype(np.uint64)
    dst = np.full((d_off + _extent(shape, ds, 8) + 64) // 8, 0xABABABABABABABAB, np.uint64)
    want = dst.copy()
    as_strided(want[d_off // 8:], shape, ds)[...] = as_strided(src[s_off // 8:], shape, ss)
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], False)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("seed", range(8))
def test_raw_wide_word_transposes_at_any_alignment(seed: int) -> None:
    # the same of 8-byte items made of four 2-byte ones (a task's item = 8), at 2-byte starts
    kernel = kernel_or_skip()
    rng = np.random.default_rng(100 + seed)
    na, nb = int(rng.integers(8, 60)), int(rng.integers(8, 60))
    da, sb = _row_stride(rng, nb) + 2 * int(rng.integers(0, 4)), _row_stride(rng, na)
    shape, ds, ss = (na, nb), (da, 8), (8, sb)
    d_off, s_off = 2 * int(rng.integers(0, 32)), 2 * int(rng.integers(0, 32))
    src = rng.integers(0, 1 << 16, (s_off + _extent(shape, ss, 8) + 64) // 2).astype(np.uint16)
    dst = np.full((d_off + _extent(shape, ds, 8) + 64) // 2, 0xABAB, np.uint16)
    want = dst.copy()
    wb, sbytes = want.view(np.uint8), src.view(np.uint8)
    for a in range(na):
        for b in range(nb):
            at, fr = d_off + a * da + b * 8, s_off + a * 8 + b * sb
            wb[at:at + 8] = sbytes[fr:fr + 8]
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss, False, 8)], False)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("seed", range(12))
def test_raw_word_transposes_into_rows_that_run_on(seed: int) -> None:
    # dst[a, g*8 + b] = src[g, b, a] of 8-byte items: the destination's rows take a line (8
    # items) per g and run on over g (a column-major T(8,128) tile read into logical rows), the
    # source's 8 rows of each g anywhere; any number of g (past whole groups of 16) and of rows
    # (past whole 8 x 8 blocks)
    kernel = kernel_or_skip()
    rng = np.random.default_rng(200 + seed)
    ng, na = int(rng.integers(16, 60)), int(rng.integers(8, 70))
    da = 64 * ng + 64 * int(rng.integers(0, 3)) if seed % 2 else -(-64 * ng // 2048) * 2048
    sb = 8 * (na + int(rng.integers(0, 9)))
    sg = 8 * sb + 64 * int(rng.integers(0, 3))
    shape, ds, ss = (ng, na, 8), (64, da, 8), (sg, 8, sb)
    d_off, s_off = 8 * int(rng.integers(0, 8)), 8 * int(rng.integers(0, 8))
    src = rng.integers(0, 1 << 62, (s_off + _extent(shape, ss, 8) + 64) // 8).astype(np.uint64)
    dst = np.full((d_off + _extent(shape, ds, 8) + 64) // 8, 0xABABABABABABABAB, np.uint64)
    want = dst.copy()
    as_strided(want[d_off // 8:], shape, ds)[...] = as_strided(src[s_off // 8:], shape, ss)
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], False)
    assert np.array_equal(dst, want)
