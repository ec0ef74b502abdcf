"""Tailed tasks: a copy into a physical buffer (``to_physical``, a one-pass ``relayout``) whose
padding the kernel writes behind each step as it goes (``tail`` in ``_kernel.c``;
``_kernel_fill.h``, ``_kernel_tasks.h``), instead of a fill of the buffer before the copy.

They apply when the steps of the tasks tile the whole buffer, each step's data dense from its
first byte (every byte of ``[0, data)`` written once) and the rest of the step padding: a (4,1)
sub-tile of 4 logical rows in 8-row tiles, 512 bytes of data then 512 of padding per tile; the
tile rows of a dim of 64 in tiles of 128 (the steps of an inner axis, the axes outside it
stepping over whole runs of them). The pad value must be one repeated byte (any value of a
1-byte type).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from tensorlayout.relayout._kernel_path import Task

__all__ = ["TailedTask", "Tails", "first_axis_tails", "gapped", "gapped_tails", "pad_byte", "pad_item",
           "remembered_pad_item", "tailed", "tails", "with_byte"]

#: a kernel task with its tail (at, bytes, byte[, axis]): see ``_kernel.c``
Tail = tuple[int, ...]
TailedTask = tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...], bool, int, Tail]


#: Steps of a task's own first axis with less data than this are not tailed (a transpose
#: of a few items per step would leave its vector tiles for a loop per step).
MIN_STEP_BYTES = 256


def _dense_bytes(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> int | None:
    """The bytes a box covers when it writes each of ``[0, n)`` once from its first byte (its
    axes, by rising stride, each the extent of those before it apart), else None.

    >>> _dense_bytes((128, 4), (4, 1), 1), _dense_bytes((128, 3), (4, 1), 1)
    (512, None)
    """
    run = item
    for n, st in sorted(((n, st) for n, st in zip(shape, strides) if n != 1), key=lambda a: a[1]):
        if st != run:
            return None
        run *= n
    return run


class Stepped(NamedTuple):
    """A task as steps (``_steps``): each of the steps of axes ``[0, axis]`` writes its first
    ``data`` bytes densely, the steps ``step`` bytes apart, all of them ``extent`` bytes."""

    task: Task
    data: int
    axis: int
    step: int
    extent: int


def _steps(task: Task, item: int) -> Stepped | None:
    """``task`` as steps: the whole box as one step when it is dense (a first axis of extent 1
    put in front, its stride the box's data, which ``tailed`` sets), else the steps of the
    first axis whose steps are (``_step_axis``).

    >>> _steps((0, 0, (2, 128, 4), (1024, 4, 1), (128, 1, 300), False, 0), 1)[1:]
    (512, 0, 1024, 2048)
    >>> _steps((9, 0, (44, 4), (4, 1), (1, 300), False, 0), 1)[:2]
    ((9, 0, (1, 44, 4), (176, 4, 1), (0, 1, 300), False, 0), 176)
    >>> _steps((0, 0, (512, 16, 64), (8192, 512, 4), (256, 131072, 4), False, 0), 4)[1:]
    (256, 1, 512, 4194304)
    """
    d_off, s_off, shape, ds, ss, swap, wide = task
    if swap or not shape or min(shape) <= 0:
        return None
    data = _dense_bytes(shape, ds, wide or item)
    if data is not None:
        return Stepped((d_off, s_off, (1, *shape), (data, *ds), (0, *ss), swap, wide), data, 0, data, data)
    data = _dense_bytes(shape[1:], ds[1:], wide or item)
    if shape[0] == 1 and data is not None and data >= MIN_STEP_BYTES and _keeps_source_runs(ss, wide or item):
        return Stepped(task, data, 0, data, data)  # (one step: ``tailed`` sets its stride)
    for k in range(len(shape) - 1):
        steps = _step_axis(shape, ds, ss, wide or item, k)
        if steps is not None:
            return Stepped(task, *steps)
    return None


def _step_axis(shape: tuple[int, ...], ds: tuple[int, ...], ss: tuple[int, ...], item: int,
               k: int) -> tuple[int, int, int, int] | None:
    """(data, axis ``k``, step, extent) when each step of the axes up to ``k`` writes its first
    ``data`` bytes densely (at least ``MIN_STEP_BYTES``, no more than a step), those axes,
    by falling stride, each step over whole runs of the next one's steps (so that the steps
    lie ``step`` bytes apart, in whatever order the loops take them), and the source's
    contiguous axis stays inside the steps (``_keeps_source_runs``); else None.

    >>> _step_axis((5, 3, 4, 40), (4096, 20480, 1024, 8), (960, 320, 4800, 8), 8, 2)
    (320, 2, 1024, 61440)
    """
    outer = sorted(((ds[j], shape[j]) for j in range(k + 1) if shape[j] > 1), reverse=True)
    if not outer or outer[-1][0] <= 0 or not _keeps_source_runs(ss, item, k) \
            or any(hi != n * lo for (hi, _), (lo, n) in itertools.pairwise(outer)):
        return None
    data = _dense_bytes(shape[k + 1:], ds[k + 1:], item)
    step = outer[-1][0]
    ok = data is not None and MIN_STEP_BYTES <= data <= step
    return (data, k, step, outer[0][0] * outer[0][1]) if ok and data is not None else None


def _keeps_source_runs(ss: tuple[int, ...], item: int, k: int = 0) -> bool:
    """Stepping along axis ``k`` (the axes before it outside) leaves the source's contiguous
    axis inside each step (or the source has none). Counterexample: f32[64,32,128]{0,2,1:T(8,128)}
    to the buffer is one transposing task whose first axis is the source's contiguous one;
    stepped, each step gathered 64 items 16 KiB apart instead of the blocked transpose: 12x slower.

    >>> _keeps_source_runs((128, 1, 262144), 1), _keeps_source_runs((4, 16384), 4)
    (True, False)
    """
    contiguous = [j for j, st in enumerate(ss) if abs(st) == item]
    return not contiguous or any(j > k for j in contiguous)


def tailed(tasks: list[Task], nbytes: int, item: int) -> list[TailedTask] | None:
    """``tasks`` (of ``item``-byte items) as steps (``_steps``) with the tail each needs (pad
    byte 0: ``with_byte`` sets another) so that together they write every byte of a buffer of
    ``nbytes`` exactly once, or None when they do not tile it so.

    >>> tailed([(0, 0, (2048, 128, 4), (1024, 4, 1), (128, 1, 262144), False, 0)], 2 << 20, 1)
    [(0, 0, (2048, 128, 4), (1024, 4, 1), (128, 1, 262144), False, 0, (512, 512, 0))]
    >>> tailed([(0, 0, (2048, 128, 3), (1024, 4, 1), (128, 1, 262144), False, 0)], 2 << 20, 1) is None
    True
    """
    stepped: list[tuple[Task, Stepped]] = []
    for task in tasks:
        steps = _steps(task, item)
        if steps is None:
            return None
        stepped.append((task, steps))
    stepped.sort(key=lambda pair: pair[0][0])
    out: list[TailedTask] = []
    for k, (original, steps) in enumerate(stepped):
        (d_off, s_off, shape, ds, ss, swap, wide), data, axis, step, extent = steps
        end = stepped[k + 1][0][0] if k + 1 < len(stepped) else nbytes
        one = shape[0] == 1 and axis == 0  # one step (a dense box)
        if (k == 0 and d_off != 0) or (one and end - d_off < data):
            return None
        if one and end - d_off == data:  # a dense box, no padding behind it: as it was
            out.append((*original, (0, 0, 0)))
            continue
        if one:  # one step: up to the next task
            ds, step = (end - d_off, *ds[1:]), end - d_off
        elif d_off + extent != end:
            return None
        tail = (data, step - data, 0)
        out.append((d_off, s_off, shape, ds, ss, swap, wide, (*tail, axis) if axis else tail))
    return out or None


#: A one-pass copy whose tasks leave more bytes than their tails reach than this many ranges
#: (``gapped``) fills its padding first instead.
MAX_GAPS = 16
Gap = tuple[int, int]  # byte offset, bytes


def gapped(tasks: list[Task], nbytes: int, item: int) -> tuple[list[TailedTask], list[Gap]] | None:
    """``tailed``, where the tasks may leave ranges of the buffer that neither they nor their
    tails write (at most ``MAX_GAPS``: the gaps, filled apart), and tasks whose first axes step
    alike, each over its own part of every step (a tile row's full tiles and its ragged last
    one), are tiled step by step (``_period``); None when they overlap or do not step.

    >>> full = (0, 0, (3, 2, 512), (2048, 512, 1), (1024, 512, 1), False, 0)  # 3 steps of 2048:
    >>> ragged = (1024, 3072, (3, 2, 300), (2048, 512, 1), (600, 300, 1), False, 0)  # 1024, 2 x 300
    >>> tasks, gaps = gapped([full, ragged], 6244, 1)
    >>> [t[2:4] + t[7:] for t in tasks]  # (the ragged rows' tails behind axis 1)
    [((3, 2, 512), (2048, 512, 1), (0, 0, 0)), ((3, 2, 300), (2048, 512, 1), (300, 212, 0, 1))]
    >>> gaps  # (100 bytes past the steps)
    [(6144, 100)]
    """
    todo = sorted(tasks, key=lambda task: task[0])
    blocks: list[tuple[int, int, list[TailedTask]]] = []  # start, end, tasks
    i = 0
    while i < len(todo):
        group = [todo[i]]
        while i + len(group) < len(todo) and _steps_alike(todo[i], todo[i + len(group)]):
            group.append(todo[i + len(group)])
        block = _period(group, item) if len(group) > 1 else _single(todo[i], item)
        if block is None:
            return None
        blocks.append(block)
        i += len(group)
    return _joined(blocks, nbytes)


def _steps_alike(first: Task, other: Task) -> bool:
    """``other`` steps along its first axis as ``first`` does, inside ``first``'s first step."""
    return len(first[2]) > 1 and len(other[2]) > 1 and first[2][0] == other[2][0] > 1 \
        and first[3][0] == other[3][0] > 0 and first[0] <= other[0] < first[0] + first[3][0]


