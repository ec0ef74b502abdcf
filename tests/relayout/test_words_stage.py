"""The kernel's narrow transposes of 4-byte items through an L1 stage of whole lines
(_kernel_words_stage.h): source rows (or destination rows) that run on over g in pieces of 1, 2
or 4 items and lie a multiple of 2 KiB apart (a column-major T(4,128), T(2,128), T(1,128)
tiling's rows; a (2,1) sub-tile's pairs; a (4,1) one's quads). Against numpy's strided
assignment on hand-made tasks (rows past the stage's 128 and past whole 8s, g past whole
lines and groups, rows starting anywhere in a line, starts off the piece boundary; the bytes
around the task keep their values), and against the offsets' definition through the public
calls at 1 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tests.relayout._reference import kernel_or_skip, reference_buffer

IT = 4


def _at(raw: np.ndarray, line_at: int, rng: np.random.Generator) -> int:
    """A byte offset into ``raw`` whose address lies ``line_at`` bytes into a cache line,
    mostly on a piece boundary, sometimes (1 in 5) one item off it."""
    off = (line_at - raw.ctypes.data) % 64
    if rng.integers(0, 5) == 0:
        off = (off + IT) % 64
    return int(off)


def _case(seed: int, narrow_src: bool) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): ng transposes of na x nb 4-byte items, the narrow side's rows
    (1, 2 or 4 items a g) running on over g, the other side's rows a multiple of 2 KiB apart."""
    rng = np.random.default_rng(seed)
    w = int(rng.choice([1, 2, 4]))
    ng = int(rng.choice([2, 3, 5, 8, 9, 16, 17, 33, int(rng.integers(2, 70))]))
    n = int(rng.choice([17, 24, 31, 127, 128, 129, 136, 200, 257, int(rng.integers(17, 300))]))
    far = 2048 * int(rng.choice([1, 2, 3]))
    piece = w * IT
    line_at = piece * int(rng.integers(0, 64 // piece))
    if narrow_src:
        na, nb = w, n
        sg, sb = piece, far
        da = nb * IT + IT * int(rng.integers(0, 3))
        dg = na * da + IT * int(rng.integers(0, 5))
    else:
        na, nb = n, w
        dg, da = piece, far
        sb = na * IT + IT * int(rng.integers(0, 3))
        sg = nb * sb + IT * int(rng.integers(0, 5))
    shape, ds, ss = (ng, na, nb), (dg, da, IT), (sg, IT, sb)
    dst = rng.integers(0, 256, (ng - 1) * dg + (na - 1) * da + nb * IT + 128).astype(np.uint8)
    src = rng.integers(0, 256, (ng - 1) * sg + (nb - 1) * sb + na * IT + 128).astype(np.uint8)
    if narrow_src:
        s_off, d_off = _at(src, line_at, rng), IT * int(rng.integers(0, 16))
    else:
        d_off, s_off = _at(dst, line_at, rng), IT * int(rng.integers(0, 16))
    want = dst.copy()
    box = shape + (IT,)
    as_strided(want[d_off:], box, ds + (1,))[...] = as_strided(src[s_off:], box, ss + (1,))
    return dst, src, (d_off, s_off, shape, ds, ss, False, IT), want


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("narrow_src", [True, False], ids=["source-rows", "destination-rows"])
def test_raw_staged_narrow_transposes_match_strided_assignment(seed: int, narrow_src: bool) -> None:
    kernel = kernel_or_skip()
    dst, src, task, want = _case(seed, narrow_src)
    kernel.copy(dst, src, [task], False, 1)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want)  # (the bytes outside the task too)


LAYOUTS = ["f32[200,512]{0,1:T(4,128)}", "f32[300,1024]{0,1:T(2,128)}", "u32[131,512]{0,1:T(1,128)}",
           "bf16[260,1024]{0,1:T(8,128)(2,1)}", "bf16[9,10,7,1024]{0,3,1,2:T(4,128)(2,1)}",
           "s8[136,2048]{0,1:T(8,128)(4,1)}", "f32[64,3,512]{0,2,1:T(4,128)}"]
DTYPES = {"f32": np.float32, "u32": np.uint32, "bf16": np.uint16, "s8": np.int8}


def _data(text: str) -> np.ndarray:
    t = as_target(text)
    rng = np.random.default_rng(len(text))
    return rng.integers(0, 120, t.logical_shape).astype(DTYPES[text[:text.index("[")]])


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_staged_layouts_match_the_offsets(engine_mode: str, text: str, threads: int) -> None:
    data = _data(text)
    want = reference_buffer(data, text, 0)
    buf = to_physical(data, as_target(text), threads=threads, pad_value=0)
    assert np.array_equal(buf.view(np.uint8), want.view(np.uint8))
    back = from_physical(want, as_target(text), threads=threads)
    assert np.array_equal(back.view(np.uint8), data.view(np.uint8))


@pytest.mark.parametrize("threads", [1, 3])
def test_staged_relayout_between_tilings(engine_mode: str, threads: int) -> None:
    src, dst = "f32[200,512]{0,1:T(4,128)}", "f32[200,512]{1,0:T(512)}"
    data = _data(src)
    out = relayout(reference_buffer(data, src, 0), as_target(src), as_target(dst), threads=threads)
    assert np.array_equal(out.view(np.uint8), reference_buffer(data, dst, 0).view(np.uint8))
