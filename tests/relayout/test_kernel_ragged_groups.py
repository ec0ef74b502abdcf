"""The C kernel's transposes of a ragged (4,1) sub-tile's last three rows of bytes
(``transpose_woven3`` in ``_kernel_strips.h``: pieces of 3 bytes of each 4-byte group, woven
through L1 stages; the destination's groups merged three bytes at a time, their fourth bytes
rewritten with what they hold only where the task's gaps are its own) and the narrower tiles
at a transpose's edges (``transpose_edges`` in ``_kernel_tiles.h``). On random hand-made tasks
against numpy's strided assignment: group counts and row lengths around the vector and stage
sizes, arrays that end at the task's last byte, padded or not, one thread or several; the bytes
outside the task (the groups' fourth bytes among them) stay as they were. And through the
layouts that take the paths, against their offsets."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.xla import linear_indices, parse_shape
from tests.relayout._reference import kernel_or_skip as _kernel


def _box(raw: np.ndarray, off: int, shape: tuple[int, ...], strides: tuple[int, ...],
         it: int = 1) -> np.ndarray:
    """The ``it``-byte items of the box at byte ``off`` of ``raw`` as a (…, it) uint8 view."""
    return as_strided(raw[off:], shape + (it,), strides + (1,))


def _end(off: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """One past the box's last byte (1-byte items, strides >= 0)."""
    return off + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1


def _group_case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray, bool]:
    """(dst, src, task, want, to): ng pieces of three bytes of each 4-byte group over nr rows
    (na or nb), into the groups (to) or out of them; the arrays end at the task's last byte or a
    little after, the rest random."""
    rng = np.random.default_rng(seed)
    ng = int(rng.choice([2, 3, 31, 32, 33, 100, 700, int(rng.integers(2, 3000))]))
    nr = int(rng.choice([2, 7, 8, 9, 23, 31, 33, int(rng.integers(2, 70))]))
    to = bool(rng.integers(0, 2))
    rows = ng * 4 + int(rng.integers(0, 3)) * 4  # the groups' rows (nr of them)
    line = ng * nr + int(rng.integers(0, 5))  # the three rows of bytes, one after the other
    groups = (ng, nr, 3), (4, rows, 1)  # shape and strides of (g, row, byte of the group)
    plain = (ng, nr, 3), (nr, 1, line)  # ... and of the rows of bytes
    if to:  # (g, a = row, b = byte): d = g*4 + a*rows + b, s = g*nr + a + b*line
        shape, (ds, ss) = groups[0], (groups[1], plain[1])
    else:  # (g, a = byte, b = row): d = g*nr + a*line + b, s = g*4 + a + b*rows
        shape, ds, ss = (ng, 3, nr), (nr, line, 1), (4, 1, rows)
    d_off, s_off = (int(x) for x in rng.integers(0, 4, 2))
    dst = rng.integers(0, 256, _end(d_off, shape, ds) + int(rng.integers(0, 2))).astype(np.uint8)
    src = rng.integers(0, 256, _end(s_off, shape, ss) + int(rng.integers(0, 2))).astype(np.uint8)
    want = dst.copy()
    _box(want, d_off, shape, ds)[...] = _box(src, s_off, shape, ss)
    return dst, src, (d_off, s_off, shape, ds, ss), want, to


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("workers, padded", [(1, True), (1, False), (2, True)])
def test_raw_three_byte_pieces_of_groups_match_strided_assignment(seed: int, workers: int,
                                                                  padded: bool) -> None:
    kernel = _kernel()
    dst, src, task, want, _ = _group_case(seed)
    kernel.copy(dst, src, [task], False, workers, padded)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the groups' fourth bytes and the bytes outside too)


def _edge_case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): a transpose of na x nb items of 1, 2, 4 or 8 bytes, both a few
    items past a multiple of the tiles, at random byte offsets, the rest random."""
    rng = np.random.default_rng(seed)
    it = int(rng.choice([1, 2, 4, 8]))
    na, nb = (int(rng.integers(1, 6)) * 8 + int(rng.integers(0, 16)) for _ in range(2))
    da, sb = (n * it + int(rng.integers(0, 3)) * it for n in (nb, na))
    d_off, s_off = (int(x) for x in rng.integers(0, it + 1, 2))
    shape, ds, ss = (na, nb), (da, it), (it, sb)
    dst = rng.integers(0, 256, d_off + (na - 1) * da + nb * it + 3).astype(np.uint8)
    src = rng.integers(0, 256, s_off + (nb - 1) * sb + na * it + 3).astype(np.uint8)
    want = dst.copy()
    _box(want, d_off, shape, ds, it)[...] = _box(src, s_off, shape, ss, it)
    return dst, src, (d_off, s_off, shape, ds, ss, False, it if it > 1 else 0), want


@pytest.mark.parametrize("seed", range(80))
def test_raw_transpose_edges_match_strided_assignment(seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want = _edge_case(seed)
    kernel.copy(dst, src, [task], False, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("text", ["pred[19,64,308,23]{2,0,1,3:T(8,128)(4,1)}",
                                  "u8[7,5,200,9]{2,0,1,3:T(8,128)(4,1)}",
                                  "s8[3,2,130,23]{2,0,1,3:T(4,128)(4,1)}",
                                  "u8[11,300,40]{1,0,2:T(8,128)(4,1)}"])
@pytest.mark.parametrize("threads", [1, 2])
def test_ragged_byte_subtiles_against_a_minor_dim_match_the_offsets(engine_mode: str, text: str,
                                                                    threads: int) -> None:
    target = as_target(text)
    dtype = np.bool_ if text.startswith("pred") else np.int8 if text.startswith("s8") else np.uint8
    rng = np.random.default_rng(len(text))
    data = rng.integers(0, 2 if dtype == np.bool_ else 100, target.logical_shape).astype(dtype)
    want = np.full(target.physical_elements, 1, dtype)
    want[linear_indices(parse_shape(text))] = data.reshape(-1)
    assert np.array_equal(to_physical(data, target, pad_value=1, threads=threads), want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)
