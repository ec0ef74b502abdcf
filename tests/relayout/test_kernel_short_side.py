"""The C kernel's transposes of 4-byte items with a short side of 3 or 4 items against a long
one (``transpose_u32_short_avx2`` in ``_kernel_regs.h``: two 4 x 4 tiles a round, one in each
128-bit lane; the SSE2 tiles or scalar loop where the CPU lacks AVX2). On random hand-made
tasks against numpy's strided assignment: the short side on either array, the long side around
multiples of 8, rows packed or apart, starts off every byte boundary (items moved as 4-byte
runs of bytes), arrays that end at the task's last byte; the bytes outside the task stay as
they were. And through the ragged (2,1) layout whose pairs take the path."""

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
    """(dst, src, task, want): a transpose of na x nb 4-byte items, one side 3 or 4 items, the
    arrays ending at the task's last byte or a little after, the rest random."""
    rng = np.random.default_rng(seed)
    short = int(rng.choice([3, 4]))
    long = int(rng.choice([8, 9, 15, 16, 17, 64, 127, 128, int(rng.integers(1, 300))]))
    na, nb = (short, long) if rng.integers(0, 2) else (long, short)
    da = nb * 4 + int(rng.integers(0, 3)) * 4 + int(rng.choice([0, 0, 2666]))
    sb = na * 4 + int(rng.integers(0, 3)) * 4 + int(rng.choice([0, 0, 2666]))
    d_off, s_off = (int(x) for x in rng.integers(0, 5, 2))
    shape, ds, ss = (na, nb), (da, 4), (4, sb)
    dst = rng.integers(0, 256, d_off + (na - 1) * da + nb * 4 + int(rng.integers(0, 3))).astype(np.uint8)
    src = rng.integers(0, 256, s_off + (nb - 1) * sb + na * 4 + int(rng.integers(0, 3))).astype(np.uint8)
    want = dst.copy()
    _box(want, d_off, shape, ds)[...] = _box(src, s_off, shape, ss)
    return dst, src, (d_off, s_off, shape, ds, ss, False, 4), want


@pytest.mark.parametrize("seed", range(100))
def test_raw_short_side_transposes_match_strided_assignment(seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed)
    kernel.copy(dst, src, [task], False, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


@pytest.mark.parametrize("dims", [(1246, 89, 15), (130, 7, 15), (9, 3, 13), (200, 5, 14)])
@pytest.mark.parametrize("threads", [1, 2])
def test_ragged_pairs_against_logical_rows_match_the_offsets(engine_mode: str, dims: tuple[int, ...],
                                                             threads: int) -> None:
    text = f"bf16[{','.join(map(str, dims))}]{{0,2,1:T(8,128)(2,1)}}"
    target = as_target(text)
    data = np.random.default_rng(dims[0]).integers(0, 1 << 16, dims).astype(np.uint16)
    want = np.full(target.physical_elements, 9, np.uint16)
    want[linear_indices(parse_shape(text))] = data.reshape(-1)
    assert np.array_equal(to_physical(data, target, pad_value=9, threads=threads), want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)
