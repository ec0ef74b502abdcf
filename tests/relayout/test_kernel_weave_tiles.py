"""The C kernel's weaves of eight 4-byte rows as 8 x 8 register tiles (``weave_u32_8_avx2`` and
``unweave_u32_8_avx2`` in ``_kernel_regs.h``; the SSE2 or scalar loops where the CPU lacks
AVX2), the unweave staged in L1 where its rows are a multiple of 4 KiB apart. On random
hand-made tasks against numpy's strided assignment: group counts around the tile (8) and stage
(64) sizes, rows at 4 KiB multiples and not, outer axes, starts off every byte boundary (items
moved as 4-byte runs of bytes); the bytes outside the task stay as they were. And through the
layout that takes the path (a (4,1) sub-tile of bytes against a transposed tiling)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.xla import linear_indices, parse_shape
from tests.relayout._reference import kernel_or_skip as _kernel


def _view(raw: np.ndarray, off: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """The 4-byte items of the box at byte ``off`` of ``raw`` as a (…, 4) uint8 view."""
    return as_strided(raw[off:], shape + (4,), strides + (1,))


def _case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): a task of r outer steps of n groups of eight 4-byte items, woven
    into groups (weave) or unwoven into 8 rows, at random byte offsets, the rest random."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 7, 8, 9, 63, 64, 65, 127, 128, 130, int(rng.integers(1, 400))]))
    r = int(rng.integers(1, 3))
    weave = bool(rng.integers(0, 2))
    row = n * 4 + int(rng.integers(0, 9))  # the 8 rows' pitch: a multiple of 4 KiB or anything
    if rng.integers(0, 2):
        row = -(-row // 4096) * 4096
    rows_bytes, groups_bytes = 8 * row, n * 32 + int(rng.integers(0, 5))
    d_off, s_off = (int(x) for x in rng.integers(0, 4, 2))
    rows_shape, rows_strides = (r, n, 8), (rows_bytes, 4, row)
    groups_shape, groups_strides = (r, n, 8), (groups_bytes, 32, 4)
    if weave:
        ds, ss, shape = groups_strides, rows_strides, groups_shape
        dsize, ssize = r * groups_bytes + d_off, r * rows_bytes + s_off
    else:
        ds, ss, shape = rows_strides, groups_strides, rows_shape
        dsize, ssize = r * rows_bytes + d_off, r * groups_bytes + s_off
    dst = rng.integers(0, 256, dsize + 3).astype(np.uint8)
    src = rng.integers(0, 256, ssize + 3).astype(np.uint8)
    want = dst.copy()
    _view(want, d_off, shape, ds)[...] = _view(src, s_off, shape, ss)
    return dst, src, (d_off, s_off, shape, ds, ss, False, 4), want


@pytest.mark.parametrize("seed", range(60))
def test_raw_eight_row_weaves_match_strided_assignment(seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed)
    kernel.copy(dst, src, [task], False, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


def test_raw_eight_row_weaves_take_the_pair() -> None:
    """The tasks above are the weave rule's: their pair of axes is the weave's (unweave's)."""
    kernel = _kernel()
    assert kernel.weave_axes((5, 8), (4, 4096), (32, 4), 4) == (0, 1)  # type: ignore[attr-defined]
    assert kernel.weave_axes((5, 8), (32, 4), (4, 4096), 4) == (0, 1)  # type: ignore[attr-defined]


@pytest.mark.parametrize("dims", [(65536, 32), (4096, 32), (1000, 32), (67, 29), (130, 8)])
@pytest.mark.parametrize("threads", [1, 2])
def test_transposed_byte_subtiles_match_the_offsets(engine_mode: str, dims: tuple[int, int],
                                                    threads: int) -> None:
    text = f"u8[{dims[0]},{dims[1]}]{{0,1:T(4,128)(4,1)}}"
    target = as_target(text)
    data = np.random.default_rng(dims[0]).integers(0, 256, dims).astype(np.uint8)
    want = np.full(target.physical_elements, 7, np.uint8)
    want[linear_indices(parse_shape(text))] = data.reshape(-1)
    assert np.array_equal(to_physical(data, target, pad_value=7, threads=threads), want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)
