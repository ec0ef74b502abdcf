"""The C kernel's transposes whose rows share one or two L1 sets (a multiple of 2 KiB apart;
those a multiple of 4 KiB apart go through ``same_set_rows``' paths in ``_kernel_tiles.h``: the
destination rows through an L1 stage, the source rows read down a line first). On random
hand-made tasks against numpy's strided assignment: every item width, rows 2, 4 or 6 KiB apart
on either side, sizes around the tile and line, starts off the item boundary (items moved as
runs of bytes); the bytes outside the task stay as they were. And through a layout whose rows
are 2 KiB apart."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.xla import linear_indices, parse_shape
from tests.relayout._reference import kernel_or_skip as _kernel


def _view(raw: np.ndarray, off: int, shape: tuple[int, ...], strides: tuple[int, ...], it: int) -> np.ndarray:
    """The ``it``-byte items of the box at byte ``off`` of ``raw`` as a (…, it) uint8 view."""
    return as_strided(raw[off:], shape + (it,), strides + (1,))


def _case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): a transpose of na x nb items, the destination's rows (or the
    source's) a multiple of 2 KiB apart, at random byte offsets, the rest random."""
    rng = np.random.default_rng(seed)
    it = int(rng.choice([1, 2, 4, 8]))
    sizes = [1, 3, 7, 8, 9, 17, 31, 33, 48, 64, 65, 100, 129, 130]
    na, nb = (int(rng.choice([*sizes, int(rng.integers(1, 300))])) for _ in range(2))
    far = 2048 * int(rng.choice([1, 2, 3]))
    dst_far = bool(rng.integers(0, 2))
    da = far if dst_far else nb * it + int(rng.integers(0, 3)) * it
    sb = na * it + int(rng.integers(0, 3)) * it if dst_far else far
    da, sb = max(da, nb * it), max(sb, na * it)
    d_off, s_off = (int(x) for x in rng.integers(0, it + 1, 2))
    shape, ds, ss = (na, nb), (da, it), (it, sb)
    dst = rng.integers(0, 256, d_off + (na - 1) * da + nb * it + 5).astype(np.uint8)
    src = rng.integers(0, 256, s_off + (nb - 1) * sb + na * it + 5).astype(np.uint8)
    want = dst.copy()
    _view(want, d_off, shape, ds, it)[...] = _view(src, s_off, shape, ss, it)
    return dst, src, (d_off, s_off, shape, ds, ss, False, it if it > 1 else 0), want


@pytest.mark.parametrize("seed", range(80))
def test_raw_transposes_over_rows_sharing_sets_match_strided_assignment(seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed)
    kernel.copy(dst, src, [task], False, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


@pytest.mark.parametrize("dims", [(39, 497, 192), (3, 130, 64), (2, 257, 36)])
def test_byte_subtiles_into_rows_2k_apart_match_the_offsets(engine_mode: str, dims: tuple[int, ...]) -> None:
    text = f"s8[{','.join(map(str, dims))}]{{1,2,0:T(4,128)(4,1)}}"
    target = as_target(text)
    data = np.random.default_rng(dims[1]).integers(-128, 128, dims).astype(np.int8)
    want = np.full(target.physical_elements, 5, np.int8)
    want[linear_indices(parse_shape(text))] = data.reshape(-1)
    assert np.array_equal(to_physical(data, target, pad_value=5), want)
    assert np.array_equal(from_physical(want, target), data)
