"""Words tasks read (write) their dense logical blocks in one run where an outer axis of a few
steps continues them (``_reading_blocks`` in ``_pack_path``): checked through
``to_physical``/``from_physical`` into garbage buffers against the definition and the numpy path,
and on the tasks' axes."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import _pack_path as pack_path
from tensorlayout.relayout import as_target

from .test_pack import check_against_numpy

pytest.importorskip("tensorlayout.relayout._pack")

TEXTS = [
    "u4[37,4,64,16]{2,3,0,1:T(8,128)(8,1)E(4)}",  # 1 KiB blocks, 4 of them a step (columns half a tile)
    "s4[9,3,128,16]{2,3,0,1:T(8,128)(8,1)E(4)}",  # 3 steps, whole tiles
    "u4[5,17,64,16]{2,3,0,1:T(8,128)(8,1)E(4)}",  # 17 steps: more than BLOCK_STREAMS, left as it was
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_block_runs_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                   threads: int) -> None:
    check_against_numpy(monkeypatch, text, threads)


@pytest.mark.parametrize(("text", "moved"), [(TEXTS[0], True), (TEXTS[1], True), (TEXTS[2], False)])
def test_the_continuing_axis_goes_just_outside_the_rows(text: str, moved: bool) -> None:
    t = as_target(text)
    for to in (True, False):
        task = pack_path._make_tasks(t, np.zeros(t.logical_shape, np.uint8).strides, to, 1)[0][0]
        shape, ls = task[3], task[5]
        block = shape[-3] * shape[-2] * shape[-1]  # the rows of lines' dense logical block
        assert (ls[-4] == block) == moved, task


def test_blocks_that_are_not_dense_stay() -> None:
    axes = [(4, 33554432, 1024), (16384, 2048, 4096), (2, 1024, 16), (64, 8, 32), (8, 1, 1)]
    assert pack_path._reading_blocks(axes) == axes