def _single(task: Task, item: int) -> tuple[int, int, list[TailedTask]] | None:
    """One task as a block (start, end, its tailed task): a dense box (its tail up to the next
    block: end -1) or steps each with its tail."""
    steps = _steps(task, item)
    if steps is None:
        return None
    (d_off, s_off, shape, ds, ss, swap, wide), data, axis, step, extent = steps
    if shape[0] == 1 and axis == 0:  # one step: ``_joined`` sets its tail
        return d_off, -1, [(d_off, s_off, shape, ds, ss, swap, wide, (data, 0, 0))]
    tail = (data, step - data, 0)
    return d_off, d_off + extent, [(d_off, s_off, shape, ds, ss, swap, wide, (*tail, axis) if axis else tail)]


def _period(group: list[Task], item: int) -> tuple[int, int, list[TailedTask]] | None:
    """Tasks stepping alike along their first axes (``_steps_alike``) as one block: one step of
    them tiled without gaps (``gapped``), each tail then behind a step of a later axis."""
    g0, n, period = group[0][0], group[0][2][0], group[0][3][0]
    inner = gapped([(t[0] - g0, t[1], t[2][1:], t[3][1:], t[4][1:], t[5], t[6]) for t in group], period, item)
    if inner is None or inner[1] or any(0 < t[7][0] < MIN_STEP_BYTES for t in inner[0] if t[7][1]):
        return None  # (a tail behind every few bytes: a loop per step, slower than the fill)
    out: list[TailedTask] = []
    for (d_off, s_off, shape, ds, ss, swap, wide, tail), original in zip(inner[0], group, strict=True):
        if not tail[1]:  # no tail: the task as it was
            out.append((*original, (0, 0, 0)))
            continue
        axis = tail[3] if len(tail) > 3 else 0
        out.append((g0 + d_off, s_off, (n, *shape), (period, *ds), (original[4][0], *ss), swap, wide,
                    (*tail[:3], axis + 1)))
    return g0, g0 + n * period, out


