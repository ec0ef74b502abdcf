"""The C kernel's streamed transposes in big blocks (``_kernel_big.h``): source rows far apart
(64 KiB or more) past 16 of them, and transposes whose destination rows run on over a third
axis g, or neither side's does. On random hand-made tasks against numpy's strided assignment:
2-, 4- and 8-byte items and swapped-free wider runs, rows numbered across g (a block spans
tiles), sizes off the block and the tile, starts off the item boundary; the bytes outside the
task stay as they were. And through layouts whose copies take those blocks when streamed."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, from_physical, to_physical
from tests.relayout._reference import kernel_or_skip as _kernel
from tests.relayout._reference import random_box_task, reference_buffer

Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # shape, dst strides, src strides


def _sizes(kind: str, rng: np.random.Generator, it: int) -> Box:
    """(shape, dst strides, src strides) of a transpose (g, a, b) of ``kind``: "far" (source rows
    64 KiB or more apart, running on over g or g alone), "dst_run" (the destination's rows run
    on over g) or "apart" (neither side's)."""
    pick = [1, 3, 7, 8, 9, 17, 33, 65, 130, 300, 517]
    na, nb = (int(rng.choice(pick)) for _ in range(2))
    if kind == "far":
        ng = int(rng.choice([1, 3]))
        nb = int(rng.integers(17, 40))
        sb = 65536 + int(rng.integers(0, 5)) * it
        da = nb * it + int(rng.integers(0, 3)) * it
        sg, dg = na * it, na * da
        return (ng, na, nb), (dg, da, it), (sg, it, sb)
    ng = int(rng.integers(2, 9))
    sb = na * it + int(rng.integers(0, 3)) * it
    sg = nb * sb + int(rng.integers(0, 3)) * it
    if kind == "dst_run":
        dg = nb * it
        da = ng * nb * it + int(rng.integers(0, 3)) * it
    else:
        da = nb * it + int(rng.integers(1, 3)) * it
        dg = na * da + int(rng.integers(0, 3)) * it
    return (ng, na, nb), (dg, da, it), (sg, it, sb)


def _case(seed: int, kind: str) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): a random transpose of ``kind`` at random byte offsets, the rest
    of both arrays random."""
    rng = np.random.default_rng(seed)
    it = int(rng.choice([2, 4, 8]))
    shape, ds, ss = _sizes(kind, rng, it)
    return random_box_task(rng, it, shape, ds, ss)


@pytest.mark.parametrize("kind", ["far", "dst_run", "apart"])
@pytest.mark.parametrize("seed", range(12))
def test_streamed_transposes_in_big_blocks_match_strided_assignment(kind: str, seed: int) -> None:
    kernel = _kernel()
    dst, src, task, want = _case(seed, kind)
    kernel.copy(dst, src, [task], True, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("text", ["s16[40,33000]{0,1:T(4,128)(2,1)}", "f32[20,17000]{0,1:T(8,128)}",
                                  "s32[300,261]{0,1:T(2,128)}", "f64[8,130,70]{1,2,0:T(1,128)}",
                                  "f32[5,300,33]{1,0,2:T(4,128)}", "s32[4,300,32]{1,0,2:T(1,128)}",
                                  # (big blocks across two axes: _kernel_big.h's big_plan)
                                  "s64[700,130]{0,1:T(4,128)}", "f32[1000,91]{0,1:T(8,128)}",
                                  "u32[257,3,130]{0,2,1:T(2,128)}"])
def test_streamed_layouts_in_big_blocks_match_the_offsets(monkeypatch: pytest.MonkeyPatch, text: str,
                                                          threads: int) -> None:
    _kernel()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 0)  # every copy streamed: the big blocks' sizes
    target = as_target(text)
    dtype = {"s16": np.int16, "f32": np.float32, "s32": np.int32, "u32": np.uint32, "s64": np.int64,
             "f64": np.float64}[text[:text.index("[")]]
    data = np.random.default_rng(len(text)).integers(-999, 999, target.logical_shape).astype(dtype)
    want = reference_buffer(data, text, 3)
    assert np.array_equal(to_physical(data, target, pad_value=3, threads=threads), want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)
