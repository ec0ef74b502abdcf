"""Words tasks whose columns lie far apart logically and whose rows of lines end before the
columns' logical lines do (``_far_lines`` in ``_pack_path``: tall tiles' (8,1) / (32,1) sub-tiles,
T(64,128)): the axis continuing the lines runs just outside the rows of lines, unpacking E(4) in
blocks of 8 columns. The public calls on such layouts (ragged and whole tiles, negative logical
strides, 1 and 3 threads, cached and streaming stores) against the definition, with garbage in
the output so that an unwritten byte shows; and the plan is checked to take that order."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, reference, round_trip

pytest.importorskip("tensorlayout.relayout._pack")

FAR = ["s4[256,1024]{0,1:T(64,128)(8,1)E(4)}", "s4[200,1100]{0,1:T(64,128)(8,1)E(4)}",
       "u4[3,130,40,600]{1,3,0,2:T(64,128)(8,1)E(4)}", "s4[136,4,1000]{0,2,1:T(64,128)(8,1)E(4)}",
       "u1[200,2000]{0,1:T(64,128)(32,1)E(1)}", "u1[256,4100]{0,1:T(8,128)(32,1)E(1)}"]


@pytest.mark.parametrize("text", FAR)
@pytest.mark.parametrize("threads", [1, 3])
def test_far_lines_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str, threads: int) -> None:
    monkeypatch.setattr(pack_path, "FAR_COLUMNS", 512)  # (small arrays: columns a few hundred bytes apart)
    t = as_target(text)
    rng = np.random.default_rng(threads)
    for path in ("pack", "pack-stream"):
        _path(monkeypatch, path)
        data, pad = round_trip(text, rng, threads)
        flipped = data[::-1]
        assert np.array_equal(to_physical(flipped, text, pad_value=pad, threads=threads),
                              reference(flipped, text, pad)), (text, path)
        back_flipped = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)[::-1]
        from_physical(reference(flipped, text, pad), text, out=back_flipped, threads=threads)
        assert np.array_equal(back_flipped, codes(flipped, t)), (text, path)


def test_the_plan_goes_along_the_lines() -> None:
    # s4[2048,8192]{0,1:T(64,128)(8,1)E(4)}: 128 columns 8 KiB apart, rows of lines 64 bytes of
    # them; packing the tile rows (logical stride 64) just outside the rows of lines, unpacking
    # also the columns in blocks of 8 outermost but one
    t = as_target("s4[2048,8192]{0,1:T(64,128)(8,1)E(4)}")
    strides = (8192, 1)
    (to,), _, _ = pack_path._make_tasks(t, strides, True, 1)
    (back,), _, _ = pack_path._make_tasks(t, strides, False, 1)
    assert to[3:] == ((16, 128, 8, 128, 8), (8192, 131072, 1024, 8, 1), (1048576, 64, 8, 8192, 1))
    assert back[3:] == ((16, 16, 128, 8, 8, 8), (8192, 64, 131072, 1024, 8, 1),
                        (1048576, 65536, 64, 8, 8192, 1))
