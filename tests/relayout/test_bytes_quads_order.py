"""Bytes in (4,1) quads whose logical rows are neither the tile's rows nor its columns, put in
the order of the fused quad transposes (``_bytes_path.quads_views`` for ``transpose_quads`` in
``_kernel_bytes.h``): layouts through the public calls against the brute-force reference (ragged
groups and rows, threads 1 and 3), and the order their tasks take."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target
from tensorlayout.relayout._copy import prepare
from tests.relayout._reference import check_layout

LAYOUTS = ["pred[16,32,8,32]{0,1,2,3:T(8,128)(4,1)}", "pred[9,40,6,23]{0,1,2,3:T(8,128)(4,1)}",
           "s8[4,20,16,40]{1,0,2,3:T(4,128)(4,1)}", "u8[3,29,11,35]{1,0,2,3:T(4,128)(4,1)}",
           "pred[8,130,2,64]{1,0,2,3:T(8,128)(4,1)}", "u8[5,19,7,17]{1,0,2,3:T(8,128)(4,1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_layouts_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    check_layout(text, threads)


@pytest.mark.parametrize("text", ["pred[16,32,8,32]{0,1,2,3:T(8,128)(4,1)}",
                                  "s8[4,20,16,40]{1,0,2,3:T(4,128)(4,1)}"])
def test_the_tasks_end_in_groups_rows_and_quads(text: str) -> None:
    # to_physical: the groups g (4 bytes apart in the buffer), the array's rows a (contiguous
    # there), then the quad's bytes; the other axes outside, the array's larger strides first
    t = as_target(text)
    data, buf = np.zeros(t.logical_shape, np.uint8), np.zeros(t.physical_elements, np.uint8)
    (task,) = prepare(t, data, buf, True).tasks
    _, _, shape, ds, ss, _, _ = task
    assert (ds[-3], ss[-2], ds[-1], shape[-1]) == (4, 1, 1, 4)
    outer = [abs(s) for s in ss[:-3]]
    assert outer == sorted(outer, reverse=True)
