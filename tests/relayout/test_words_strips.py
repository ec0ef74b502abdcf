"""In-cache transposes whose source rows run on over a third axis, from 4 MiB of destination
on, go in strips with streamed stores (strips_in_cache in _kernel_strips.h): every byte
against numpy's strided assignment and the XLA reference, the bytes around the box kept."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target, from_physical, to_physical

from ._reference import check_raw_task, kernel_or_skip, reference_buffer


@pytest.mark.parametrize("item", [2, 4, 8])
@pytest.mark.parametrize(("d_off", "s_off"), [(0, 0), (16, 1), (48, 3)])
def test_source_rows_run_on_in_strips(item: int, d_off: int, s_off: int) -> None:
    """A column-major tile row's transposes (ng x na x nb, the source rows ng*na items long
    plus a gap), the destination's rows and g whole lines apart and over 4 MiB, d on 16
    bytes but not always on a line (a partial first strip), nb past whole strips and tiles."""
    kernel = kernel_or_skip()
    ng, na, nb = 11, 8, (4 << 20) // (11 * 8 * item) + 7
    da = (nb * item + 63) // 64 * 64
    ds = (na * da, da, item)
    sb = ng * na * item + 3 * item
    ss = (na * item, item, sb)
    dtype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    src = np.random.default_rng(item).integers(0, 1 << 15, (nb * sb) // item + 64).astype(dtype)
    check_raw_task(kernel, src, (ng, na, nb), ds, ss, d_off, s_off * item, False, 7)


@pytest.mark.parametrize("text", ["f32[3000,701]{0,1:T(8,128)}", "s64[6835,181]{0,1:T(4,128)}",
                                  "bf16[3003,1000]{0,1:T(8,128)(2,1)}", "f16[3001,2000]{0,1:T(4,128)(2,1)}"])
def test_tiled_to_physical_in_strips(text: str) -> None:
    """to_physical of column-major tilings of 4-16 MiB (one thread: not streamed by size)
    against the buffer from XLA's linear indices, and back."""
    t = as_target(text)
    widths = {"f32": np.float32, "s64": np.int64, "bf16": np.float16, "f16": np.float16}
    dtype = widths[text[:text.index("[")]]
    data = np.random.default_rng(len(text)).integers(0, 1000, t.logical_shape).astype(dtype)
    want = reference_buffer(data, text, 0)
    assert np.array_equal(to_physical(data, t, threads=1).view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(want, t, threads=1), data)


@pytest.mark.parametrize(("item", "nb"), [(2, 8), (2, 16), (4, 8), (8, 4)])
@pytest.mark.parametrize("ng", [11, 70])
def test_destination_pieces_grouped(item: int, nb: int, ng: int) -> None:
    """Destination rows that run on over g in pieces shorter than a line (a column-major
    tile read into logical rows: nb items a row per g), in groups of g (all 11, or two of 32
    and 6 g by g), na past whole tiles, the rows a gap apart, every byte and its guards."""
    kernel = kernel_or_skip()
    na = 131
    da = ng * nb * item + 3 * item
    sb = na * item + 5 * item
    sg = nb * sb + 64
    dtype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    src = np.random.default_rng(ng + nb).integers(0, 1 << 15, (ng * sg) // item + 64).astype(dtype)
    check_raw_task(kernel, src, (ng, na, nb), (nb * item, da, item), (sg, item, sb), 2 * item, item, False, 5)
