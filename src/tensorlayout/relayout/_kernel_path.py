"""The compiled kernel's side of a copy: each box's views in the kernel's loop order, and
the byte-offset tasks ``_kernel.c`` takes (cached on the target per stride pattern)."""

from __future__ import annotations

import importlib
import itertools
from types import ModuleType

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlayout.core.intmath import prod
from tensorlayout.relayout._bytes_path import quad_part_views, quad_rows_views, quads_views
from tensorlayout.relayout._memo import TargetMemo
from tensorlayout.relayout._plan import Plan
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.relayout._threads import by_piece, cuts
from tensorlayout.relayout._views import Pair, box_views

__all__ = ["Task", "joined_tasks", "kernel_tasks", "pair_tasks"]

_kernel: ModuleType | None
try:
    _kernel = importlib.import_module("tensorlayout.relayout._kernel")
except ImportError:  # no compiler: the tasks go unused (the numpy path copies)
    _kernel = None

MAX_READ_STREAMS = 16  # interleaved logical rows the kernel reads at once (see _kernel_views)
MAX_WRITE_STREAMS = 256  # … and writes at once (stores do not stall; 256 lines fit in L1)
Task = tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...], bool, int]  # see _kernel.c
#: per target and both arrays' strides, item size, direction and pieces: the kernel's tasks
KERNEL_TASKS: TargetMemo[tuple, list[Task]] = TargetMemo()