def _joined(blocks: list[tuple[int, int, list[TailedTask]]], nbytes: int
            ) -> tuple[list[TailedTask], list[Gap]] | None:
    """The blocks' tasks, each dense box's tail run up to the next block, and the gaps left."""
    tasks: list[TailedTask] = []
    gaps: list[Gap] = []
    at = 0
    for k, (start, end, block) in enumerate(blocks):
        if start < at:
            return None
        if start > at:
            gaps.append((at, start - at))
        if end < 0:  # a dense box: its tail runs to the next block
            (d_off, s_off, shape, ds, ss, swap, wide, (data, _, _)), = block
            end = blocks[k + 1][0] if k + 1 < len(blocks) else nbytes
            if end < d_off + data:
                return None
            tail = (0, 0, 0) if end == d_off + data else (data, end - d_off - data, 0)
            block = [(d_off, s_off, shape, (end - d_off, *ds[1:]), ss, swap, wide, tail)]
        tasks += block
        at = end
    if at > nbytes:
        return None
    if at < nbytes:
        gaps.append((at, nbytes - at))
    return (tasks, gaps) if tasks and len(gaps) <= MAX_GAPS else None


def first_axis_tails(tasks: list[TailedTask]) -> bool:
    """Every tail of ``tasks`` follows the steps of its task's first axis (none behind a later
    axis, whose steps the axes before it walk outside). A streamed copy (past the caches) writes
    its tails as it goes only then. Counterexample: f8e5m2[312,909,124]{2,0,1:T(4,128)(4,1)}
    to_physical, 16 bytes of padding behind every 496 of a later axis: tailed, its transpose
    ran step by step, 1.12 -> 2.62x a copy on one thread; with first-axis tails
    (f8e5m2[131072,64]{1,0:T(4,128)(4,1)}: 256 bytes behind every 256) the fill first and its
    second pass over the buffer went, 1.34 -> 0.71x.

    >>> first_axis_tails([(0, 0, (2, 4), (8, 1), (4, 1), False, 0, (4, 4, 0))])
    True
    >>> first_axis_tails([(0, 0, (2, 3, 4), (48, 8, 1), (12, 4, 1), False, 0, (4, 4, 0, 1))])
    False
    """
    return all(len(t[7]) < 4 or t[7][3] == 0 for t in tasks)


