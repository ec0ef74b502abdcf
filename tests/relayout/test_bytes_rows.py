"""The (4,1) quad transposes' stages (``_kernel_bytes.h``): rows of any number of groups
copied in whole 32-byte vectors with the last one ending at the row's end (106 groups: 424
bytes), quads_from's stage of 64 rows a by 64 groups at every count of rows and groups
around its blocks, and the stage of a large box streamed or stored by its size
(``QUAD_STREAM_BYTES``).
Layouts through the public calls at 1 and 3 threads into buffers at odd offsets with guard
bytes around them, and hand-made tasks through the raw entry point at any offset, against the
brute-force definition."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import check_raw_task, extent, kernel_or_skip, reference_buffer

GUARD = 0xAB
# quad boxes of 21, 106 and 13 groups (stage rows of 84, 424 and 52 bytes: not whole vectors)
LAYOUTS = ["pred[21,490,83]{1,0,2:T(8,128)(4,1)}", "u8[106,12,70]{0,1,2:T(8,128)(4,1)}",
           "s8[13,9,40]{0,1,2:T(8,128)(4,1)}", "pred[100,49,83]{1,0,2:T(8,128)(4,1)}"]


def _data(text: str) -> np.ndarray:
    dtype = {"pred": np.bool_, "u8": np.uint8, "s8": np.int8}[text[:text.index("[")]]
    rng = np.random.default_rng(len(text))
    return rng.integers(0, 2 if dtype is np.bool_ else 100, as_target(text).logical_shape).astype(dtype)


def _guarded(n: int, dtype: np.dtype, off: int) -> tuple[np.ndarray, np.ndarray]:
    """A byte array of guard bytes, and the n-item view of dtype in it `off` bytes in."""
    raw = np.full(off + n * dtype.itemsize + 64, GUARD, np.uint8)
    return raw, raw[off:off + n * dtype.itemsize].view(dtype)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("off", [0, 3, 17])
def test_quad_rows_through_the_public_calls(text: str, threads: int, off: int) -> None:
    kernel_or_skip()
    t, data = as_target(text), _data(text)
    want = reference_buffer(data, text, 0)
    raw, out = _guarded(t.physical_elements, data.dtype, off)
    assert to_physical(data, t, out=out, threads=threads) is out
    assert np.array_equal(out.view(np.uint8), want.view(np.uint8))
    assert (raw[:off] == GUARD).all() and (raw[off + out.nbytes:] == GUARD).all()
    _, src = _guarded(want.size, want.dtype, off + 1)
    src[...] = want
    raw, back = _guarded(data.size, data.dtype, off)
    back = back.reshape(data.shape)
    assert from_physical(src, t, out=back, threads=threads) is back
    assert np.array_equal(back, data)
    assert (raw[:off] == GUARD).all() and (raw[off + back.nbytes:] == GUARD).all()



def _run(shape: tuple[int, ...], ds: tuple[int, ...], ss: tuple[int, ...], d_off: int, s_off: int,
         seed: int) -> None:
    """One raw task against its definition, guard bytes around the box."""
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 64).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, GUARD)


@pytest.mark.parametrize("ng", [8, 9, 15, 17, 23, 63, 64, 65, 71, 106, 127, 129, 135, 263])
@pytest.mark.parametrize("na", [16, 33, 64, 65, 71, 79, 83, 128, 130])
@pytest.mark.parametrize("to", [True, False])
def test_raw_quad_rows_of_any_group_count(ng: int, na: int, to: bool) -> None:
    # stage rows of 4 * (groups in a stage block) bytes: whole vectors and a last one overlapping
    if to and na < 32:
        na += 32  # (the fused loop to the quads takes 32 rows a at least)
    row = ng * 4 + 13  # the quads' side, rows a not 4 KiB apart
    if to:
        shape, ds, ss = (ng, na, 4), (4, row, 1), (4 * na + 5, 1, na + 1)
    else:
        shape, ds, ss = (ng, 4, na), (4 * na + 5, na + 1, 1), (4, 1, row)
    _run(shape, ds, ss, ng % 7, na % 5, ng * 1000 + na)


@pytest.mark.parametrize("na", [8000, 8200])
@pytest.mark.parametrize("d_off", [0, 16, 3])
def test_raw_quads_to_rows_4k_apart_either_side_of_the_stream_size(na: int, d_off: int) -> None:
    # 128 groups to rows a 4 KiB apart: 4,096,000 bytes (stored) and 4,198,400 (streamed, at
    # 16-byte aligned rows; unaligned ones stored whatever the size)
    shape, ds, ss = (128, na, 4), (4, 4096, 1), (4 * na, 1, na)
    _run(shape, ds, ss, d_off, 5, na + d_off)
