"""The C kernel's partial weaves (``weave_part`` / ``unweave_part`` in ``_kernel_nest.h``): m
rows woven into (out of) groups of M > m items, a ragged sub-tile's last rows (and whole groups,
m = M, whose 4-byte items go through SSE2 transposes). On random hand-made tasks against
numpy's strided assignment: every item width, group and row count, outer axes, cached or
streamed, into a padded destination on one thread (the weave rewrites the other items of its
groups with what they hold), on several or into a destination whose gaps are not padding (then
item by item); the bytes no task writes stay as they were. And through the ragged (4,1) / (2,1)
layouts that take the path, against their offsets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import kernel_or_skip as _kernel

ITEMS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}



def _case(seed: int) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray, bool]:
    """(dst, src, task, want, weave): a task of outer axes (r, then g of M-item groups) and m
    rows, woven (weave) into a buffer of groups, or unwoven from one, the rest of dst random."""
    rng = np.random.default_rng(seed)
    item = int(rng.choice(list(ITEMS)))
    dtype = ITEMS[item]
    group = int(rng.choice([4, 8]))
    m = int(rng.integers(2, group + 1))  # (whole groups too: the vector weaves of 4-byte items)
    ng, nr = int(rng.integers(1, 700)), int(rng.integers(1, 4))
    weave = bool(rng.integers(0, 2))
    grouped = rng.integers(0, 1 << 30, size=nr * ng * group + int(rng.integers(0, 3))).astype(dtype)
    rows = rng.integers(0, 1 << 30, size=(nr, m, ng + int(rng.integers(0, 3)))).astype(dtype)
    g_strides = (ng * group * item, group * item, item)  # (r, g, b) in the grouped buffer
    r_strides = (rows.strides[0], item, rows.strides[1])
    dst, src = (grouped, rows) if weave else (rows, grouped)
    task = (0, 0, (nr, ng, m), g_strides if weave else r_strides, r_strides if weave else g_strides)
    want = dst.copy()
    as_strided(want, task[2], task[3])[...] = as_strided(src, task[2], task[4])
    return dst, src, task, want, weave


@pytest.mark.parametrize("seed", range(200))
def test_raw_partial_weaves_match_numpy(seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want, _ = _case(seed)
    assert kernel.weave_axes(task[2], task[3], task[4], dst.itemsize) is not None  # type: ignore[attr-defined]
    stream, workers, padded = bool(seed % 2), 1 + seed % 3 // 2, seed % 5 != 0
    kernel.copy(dst, src, [task], stream, workers, padded)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("seed", range(40))
def test_partial_weaves_of_pieces_on_threads_match_numpy(seed: int) -> None:
    # the task cut along its groups into pieces the kernel's threads claim
    kernel = _kernel()
    dst, src, task, want, _ = _case(1000 + seed)
    _, _, shape, ds, ss = task
    cuts = sorted({0, shape[1], *np.random.default_rng(seed).integers(0, shape[1], 5).tolist()})
    tasks = [(a * ds[1], a * ss[1], (shape[0], b - a, shape[2]), ds, ss) for a, b in itertools.pairwise(cuts)]
    kernel.copy(dst, src, tasks, False, 3, True)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)


LAYOUTS = ["pred[5,51,402]{2,1,0:T(4,128)(4,1)}", "s8[3,30,130]{2,1,0:T(8,128)(4,1)}",
           "u8[7,403]{1,0:T(8,128)(4,1)}", "bf16[2,13,300]{2,1,0:T(8,128)(2,1)}",
           "s8[2,38,260]{1,2,0:T(8,128)(4,1)}", "f32[21,300]{1,0:T(8,128)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_ragged_sub_tile_layouts_match_their_offsets(text: str, threads: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    t = as_target(text)
    dtype = {"pred": np.bool_, "s8": np.int8, "u8": np.uint8, "bf16": np.uint16, "f32": np.float32}[
        text[:text.index("[")]]
    data = np.random.default_rng(7).integers(0, 2 if dtype == np.bool_ else 100, size=t.logical_shape)
    data = data.astype(dtype)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 0)
    want = np.full(t.physical_elements, 1, dtype)
    want[t.offsets] = data.reshape(-1)  # by definition
    got = to_physical(data, t, 1, threads=threads)
    assert np.array_equal(got, want)
    assert np.array_equal(from_physical(got, t, threads=threads), data)


def test_a_logical_out_with_gaps_of_user_data_keeps_them() -> None:
    # out's rows of 3 bytes are 4 apart in a larger array: the 4th byte is the caller's, never
    # the kernel's to rewrite (its partial weaves write only into padded buffers)
    t = as_target("u8[5000,3]{0,1}")
    data = np.random.default_rng(3).integers(0, 256, t.logical_shape).astype(np.uint8)
    big = np.full((5000, 4), 7, np.uint8)
    got = from_physical(to_physical(data, t), t, out=big[:, :3], threads=1)
    assert np.array_equal(got, data) and (big[:, 3] == 7).all()
    task = _kernel().weave_axes((5000, 3), big[:, :3].strides, (1, 5000), 1)  # type: ignore[attr-defined]
    assert task is not None  # the pair is a partial weave (taken item by item here)
