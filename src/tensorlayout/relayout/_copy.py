"""The copy engine: strided views between a logical array and a physical buffer.

A target with digits (see ``_target``) maps logical coordinates to offsets by a mixed radix
per dim. The valid range ``[0, n)`` of each dim splits into a few boxes of digit values
(full tiles, then the partial tile row, …); for each product of boxes the logical side is
a slice of the array split into digit axes and the physical side an ``as_strided`` view of
the buffer — both are views, and one strided copy moves the box. Padding slots form boxes
too and are filled without touching the data slots.

The copy itself is the small C kernel ``_kernel.c`` (built at install; loops ordered for
both sides' caches, vectorised sub-tile weaving, non-temporal stores for large buffers),
shared among a few threads for large arrays. Without a compiler the same views go through
``np.copyto`` block by block, small sub-tile axes peeled into separate passes.

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> buf = np.full(t.physical_elements, -1.0)
>>> copy_in(np.arange(15.0).reshape(3, 5), buf, t, 0.0)
>>> buf[:8].tolist()
[0.0, 1.0, 5.0, 6.0, 2.0, 3.0, 7.0, 8.0]
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import product

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout._target import Digit, PhysicalTarget

try:
    from tensorlayout.relayout import _kernel
except ImportError:  # installed without a C compiler: the numpy path
    _kernel = None  # type: ignore[assignment]

__all__ = ["copy_in", "copy_out", "has_fast_path", "kernel_available"]

USE_KERNEL = True  # False forces the numpy path (tests check both)
THREAD_MIN_BYTES = 1 << 23  # copies from 8 MiB on are shared among threads
STREAM_MIN_BYTES = 1 << 24  # from 16 MiB on the kernel writes past the cache (non-temporal)
MAX_READ_STREAMS = 16  # interleaved logical rows the kernel reads at once (see _kernel_views)
MAX_WRITE_STREAMS = 256  # … and writes at once (stores do not stall; 256 lines fit in L1)
BLOCK_BYTES = 1 << 18  # numpy path: bytes per block, so both sides stay in cache
PEEL_MAX = 8  # numpy path: inner physical axes up to this extent are peeled into passes
WIDEN_MAX_BYTES = 64  # numpy path: longer runs already copy at full speed as plain elements
_Pair = tuple[np.ndarray, np.ndarray]  # (destination view, source view)
_Task = tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # see _kernel.c
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor | None:
    global _POOL
    workers = min(4, os.cpu_count() or 1)
    if workers < 2:
        return None
    if _POOL is None:
        _POOL = ThreadPoolExecutor(workers, thread_name_prefix="tensorlayout-relayout")
    return _POOL


@dataclass(frozen=True, slots=True)
class _Box:
    """One box of a copy: per extended dim an x range; axes (dim, extent, block, pstride)."""

    ranges: tuple[tuple[int, int], ...]
    axes: tuple[tuple[int, int, int, int], ...]
    offset: int


def _blocks(sizes: list[int]) -> list[int]:
    out = [1] * len(sizes)
    for j in range(len(sizes) - 2, -1, -1):
        out[j] = out[j + 1] * sizes[j + 1]
    return out


def _range_boxes(lo: int, hi: int, sizes: list[int]) -> list[list[tuple[int, int]]]:
    """``[lo, hi)`` of a mixed-radix number (digit sizes major first) as boxes of digit ranges.

    >>> _range_boxes(0, 5, [3, 2])
    [[(0, 2), (0, 2)], [(2, 3), (0, 1)]]
    """
    if lo >= hi:
        return []
    if len(sizes) == 1:
        return [[(lo, hi)]]
    block = int(np.prod(sizes[1:], dtype=np.int64))
    a, ra = divmod(lo, block)
    b, rb = divmod(hi, block)
    full = [(0, s) for s in sizes[1:]]
    if a == b:
        return [[(a, a + 1), *bx] for bx in _range_boxes(ra, rb, sizes[1:])]
    out: list[list[tuple[int, int]]] = []
    if ra:
        out += [[(a, a + 1), *bx] for bx in _range_boxes(ra, block, sizes[1:])]
        a += 1
    if a < b:
        out.append([(a, b), *full])
    if rb:
        out += [[(b, b + 1), *bx] for bx in _range_boxes(0, rb, sizes[1:])]
    return out


def _dim_boxes(dim: int, digits: tuple[Digit, ...], lo: int, hi: int) -> list[_Box]:
    sizes = [d.size for d in digits]
    blocks = _blocks(sizes)
    out = []
    for box in _range_boxes(lo, hi, sizes):
        x0 = sum(a * b for (a, _), b in zip(box, blocks, strict=True))
        x1 = x0 + sum((e - a - 1) * b for (a, e), b in zip(box, blocks, strict=True)) + 1
        axes = tuple((dim, e - a, b, d.stride) for (a, e), b, d in zip(box, blocks, digits, strict=True)
                     if e - a > 1)
        off = sum(a * d.stride for (a, _), d in zip(box, digits, strict=True))
        out.append(_Box(((x0, x1),), axes, off))
    return out


def _combine(parts: list[list[_Box]]) -> list[_Box]:
    out = []
    for combo in product(*parts):
        ranges = tuple(r for b in combo for r in b.ranges)
        axes = tuple(a for b in combo for a in b.axes)
        out.append(_Box(ranges, axes, sum(b.offset for b in combo)))
    return out


@dataclass(frozen=True, slots=True)
class _Plan:
    data: tuple[_Box, ...]
    padding: tuple[_Box, ...]
    tail: tuple[int, int]  # padding slots after the digit box: [start, end)
    fill_all: bool  # the digit box is not a dense cover: fill the whole buffer first


def _plan(target: PhysicalTarget) -> _Plan:
    cached = target._cache.get("copy_plan")
    if isinstance(cached, _Plan):
        return cached
    assert target.digits is not None
    all_digits = (*target.leading_digits, *target.digits)
    dims = (1,) * len(target.leading_digits) + target.logical_shape
    full = [int(np.prod([d.size for d in ds], dtype=np.int64)) for ds in all_digits]
    valid = [_dim_boxes(k, ds, 0, n) for k, (ds, n) in enumerate(zip(all_digits, dims, strict=True))]
    data = _combine(valid)
    flat = sorted((d for ds in all_digits for d in ds if d.size > 1), key=lambda d: d.stride)
    dense, acc = True, 1
    for d in flat:
        dense = dense and d.stride == acc
        acc *= d.size
    padding: list[_Box] = []
    if dense:
        for k, (ds, n, f) in enumerate(zip(all_digits, dims, full, strict=True)):
            gap = _dim_boxes(k, ds, n, f)
            if gap:
                rest = [_dim_boxes(j, all_digits[j], 0, full[j]) for j in range(k + 1, len(dims))]
                padding += _combine([*valid[:k], gap, *rest])
    plan = _Plan(tuple(data), tuple(padding), (acc if dense else 0, target.physical_elements),
                 not dense)
    target._cache["copy_plan"] = plan
    return plan


def kernel_available() -> bool:
    """True when the compiled copy kernel was built (else the numpy path runs)."""
    return _kernel is not None


def has_fast_path(target: PhysicalTarget) -> bool:
    """True when the target copies through strided views (else a gather with offsets)."""
    return target.digits is not None and target.size > 0


def _views(box: _Box, logical: np.ndarray, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (physical, logical) views of one box, axes sorted by physical stride (major first)."""
    item = buf.itemsize
    sl = logical[tuple(slice(a, b) for a, b in box.ranges)]
    axes = sorted(box.axes, key=lambda a: -a[3])
    shape = tuple(a[1] for a in axes)
    lstrides = tuple(a[2] * sl.strides[a[0]] for a in axes)
    pstrides = tuple(a[3] * item for a in axes)
    pv = as_strided(buf[box.offset:], shape, pstrides)
    lv = as_strided(sl, shape, lstrides)
    return _coalesce(pv, lv)


