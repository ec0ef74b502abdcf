"""Sub-byte packed targets (``E(4)``, ``E(2)``, ``E(1)``) in one pass through the compiled
``_pack`` kernel: each copy box of the target's plan (``_plan``) becomes a task over slots
(the packed buffer's element positions, ``8 // bits`` per byte, the first in the low bits)
and logical bytes, its axes ordered for the kernel (see ``_pack.c``): the axis of slot
stride 1 innermost, the one contiguous in the logical array just outside it, the rest by
slot stride. Tasks that fill whole bytes are claimed by the kernel's threads for large
copies; the others (ragged edges, whose bytes hold slots of other boxes too) run afterwards
in one thread. Where the plan leaves slots between its boxes (``fill_all``) the buffer is
filled with the pad code first, unless data tasks owning their column groups (kind 2) write
every byte themselves; so is every buffer whose padding would otherwise be written mostly slot
by slot (``_fill_first``), unless the data tasks can own disjoint column groups: then they write
those groups' padding with their rows, and pad runs (a repeating pattern of them folded into
tasks of one more axis, ``_periodic``) cover the groups none owns (``_owning_or_pads``).

The functions return None when the kernel is missing or disabled (``USE_PACK``, or the copy
engine's ``USE_KERNEL``), when the target has no strided description, or when an argument
is not what they expect: the numpy path in ``relayout/__init__`` then runs (and raises its
typed errors).

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> t = PhysicalTarget.from_xla("s4[1,4]{1,0:E(4)}")
>>> buf = to_physical_packed(np.array([[1, -2, 3, 4]], np.int8), t, 0, None, None)
>>> buf is None or buf.tolist() == [0xE1, 0x43]
True
"""

from __future__ import annotations

import importlib
import itertools
from types import ModuleType

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.relayout import _copy as engine
from tensorlayout.relayout._memo import TargetMemo
from tensorlayout.relayout._pack_groups import (
    DATA,
    DATA_OWNING_GAPS,
    PAD,
    Task,
    _gap_groups,
    _groups_cover,
    _owning_disjoint,
    _owning_gaps,
    _uncovered,
)
from tensorlayout.relayout._plan import Box, copy_plan, has_fast_path
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.relayout._threads import by_piece, cuts, thread_count

_pack: ModuleType | None
try:
    _pack = importlib.import_module("tensorlayout.relayout._pack")
except ImportError:  # installed without a C compiler: the numpy path
    _pack = None

__all__ = ["from_physical_packed", "pack_available", "to_physical_packed"]

USE_PACK = True  # False forces the numpy path for packed targets (tests check both)
FAR_ROWS = 1 << 16  # logical bytes between a sub-tile's rows from which columns read on (_reading_on)
WORDS_MAX_P = 64  # the words path's widest columns, in bytes (_pack.c)
SHORT_MAX_Q = 8  # the short lines path's longest lines, in packed bytes (_pack_short.h)
LINE_BYTES = 64  # a cache line
STAGED_PIECES = 64  # far-apart pieces one staged run writes (each its own page, see _continuing)
Axis = tuple[int, int, int]  # (extent, slot stride, logical byte stride)
#: per target and (logical strides, direction, pieces): (whole-byte tasks, the others, fill first)
PACK_TASKS: TargetMemo[tuple, tuple[list[Task], list[Task], bool]] = TargetMemo()
RUN_COST_BYTES = 4096  # a pad run's task costs as much as filling this many bytes (_uncovered's runs
# replace a fill first where they cost less: u1[6936,205]{0,1:T(8,128)(32,1)E(1)}, 0.7 MiB, 4 runs)
FILL_FIRST_SLOTS = 1 / 16  # pad slots shared with data, per buffer byte, from which all is filled first


def pack_available() -> bool:
    """True when the compiled packing kernel was built (else the numpy path runs)."""
    return _pack is not None


def _usable(t: PhysicalTarget) -> bool:
    return _pack is not None and USE_PACK and engine.USE_KERNEL and t.packed_bits in (1, 2, 4) \
        and has_fast_path(t)


