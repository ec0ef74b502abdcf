"""A box holding one slot per column group (a ragged sub-tile's only row: ``UNIT_ROWS`` in
``_pack_path``) gets a unit rows axis when packing, so its columns go a word at a time (as kind 2,
owning their groups, next to tasks whose rows fill theirs: ``_group_of``) instead of slot by
slot; checked through ``to_physical``/``from_physical`` into garbage buffers against the
definition and the numpy path, and on the tasks themselves."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import _pack_groups as pack_groups
from tensorlayout.relayout import _pack_path as pack_path
from tensorlayout.relayout import as_target

from .test_pack import check_against_numpy

pytest.importorskip("tensorlayout.relayout._pack")

TEXTS = [
    "u4[9,63,57]{1,0,2:T(8,128)(8,1)E(4)}",  # the remainder row over 57 planes, 63 columns
    "s4[17,130,5]{1,0,2:T(8,128)(8,1)E(4)}",  # two whole sub-tile rows and one; a ragged tile column
    "u4[9,633,21]{1,0,2:T(8,128)(8,1)E(4)}",  # 5 tiles a plane, the last ragged
    "s4[1,300]{1,0:T(8,128)(8,1)E(4)}",  # only the one row
    "u1[33,70,9]{1,0,2:T(8,128)(32,1)E(1)}",  # E(1): one row of a (32,1) sub-tile
    "u1[33,200]{1,0:T(8,128)(32,1)E(1)}",
    "u4[3,129,9]{0,2,1:T(8,128)(8,1)E(4)}",  # a one-row box with the columns elsewhere
    "s4[145,4577]{0,1:T(8,128)(8,1)E(4)}",  # one-row boxes beside a ragged tile column
    "s4[433,1443]{1,0:T(8,128)(8,1)E(4)}",  # ... owning them, its columns logically contiguous
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_one_row_boxes_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                      threads: int) -> None:
    check_against_numpy(monkeypatch, text, threads)


def test_the_remainder_row_goes_by_words_owning_its_groups() -> None:
    t = as_target("u4[9,633,571]{1,0,2:T(8,128)(8,1)E(4)}")
    strides = np.zeros(t.logical_shape, np.uint8).strides
    whole, rest, fill = pack_path._make_tasks(t, strides, True, 1)
    assert not rest and not fill  # nothing slot by slot, no fill first: pad runs over the unowned groups
    ones = [task for task in whole if task[3][-1] == 1]
    assert ones and all(task[0] == pack_path.DATA_OWNING_GAPS and task[4][-2:] == (8, 1) for task in ones)


def test_group_of_counts_only_whole_groups() -> None:
    assert pack_groups._group_of((0, 16, 0, (3, 8), (10240, 1), (1, 9))) == 8
    assert pack_groups._group_of((0, 4, 0, (3, 8), (10240, 1), (1, 9))) == 0  # the first slot off the grid
    assert pack_groups._group_of((0, 0, 0, (3, 8), (12, 1), (1, 9))) == 0  # columns off the grid
    assert pack_groups._group_of((0, 0, 0, (3, 1), (8, 1), (1, 9))) == 0  # one slot: no group
    assert pack_groups._group_of((1, 0, 0, (3, 8), (8, 1), (0, 0))) == 0  # padding


def test_owning_needs_groups_no_other_task_writes() -> None:
    t = as_target("s4[5,5,300]{2,1,0:T(8,128)(8,1)E(4)}")
    five = (0, 0, 0, (5, 300, 5), (3072, 8, 1), (1500, 1, 300))  # 5 rows of each group: kind 2 alone
    assert pack_groups._owning_disjoint([five], t)[0][0] == pack_path.DATA_OWNING_GAPS
    whole = (0, 0, 0, (2, 8), (8, 1), (1, 2))  # the rows filling groups 0 and 1: those overlap
    assert pack_groups._owning_disjoint([five, whole], t) == [five, whole]
    apart = (0, 2400, 0, (2, 8), (8, 1), (1, 2))  # groups 300 and 301, none of five's
    assert pack_groups._owning_disjoint([five, apart], t)[0][0] == pack_path.DATA_OWNING_GAPS


def test_tasks_not_owning_their_groups_go_without_the_unit_rows() -> None:
    t = as_target("s4[145,45873]{0,1:T(8,128)(8,1)E(4)}")  # (more pad runs than UNCOVERED_RUNS: not owned)
    whole, rest, _ = pack_path._make_tasks(t, np.zeros(t.logical_shape, np.int8).strides, True, 1)
    ones = [task for task in whole + rest if task[0] == pack_path.DATA and task[4][-1] == 8]
    assert ones and all(task in rest for task in ones)  # (one slot a column: slot by slot, one line)
