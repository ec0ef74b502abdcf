"""(4,1) quads of bytes between short logical rows and a transposed tiling's tile rows, 8 x 8
quads in registers (``_kernel_bytes_rows.h``, ordered by ``_bytes_path.quad_rows_views``):
layouts through the public calls against the brute-force reference, and raw 4-byte-item
tasks in the kernel's order against numpy's strided assignment, at odd offsets, with ragged
quads and rows (the overlapping last blocks), every byte around the box kept, and with the
source between pages that may not be read."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout import as_target
from tensorlayout.relayout._bytes_path import quad_rows_views
from tensorlayout.relayout._copy import prepare
from tests.relayout._reference import check_layout, check_page_edges, extent, kernel_or_skip

LAYOUTS = ["s8[1040,32]{0,1:T(8,128)(4,1)}", "u8[555,33]{0,1:T(8,128)(4,1)}",
           "pred[300,64]{0,1:T(4,128)(4,1)}", "u8[261,78]{0,1:T(4,128)(4,1)}",
           "s8[17,3,9,113]{0,3,2,1:T(8,128)(4,1)}", "u8[200,100]{0,1:T(32,128)(4,1)}",
           "pred[141,40]{0,1:T(8,128)(4,1)}", "u8[11,9,36]{0,2,1:T(8,128)(4,1)}",
           "s8[133,257]{0,1:T(8,128)(4,1)}", "u8[7,44]{0,1:T(4,128)(4,1)}",
           "u8[150,2051]{0,1:T(8,128)(4,1)}", "pred[20,2053]{0,1:T(8,128)(4,1)}",
           "u8[300,16]{0,1:T(8,128)(4,1)}", "s8[141,22]{0,1:T(4,128)(4,1)}",
           "pred[9,3,30]{0,2,1:T(8,128)(4,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)


@pytest.mark.parametrize("to", [True, False])
def test_a_short_row_layout_takes_the_quad_rows_order(to: bool) -> None:
    # the tile rows g, then the transpose's two axes (the one contiguous in the source first)
    t = as_target("s8[1024,32]{0,1:T(8,128)(4,1)}")
    data, buf = np.zeros(t.logical_shape, np.int8), np.zeros(t.physical_elements, np.int8)
    (task,) = prepare(t, data, buf, to).tasks
    _, _, shape, ds, ss, _, wide = task
    assert wide == 4 and shape == ((8, 4, 2, 128) if to else (8, 4, 128, 2))
    assert (ds[-1], ss[-2]) == (4, 4)
    assert (ss if to else ds)[1] == 8  # the logical rows run on over the tile rows


def test_long_rows_are_left_to_the_transposes() -> None:
    b = np.zeros(1 << 18, np.uint32)
    pv = as_strided(b, (128, 513), (4, 512))
    lv = as_strided(b, (128, 513), (2052, 4))
    assert quad_rows_views(pv, lv, True) is None  # 513 quads a row
    assert quad_rows_views(pv[:7, :8], lv[:7, :8], True) is None  # 7 rows a
    assert quad_rows_views(pv[:, :3], lv[:, :3], False) is None  # 3 quads a row
    assert quad_rows_views(pv[:, :4], lv[:, :4], False) is not None
    assert quad_rows_views(pv[:, :7], lv[:, :7], True) is None  # to_physical: from 8 quads a row
    assert quad_rows_views(pv[:, :8], lv[:, :8], True) is not None


def _task(rng: np.random.Generator, to: bool) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A box in the kernel's order (outer, g, then the transpose's axes) as (shape, ds, ss) in
    bytes of 4-byte quads: rows a of K = ng*nb quads (a gap after each), quad rows (g, b) of
    the tile rows, the outer axis past both."""
    most = int(rng.choice([9, 70]))  # (past a chunk of quads: QROWS_CHUNK)
    ng, nb = int(rng.integers(1, most)), int(rng.choice([1, 2, 3, 8]))
    while not 4 <= ng * nb <= 512:
        ng, nb = int(rng.integers(1, most)), int(rng.choice([1, 2, 3, 8]))
    na, outer = int(rng.integers(8, 200)), int(rng.integers(1, 4))
    row = 4 * ng * nb + int(rng.integers(0, 7))  # the logical side: rows a
    lg, lb, la = 4 * nb, 4, row
    pa, pb = 4, 4 * na + int(rng.integers(0, 3)) * 4  # the physical side: quad rows along a
    pg = pb * nb + int(rng.integers(0, 9))
    lo = row * na + int(rng.integers(0, 5))
    po = max(pg * ng, pb * nb) + int(rng.integers(0, 5))
    if to:  # (outer, g, b, a): source the logical rows
        return (outer, ng, nb, na), (po, pg, pb, pa), (lo, lg, lb, la)
    return (outer, ng, na, nb), (lo, lg, la, lb), (po, pg, pa, pb)


def run_quad_rows(kernel: object, src: np.ndarray, shape: tuple[int, ...], ds: tuple[int, ...],
                  ss: tuple[int, ...], d_off: int, s_off: int, threads: int = 1) -> None:
    """One box of quads (byte offsets and strides) from ``src`` cut along its outer axis into a
    task a step, as threads take them, against numpy's strided assignment; every byte around kept."""
    dst = np.full(d_off + extent(shape, ds) + 3 + 64, 0xAB, np.uint8)
    want = dst.copy()
    quads = np.dtype((np.void, 4))
    as_strided(want[d_off:d_off + 4].view(quads), shape, ds)[...] = as_strided(
        src[s_off:s_off + 4].view(quads), shape, ss)
    pieces = [(d_off + i * ds[0], s_off + i * ss[0], (1, *shape[1:]), ds, ss, False, 4)
              for i in range(shape[0])]  # (the outer axis in pieces, as threads take them)
    kernel.copy(dst, src, pieces, False, threads)  # type: ignore[attr-defined]
    assert np.array_equal(dst, want), (shape, ds, ss)


@pytest.mark.parametrize("to", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_raw_quad_rows_match_the_definition(to: bool, seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed * 2 + to)
    shape, ds, ss = _task(rng, to)
    d_off, s_off = int(rng.integers(0, 64)) | 1, int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + 3).astype(np.uint8)
    run_quad_rows(kernel, src, shape, ds, ss, d_off, s_off, threads=1 + seed % 2)




def test_raw_quad_rows_read_only_their_bytes() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(5)
    tasks = []
    for i in range(6):
        shape, ds, ss = _task(rng, i % 2 == 0)
        s_off = int(rng.integers(0, 9))
        tasks.append((shape, ds, ss, 3, s_off))
    check_page_edges(tasks, item=4, wide=4)