def _coalesce(pv: np.ndarray, lv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    shape, ps, ls = list(pv.shape), list(pv.strides), list(lv.strides)
    k = len(shape) - 1
    while k > 0:
        if ps[k - 1] == ps[k] * shape[k] and ls[k - 1] == ls[k] * shape[k]:
            shape[k - 1] *= shape[k]
            ps[k - 1], ls[k - 1] = ps[k], ls[k]
            del shape[k], ps[k], ls[k]
        k -= 1
    return as_strided(pv, tuple(shape), tuple(ps)), as_strided(lv, tuple(shape), tuple(ls))


# -- the compiled kernel ------------------------------------------------------------------
def _kernel_views(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> _Pair:
    """The (physical, logical) views of one box with the axes in the kernel's loop order,
    outermost first (see ``_kernel.c``).

    The inner loop's axes go last: a run contiguous on both sides, or a small sub-tile axis
    woven into (or out of) a contiguous one. The outer axes follow the buffer, which is then
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
    if not inner:
        for k, b in itertools.permutations(range(n), 2):
            m = pv.shape[b]
            if m in (2, 4, 8) and ((ds[b] == item and ss[k] == item and ds[k] == m * item)
                                   or (ss[b] == item and ds[k] == item and ss[k] == m * item)):
                inner, streams = [k, b], m
                break
    if not inner:
        inner = [min(range(n), key=lambda k: (abs(ds[k]), abs(ss[k])))]
    outer = sorted((k for k in range(n) if k not in inner),
                   key=lambda k: (-abs(pv.strides[k]), -abs(lv.strides[k])))
    axes = [(pv.shape[k], pv.strides[k], lv.strides[k]) for k in (*outer, *inner)]
    n_outer = len(outer)
    segment = pv.shape[inner[0]] * item if lv.strides[inner[0]] == item else item
    pos = next((i for i, k in enumerate(outer) if lv.strides[k] == segment), None)
    limit = MAX_READ_STREAMS if to_physical else MAX_WRITE_STREAMS
    if pos is not None and segment < 512:
        under = streams * int(np.prod([a[0] for a in axes[pos + 1:n_outer]], dtype=np.int64))
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


def _kernel_tasks(plan: _Plan, target: PhysicalTarget, logical: np.ndarray, buf: np.ndarray,
                  to_physical: bool, pieces: int) -> list[_Task]:
    """The kernel's tasks for one copy, in bytes from each array's first element: the boxes
    in loop order, each split into ``pieces`` along its outer axis (for threads). They
    depend only on both arrays' strides, so they are cached on the target."""
    cache: dict[tuple, list[_Task]] = target._cache.setdefault("kernel_tasks", {})
    key = (logical.strides, buf.strides, logical.itemsize, to_physical, pieces)
    if key in cache:
        return cache[key]
    base_l, base_b = _address(logical), _address(buf)
    tasks: list[_Task] = []
    for box in plan.data:
        p, q = _kernel_views(*_views(box, logical, buf), to_physical)
        step = -(-p.shape[0] // pieces) if pieces > 1 and p.ndim and p.shape[0] > 1 else None
        parts = [(p, q)] if step is None else \
            [(p[i:i + step], q[i:i + step]) for i in range(0, p.shape[0], step)]
        for pp, qq in parts:
            phys = (_address(pp) - base_b, pp.strides)
            logi = (_address(qq) - base_l, qq.strides)
            (d_off, d_st), (s_off, s_st) = (phys, logi) if to_physical else (logi, phys)
            tasks.append((d_off, s_off, pp.shape, d_st, s_st))
    if len(cache) >= 16:  # a few stride patterns per target are plenty
        cache.clear()
    cache[key] = tasks
    return tasks


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


# -- the numpy path (no compiler at install time) -------------------------------------------
def _numpy_tasks(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> list[_Pair]:
    """Blocks of the outer physical axis; small inner physical axes (the sub-tiles that
    interleave rows) peeled into separate passes so numpy's inner loop runs long."""
    peeled = 0
    while pv.ndim - peeled > 1 and pv.shape[pv.ndim - 1 - peeled] <= PEEL_MAX \
            and lv.strides[pv.ndim - 1 - peeled] != lv.itemsize:
        peeled += 1
    outer = pv.ndim - peeled
    pieces = [(pv, lv)]
    if pv.ndim and pv.shape[0] > 1:
        row = max(1, pv.nbytes // pv.shape[0])
        step = max(1, BLOCK_BYTES // row)
        pieces = [(pv[i:i + step], lv[i:i + step]) for i in range(0, pv.shape[0], step)]
    out: list[_Pair] = []
    for p, q in pieces:
        for idx in np.ndindex(*p.shape[outer:]):
            key = (Ellipsis, *idx)
            out.append(_widen(p[key], q[key]) if to_physical else _widen(q[key], p[key]))
    return out


def _widen(dst: np.ndarray, src: np.ndarray) -> _Pair:
    """Fold an inner axis contiguous on both sides into one wide opaque element (``V{bytes}``),
    so numpy moves whole runs per step instead of single elements."""
    item = dst.itemsize
    if dst.ndim < 2 or dst.shape[-1] < 2 or dst.shape[-1] * item > WIDEN_MAX_BYTES \
            or dst.strides[-1] != item or src.strides[-1] != item:
        return dst, src
    wide = np.dtype((np.void, dst.shape[-1] * item))
    return (np.asarray(_Interface(dst[..., 0], wide)), np.asarray(_Interface(src[..., 0], wide)))


class _Interface:
    """An ``__array_interface__`` over ``base``'s memory with another dtype (keeps it alive)."""

    def __init__(self, base: np.ndarray, dtype: np.dtype) -> None:
        self.base = base
        self.__array_interface__ = {"shape": base.shape, "strides": base.strides, "version": 3,
                                    "typestr": dtype.str, "data": (base.__array_interface__["data"][0],
                                                                   False)}


def _copy_boxes(plan: _Plan, target: PhysicalTarget, logical: np.ndarray, buf: np.ndarray,
                to_physical: bool) -> None:
    nbytes = logical.nbytes
    pool = _pool() if nbytes >= THREAD_MIN_BYTES else None
    workers = pool._max_workers if pool is not None else 1
    if _kernel is not None and USE_KERNEL and not buf.dtype.hasobject \
            and logical.flags.aligned and buf.flags.aligned:  # its typed loops assume alignment
        tasks = _kernel_tasks(plan, target, logical, buf, to_physical, 2 * workers if pool else 1)
        dst, src = (buf, logical) if to_physical else (logical, buf)
        stream = nbytes >= STREAM_MIN_BYTES
        _share(pool, tasks, lambda chunk: _kernel.copy(dst, src, chunk, stream))
        return
    pairs = [pair for box in plan.data for pair in _numpy_tasks(*_views(box, logical, buf), to_physical)]
    _share(pool, pairs, lambda chunk: [np.copyto(d, s, casting="no") for d, s in chunk])


def _share(pool: ThreadPoolExecutor | None, tasks: list, work: Callable[[list], object]) -> None:
    """Run ``work`` over ``tasks``, split in consecutive runs among the pool's threads."""
    if pool is None or len(tasks) < 2:
        work(tasks)
        return
    size = -(-len(tasks) // pool._max_workers)
    list(pool.map(work, [tasks[i:i + size] for i in range(0, len(tasks), size)]))


def _extended(array: np.ndarray, target: PhysicalTarget) -> np.ndarray:
    lead = len(target.leading_digits)
    return array.reshape((1,) * lead + array.shape) if lead else array


def copy_in(array: np.ndarray, buf: np.ndarray, target: PhysicalTarget, pad_value: object) -> None:
    """Write ``array`` (logical) into the 1-D ``buf`` (physical), padding slots = ``pad_value``."""
    if not has_fast_path(target):
        if target.size == 0 or _has_padding(target):
            buf[...] = pad_value
        if target.size:
            buf[target.offsets] = array.reshape(-1)
        return
    plan = _plan(target)
    if plan.fill_all:
        buf[...] = pad_value
    else:
        for box in plan.padding:
            pv = as_strided(buf[box.offset:], tuple(a[1] for a in box.axes),
                            tuple(a[3] * buf.itemsize for a in box.axes))
            pv[...] = pad_value
        if plan.tail[0] < plan.tail[1]:
            buf[plan.tail[0]:plan.tail[1]] = pad_value
    if np.may_share_memory(array, buf):
        array = array.copy()
    _copy_boxes(plan, target, _extended(array, target), buf, True)


def copy_out(buf: np.ndarray, out: np.ndarray, target: PhysicalTarget) -> None:
    """Read the logical array ``out`` from the 1-D physical ``buf``."""
    if not has_fast_path(target):
        if target.size:
            out[...] = buf[target.offsets].reshape(out.shape)
        return
    plan = _plan(target)
    if np.may_share_memory(out, buf):
        buf = buf.copy()
    _copy_boxes(plan, target, _extended(out, target), buf, False)


def _has_padding(target: PhysicalTarget) -> bool:
    return target.size != target.physical_elements