def pad_byte(one: bytes) -> int | None:
    """The byte an item of the pad value repeats (``one``: its bytes), or None.

    >>> pad_byte(b"\\x00\\x00"), pad_byte(b"\\x80\\x3f")
    (0, None)
    """
    return one[0] if one and one.count(one[:1]) == len(one) else None


def with_byte(tasks: list[TailedTask] | None, one: bytes) -> list[TailedTask] | None:
    """``tasks`` with their tails written with the byte the pad item ``one`` (its bytes)
    repeats; None without tasks or when ``one`` is not one byte repeated.

    >>> with_byte([(0, 0, (2, 4), (8, 1), (4, 1), False, 0, (4, 4, 0))], b"\x07")
    [(0, 0, (2, 4), (8, 1), (4, 1), False, 0, (4, 4, 7))]
    """
    byte = pad_byte(one)
    if tasks is None or byte is None:
        return None
    return tasks if byte == 0 else [(*t[:7], (t[7][0], t[7][1], byte, *t[7][3:])) for t in tasks]


def pad_item(pad_value: object, dtype: np.dtype) -> bytes:
    """The bytes of one item of ``pad_value`` in ``dtype`` (as ``ndarray.fill`` writes it).

    >>> pad_item(1.0, np.dtype(np.float32)), pad_item(-1, np.dtype(np.int8))
    (b'\\x00\\x00\\x80?', b'\\xff')
    """
    one = np.empty(1, dtype)
    one.fill(pad_value)
    return one.tobytes()


@lru_cache(maxsize=256)
def _int_item(pad_value: int, dtype: np.dtype) -> bytes:
    return pad_item(pad_value, dtype)


def remembered_pad_item(pad_value: object, dtype: np.dtype) -> bytes:
    """``pad_item``, remembered for plain ints (other types' equal values fill differently:
    ``-0.0 == 0.0``).

    >>> remembered_pad_item(-1, np.dtype(np.int16))
    b'\\xff\\xff'
    """
    return _int_item(pad_value, dtype) if type(pad_value) is int else pad_item(pad_value, dtype)


@dataclass(frozen=True, slots=True, eq=False)
class Tails:
    """Tailed tasks (``tailed``: pad byte 0) and, made once per pad byte a call asks for, the
    same tasks with that byte (``with_byte``), so a repeated call rebuilds nothing.

    >>> t = Tails([(0, 0, (2, 4), (8, 1), (4, 1), False, 0, (4, 4, 0))])
    >>> u8 = np.dtype(np.uint8)
    >>> t.for_pad(7, u8)[0][7], t.for_pad(7, u8) is t.for_pad(7, u8)
    ((4, 4, 7), True)
    """

    tasks: list[TailedTask]
    gaps: tuple[Gap, ...] = ()  # bytes neither the tasks nor their tails write (``gapped``)
    _by_byte: dict[bytes, list[TailedTask] | None] = field(default_factory=dict)

    def for_item(self, one: bytes) -> list[TailedTask] | None:
        """The tasks writing the byte the pad item ``one`` (its bytes) repeats; None when it
        is not one byte repeated."""
        try:
            return self._by_byte[one]
        except KeyError:
            if len(self._by_byte) >= 16:
                self._by_byte.clear()
            out = self._by_byte[one] = with_byte(self.tasks, one)
            return out

    def for_pad(self, pad_value: object, dtype: np.dtype) -> list[TailedTask] | None:
        """``for_item`` of one item of ``pad_value`` in ``dtype``."""
        return self.for_item(remembered_pad_item(pad_value, dtype))

    def fill_gaps(self, buf: np.ndarray, tasks: list[TailedTask]) -> None:
        """Write the gaps of the 1-D contiguous ``buf`` with the byte of ``tasks`` (as ``for_item``
        gave them)."""
        if self.gaps:
            raw = buf.view(np.uint8)
            for off, n in self.gaps:
                raw[off:off + n] = tasks[0][7][2]


def tails(tasks: list[Task], nbytes: int, item: int) -> Tails | None:
    """``tailed``, kept with its tasks per pad byte (``Tails``), or None."""
    out = tailed(tasks, nbytes, item)
    return None if out is None else Tails(out)


def gapped_tails(tasks: list[Task], nbytes: int, item: int) -> Tails | None:
    """``tailed`` where the tasks tile the buffer alone (its tasks as they were), else ``gapped``,
    kept with its tasks per pad byte and its gaps (``Tails``), or None."""
    whole = tailed(tasks, nbytes, item)
    if whole is not None:
        return Tails(whole)
    out = gapped(tasks, nbytes, item)
    return None if out is None else Tails(out[0], tuple(out[1]))
