"""The C kernel's streamed, gathered transposes of 4-byte items into destination rows that take
1 or 2 items per step of the gathered axis (``narrow_stage`` in ``_kernel_gather.h``: the
steps staged at once, as 8 x 8 tiles over several of them, instead of one at a time). On random
hand-made tasks against numpy's strided assignment: rows 64-byte multiples apart or not, step
and row counts around the tiles (8) and the stage, starts off every byte boundary, streamed or
not; the bytes outside the task stay as they were. And through the layouts that take the path
(a (2,1) sub-tile of 2-byte items or a (4,1) one of bytes against a transposed tiling)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.xla import linear_indices, parse_shape
from tests.relayout._reference import kernel_or_skip as _kernel


def _box(raw: np.ndarray, off: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """The 4-byte items of the box at byte ``off`` of ``raw`` as a (…, 4) uint8 view."""
    return as_strided(raw[off:], shape + (4,), strides + (1,))


def _case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): no blocks of ng tiles of na x nb 4-byte items (nb = 1 or 2), tile
    g's items into rows a of the destination at g*nb, the rest random."""
    rng = np.random.default_rng(seed)
    nb = int(rng.choice([1, 2]))
    na = int(rng.choice([8, 9, 16, 31, 64, 128, int(rng.integers(8, 200))]))
    ng = int(rng.choice([2, 3, 8, 16, 17, 64, int(rng.integers(2, 300))]))
    no = int(rng.integers(1, 3))
    row = ng * nb * 4 + int(rng.integers(0, 3)) * 4
    if rng.integers(0, 2):
        row = -(-row // 64) * 64
    tile = na * nb * 4 + int(rng.integers(0, 2)) * 64
    shape = (no, ng, na, nb)
    ds = (na * row, nb * 4, row, 4)
    ss = (ng * tile, tile, 4, na * 4)
    d_off, s_off = (int(x) for x in rng.integers(0, 5, 2))
    dst = rng.integers(0, 256, d_off + no * na * row + 3).astype(np.uint8)
    src = rng.integers(0, 256, s_off + no * ng * tile + 3).astype(np.uint8)
    want = dst.copy()
    _box(want, d_off, shape, ds)[...] = _box(src, s_off, shape, ss)
    return dst, src, (d_off, s_off, shape, ds, ss, False, 4), want


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("stream", [True, False])
def test_raw_narrow_gathered_transposes_match_strided_assignment(seed: int, stream: bool) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed)
    kernel.copy(dst, src, [task], stream, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


@pytest.mark.parametrize("text", ["f16[1030,64]{0,1:T(4,128)(2,1)}", "f16[300,35]{0,1:T(4,128)(2,1)}",
                                  "s8[300,517]{0,1:T(8,128)(4,1)}", "u8[129,4,40]{1,0,2:T(8,128)(4,1)}"])
@pytest.mark.parametrize("threads", [1, 2])
def test_narrow_subtiles_against_a_transposed_tiling_match_the_offsets(engine_mode: str, text: str,
                                                                       threads: int) -> None:
    target = as_target(text)
    dtype = {"f16": np.float16, "s8": np.int8, "u8": np.uint8}[text[:text.index("[")]]
    data = np.random.default_rng(len(text)).integers(0, 100, target.logical_shape).astype(dtype)
    want = np.full(target.physical_elements, 2, dtype)
    want[linear_indices(parse_shape(text))] = data.reshape(-1)
    assert np.array_equal(to_physical(data, target, pad_value=2, threads=threads), want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)
