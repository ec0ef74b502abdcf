"""The engine's remembered tasks live outside the targets (``_memo.TargetMemo``): per target
object, weakly, bounded; a target has no engine cache field."""

from __future__ import annotations

import dataclasses
import gc

import numpy as np

from tensorlayout.relayout import to_physical
from tensorlayout.relayout._kernel_path import KERNEL_TASKS
from tensorlayout.relayout._memo import TargetMemo
from tensorlayout.relayout._pack_path import PACK_TASKS
from tensorlayout.relayout._target import PhysicalTarget


def test_a_target_has_no_engine_cache_field() -> None:
    names = {f.name for f in dataclasses.fields(PhysicalTarget)}
    assert "_cache" not in names


def test_memo_remembers_per_target_object_and_forgets_it_with_the_target() -> None:
    memo: TargetMemo[int, list[int]] = TargetMemo(limit=2)
    t = PhysicalTarget.from_xla("f32[8,8]{1,0:T(2,2)}")
    other = dataclasses.replace(t, name="other")
    first = memo.get(t, 0, lambda: [1])
    assert memo.get(t, 0, lambda: [2]) is first
    assert memo.get(other, 0, lambda: [3]) == [3]  # another object: its own table
    memo.get(t, 1, lambda: [4])
    memo.get(t, 2, lambda: [5])  # full: the table starts again
    assert memo.get(t, 0, lambda: [6]) == [6]
    del t
    gc.collect()
    assert len(memo._tables) == 1


def test_copies_remember_their_tasks_in_the_engine_memos() -> None:
    data = np.arange(64 * 256, dtype=np.float32).reshape(64, 256)
    t = PhysicalTarget.from_xla("f32[64,256]{0,1:T(8,128)}")
    to_physical(data, t)
    packed = PhysicalTarget.from_xla("s4[64,256]{0,1:T(8,128)(8,1)E(4)}")
    to_physical((data % 7).astype(np.int8), packed)
    assert t in KERNEL_TASKS._tables and packed in PACK_TASKS._tables
