"""The column groups of a packed target's tasks (see ``_pack_path``): which tasks write whole
groups of slots (``_group_of``: kind 2, owning its columns' gaps, or rows filling their groups),
whether such tasks own disjoint groups (``_owning_disjoint``) or cover the buffer
(``_groups_cover``), and the pad runs over the groups none of them owns (``_uncovered``).

>>> _group_of((2, 0, 0, (4, 5), (8, 1), (1, 9)))
8
"""

from __future__ import annotations

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.relayout._target import PhysicalTarget

Task = tuple[int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # see _pack.c
DATA, PAD, DATA_OWNING_GAPS = 0, 1, 2  # task kinds (see _pack.c)
UNCOVERED_GROUPS = 1 << 24  # _uncovered: most column groups it maps
UNCOVERED_RUNS = 1 << 12  # ... and most pad runs it makes (else the buffer is filled first)


def _gap_groups(t: PhysicalTarget) -> tuple[int, int]:
    """(G, e) when slots come in groups of G whose tail past the first e is padding only:
    the digit of slot stride 1 (extent e) is the minor digit of its dim, and grown to the
    smallest other stride G it still nests with every other digit (each stride at least the
    span below it), so a slot's digits stay unique. (0, 0) otherwise.

    >>> _gap_groups(PhysicalTarget.from_xla("u1[64,256]{1,0:T(8,128)(32,1)E(1)}"))
    (32, 8)
    """
    digits = [d for ds in (*t.leading_digits, *(t.digits or ())) for d in ds if d.extent > 1]
    ones = [d for d in digits if d.stride == 1]
    others = sorted((d for d in digits if d.stride != 1), key=lambda d: d.stride)
    if len(ones) != 1 or ones[0].block != 1 or not others:
        return 0, 0
    span = others[0].stride
    for d in others:
        if d.stride < span:
            return 0, 0
        span = d.stride * d.extent
    return others[0].stride, ones[0].extent


def _owning_gaps(task: Task, group: int, extent: int, nslots: int) -> Task:
    """A data task whose columns are one group apart, each holding only the stride-1 digit,
    and whose last group ends inside the ``nslots`` slots: the slots between its columns are
    padding it writes (kind 2)."""
    kind, slot, loff, shape, ps, ls = task
    if kind == DATA and group and len(shape) >= 2 and ps[-1] == 1 and shape[-1] <= extent \
            and ps[-2] == group and min(ps[:-1]) > 0 \
            and slot + sum((n - 1) * p for n, p in zip(shape[:-1], ps[:-1])) + group <= nslots:
        return (DATA_OWNING_GAPS, slot, loff, shape, ps, ls)
    return task


def _group_of(task: Task) -> int:
    """The slots G of the groups a data task writes whole (0 if none): of kind 2 its column
    stride; of kind 0, rows of slot stride 1 filling groups of their own length (2 or more), every
    other slot stride and the first slot on that grid.

    >>> _group_of((2, 0, 0, (4, 5), (8, 1), (1, 9))), _group_of((0, 16, 0, (3, 8), (10240, 1), (1, 9)))
    (8, 8)
    """
    kind, slot, _, shape, ps, _ = task
    if kind == DATA_OWNING_GAPS:
        return ps[-2]
    n = shape[-1] if kind == DATA and shape and ps[-1] == 1 else 0
    return n if n > 1 and slot % n == 0 and all(p % n == 0 for p in ps[:-1]) else 0


def _group_index(task: Task, group: int) -> np.ndarray:
    """The indices of the groups of ``group`` slots a task's columns (its outer axes) start."""
    _, slot, _, shape, ps, _ = task
    index = np.full((1,) * (len(shape) - 1), slot // group, np.int64)
    for k, (n, p) in enumerate(zip(shape[:-1], ps[:-1])):
        index = index + np.arange(n).reshape((1,) * k + (n,) + (1,) * (len(shape) - 2 - k)) * (p // group)
    return index.reshape(-1)


def _owning_disjoint(tasks: list[Task], t: PhysicalTarget, covering: bool = False) -> list[Task]:
    """The data tasks as kind 2 (``_owning_gaps``) when every one of them becomes one and no
    two own a group in common (so each group's gap slots are padding of that task's columns:
    a ragged sub-tile's missing rows, which the kernel then packs with its rows in whole
    bytes, ``partial`` in ``_pack.c``), and their groups leave some slots to the fill (or may
    cover the buffer, ``covering``: no fill then); else the tasks unchanged.

    >>> t = PhysicalTarget.from_xla("s4[5,5,300]{2,1,0:T(8,128)(8,1)E(4)}")
    >>> _owning_disjoint([(0, 0, 0, (5, 300, 5), (3072, 8, 1), (1500, 1, 300))], t)[0][0]
    2
    """
    group, extent = _gap_groups(t)
    owning = [_owning_gaps(task, group, extent, t.physical_elements) for task in tasks]
    kinds = {task[0] for task in owning}
    if DATA_OWNING_GAPS not in kinds or any(_group_of(task) != group for task in owning) \
            or t.physical_elements // group > UNCOVERED_GROUPS:
        return tasks  # (kind 0 tasks may stay that way where their rows fill their groups)
    count = np.zeros(t.physical_elements // group + 1, np.int64)
    for task in owning:
        np.add.at(count, _group_index(task, group), 1)
    disjoint = count.max() <= 1
    # (groups covering the whole buffer stay the mark of a fill_all plan: _groups_cover)
    covers = _groups_cover(owning, t.physical_elements, 8 // t.packed_bits)
    return owning if disjoint and (covering or not covers) else tasks


def _groups_cover(tasks: list[Task], nslots: int, per: int) -> bool:
    """True when the tasks write every slot of ``nslots`` (whole bytes of ``per``) themselves.

    All write whole groups of one size G (``_group_of``: kind 2 of column stride G, or rows
    filling groups of G), so each column writes G slots (``_pack.c``), from a multiple of G:
    columns starting alike would write one slot twice (the plan is one-to-one), so the groups
    are disjoint, and ``nslots // G`` of them are every slot.

    >>> _groups_cover([(2, 0, 0, (4, 8), (32, 1), (1, 4))], 128, 8)
    True
    >>> _groups_cover([(2, 0, 0, (3, 8), (32, 1), (1, 4))], 128, 8)  # a column short
    False
    """
    groups = {_group_of(task) for task in tasks}
    if len(groups) != 1 or nslots % per:
        return False
    group = groups.pop()
    columns = sum(prod(shape[:-1]) for _, _, _, shape, _, _ in tasks)
    return group > 0 and all(slot % group == 0 and all(p % group == 0 for p in ps[:-1])
                             for _, slot, _, _, ps, _ in tasks) and columns * group == nslots


def _uncovered(tasks: list[Task], nslots: int) -> list[Task] | None:
    """Pad runs over the slots that tasks writing whole groups of one size G (``_group_of``,
    columns on the group grid) leave: the groups none of them owns and the slots past the last
    whole group; None when the tasks are not all such, or the runs would be many (then the buffer is filled).

    >>> _uncovered([(2, 32, 0, (2, 8), (32, 1), (1, 4))], 130)  # groups 1 and 2 of 32 slots
    [(1, 0, 0, (2, 32), (96, 1), (0, 0)), (1, 128, 0, (2,), (1,), (0,))]
    """
    groups = {_group_of(task) for task in tasks}
    group = groups.pop() if len(groups) == 1 else 0
    count = nslots // group if group else 0
    if not group or count > UNCOVERED_GROUPS or not all(
            slot % group == 0 and all(p % group == 0 for p in ps[:-1]) for _, slot, _, _, ps, _ in tasks):
        return None
    covered = np.zeros(count, bool)
    for task in tasks:
        covered[_group_index(task, group)] = True
    step = np.diff(np.concatenate(([0], ~covered, [0])).astype(np.int8))  # +1 a run starts, -1 it ends
    starts, ends = np.flatnonzero(step == 1), np.flatnonzero(step == -1)
    if len(starts) > UNCOVERED_RUNS:
        return None
    runs = _periodic(_strided_runs([(int(a) * group, int(b - a) * group) for a, b in zip(starts, ends)]))
    if count * group < nslots:
        runs.append((PAD, count * group, 0, (nslots - count * group,), (1,), (0,)))
    return runs


def _strided_runs(runs: list[tuple[int, int]]) -> list[Task]:
    """Pad tasks for runs (first slot, length) in order: equally long runs equally far apart
    as one task of two axes.

    >>> _strided_runs([(0, 4), (10, 4), (20, 4), (25, 2)])
    [(1, 0, 0, (3, 4), (10, 1), (0, 0)), (1, 25, 0, (1, 2), (0, 1), (0, 0))]
    """
    out: list[Task] = []
    for start, length in runs:
        _, first, _, (n, last), (stride, _), _ = out[-1] if out else (PAD, 0, 0, (0, 0), (0, 0), (0, 0))
        if out and last == length and (n == 1 or start - first == n * stride):
            out[-1] = (PAD, first, 0, (n + 1, length), (start - first if n == 1 else stride, 1), (0, 0))
        else:
            out.append((PAD, start, 0, (1, length), (0, 1), (0, 0)))
    return out


PERIOD_MAX = 8  # _periodic: the most tasks one period holds


def _periodic(tasks: list[Task]) -> list[Task]:
    """Pad tasks repeating from the first with a period of p tasks (each the one p before,
    D slots on) as p tasks of one more axis (D apart); the tasks after the last whole period
    the same way (one call per call of the kernel: 210 pad runs of a 2 MiB target cost as much
    as a copy of it).

    >>> _periodic([(1, 0, 0, (2, 4), (10, 1), (0, 0)), (1, 30, 0, (1, 9), (0, 1), (0, 0)),
    ...            (1, 100, 0, (2, 4), (10, 1), (0, 0)), (1, 130, 0, (1, 9), (0, 1), (0, 0))])
    [(1, 0, 0, (2, 2, 4), (100, 10, 1), (0, 0, 0)), (1, 30, 0, (2, 1, 9), (100, 0, 1), (0, 0, 0))]
    """
    for p in range(1, min(PERIOD_MAX, len(tasks) // 2) + 1):
        d = tasks[p][1] - tasks[0][1]
        reps = 1
        while (reps + 1) * p <= len(tasks) and all(
                tasks[reps * p + j][3:] == tasks[j][3:] and tasks[reps * p + j][1] == tasks[j][1] + reps * d
                for j in range(p)):
            reps += 1
        if reps > 1 and d > 0:
            folded = [(PAD, task[1], 0, (reps, *task[3]), (d, *task[4]), (0, *task[5])) for task in tasks[:p]]
            return folded + _periodic(tasks[reps * p:])
    return tasks