def _coalesce(axes: list[Axis]) -> list[Axis]:
    """Merge each axis into the one inside it where both sides continue it.

    >>> _coalesce([(4, 8, 32), (8, 1, 4)])
    [(32, 1, 4)]
    """
    out = axes[-1:]
    for ext, ps, ls in reversed(axes[:-1]):
        e0, p0, l0 = out[0]
        if ps == p0 * e0 and ls == l0 * e0:
            out[0] = (ext * e0, p0, l0)
        else:
            out.insert(0, (ext, ps, ls))
    return out


def _continuing(axes: list[Axis], per: int) -> list[Axis]:
    """An axis that continues the logical run of a short contiguous inner axis (less than 16
    bytes packed: a transposing layout's sub-tile) moves just outside it, so the kernel packs
    those lines as one run through a stage instead of a few bytes at a time; longer lines
    keep their order (measured: reordering them costs more than it saves). Of a long such
    axis only ``STAGED_PIECES`` stay there, the rest goes above the next row axis, so one
    run's pieces (far apart in the buffer) touch a few pages that the next rows continue.

    >>> _continuing([(64, 1024, 8), (128, 8, 8192), (8, 1, 1)], 2)
    [(128, 8, 8192), (64, 1024, 8), (8, 1, 1)]
    """
    ext, ps, ls = axes[-1] if axes else (0, 0, 0)
    k = next((i for i, a in enumerate(axes[:-1]) if a[2] == ext and a[1] % per == 0), None)
    if ps != 1 or ls != 1 or ext >= 16 * per or k is None or axes[k][0] * ext < 64:
        return axes  # (a run shorter than a cache line gains nothing)
    if _part_lines(ext, per) and axes[k][0] * ext <= LINE_BYTES:
        return axes  # (_lines_on's lines: the kernel's short_rows, reading on)
    rest = [*axes[:k], *axes[k + 1:-1]]
    n, aps, als = axes[k]
    if n > STAGED_PIECES and n % STAGED_PIECES == 0 and rest:  # its outer part above the last row axis
        rest.insert(len(rest) - 1, (n // STAGED_PIECES, aps * STAGED_PIECES, als * STAGED_PIECES))
        n = STAGED_PIECES
    return [*rest, (n, aps, als), axes[-1]]


def _part_lines(ext: int, per: int) -> bool:
    """Contiguous lines of ``ext`` codes are whole words (``short_rows`` in ``_pack_short.h``: at
    most ``SHORT_MAX_Q`` packed bytes) and at least half of a cache line but not all of it, so
    that a line's cache line is done in two passes (quarter lines read on measured slower
    than the stage: u1[2048,8192]{0,1:T(16,128)(32,1)E(1)} from 3.5 -> 7.9x a copy).

    >>> _part_lines(32, 8), _part_lines(64, 8), _part_lines(16, 8), _part_lines(16, 2)
    (True, False, False, False)
    """
    return ext % 8 == 0 and LINE_BYTES <= 2 * ext < 2 * LINE_BYTES and ext // per <= SHORT_MAX_Q


def _lines_on(axes: list[Axis], per: int) -> list[Axis]:
    """Short lines of part of a cache line (``_part_lines``) whose rows do not continue them
    get the axes continuing their logical run (each the next one's) just outside the rows, the
    nearest innermost: each row reads (writes) its logical line on from where the last pass
    over the rows stopped, a stream per row, instead of a line's part per visit with the rest
    left to a far pass (u1[4096,8192]{0,1:T(64,128)(32,1)E(1)}: 128 rows of 32-code lines; the
    tile's second half of the lines and the next tile's columns outside them: 17 / 19 -> 2 / 5x
    a copy; the halves inside each row measured 10x), when the axis continuing the lines
    extends them to at most a cache line (a longer run goes through the stage, ``_continuing``:
    u1[8192,4096]{0,1:T(32,128)(32,1)E(1)} unpacked 1.7x a copy staged, 5.8x read on).

    >>> _lines_on([(128, 262144, 64), (32, 8192, 1048576), (2, 4096, 32), (128, 32, 8192), (32, 1, 1)], 8)
    [(32, 8192, 1048576), (128, 262144, 64), (2, 4096, 32), (128, 32, 8192), (32, 1, 1)]
    """
    if len(axes) < 3:
        return axes
    *rest, rows, inner = axes
    ext, ps, ls = inner
    if ps != 1 or ls != 1 or not _part_lines(ext, per) or rows[2] == ext:
        return axes
    first = next((a for a in rest if a[2] == ext), None)
    if first is None or first[0] * ext > LINE_BYTES:
        return axes  # (a longer run: staged, _continuing)
    chain: list[Axis] = []
    run = ext
    while (on := next((a for a in rest if a[2] == run and a not in chain), None)) is not None:
        chain.insert(0, on)
        run *= on[0]
    return axes if not chain else [*(a for a in rest if a not in chain), *chain, rows, inner]


def _words(axes: list[Axis], per: int) -> list[Axis] | None:
    """The axes for the kernel's words path (``_pack.c``), or None where it does not apply:
    the inner axis 8 slots of slot and logical stride 1 (a transposing layout's sub-tile, one
    64-bit word per column), the axis outside it the columns, whole bytes at most
    ``WORDS_MAX_P`` bytes apart; the axis continuing the columns' logical runs (if any) just
    outside them, so that the next row of lines reads (writes) on where the last one stopped.

    >>> _words([(500, 98304, 8), (1472, 32, 4000), (8, 1, 1)], 8)
    [(500, 98304, 8), (1472, 32, 4000), (8, 1, 1)]
    >>> _words([(1472, 32, 4000), (500, 98304, 8), (8, 1, 1)], 8)
    [(500, 98304, 8), (1472, 32, 4000), (8, 1, 1)]
    """
    if len(axes) < 2 or axes[-1][1:] != (1, 1) or not 0 < axes[-1][0] <= 8:
        return None  # (fewer than 8 rows: the kernel takes them of kind 2, or unpacking)
    cols = max(axes[:-1], key=lambda a: (8 <= a[1] <= WORDS_MAX_P * per and a[1] % per == 0, -a[1]))
    if not 8 <= cols[1] <= WORDS_MAX_P * per or cols[1] % per:
        return None
    rest = list(axes[:-1])
    rest.remove(cols)
    on = [a for a in rest if a[2] == 8][:1]
    return [*(a for a in rest if a not in on), *on, cols, axes[-1]]


FAR_COLUMNS = 2048  # logical bytes between a words task's columns from which _far_lines reorders it
UNPACK_BLOCK = 8  # _far_lines: columns a block when unpacking E(4) (one 8 x 8 register transpose)


def _far_lines(axes: list[Axis], per: int, to_physical: bool) -> list[Axis]:
    """A words task (``_words``) whose columns lie at least ``FAR_COLUMNS`` logical bytes apart
    and whose rows of lines end before the columns' logical lines do (an axis continues them:
    a tall tile's sub-tiles, ``T(64,128)(8,1)``) goes along those lines: the continuing axis
    just outside the rows, so that each column's line is read (written) on from where the
    last row of lines stopped instead of once per pass over every column; unpacking E(4),
    the columns in blocks of ``UNPACK_BLOCK`` outside it too (8 logical lines written in
    turn: s4[2048,8192]{0,1:T(64,128)(8,1)E(4)} 2.6 -> 1.5x a copy; packing 2.9 -> 1.8x
    with all columns, 16 or fewer measured slower).

    >>> _far_lines([(128, 131072, 64), (16, 8192, 1048576), (8, 1024, 8), (128, 8, 8192), (8, 1, 1)], 2, True)
    [(16, 8192, 1048576), (128, 131072, 64), (8, 1024, 8), (128, 8, 8192), (8, 1, 1)]
    >>> _far_lines([(128, 131072, 64), (16, 8192, 1048576), (8, 1024, 8), (128, 8, 8192), (8, 1, 1)], 2,
    ...            False)[:3]
    [(16, 8192, 1048576), (16, 64, 65536), (128, 131072, 64)]
    """
    if len(axes) < 4:
        return axes
    *rest, on, cols, inner = axes
    cont = next((a for a in rest if a[2] == on[0] * on[2]), None)
    if on[2] != inner[0] or abs(cols[2]) < FAR_COLUMNS or cont is None:
        return axes
    rest.remove(cont)
    n, ps, ls = cols
    if to_physical or per != 2 or n % UNPACK_BLOCK or n <= UNPACK_BLOCK:
        return [*rest, cont, on, cols, inner]
    block = (n // UNPACK_BLOCK, ps * UNPACK_BLOCK, ls * UNPACK_BLOCK)
    return [*rest, block, cont, on, (UNPACK_BLOCK, ps, ls), inner]


BLOCK_STREAMS = 16  # _reading_blocks: the most steps (buffer streams) an axis moved inside may have


def _reading_blocks(axes: list[Axis]) -> list[Axis]:
    """A words task whose rows of lines and columns (the last three axes) read a dense block of
    logical bytes, continued by an outer axis of at most ``BLOCK_STREAMS`` steps that is not the
    next one out, gets that axis just outside the rows: the logical bytes are then read (written)
    in one run of blocks instead of one block per page, a few buffer streams in turn
    (u4[16384,4,64,16]{2,3,0,1:T(8,128)(8,1)E(4)}: 1 KiB blocks 4 KiB apart, each a page the
    prefetchers had not reached).

    >>> _reading_blocks([(4, 33554432, 1024), (16384, 2048, 4096), (2, 1024, 8), (64, 8, 16), (8, 1, 1)])
    [(16384, 2048, 4096), (4, 33554432, 1024), (2, 1024, 8), (64, 8, 16), (8, 1, 1)]
    """
    if len(axes) < 5:
        return axes
    span = 1
    for ext, _, ls in sorted(axes[-3:], key=lambda a: a[2]):
        if ls != span:
            return axes
        span *= ext
    on = next((a for a in axes[:-4] if a[2] == span and a[0] <= BLOCK_STREAMS), None)
    if on is None:
        return axes
    rest = [a for a in axes[:-3] if a is not on]
    return [*rest, on, *axes[-3:]]


def _short_columns(axes: list[Axis], columns: bool) -> list[Axis]:
    """Fewer than 16 columns (the logically contiguous axis before the inner one) get the axis
    continuing their logical run just outside them, which the kernel merges with them into one
    run (``merges`` in ``_pack.c``) instead of a short tail per row of lines.

    >>> _short_columns([(11, 26624, 5), (65, 8, 23115), (5, 612352, 1), (8, 1, 115)], True)
    [(65, 8, 23115), (11, 26624, 5), (5, 612352, 1), (8, 1, 115)]
    """
    if not columns or len(axes) < 3 or axes[-2][2] != 1 or axes[-2][0] >= 16:
        return axes
    on = next((a for a in axes[:-2] if a[2] == axes[-2][0]), None)
    return axes if on is None else [*(a for a in axes[:-2] if a is not on), on, *axes[-2:]]


UNIT_ROWS = (1, 1, 1)  # _task: the rows of a box holding one slot per column group (its ragged sub-tile's
# only row) when packing, so that the columns go a word at a time owning their groups (kind 2) instead
# of slot by slot, read-modify-write (u4[9,633,571]{1,0,2:T(8,128)(8,1)E(4)}: the one-row remainder cost
# more than the other eight rows together; unpacking, slot by slot reads as fast: measured 4.1-5.7 / 4.5-5.3x)


UNIT_BLOCK = 16  # _without_unit_rows: unpacking keeps the unit rows of at least this many rows and columns


def _without_unit_rows(task: Task, to_physical: bool = True) -> Task:
    """A task of kind 0 without the ``UNIT_ROWS`` axis ``_task`` gave it (not owning its groups, it
    goes slot by slot: one slot a line would cost a call each), unless unpacking rows that continue
    the columns' logical runs, at least ``UNIT_BLOCK`` of each (the kernel's 16 x 16 transposes).

    >>> _without_unit_rows((0, 5, 9, (128, 1), (8, 1), (45873, 1)))
    (0, 5, 9, (128,), (8,), (45873,))
    """
    kind, slot, loff, shape, ps, ls = task
    if kind != DATA or len(shape) < 2 or (shape[-1], ps[-1], ls[-1]) != UNIT_ROWS:
        return task
    if not to_physical and len(shape) >= 3 and ls[-3] == 1 and min(shape[-3:-1]) >= UNIT_BLOCK:
        return task  # (the rows continue the columns' logical runs: 16 x 16 transposes, _pack_words.h)
    return kind, slot, loff, shape[:-1], ps[:-1], ls[:-1]


def _task(box: Box, lstrides: tuple[int, ...], pad: bool, per: int, to_physical: bool = True) -> Task:
    """One box as a kernel task: slot stride 1 innermost, then the logically contiguous axis,
    then the rest by slot stride (major first)."""
    loff = 0 if pad else sum(x0 * lstrides[k] for k, (x0, _) in enumerate(box.ranges))
    axes = [(ext, ps, 0 if pad else block * lstrides[dim]) for dim, ext, block, ps in box.axes]
    if not pad and all(a[1] != 1 for a in axes):
        axes.append(UNIT_ROWS)
    inner = [k for k, a in enumerate(axes) if a[1] == 1][:1]
    cols = [k for k, a in enumerate(axes) if a[2] == 1 and k not in inner][:1]
    outer = sorted((k for k in range(len(axes)) if k not in inner + cols),
                   key=lambda k: (-axes[k][1], -abs(axes[k][2])))
    outer = _reading_on(axes, outer, cols, inner)
    ordered = _short_columns([axes[k] for k in outer + cols + inner], bool(cols and inner))
    words = _words(ordered, per)
    merged = _coalesce(_continuing(_lines_on(ordered, per), per) if words is None
                       else _reading_blocks(_far_lines(words, per, to_physical)))
    return (PAD if pad else DATA, box.offset, loff, tuple(a[0] for a in merged),
            tuple(a[1] for a in merged), tuple(a[2] for a in merged))


def _reading_on(axes: list[Axis], outer: list[int], cols: list[int], inner: list[int]) -> list[int]:
    """``outer`` with the axes that continue the columns' logical run (each the next one's)
    moved innermost (just outside the columns, the nearest innermost; the chain ends before the
    axis that would reach the next row), when the sub-tile's rows lie at least ``FAR_ROWS``
    logical bytes apart: then each row of columns reads its rows on
    from where the last one stopped (a few streams the prefetchers follow) instead of a fresh
    line per row, far apart (s4[16,128,128,64]{3,0,1,2:T(8,128)(8,1)E(4)}: rows 1 MiB apart;
    u4[16,16,64,256]{3,0,1,2:...}: a tile row's second tile continues the columns, the next dim
    continues both).

    >>> _reading_on([(128, 262144, 64), (2, 1024, 8388608), (64, 8, 1), (8, 1, 1048576)], [0, 1], [2], [3])
    [1, 0]
    >>> _reading_on([(64, 65536, 256), (16, 4096, 16384), (2, 1024, 128), (128, 8, 1), (8, 1, 262144)],
    ...             [0, 1, 2], [3], [4])
    [1, 0, 2]
    """
    rows = abs(axes[inner[0]][2]) if cols and inner else 0
    if rows < FAR_ROWS:
        return outer
    run, chain = axes[cols[0]][0], list[int]()
    while (on := next((k for k in outer if axes[k][2] == run and k not in chain), None)) is not None \
            and (not chain or run * axes[on][0] < rows):  # (up to the next row: the plane between them)
        chain.insert(0, on)
        run *= axes[on][0]
    return [*(k for k in outer if k not in chain), *chain]


def _whole_bytes(task: Task, per: int) -> bool:
    """The task writes whole bytes (no slot of another task in them): ``aligned`` in _pack.c,
    or of kind 2 with groups of whole bytes (``owns_whole_bytes``: its rows may end inside a
    byte, the group has the rest).

    >>> _whole_bytes((2, 0, 0, (4, 5), (8, 1), (1, 9)), 2), _whole_bytes((0, 0, 0, (4, 5), (8, 1), (1, 9)), 2)
    (True, False)
    """
    kind, slot, _, shape, ps, _ = task
    if not shape:
        return False
    rows_whole = (kind == DATA_OWNING_GAPS and len(shape) >= 2) or shape[-1] % per == 0
    return rows_whole and ps[-1] == 1 and slot % per == 0 and all(p % per == 0 for p in ps[:-1])


def _split(task: Task, pieces: int, per: int) -> list[Task]:
    """The task in ``pieces`` runs of its outer axis (whole bytes stay whole)."""
    pad, slot, loff, shape, ps, ls = task
    if pieces < 2 or not shape or shape[0] < 2:
        return [task]
    unit = per if len(shape) == 1 else 1  # a 1-D task is cut on whole bytes
    return [(pad, slot + i * ps[0], loff + i * ls[0], (j - i, *shape[1:]), ps, ls)
            for i, j in itertools.pairwise(cuts(shape[0], pieces, unit))]


def _tasks(t: PhysicalTarget, lstrides: tuple[int, ...], to_physical: bool, pieces: int
           ) -> tuple[list[Task], list[Task], bool]:
    """(whole-byte tasks in ``pieces`` per box, the others, whether the buffer is filled with
    the pad code first) for one copy; remembered per target (``PACK_TASKS``)."""
    key = (lstrides, to_physical, pieces)
    return PACK_TASKS.get(t, key, lambda: _make_tasks(t, lstrides, to_physical, pieces))


def _make_tasks(t: PhysicalTarget, lstrides: tuple[int, ...], to_physical: bool, pieces: int
                ) -> tuple[list[Task], list[Task], bool]:
    plan = copy_plan(t)
    ext = (0,) * len(t.leading_digits) + lstrides
    per = 8 // t.packed_bits
    tasks = [_task(box, ext, False, per, to_physical) for box in plan.data]
    if to_physical and plan.fill_all:
        group, extent = _gap_groups(t)
        tasks = [_owning_gaps(task, group, extent, t.physical_elements) for task in tasks]
    fill = to_physical and plan.fill_all and not _groups_cover(tasks, t.physical_elements, per)
    uncovered = _uncovered(tasks, t.physical_elements) if fill else None
    if uncovered is not None and len(uncovered) * RUN_COST_BYTES <= (t.buffer_bytes or 0):
        # the groups no data task owns, as pad runs (not the whole buffer)
        tasks, fill = tasks + uncovered, False
    if to_physical and not plan.fill_all:
        pads = [_task(box, ext, True, per) for box in plan.padding]
        start, end = plan.tail
        if start < end:
            pads.append((PAD, start, 0, (end - start,), (1,), (0,)))
        tasks, fill = _owning_or_pads(tasks, pads, t, per)
    tasks = [_without_unit_rows(task, to_physical) for task in tasks]
    whole = by_piece([_split(task, pieces, per) for task in tasks
                      if _whole_bytes(task, per) or not to_physical])
    rest = [task for task in tasks if to_physical and not _whole_bytes(task, per)]
    return whole, rest, fill


def _owning_or_pads(tasks: list[Task], pads: list[Task], t: PhysicalTarget, per: int
                    ) -> tuple[list[Task], bool]:
    """(tasks, fill first) of a plan with pad boxes: data tasks owning disjoint column groups
    (``_owning_disjoint``: a ragged sub-tile's missing rows, a sub-tile's unused rows, written
    with the data in whole bytes) and pad runs over the groups none owns (``_uncovered``), no
    fill; else, where the pad tasks would go mostly slot by slot (``_fill_first``), a fill
    first and the data tasks owning what they can; else the data and pad tasks as they are.

    >>> t = PhysicalTarget.from_xla("u1[128,4]{0,1:T(8,128)(32,1)E(1)}")
    >>> pads = [(1, 4, 0, (128, 28), (32, 1), (0, 0))]
    >>> tasks, fill = _owning_or_pads([(0, 0, 0, (128, 4), (32, 1), (4, 1))], pads, t, 8)
    >>> tasks, fill
    ([(2, 0, 0, (128, 4), (32, 1), (4, 1))], False)
    """
    owning = _owning_disjoint(tasks, t, True) if pads else tasks  # (no padding: nothing to own)
    runs = _uncovered(owning, t.physical_elements) if owning is not tasks else None
    if runs is not None:
        return owning + runs, False
    if _fill_first(pads, t.buffer_bytes or 0, per):
        return _owning_disjoint(tasks, t), True
    return tasks + pads, False


def _fill_first(pads: list[Task], nbytes: int, per: int) -> bool:
    """Filling the whole buffer with the pad code before the data beats writing the pad tasks:
    those sharing bytes with data (a ragged sub-tile's missing rows) go slot by slot, read-
    modify-write, and hold at least ``FILL_FIRST_SLOTS`` slots per buffer byte.

    >>> _fill_first([(1, 1, 0, (100, 7), (8, 1), (0, 0))], 800, 2)
    True
    """
    shared = sum(prod(shape) for task in pads if not _whole_bytes(task, per) for shape in [task[3]])
    return shared >= FILL_FIRST_SLOTS * nbytes


def _workers(nbytes: int, threads: int | None) -> int:
    return thread_count(threads) if nbytes >= engine.THREAD_MIN_BYTES else 1


def _low_bytes(a: np.ndarray) -> np.ndarray:
    """The low byte of each element (modular, as ``astype``), without a copy for 1-byte items."""
    return a.view(np.uint8) if a.dtype.itemsize == 1 else a.astype(np.uint8)


def to_physical_packed(a: np.ndarray, t: PhysicalTarget, pad_value: object, out: np.ndarray | None,
                       threads: int | None) -> np.ndarray | None:
    """The packed buffer of the logical integer array ``a`` (its checks done by the caller),
    written into ``out`` if given; None to leave it to the numpy path."""
    n = t.buffer_bytes or 0
    if not _usable(t) or (out is not None and not (
            isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.size == n
            and out.flags.c_contiguous and out.flags.writeable)):
        return None
    assert _pack is not None
    bits, per = t.packed_bits, 8 // t.packed_bits
    pad = int(pad_value) & ((1 << bits) - 1)  # type: ignore[call-overload]  # checked by the caller
    low = _low_bytes(a)
    try:
        result = np.empty(n, np.uint8) if out is None else out.reshape(-1)
    except MemoryError:  # the numpy path reports it
        return None
    if np.may_share_memory(low, result):
        low = low.copy()
    workers = _workers(low.nbytes, threads)
    whole, rest, fill = _tasks(t, low.strides, True, engine.pieces(workers))
    if fill:
        result.fill(sum(pad << (k * bits) for k in range(per)))
    if t.physical_elements % per:  # the last byte's unused high bits are 0
        result[-1] &= (1 << (t.physical_elements % per * bits)) - 1 if fill else 0
    stream = max(n, low.nbytes) >= engine.STREAM_MIN_BYTES  # the bytes moved, as unpack's
    _pack.pack(result, low, whole, bits, t.physical_elements, pad, False, stream, workers)
    if rest:
        _pack.pack(result, low, rest, bits, t.physical_elements, pad, True, False)
    return result if out is None else out


def from_physical_packed(b: np.ndarray, t: PhysicalTarget, out: np.ndarray | None,
                         threads: int | None) -> np.ndarray | None:
    """The logical ``int8``/``uint8`` array of the packed 1-D byte buffer ``b``, written into
    ``out`` if given; None to leave it to the numpy path."""
    dtype = np.dtype(np.int8 if t.signed else np.uint8)
    if not _usable(t) or b.dtype.itemsize != 1 or b.dtype.kind not in "iu" or b.size != t.buffer_bytes:
        return None
    if out is None:
        try:
            out = np.empty(t.logical_shape, dtype)
        except MemoryError:
            return None
    elif not (isinstance(out, np.ndarray) and out.shape == t.logical_shape and out.dtype == dtype
              and out.flags.writeable):
        return None
    assert _pack is not None
    if np.may_share_memory(out, b):
        b = b.copy()
    raw = b.view(np.uint8)
    workers = _workers(out.nbytes, threads)
    tasks = _tasks(t, out.strides, False, engine.pieces(workers))[0]
    stream = out.nbytes >= engine.STREAM_MIN_BYTES
    _pack.unpack(out, raw, tasks, t.packed_bits, t.physical_elements, t.signed, stream, workers)
    return out
