"""The AVX2 weaves of 8 rows of bytes (``_kernel_bytes_weave.h``): 8 rows woven into 8-byte
groups and back, 32 groups a round and the rest by the scalar loops. Hand-made weave and
unweave tasks through the raw entry point at edge counts and odd offsets with guard bytes
around them, and 8-row tiles of bytes against a transposed tiling through the public calls
at 1 and 3 threads, against the brute-force definition."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import extent, kernel_or_skip, reference_buffer

GUARD = 0xAB
LAYOUTS = ["s8[1000,333]{0,1:T(8,128)}", "u8[257,64]{0,1:T(8,128)}", "pred[70,41,9]{0,2,1:T(8,128)}",
           "s8[8,4099]{0,1:T(8,128)}"]



@pytest.mark.parametrize("n", [1, 31, 32, 33, 63, 64, 65, 100, 1000])
@pytest.mark.parametrize("weave", [True, False])
@pytest.mark.parametrize("off", [0, 5])
def test_raw_weaves_of_8_byte_rows(n: int, weave: bool, off: int) -> None:
    kernel = kernel_or_skip()
    row = n + 3 + off  # the 8 rows' stride
    shape, ds, ss = ((n, 8), (8, 1), (1, row)) if weave else ((n, 8), (1, row), (8, 1))
    rng = np.random.default_rng(n * 4 + weave * 2 + off)
    src = rng.integers(0, 256, off + extent(shape, ss) + 40).astype(np.uint8)
    dst = np.full(off + 1 + extent(shape, ds) + 40, GUARD, np.uint8)
    want = dst.copy()
    as_strided(want[off + 1:], shape, ds)[...] = as_strided(src[off:], shape, ss)
    kernel.copy(dst, src, [(off + 1, off, shape, ds, ss)], False)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("off", [0, 3])
def test_byte_tiles_through_the_public_calls(text: str, threads: int, off: int) -> None:
    kernel_or_skip()
    t = as_target(text)
    dtype = {"pred": np.bool_, "u8": np.uint8, "s8": np.int8}[text[:text.index("[")]]
    rng = np.random.default_rng(len(text) + off)
    data = rng.integers(0, 2 if dtype is np.bool_ else 100, t.logical_shape).astype(dtype)
    want = reference_buffer(data, text, 0)
    raw = np.full(off + want.nbytes + 64, GUARD, np.uint8)
    out = raw[off:off + want.nbytes].view(dtype)
    assert to_physical(data, t, out=out, threads=threads) is out
    assert np.array_equal(out.view(np.uint8), want.view(np.uint8))
    assert (raw[:off] == GUARD).all() and (raw[off + want.nbytes:] == GUARD).all()
    raw = np.full(off + data.nbytes + 64, GUARD, np.uint8)
    back = raw[off:off + data.nbytes].view(dtype).reshape(data.shape)
    assert from_physical(want, t, out=back, threads=threads) is back
    assert np.array_equal(back, data)
    assert (raw[:off] == GUARD).all() and (raw[off + data.nbytes:] == GUARD).all()
