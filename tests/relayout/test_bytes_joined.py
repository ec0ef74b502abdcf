"""One call's tasks of bytes joined where one goes on from another along an axis
(``_kernel_path.joined_tasks``: a box of whole tiles and its ragged last tile column, one pass).
Which tasks join and which do not (other strides, a gap in either array, two axes apart, tails,
pieces for threads); layouts with ragged tile columns through the public calls at 1 and
default threads, every byte against the definition with guard bytes behind; the joined tasks
of such layouts as raw tasks between unreadable pages."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._kernel_path as kp
from tensorlayout.relayout import as_target
from tensorlayout.relayout._copy import _extended, copy_plan
from tensorlayout.relayout._kernel_path import joined_tasks
from tests.relayout._reference import check_layout, check_page_edges, kernel_or_skip

A = (0, 0, (9, 896, 4), (4068, 1, 1017), (4096, 4, 1), False, 0)
B = (896, 3584, (9, 121, 4), (4068, 1, 1017), (4096, 4, 1), False, 0)


def test_a_ragged_column_joins_its_box() -> None:
    want = (0, 0, (9, 1017, 4), (4068, 1, 1017), (4096, 4, 1), False, 0)
    assert joined_tasks([A, B]) == [want]
    assert joined_tasks([B, A]) == [want]
    c = (1017, 4068, (9, 3, 4), (4068, 1, 1017), (4096, 4, 1), False, 0)  # a third one after both
    assert joined_tasks([c, B, A]) == [(0, 0, (9, 1020, 4), *A[3:])]


@pytest.mark.parametrize("other", [
    (897, 3584, (9, 121, 4), *A[3:]),  # a gap in the destination
    (896, 3588, (9, 121, 4), *A[3:]),  # ... in the source
    (896, 3584, (9, 121, 4), (4068, 1, 1017), (4096, 4, 2), False, 0),  # other strides
    (896, 3584, (8, 121, 4), *A[3:]),  # two axes apart
    (896, 3584, (9, 121, 4), (4068, 1, 1017), (4096, 4, 1), False, 4),  # other items
    (896, 3584, (9, 121), (4068, 1), (4096, 4), False, 0),  # other axes
    (*B, (0, 8, 0)),  # a tail
])
def test_what_does_not_join(other: tuple) -> None:
    assert joined_tasks([A, other]) == [A, other]
    a = (0, 0, (2, 3, 4), (100, 10, 1), (100, 10, 1), False, 0)
    b = (200, 200, (2, 3, 5), (100, 10, 1), (100, 10, 1), False, 0)  # goes on along 0, wider along 2
    assert joined_tasks([a, b]) == [a, b]


LAYOUTS = ["s8[300,355]{1,0:T(4,128)(4,1)}", "pred[45,7,423]{2,1,0:T(4,128)(4,1)}",
           "u8[37,2149]{1,0:T(4,128)(4,1)}", "pred[15,60,223]{2,1,0:T(4,128)(4,1)}",
           "s8[171,616,3]{1,2,0:T(4,128)(4,1)}", "u8[2000,1017]{1,0:T(4,128)(4,1)}"]


def _tasks(text: str, to: bool, pieces: int) -> list:
    t = as_target(text)
    data, buf = np.zeros(t.logical_shape, np.uint8), np.zeros(t.physical_elements, np.uint8)
    return kp.kernel_tasks(copy_plan(t), t, _extended(data, t), buf, to, pieces)


@pytest.mark.parametrize("text", LAYOUTS)
def test_the_layouts_join_on_one_call_only(text: str) -> None:
    t = as_target(text)
    data, buf = np.zeros(t.logical_shape, np.uint8), np.zeros(t.physical_elements, np.uint8)
    lg = _extended(data, t)
    def plain(pieces: int) -> list:
        return kp.pair_tasks([kp.box_views(b, lg, buf) for b in copy_plan(t).data], lg, buf, True, pieces)
    assert len(_tasks(text, True, 1)) < len(plain(1))
    assert _tasks(text, True, 4) == plain(4)  # (pieces for threads stay apart)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, None])
def test_joined_layouts_through_the_public_calls(text: str, threads: int | None) -> None:
    kernel_or_skip()
    check_layout(text, threads, guarded=True)


@pytest.mark.parametrize("to", [True, False])
def test_joined_tasks_read_no_byte_outside(to: bool) -> None:
    kernel_or_skip()
    tasks = []
    for text in LAYOUTS[:4]:
        for _, _, shape, ds, ss, *_ in _tasks(text, to, 1):
            lo = sum((n - 1) * s for n, s in zip(shape, ss, strict=True) if s < 0)
            dlo = sum((n - 1) * s for n, s in zip(shape, ds, strict=True) if s < 0)
            tasks.append((shape, ds, ss, 3 - dlo, -lo))
    check_page_edges(tasks)
