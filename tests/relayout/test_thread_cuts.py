"""Where a box is cut for threads (``_kernel_path._cut_axis``): along its outer axis, unless the
pieces would then read or write short runs beyond the caches; then along the axis that keeps
long runs on both sides (a transpose's inner axis); a box whose outer axis has fewer steps than
two lines of items cut along it all the same where its steps are whole lines (``_cut_unit``),
else along the next axis. Every byte of such copies, cut along each axis, against the
brute-force buffer and the logical array, on 2 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
import tensorlayout.relayout._kernel_path as path
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.relayout._plan import copy_plan
from tests.relayout._reference import check_layout, kernel_or_skip, reference_buffer

LAYOUTS = ["f64[4096,32]{0,1:T(1,128)}",  # 32 destination rows: cut along the 4096
           "s32[16,512,32]{1,0,2:T(1,128)}",
           "f32[4,81,307]{1,0,2:T(1,128)}",  # ragged
           "u16[3000,40]{0,1:T(8,128)}",
           "u8[700,96]{0,1:T(8,128)(4,1)}",
           "f32[300,200]{1,0:T(8,128)}"]  # no transpose: cut along the outer axis as before


@pytest.fixture
def cut_small(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Copies from 1 KiB shared among threads, boxes from 1 KiB cut by their runs; the axes cut."""
    kernel_or_skip()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1024)
    monkeypatch.setattr(engine, "ONE_THREAD_SMALL_BYTES", 1024)
    monkeypatch.setattr(path, "CUT_MIN_BYTES", 1024)
    axes: list[int] = []
    real = path._cut_axis

    def spy(*args: object) -> int:
        axes.append(real(*args))  # type: ignore[arg-type]
        return axes[-1]
    monkeypatch.setattr(path, "_cut_axis", spy)
    return axes


def _data(text: str) -> np.ndarray:
    t = as_target(text)
    dtype = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[t.element_bits]
    return np.random.default_rng(len(text)).integers(1, 200, t.logical_shape).astype(dtype)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [2, 3])
def test_cut_copies_write_every_byte(cut_small: list[int], text: str, threads: int) -> None:
    data = _data(text)
    want = reference_buffer(data, text, 0)
    buf = np.full(want.shape, 0xAB, want.dtype)
    assert to_physical(data, text, out=buf, threads=threads) is buf
    assert np.array_equal(buf.view(np.uint8), want.view(np.uint8))
    back = np.zeros_like(data)
    assert np.array_equal(from_physical(want, text, out=back, threads=threads), data)


def test_transposes_are_cut_along_their_long_runs(cut_small: list[int]) -> None:
    transpose, rows = "f64[2048,32]{0,1:T(1,128)}", "f32[200,300]{1,0:T(8,128)}"  # (not planned before)
    to_physical(_data(transpose), transpose, threads=2)
    assert cut_small and set(cut_small) == {1}
    cut_small.clear()
    to_physical(_data(rows), rows, threads=2)
    assert cut_small and set(cut_small) == {0}


def test_the_pieces_tile_the_box() -> None:
    t = as_target("f64[65536,32]{0,1:T(1,128)}")  # 16 MiB: cut along the 65536
    data, buf = np.zeros(t.logical_shape), np.zeros(t.physical_elements)
    tasks = path.kernel_tasks(copy_plan(t), t, data, buf, True, 16)
    assert len(tasks) == 16 and all(task[2] == (32, 4096) for task in tasks)
    assert sorted(task[1] for task in tasks) == [k * 4096 * 256 for k in range(16)]  # source offsets


def test_one_pass_relayouts_cut_alike(cut_small: list[int]) -> None:
    src, dst = "f64[4096,32]{0,1:T(1,128)}", "f64[4096,32]{0,1:T(8,128)}"
    data = _data(src)
    got = relayout(to_physical(data, src), src, dst, threads=3)
    assert np.array_equal(got.view(np.uint8), reference_buffer(data, dst, 0).view(np.uint8))


@pytest.mark.parametrize(("text", "steps"), [("s64[64,8,1024]{2,0,1:T(1,128)}", (1, 64, 1024)),
                                             ("f32[512,512,16]{1,0,2:T(1,128)}", (16, 16384))])
def test_short_outer_axes_are_cut(text: str, steps: tuple[int, ...]) -> None:
    """8 steps of 512 KiB (whole lines: one each), and 16 rows of a transpose (not whole lines: cut
    along the 262144 instead); both were one piece, which one thread copied alone."""
    t = as_target(text)
    dtype = np.uint64 if text.startswith("s64") else np.uint32
    data, buf = np.zeros(t.logical_shape, dtype), np.zeros(t.physical_elements, dtype)
    tasks = path.kernel_tasks(copy_plan(t), t, data, buf, True, 16)
    assert len(tasks) >= 8 and tasks[0][2] == steps


@pytest.mark.parametrize("text", ["s64[64,8,1024]{2,0,1:T(1,128)}", "u8[4,96,4096]{2,0,1:T(8,128)(4,1)}"])
def test_short_outer_axes_write_every_byte(cut_small: list[int], text: str) -> None:
    data = _data(text)
    want = reference_buffer(data, text, 0)
    buf = np.full(want.shape, 0xAB, want.dtype)
    to_physical(data, text, out=buf, threads=3)
    assert np.array_equal(buf.view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(want, text, threads=3), data)


_TILES = {"pred": ["(8,128)(4,1)", "(32,128)(4,1)", "(4,128)(4,1)"], "u8": ["(8,128)(4,1)", "(8,128)"],
          "bf16": ["(8,128)(2,1)", "(4,128)(2,1)"], "f32": ["(8,128)", "(2,128)", "(1,128)"],
          "s64": ["(8,128)", "(1,128)"]}


def _random_layout(rng: np.random.Generator) -> str:
    """A tiled layout of 2 to 4 axes, any order, ragged sizes, of at most ~256 KiB."""
    et = str(rng.choice(list(_TILES)))
    rank = int(rng.integers(2, 5))
    dims = [int(rng.integers(1, 9)) if rng.random() < 0.4 else int(rng.integers(9, 300)) for _ in range(rank)]
    while np.prod(dims) > 1 << 15:
        dims[int(np.argmax(dims))] //= 2
    order = ",".join(map(str, rng.permutation(rank)))
    return f"{et}[{','.join(map(str, dims))}]{{{order}:T{rng.choice(_TILES[et])}}}"


@pytest.mark.parametrize("seed", range(4))
def test_random_layouts_cut_into_pieces(cut_small: list[int], seed: int) -> None:
    """Random layouts (short outer axes among them) whose copies from 1 KiB are cut for 2 or 3
    threads: every byte both ways, against the brute-force buffer."""
    rng = np.random.default_rng(seed)
    for _ in range(12):
        check_layout(_random_layout(rng), int(rng.integers(2, 4)))
    assert cut_small and any(cut_small)  # (some cut along an inner axis)