def _kernel_views(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> Pair:
    """The (physical, logical) views of one box with the axes in the kernel's loop order,
    outermost first (see ``_kernel.c``).

    The inner loop's axes go last: a run contiguous on both sides, or a small sub-tile axis
    woven into (or out of) a contiguous one (the pair the kernel's weave rule names:
    ``weave_axes``, so that the rule is written once, in C). The outer axes follow the buffer, which is then
    read or written in order, except where that would interleave more logical rows in short
    pieces than the caches and prefetchers follow (``MAX_READ_STREAMS`` when reading them,
    ``MAX_WRITE_STREAMS`` when writing): there the axis that continues those pieces moves
    inward, splitting the rows axis if need be (zN to the buffer: the 16 rows of a fractal
    row, then the next fractal, instead of a 32-byte piece of every row of the matrix).
    """
    n, item = pv.ndim, pv.itemsize
    if n == 0:
        return pv, lv
    ds, ss = (pv.strides, lv.strides) if to_physical else (lv.strides, pv.strides)
    inner: list[int] = [k for k in range(n) if ds[k] == ss[k] == item]
    streams = 1
    if not inner and _kernel is not None:  # the kernel's weave rule picks the pair (_kernel_nest.h)
        pair = _kernel.weave_axes(pv.shape, ds, ss, item)
        if pair is not None:
            inner, streams = list(pair), pv.shape[pair[1]]
    if not inner:  # a transposing box: the kernel's blocked 2-D loop over both contiguous axes
        src_axis = next((k for k in range(n) if ss[k] == item and pv.shape[k] > 1), None)
        dst_axis = next((k for k in range(n) if ds[k] == item and pv.shape[k] > 1), None)
        if src_axis is not None and dst_axis is not None and src_axis != dst_axis:
            return _transpose_views(pv, lv, src_axis, dst_axis, to_physical)
    strided = not inner
    if not inner:  # strided items: innermost the axis finest on either side (a ragged sub-tile's
        # last row, 2-byte items 30 bytes apart in the array and 40 KiB in the buffer, read
        # along the buffer's tile row: bf16[1246,89,15]{0,2,1:T(8,128)(2,1)} from 6.8x -> 4.2x)
        inner = [min(range(n), key=lambda k: (min(abs(ds[k]), abs(ss[k])), abs(ds[k])))]
    outer = sorted((k for k in range(n) if k not in inner),
                   key=lambda k: (-abs(pv.strides[k]), -abs(lv.strides[k])))
    if strided and n >= 2:
        blocked = _blocked(pv, lv, ds, ss, inner[0], outer)
        if blocked is not None:
            return blocked
    axes = [(pv.shape[k], pv.strides[k], lv.strides[k]) for k in (*outer, *inner)]
    n_outer = len(outer)
    segment = pv.shape[inner[0]] * item if lv.strides[inner[0]] == item else item
    pos = next((i for i, k in enumerate(outer) if lv.strides[k] == segment), None)
    limit = MAX_READ_STREAMS if to_physical else MAX_WRITE_STREAMS
    if pos is not None and segment < 512:
        under = streams * prod(a[0] for a in axes[pos + 1:n_outer])
        while under > limit and pos + 1 < n_outer:
            ext, ps, ls = axes[pos + 1]
            under //= ext
            keep = max((f for f in range(1, limit // under + 1) if ext % f == 0), default=1)
            if keep > 1:  # split the rows axis: its outer part above, `keep` rows below
                axes[pos + 1:pos + 2] = [(ext // keep, ps * keep, ls * keep), (keep, ps, ls)]
                n_outer += 1
                under *= keep
            axes[pos], axes[pos + 1] = axes[pos + 1], axes[pos]
            pos += 1
    shape = tuple(a[0] for a in axes)
    return (as_strided(pv, shape, tuple(a[1] for a in axes)),
            as_strided(lv, shape, tuple(a[2] for a in axes)))


STRIDED_BLOCK = 8  # items of a strided box's blocked axis per inner loop (_blocked)


def _blocked(pv: np.ndarray, lv: np.ndarray, ds: tuple[int, ...], ss: tuple[int, ...], k: int,
             outer: list[int]) -> Pair | None:
    """A strided box (no run, weave or transpose) as a blocked transpose: of its axis finest in
    one array (``k``) and the one finest in the other, the first whose extent is a multiple of
    ``STRIDED_BLOCK`` (16 or more) innermost in blocks of that many, the other just outside
    (a ragged (2,1) sub-tile's last items, 4 bytes apart on both sides and 4 KiB / 40 KiB
    across: 0.30 -> 0.10 ms in bf16[1246,89,15]{0,2,1:T(8,128)(2,1)} -> {1,2,0:...}); else None."""
    side = ss if abs(ds[k]) <= abs(ss[k]) else ds
    j = min(outer, key=lambda a: abs(side[a]))
    if abs(side[j]) >= abs(side[k]):
        return None
    b = STRIDED_BLOCK
    blk = next((a for a in (k, j) if pv.shape[a] % b == 0 and pv.shape[a] >= 2 * b), None)
    if blk is None:
        return None
    other = j if blk == k else k
    rest = [a for a in outer if a not in (blk, other)]
    axes = [(pv.shape[a], pv.strides[a], lv.strides[a]) for a in rest]
    axes += [(pv.shape[blk] // b, pv.strides[blk] * b, lv.strides[blk] * b),
             (pv.shape[other], pv.strides[other], lv.strides[other]),
             (b, pv.strides[blk], lv.strides[blk])]
    return (as_strided(pv, tuple(a[0] for a in axes), tuple(a[1] for a in axes)),
            as_strided(lv, tuple(a[0] for a in axes), tuple(a[2] for a in axes)))


def _transpose_views(pv: np.ndarray, lv: np.ndarray, a: int, b: int, to_physical: bool) -> Pair:
    """A transposing box in the kernel's loop order: ``a`` (contiguous in the source) and ``b``
    (contiguous in the destination) innermost; just outside them the axis over which the
    source's rows run on, if there is one (the kernel streams it in strips of destination
    lines), and outside that the one over which the destination's do (the kernel gathers
    those rows' pieces into whole lines); the other axes outside by logical stride, so that
    consecutive blocks continue the same logical rows.
    """
    item = pv.itemsize
    ds, ss = (pv.strides, lv.strides) if to_physical else (lv.strides, pv.strides)
    others = [k for k in range(pv.ndim) if k not in (a, b)]
    src_run = [k for k in others if ss[k] == pv.shape[a] * item][:1]
    dst_run = [k for k in others if ds[k] == pv.shape[b] * item and k not in src_run][:1]
    run = [*dst_run, *src_run]
    outer = sorted((k for k in range(pv.ndim) if k not in (a, b, *run)), key=lambda k: -abs(lv.strides[k]))
    order = (*outer, *run, a, b)
    shape = tuple(pv.shape[k] for k in order)
    return (as_strided(pv, shape, tuple(pv.strides[k] for k in order)),
            as_strided(lv, shape, tuple(lv.strides[k] for k in order)))


def kernel_tasks(plan: Plan, target: PhysicalTarget, logical: np.ndarray, buf: np.ndarray,
                 to_physical: bool, pieces: int) -> list[Task]:
    """The kernel's tasks for one copy, in bytes from each array's first element: the boxes
    in loop order, each split into ``pieces`` along its outer axis (for threads). They
    depend only on both arrays' strides, so they are remembered per target (``KERNEL_TASKS``)."""
    key = (logical.strides, buf.strides, logical.itemsize, to_physical, pieces)
    one = pieces == 1 and (buf.itemsize == 1 or (buf.itemsize == 2 and to_physical))  # (see joined_tasks)
    join = joined_tasks if one else list  # (one call's tasks)
    return KERNEL_TASKS.get(target, key, lambda: join(pair_tasks(
        [box_views(box, logical, buf) for box in plan.data], logical, buf, to_physical, pieces)))


def pair_tasks(pairs: list[Pair], logical: np.ndarray, buf: np.ndarray, to_physical: bool,
               pieces: int) -> list[Task]:
    """The kernel's tasks for (physical, logical) view pairs over ``buf`` and ``logical``:
    each in the kernel's loop order, split into ``pieces`` along its outer axis, in the order
    ``by_piece`` (the kernel's threads claim them in turn: each box's pieces are spread over
    the list, so a box's last pieces are not all left to the end)."""
    return by_piece([_pair_tasks(pv, lv, logical, buf, to_physical, pieces) for pv, lv in pairs])


def _pair_tasks(pv: np.ndarray, lv: np.ndarray, logical: np.ndarray, buf: np.ndarray,
                to_physical: bool, pieces: int) -> list[Task]:
    """One pair's tasks: at most ``pieces`` (see ``pair_tasks``)."""
    base_l, base_b = _address(logical), _address(buf)
    tasks: list[Task] = []
    pv, lv = units(pv, lv)
    swap = pv.itemsize != buf.itemsize
    if not swap:
        pv, lv = wider_items(pv, lv)
    wide = 0 if swap or pv.itemsize == buf.itemsize else pv.itemsize
    rows = quad_rows_views(pv, lv, to_physical) if wide == 4 and buf.itemsize == 1 else None
    if rows is None and not swap and not wide:
        rows = quad_part_views(pv, lv, to_physical)  # (a partial (4,1) quad's rows: _bytes_path)
    p, q = rows if rows is not None else _kernel_views(pv, lv, to_physical)
    quads = quads_views(p, q, to_physical) if not swap and not wide else None
    p, q = quads if quads is not None else (p, q)
    for pp, qq in _pieces(p, q, pieces):
        phys = (_address(pp) - base_b, pp.strides)
        logi = (_address(qq) - base_l, qq.strides)
        (d_off, d_st), (s_off, s_st) = (phys, logi) if to_physical else (logi, phys)
        tasks.append((d_off, s_off, pp.shape, d_st, s_st, swap, wide))
    return tasks


#: A box is cut for threads along its outer axis, unless a piece's runs on one side (contiguous
#: bytes) would then be shorter than this while another axis leaves longer ones on both sides:
#: f64[262144,32]{0,1:T(1,128)} to_physical, cut along its 32 destination rows, had each thread
#: read 64 bytes of every 256-byte source row (default threads 2.65x a copy, one thread 1.03x).
CUT_RUN_BYTES = 4096
#: ... for boxes of this many bytes on: beyond the caches, where the reads of short runs cost
#: (as ``_copy.STREAM_MIN_BYTES``; smaller copies keep their pieces in address order, which
#: the tails that write their padding as they go need: ``_tails.tailed``).
CUT_MIN_BYTES = 1 << 24


def _pieces(p: np.ndarray, q: np.ndarray, pieces: int) -> list[Pair]:
    """The views ``(p, q)`` (the kernel's loop order) cut into at most ``pieces`` boxes for threads,
    along the axis ``_cut_axis`` picks, each piece a multiple of its ``_cut_unit`` steps."""
    if pieces < 2 or not p.ndim:
        return [(p, q)]
    a = _cut_axis(p, q, pieces)
    if p.shape[a] < 2:
        return [(p, q)]
    cut = [slice(None)] * p.ndim
    parts = []
    for i, j in itertools.pairwise(cuts(p.shape[a], pieces, _cut_unit(p, q, a))):
        cut[a] = slice(i, j)
        parts.append((p[tuple(cut)], q[tuple(cut)]))
    return parts


def _cut_unit(p: np.ndarray, q: np.ndarray, a: int) -> int:
    """How many steps of axis ``a`` a piece holds a multiple of: a line of items where the kernel's
    vector tiles may run along the axis (a box of three axes at most, the axis not whole lines
    apart on both sides), so that no piece leaves its items to the tiles' scalar edges (a
    transpose of 96 rows 64 KiB apart in 16 pieces of 6 rows measured 1.6 -> 2.3x a copy); else
    1. Cut at lines of items, the 8 steps of 512 KiB of s64[64,8,1024]{2,0,1:T(1,128)}'s one box
    made one piece, which one thread copied while the other waited (1.81x a copy on default
    threads, 1.33x on one).

    >>> a = np.zeros((8, 64, 1024))  # with the same box in two other orders:
    >>> b, c = np.zeros((64, 8, 1024)).transpose(1, 0, 2), np.zeros((1024, 64, 8)).T
    >>> _cut_unit(a, b, 0), _cut_unit(a, c, 0)  # steps of 8 KiB, and of one item
    (1, 8)
    """
    if p.ndim > 3 or all(v.strides[a] % 64 == 0 for v in (p, q)):
        return 1
    return max(1, 64 // p.itemsize)


def _cut_axis(p: np.ndarray, q: np.ndarray, pieces: int) -> int:
    """The axis to cut ``(p, q)`` along: the outermost of at least two ``_cut_unit`` steps, or, in a
    box of ``CUT_MIN_BYTES`` or more whose pieces along that axis leave runs shorter than
    ``CUT_RUN_BYTES`` on one side, the axis whose pieces keep the longest runs on both sides (0
    where none has two units).

    >>> a, b = np.zeros((32, 1 << 16)), np.zeros((1 << 16, 32))  # 16 MiB
    >>> _cut_axis(a, b.T, 4)  # a transpose: cut along the 65536, not the 32 rows
    1
    >>> _cut_axis(a, b.T, 1), _cut_axis(a, a, 4), _cut_axis(a[:, :4096], b[:4096].T, 4)
    (0, 0, 0)
    >>> _cut_axis(a[:8], b[:, :8].T, 4)  # 8 rows, fewer than two lines of items
    1
    """
    def shortest_run(a: int) -> int:
        n = max(_cut_unit(p, q, a), -(-p.shape[a] // pieces))
        shape = tuple(min(n, k) if i == a else k for i, k in enumerate(p.shape))
        return min(_run_bytes(shape, v.strides, v.itemsize) for v in (p, q))
    fits = [a for a in range(p.ndim) if p.shape[a] >= 2 * _cut_unit(p, q, a)]
    if pieces < 2 or not fits:
        return 0
    first = fits[0]
    if p.size * p.itemsize < CUT_MIN_BYTES or (run := shortest_run(first)) >= CUT_RUN_BYTES:
        return first
    runs = {a: shortest_run(a) for a in fits}
    best = max(fits, key=runs.__getitem__)
    return best if runs[best] > run else first


def _run_bytes(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> int:
    """How many bytes a box (``shape``, byte ``strides``) holds contiguous from its first item.

    >>> _run_bytes((8, 4096), (8, 256), 8), _run_bytes((32, 512), (8, 256), 8)
    (64, 131072)
    """
    run = item
    for n, s in sorted(zip(shape, strides, strict=True), key=lambda a: abs(a[1])):
        if n == 1:
            continue
        if s != run:
            break
        run *= n
    return run


def units(pv: np.ndarray, lv: np.ndarray) -> Pair:
    """The pair as views of 2 x 2 blocks of items when it has a size-2 axis of strides (2, 1)
    items and one of (1, 2) (a (2,1) sub-tile read as its transpose; 1- or 2-byte items): the
    blocks, 4 items wide on both sides, are the kernel's swapped units (``swap`` in
    ``_kernel.c``); else the pair as it is.

    >>> a, b = np.zeros(8, np.uint16), np.zeros(8, np.uint16)
    >>> u = units(as_strided(a, (2, 2, 2), (8, 4, 2)), as_strided(b, (2, 2, 2), (8, 2, 4)))
    >>> u[0].shape, u[0].dtype.itemsize, u[0].strides
    ((2,), 8, (8,))
    """
    e = pv.itemsize
    shape, ps, ls = pv.shape, pv.strides, lv.strides
    a = [k for k in range(pv.ndim) if shape[k] == 2 and ps[k] == 2 * e and ls[k] == e]
    b = [k for k in range(pv.ndim) if shape[k] == 2 and ps[k] == e and ls[k] == 2 * e]
    if e not in (1, 2) or not a or not b:
        return pv, lv
    keep = [k for k in range(pv.ndim) if k not in (a[0], b[0])]
    if any(ps[k] % (4 * e) or ls[k] % (4 * e) for k in keep):
        return pv, lv
    dtype = np.dtype((np.void, 4 * e))
    sub = tuple(shape[k] for k in keep)
    return (_unit_view(pv, dtype, sub, tuple(ps[k] for k in keep)),
            _unit_view(lv, dtype, sub, tuple(ls[k] for k in keep)))


def wider_items(pv: np.ndarray, lv: np.ndarray) -> Pair:
    """The pair as views of wider items when one axis is a run of 2, 4 or 8 bytes contiguous on
    both sides and no other axis steps inside a run (strides 0 or at least the run): the kernel
    moves each run as one item (``item`` in ``_kernel.c``, at any alignment: a bf16 array of
    odd rows has its pairs 2 bytes off a 4-byte boundary), so a (2,1) sub-tile's pair against a
    transposed tiling is a transpose of 4-byte items, not runs of two 2-byte items (measured
    9.6x a copy for bf16[4003,4001]{0,1:T(8,128)(2,1)}); else the pair as it is.

    >>> a, b = np.zeros(16, np.uint16), np.zeros(16, np.uint16)
    >>> w = wider_items(as_strided(a, (4, 2, 2), (4, 16, 2)), as_strided(b, (4, 2, 2), (8, 4, 2)))
    >>> w[0].shape, w[0].dtype.itemsize, w[0].strides, w[1].strides
    ((4, 2), 4, (4, 16), (8, 4))
    """
    e, shape, ps, ls = pv.itemsize, pv.shape, pv.strides, lv.strides
    run = next((k for k in range(pv.ndim) if ps[k] == ls[k] == e and shape[k] * e in (2, 4, 8)), None)
    if run is None or pv.ndim < 2:
        return pv, lv
    wide = shape[run] * e
    keep = [k for k in range(pv.ndim) if k != run]
    if any(0 < abs(st[k]) < wide for st in (ps, ls) for k in keep):
        return pv, lv
    dtype = np.dtype((np.void, wide))
    sub = tuple(shape[k] for k in keep)
    return (_unit_view(pv, dtype, sub, tuple(ps[k] for k in keep)),
            _unit_view(lv, dtype, sub, tuple(ls[k] for k in keep)))


class _Interface:
    """An ``__array_interface__`` holder, for a view with an item size of its own."""

    def __init__(self, interface: dict, base: np.ndarray) -> None:
        self.__array_interface__ = interface
        self.base = base


def _unit_view(v: np.ndarray, dtype: np.dtype, shape: tuple[int, ...],
               strides: tuple[int, ...]) -> np.ndarray:
    """The view of ``v``'s memory from its first item with another dtype, shape and strides."""
    interface = dict(v.__array_interface__, shape=shape, strides=strides, typestr=dtype.str,
                     descr=[("", dtype.str)])
    return np.asarray(_Interface(interface, v))


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _joined(a: Task, b: Task) -> Task | None:
    """``a`` and ``b`` as one task when ``b`` goes on from ``a`` along one axis in both arrays (the
    same strides, the other extents equal; no tails), else None."""
    if len(a) != 7 or a[3:] != b[3:] or len(a[2]) != len(b[2]) or not a[2]:
        return None
    differ = [k for k in range(len(a[2])) if a[2][k] != b[2][k]]
    if len(differ) > 1:
        return None
    for k in differ or range(len(a[2])):
        if b[0] - a[0] == a[2][k] * a[3][k] and b[1] - a[1] == a[2][k] * a[4][k]:
            return (a[0], a[1], tuple(n + b[2][k] if i == k else n for i, n in enumerate(a[2])), *a[3:])
    return None


def joined_tasks(tasks: list[Task]) -> list[Task]:
    """``tasks`` (one call's, not cut in pieces: those would join again) with each task that goes on
    from another along one axis joined to it (``_joined``), in the order of the first: a plan's
    box of whole tiles and its ragged last tile column,
    pred[49651,1017]{1,0:T(4,128)(4,1)} (896 and 121 groups of every tile row), were two passes
    over both arrays, each line at their seam written twice (f8e4m3fn from_physical, raw tasks,
    one thread, in turn with a copy: 2.31 -> 1.60x a copy, to_physical 1.76 -> 1.56); of 2-byte
    items to_physical too (f16[4445,207]{1,0:T(2,128)(2,1)}, 128 and 79 pairs, 1.58 -> 1.20;
    f16[3519,1016]{1,0:T(2,128)(2,1)} 2.4 -> 1.85; one thread, alternating processes), not from
    it (1.40 -> 1.11 there, but f16[3519,1016] 2.2 -> 3.2).

    >>> joined_tasks([(0, 0, (9, 896, 4), (4068, 1, 1017), (4096, 4, 1), False, 0),
    ...               (896, 3584, (9, 121, 4), (4068, 1, 1017), (4096, 4, 1), False, 0)])
    [(0, 0, (9, 1017, 4), (4068, 1, 1017), (4096, 4, 1), False, 0)]
    """
    out = list(tasks)
    i = 0
    while i < len(out):
        j = next((j for j in range(len(out)) if j != i and _joined(out[i], out[j]) is not None), None)
        if j is None:
            i += 1
            continue
        out[i] = _joined(out[i], out[j])  # type: ignore[assignment]
        del out[j]
        i = min(i, j)  # (an earlier task may go on into the joined one)
    return out
