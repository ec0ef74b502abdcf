"""Far columns unpacked 64 at a time (``unpack_far_staged`` in ``_pack_columns.h``, ``FAR_WIDE``):
a transposing E(4) layout whose sub-tile rows lie a multiple of ``FAR_ALIAS`` logical bytes apart
(s4[512,32,4096]{0,1,2:T(8,128)(8,1)E(4)}) reads each logical line's 64 columns in one pass. The
layouts below reach it (their tasks checked: columns far apart, rows of lines side by side, rows
1 KiB-aligned), with column counts that leave 16-column blocks and ragged tails after the wide
blocks, and rows of lines that are not a multiple of the wide pass's rows; against the definition
through ``to_physical`` / ``from_physical`` (into filled arrays), threads 1 and more."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import _pack_path, as_target

from .test_pack import check_against_numpy

pytest.importorskip("tensorlayout.relayout._pack")

WIDE = ["s4[40,16,1024]{0,1,2:T(8,128)(8,1)E(4)}", "u4[40,16,32,96]{0,1,3,2:T(8,128)(8,1)E(4)}",
        "u4[37,9,2048]{0,1,2:T(8,128)(8,1)E(4)}", "s4[21,8,128,72]{0,1,3,2:T(8,128)(8,1)E(4)}",
        "u4[130,8,2,1024]{0,1,3,2:T(8,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", WIDE)
def test_wide_far_columns_are_reached(text: str) -> None:
    t = as_target(text)
    strides = np.empty(t.logical_shape, np.uint8).strides
    tasks = _pack_path._make_tasks(t, strides, False, 1)[0]
    wide = [task for task in tasks if task[5][-1] % 1024 == 0 and task[5][-2] == 1 and task[3][-2] >= 64
            and task[4][-3] == 8 and task[4][-2] >= 128]
    assert wide, tasks


@pytest.mark.parametrize("text", WIDE)
@pytest.mark.parametrize("threads", [1, 3])
def test_wide_far_columns_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                               threads: int) -> None:
    check_against_numpy(monkeypatch, text, threads)
