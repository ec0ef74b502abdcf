"""The 8-byte blocks of _kernel_words.h read along the source rows in chunks (words_chunked:
source rows a multiple of 2 KiB apart, 4 times the destination's or more, 1 MiB or more a
transpose): raw tasks of any extents past whole chunks and blocks, any start, with every byte
around the box kept and the source between unreadable pages; and layouts of that shape through
the public calls (1 and default threads). And big_plan's blocks of whole source pieces
(_kernel_big.h), streamed."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tests.relayout._reference import check_layout, check_page_edges, check_raw_task, kernel_or_skip

LAYOUTS = ["f64[100,1536]{0,1:T(1,128)}", "s64[1000,150]{0,1:T(1,128)}", "u64[1000,2,140]{0,2,1:T(1,128)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_chunked_layouts_match_the_reference(engine_mode: str, text: str, threads: int | None) -> None:
    check_layout(text, threads, guarded=True)


def _task(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int]:
    """(shape, ds, ss, d_off, s_off) of a chunked transpose: na past a few chunks of 64 items (any
    remainder), na * nb items of 1 MiB or more, source rows a 2 KiB multiple apart and 4 times
    the destination's or more."""
    ng, na = int(rng.integers(1, 3)), int(rng.integers(64, 700))
    nb = -(-(1 << 17) // na) + int(rng.integers(0, 12))
    da = 8 * (nb + int(rng.integers(0, 5)))
    sb = -(-max(8 * na, 4 * da) // 2048) * 2048 * int(rng.integers(1, 3))
    dg, sg = da * na + 8 * int(rng.integers(0, 3)), sb * nb + 64 * int(rng.integers(0, 2))
    return (ng, na, nb), (dg, da, 8), (sg, 8, sb), 8 * int(rng.integers(0, 9)), 8 * int(rng.integers(0, 9))


@pytest.mark.parametrize("seed", range(20))
def test_raw_chunked_transposes(seed: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(seed)
    shape, ds, ss, d_off, s_off = _task(rng)
    span = s_off + sum((e - 1) * s for e, s in zip(shape, ss, strict=True)) + 8
    src = rng.integers(0, 1 << 62, span // 8 + 8).astype(np.uint64)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xABABABABABABABAB)


def test_chunked_sources_at_page_edges() -> None:
    kernel_or_skip()
    rng = np.random.default_rng(7)
    odd = ((1, 1025, 130), (0, 1040, 8), (0, 8, 8192), 0, 0)  # (the last chunk 1 item past 16 of them)
    odd = ((1, 1025, 130), (0, 1040, 8), (0, 8, 8192), 0, 0)  # (one item past 16 chunks)
    check_page_edges([_task(rng) for _ in range(4)] + [odd], item=8)


#: Streamed (every copy, here) transposes through big_plan whose source columns come in pieces of
#: 65 to 128 eight-byte items (a T(4,128) tile's 1 KiB rows), read whole a block
#: (big_whole_pieces); beside them the last tile columns of 101 and 119 items.
PIECE_LAYOUTS = ["s64[700,130]{0,1:T(4,128)}", "f64[300,37,200]{0,2,1:T(8,128)}", "u64[1030,7]{0,1:T(2,128)}",
                 "s64[741,130]{0,1:T(4,128)}", "s32[1015,9]{0,1:T(8,128)}"]


@pytest.mark.parametrize("text", PIECE_LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_whole_pieces_streamed_match_the_reference(monkeypatch: pytest.MonkeyPatch, text: str,
                                                   threads: int | None) -> None:
    kernel_or_skip()
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 0)
    check_layout(text, threads, guarded=True)
