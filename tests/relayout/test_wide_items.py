"""Wider items: a run of 2, 4 or 8 bytes contiguous on both sides moved as one item (``item`` in
``_kernel.c``, ``wider_items`` in ``_kernel_path``): a (2,1) or (4,1) sub-tile against a
transposed tiling (the TPU's bf16/s8 weights in ``{0,1}``) is a transpose of 4-byte pairs or
quads. Against a brute-force reference on random layouts, ragged and odd dims, odd input
buffers (unaligned: the kernel puts the run back as an axis), cached or streamed (the stage whose
rows run on over the tile axis), 1 or N threads, with and without the kernel; and the raw entry
point on hand-made tasks (aligned, misaligned, out of bounds, bad item sizes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.relayout._copy import _extended
from tensorlayout.relayout._kernel_path import kernel_tasks
from tensorlayout.relayout._plan import copy_plan
from tensorlayout.xla import parse_shape
from tests.relayout._reference import kernel_or_skip as _kernel
from tests.relayout._reference import reference_buffer

TYPES = {"bf16": np.uint16, "s8": np.int8, "u8": np.uint8, "f32": np.float32}
SUB = {"bf16": ["(2,1)"], "s8": ["(4,1)", "(2,1)"], "u8": ["(4,1)"], "f32": ["", "(2,1)"]}
TILES = ["T(8,128)", "T(4,128)", "T(16,128)", "T(8,64)", "T(2,8)", "T(8,8)"]


@settings(suppress_health_check=list(HealthCheck), max_examples=60, deadline=None)
@given(dtype=st.sampled_from(sorted(TYPES)), tile=st.sampled_from(TILES), pick=st.integers(0, 1),
       rows=st.integers(1, 90), cols=st.integers(1, 300), threads=st.sampled_from([1, 3]),
       pad=st.integers(0, 9), rank3=st.booleans())
def test_transposed_sub_tiles_match_thereference_buffer(engine_mode: str, dtype: str, tile: str, pick: int,
                                                  rows: int, cols: int, threads: int, pad: int,
                                                  rank3: bool) -> None:
    sub = SUB[dtype][pick % len(SUB[dtype])]
    dims, order = ((rows, 3, cols), "{0,2,1:") if rank3 else ((rows, cols), "{0,1:")
    text = f"{dtype}[{','.join(map(str, dims))}]{order}{tile}{sub}}}"
    data = np.random.default_rng(rows * cols).integers(0, 100, dims).astype(TYPES[dtype])
    want = reference_buffer(data, text, pad)
    got = to_physical(data, text, pad_value=pad, threads=threads)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(got, text, threads=threads), data)


@pytest.mark.parametrize("how", ["unaligned", "reversed", "strided", "readonly"])
def test_transposed_sub_tiles_odd_buffers(engine_mode: str, how: str) -> None:
    # an array 2 bytes past a 4-byte boundary: the pairs are misaligned, the run goes back inside
    text = "bf16[40,300]{0,1:T(8,128)(2,1)}"
    data = np.random.default_rng(3).integers(0, 60000, (40, 300)).astype(np.uint16)
    want = reference_buffer(data, text, 0)
    if how == "unaligned":
        raw = np.zeros(data.size + 1, np.uint16)
        arg = raw[1:].reshape(data.shape)
        arg[...] = data
        out = np.zeros(want.size + 1, np.uint16)[1:]
    elif how == "reversed":
        arg, out = np.ascontiguousarray(data[::-1])[::-1], None
    elif how == "strided":
        arg, out = np.repeat(data, 2, axis=1)[:, ::2], None
    else:
        arg, out = data.copy(), None
        arg.flags.writeable = False
    got = to_physical(arg, text, out=out)
    assert np.array_equal(got, want)
    back = np.zeros(data.size + 1, np.uint16)[1:].reshape(data.shape) if how == "unaligned" else None
    assert np.array_equal(from_physical(got, text, out=back), data)


def test_transposed_sub_tiles_large_streamed_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    # streamed from the first byte, in pieces for threads: the stage whose rows run on over the
    # tile axis (to_physical), the narrow tiles of the gathered rows (from_physical)
    if not engine.kernel_available():
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    for text, dtype in [("bf16[520,640]{0,1:T(8,128)(2,1)}", np.uint16),
                        ("s8[520,1000]{0,1:T(8,128)(4,1)}", np.int8),
                        ("bf16[300,4,264]{0,2,1:T(8,128)(2,1)}", np.uint16)]:
        dims = parse_shape(text).dimensions
        data = np.random.default_rng(4).integers(0, 100, dims).astype(dtype)
        want = reference_buffer(data, text, 0)
        for threads in (1, 2, 4):
            got = to_physical(data, text, threads=threads)
            assert np.array_equal(got, want)
            assert np.array_equal(from_physical(got, text, threads=threads), data)



@pytest.mark.parametrize("start", [0, 2, 4, 6])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_wide_items_any_alignment(start: int, stream: bool) -> None:
    # dst[j, i] = src[i, j] in 4-byte pairs of 2-byte items: 16 x 40 pairs, from a start that
    # is or is not a multiple of 4 bytes (the pairs are moved whole at any alignment)
    kernel = _kernel()
    rows, cols = 16, 40
    src_raw = np.arange(2 * rows * cols + 8, dtype=np.uint16)
    dst_raw = np.full(2 * rows * cols + 8, 7, np.uint16)
    task = (start, start, (cols, rows), (4 * rows, 4), (4, 4 * cols), False, 4)
    kernel.copy(dst_raw, src_raw, [task], stream)
    s = start // 2
    pairs = src_raw[s:s + 2 * rows * cols].reshape(rows, cols, 2)
    want = np.full_like(dst_raw, 7)
    want[s:s + 2 * rows * cols] = pairs.transpose(1, 0, 2).reshape(-1)
    assert np.array_equal(dst_raw, want)


def test_raw_wide_items_are_checked() -> None:
    kernel = _kernel()
    src, dst = np.zeros(64, np.uint16), np.zeros(64, np.uint16)
    for item in (3, 6, 16, 1, -4):  # not 2, 4 or 8 bytes, or narrower than the arrays' items
        with pytest.raises(ValueError, match="item size"):
            kernel.copy(dst, src, [(0, 0, (4,), (4,), (4,), False, item)], False)
    with pytest.raises(ValueError, match="item size"):  # not with swapped units
        kernel.copy(dst, src, [(0, 0, (4,), (8,), (8,), True, 8)], False)
    with pytest.raises(IndexError, match="destination"):  # the last pair's second half is outside
        kernel.copy(dst, src, [(0, 0, (33,), (4,), (4,), False, 4)], False)
    with pytest.raises(IndexError, match="source"):
        kernel.copy(dst, src, [(2, 2, (32,), (2,), (4,), False, 4)], False)
    with pytest.raises(IndexError, match="source"):  # misaligned, still checked
        kernel.copy(dst, src, [(2, 2, (31,), (2,), (4,), False, 8)], False)
    assert not dst.any()


@pytest.mark.parametrize("text, dtype, wide", [("bf16[64,256]{0,1:T(8,128)(2,1)}", np.uint16, 4),
                                               ("s8[64,256]{0,1:T(8,128)(4,1)}", np.int8, 4),
                                               ("s8[64,256]{0,1:T(8,128)(2,1)}", np.int8, 2),
                                               ("bf16[64,256]{1,0:T(8,128)(2,1)}", np.uint16, 0),
                                               ("f32[64,256]{0,1:T(8,128)}", np.float32, 0)])
def test_the_planner_widens_pairs_against_a_transposed_tiling(text: str, dtype: type, wide: int) -> None:
    # the kernel's tasks carry the wider item where a sub-tile's run is contiguous on both sides
    # (its interleaved form {1,0} weaves instead; plain tiles have no such run)
    target = as_target(text)
    data = np.zeros(target.logical_shape, dtype)
    buf = np.zeros(target.physical_elements, dtype)
    for to_phys in (True, False):
        tasks = kernel_tasks(copy_plan(target), target, _extended(data, target), buf, to_phys, 1)
        assert {task[6] for task in tasks} == {wide}


@pytest.mark.parametrize("text, dtype", [("bf16[63,255]{0,1:T(8,128)(2,1)}", np.uint16),
                                         ("s8[61,253]{0,1:T(8,128)(4,1)}", np.int8)])
def test_the_planner_widens_pairs_of_odd_rows(text: str, dtype: type) -> None:
    # odd rows put the pairs (quads) 1 to 3 items off a boundary of their size: the main box is
    # still a transpose of wider items (a gather of 2-byte pieces measured 9.6x a copy), and the
    # result matches the reference
    target = as_target(text)
    data = np.random.default_rng(0).integers(0, 100, target.logical_shape).astype(dtype)
    buf = to_physical(data, target)
    assert np.array_equal(buf, reference_buffer(data, text, 0))
    assert np.array_equal(from_physical(buf, target), data)
    for to_phys in (True, False):
        tasks = kernel_tasks(copy_plan(target), target, _extended(data, target), buf, to_phys, 1)
        main = max(tasks, key=lambda task: int(np.prod(task[2])))
        assert main[6] == 4
