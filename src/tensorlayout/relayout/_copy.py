"""The copy engine: strided views between a logical array and a physical buffer.

A target with digits (see ``_target``) maps logical coordinates to offsets by a mixed radix
per dim. The valid range ``[0, n)`` of each dim splits into a few boxes of digit values
(full tiles, then the partial tile row, …); for each product of boxes the logical side is
a slice of the array split into digit axes and the physical side an ``as_strided`` view of
the buffer — both are views, and one ``np.copyto`` moves the box. Padding slots form boxes
too and are filled without touching the data slots.

Copies go block by block along the outermost physical axis (each block a few hundred KiB,
so both sides stay in cache), with small innermost physical axes — the ``(2,1)``/``(4,1)``
sub-tiles that interleave rows — peeled into separate passes so numpy's inner loop runs
over a long axis; large copies are shared among a few threads (numpy releases the GIL).

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> buf = np.full(t.physical_elements, -1.0)
>>> copy_in(np.arange(15.0).reshape(3, 5), buf, t, 0.0)
>>> buf[:8].tolist()
[0.0, 1.0, 5.0, 6.0, 2.0, 3.0, 7.0, 8.0]
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import product

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout._target import Digit, PhysicalTarget

__all__ = ["copy_in", "copy_out", "has_fast_path"]

BLOCK_BYTES = 1 << 18  # bytes per block of the copy: fits in L2 with both sides
PEEL_MAX = 8  # innermost physical axes up to this extent are peeled into separate passes
THREAD_MIN_BYTES = 1 << 23  # copies from 8 MiB on are shared among threads
PACK_WORDS = False  # pack interleaved sub-tiles with word casts/shifts instead of peeling
# (measured no faster than peeling on a 2-core machine; kept for wider machines)
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
    target._cache["copy_plan"] = plan  # type: ignore[assignment]
    return plan


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


_Task = tuple[np.ndarray, np.ndarray, int]  # (physical, logical, lanes: 0 = plain copy)


def _tasks(pv: np.ndarray, lv: np.ndarray, buf: np.ndarray) -> list[_Task]:
    """Split a copy into pieces: blocks of the outer axis; small inner physical axes are
    either packed into machine words (lanes) or peeled into separate passes."""
    peeled = 0
    while pv.ndim - peeled > 1 and pv.shape[pv.ndim - 1 - peeled] <= PEEL_MAX \
            and lv.strides[pv.ndim - 1 - peeled] != lv.itemsize:
        peeled += 1
    outer = pv.ndim - peeled
    lanes = 0
    if PACK_WORDS and peeled == 1 and _packable(pv, buf):
        lanes = pv.shape[-1]
    pieces = [(pv, lv)]
    if pv.ndim and pv.shape[0] > 1:
        row = max(1, pv.nbytes // pv.shape[0])
        step = max(1, BLOCK_BYTES // row)
        pieces = [(pv[i:i + step], lv[i:i + step]) for i in range(0, pv.shape[0], step)]
    if not peeled or lanes:
        return [(p, q, lanes) for p, q in pieces]
    out = []
    for p, q in pieces:
        for idx in np.ndindex(*p.shape[outer:]):
            key = (Ellipsis, *idx)
            out.append((p[key], q[key], 0))
    return out


_WORDS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_UINTS = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _packable(pv: np.ndarray, buf: np.ndarray) -> bool:
    """Inner axis of k contiguous elements forming one aligned 2/4/8-byte word."""
    k, item = pv.shape[-1], pv.itemsize
    word = k * item
    if sys.byteorder != "little" or word not in _WORDS or item not in _UINTS \
            or pv.strides[-1] != item or pv.ndim < 2:
        return False
    start = pv.__array_interface__["data"][0] - buf.__array_interface__["data"][0]
    return start % word == 0 and all(s % word == 0 for s in pv.strides[:-1])


def _word_view(pv: np.ndarray, word: type) -> np.ndarray:
    """Reinterpret the k lanes of ``pv``'s inner axis as one word (little-endian: lane 0 low)."""
    base = pv[..., 0]
    return np.asarray(_Interface(base, np.dtype(word)))


class _Interface:
    """An ``__array_interface__`` over ``base``'s memory with another dtype (keeps it alive)."""

    def __init__(self, base: np.ndarray, dtype: np.dtype) -> None:
        self.base = base
        self.__array_interface__ = {"shape": base.shape, "strides": base.strides, "version": 3,
                                    "typestr": dtype.str, "data": (base.__array_interface__["data"][0],
                                                                   False)}


def _pack_words(p: np.ndarray, q: np.ndarray, tmp: dict[tuple, np.ndarray]) -> None:
    k, item = p.shape[-1], p.itemsize
    words = _word_view(p, _WORDS[k * item])
    lanes = q.view(_UINTS[item]) if q.dtype.itemsize == item else q
    t = tmp.get((words.shape, words.dtype.str))
    if t is None:
        t = tmp[(words.shape, words.dtype.str)] = np.empty(words.shape, words.dtype)
    np.copyto(words, lanes[..., 0], casting="unsafe")
    for j in range(1, k):
        np.copyto(t, lanes[..., j], casting="unsafe")
        np.left_shift(t, 8 * item * j, out=t, casting="unsafe")
        np.bitwise_or(words, t, out=words)


def _unpack_words(p: np.ndarray, q: np.ndarray, tmp: dict[tuple, np.ndarray]) -> None:
    k, item = p.shape[-1], p.itemsize
    words = _word_view(p, _WORDS[k * item])
    lanes = q.view(_UINTS[item])
    t = tmp.get((words.shape, words.dtype.str))
    if t is None:
        t = tmp[(words.shape, words.dtype.str)] = np.empty(words.shape, words.dtype)
    np.copyto(lanes[..., 0], words, casting="unsafe")
    for j in range(1, k):
        np.right_shift(words, 8 * item * j, out=t, casting="unsafe")
        np.copyto(lanes[..., j], t, casting="unsafe")


WIDEN = True
WIDEN_MAX_BYTES = 64  # longer runs already copy at full speed as plain elements


def _widen(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fold an inner axis contiguous on both sides into one wide opaque element (``V{bytes}``),
    so numpy moves whole runs per step instead of single elements."""
    item = p.itemsize
    if not WIDEN or p.ndim < 2 or p.shape[-1] < 2 or p.shape[-1] * item > WIDEN_MAX_BYTES \
            or p.strides[-1] != item or q.strides[-1] != q.itemsize or q.itemsize != item:
        return p, q
    wide = np.dtype((np.void, p.shape[-1] * item))
    return (np.asarray(_Interface(p[..., 0], wide)), np.asarray(_Interface(q[..., 0], wide)))


def _run(tasks: list[_Task], to_physical: bool, nbytes: int) -> None:
    pool = _pool() if nbytes >= THREAD_MIN_BYTES and len(tasks) > 1 else None

    def work(chunk: list[_Task]) -> None:
        tmp: dict[tuple, np.ndarray] = {}
        for p, q, lanes in chunk:
            if lanes:
                (_pack_words if to_physical else _unpack_words)(p, q, tmp)
            elif to_physical:
                wp, wq = _widen(p, q)
                np.copyto(wp, wq, casting="no")
            else:
                wp, wq = _widen(p, q)
                np.copyto(wq, wp, casting="no")
    if pool is None:
        work(tasks)
        return
    n = pool._max_workers
    size = -(-len(tasks) // n)  # consecutive tasks (one block's passes) stay on one worker
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
    logical = _extended(array, target)
    tasks = [t for box in plan.data for t in _tasks(*_views(box, logical, buf), buf)]
    _run(tasks, True, array.nbytes)


def copy_out(buf: np.ndarray, out: np.ndarray, target: PhysicalTarget) -> None:
    """Read the logical array ``out`` from the 1-D physical ``buf``."""
    if not has_fast_path(target):
        if target.size:
            out[...] = buf[target.offsets].reshape(out.shape)
        return
    plan = _plan(target)
    logical = _extended(out, target)
    tasks = [t for box in plan.data for t in _tasks(*_views(box, logical, buf), buf)]
    _run(tasks, False, out.nbytes)


def _has_padding(target: PhysicalTarget) -> bool:
    return target.size != target.physical_elements
