"""The copy engine: strided views between a logical array and a physical buffer.

A target with digits is copied box by box (``_plan``): each box is two strided views, one
over the array and one over the buffer (``_views``), and one strided copy moves it.

The copy itself is the small C kernel ``_kernel.c`` (built at install; loops ordered for
both sides' caches, vectorised sub-tile weaving, non-temporal stores for large buffers),
shared among a few threads for large arrays. Without a compiler the same views go through
``np.copyto`` block by block, small sub-tile axes peeled into separate passes. A copy that
is one kernel call is also kept in the kernel as a small call (:func:`small_call`), which
obeys this module's switches (``USE_KERNEL``, ``_kernel``, the two thresholds): the kernel
gets them as one :class:`Settings` whenever one of them is set here (``configure``), so
switching them here switches it too.

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> buf = np.full(t.physical_elements, -1.0)
>>> copy_in(np.arange(15.0).reshape(3, 5), buf, t, 0.0)
>>> buf[:8].tolist()
[0.0, 1.0, 5.0, 6.0, 2.0, 3.0, 7.0, 8.0]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from tensorlayout.relayout._buffers import allocate
from tensorlayout.relayout._direct import direct_pairs, over_extents, over_padding, same_offsets
from tensorlayout.relayout._kernel_path import Task, kernel_tasks
from tensorlayout.relayout._memo import TargetMemo
from tensorlayout.relayout._numpy_path import numpy_tasks
from tensorlayout.relayout._onepass import Refill, masked_pass, onepass_how, onepass_tasks
from tensorlayout.relayout._padding import Box, fill_order, padding_boxes
from tensorlayout.relayout._plan import Plan, copy_plan, has_fast_path
from tensorlayout.relayout._tails import TailedTask, Tails, first_axis_tails, gapped_tails, pad_item, tails
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.relayout._threads import share, thread_count
from tensorlayout.relayout._views import Pair, box_views

_BUILT: ModuleType | None  # the compiled kernel; _kernel is the one in use (None: the numpy path)
try:
    _BUILT = importlib.import_module("tensorlayout.relayout._kernel")
except ImportError:  # installed without a C compiler: the numpy path
    _BUILT = None
_kernel = _BUILT
# The kernel's small calls (see small_call), which obey the engine's Settings.
to_physical_small: Callable[..., np.ndarray | None] | None = None
from_physical_small: Callable[..., np.ndarray | None] | None = None
_new_small_call: Callable[..., object] | None = None
if _kernel is not None:
    to_physical_small, from_physical_small = _kernel.to_physical_small, _kernel.from_physical_small
    _new_small_call = _kernel.small_call

__all__ = ["Prepared", "PreparedDirect", "Settings", "copy_direct", "copy_in", "copy_out",
           "from_physical_small", "has_fast_path", "kernel_available", "pieces", "prepare", "prepare_direct",
           "settings", "small_call", "to_physical_small"]

USE_KERNEL = True  # False forces the numpy path (tests check both)
#: per target and item size: its padding as boxes of bytes (padding_boxes)
PADDING_BOXES: TargetMemo[int, list[Box]] = TargetMemo()
#: per destination target and (source target, strides, item size, pieces): direct relayout tasks
DIRECT_TASKS: TargetMemo[tuple, list[Task]] = TargetMemo()
#: Copies from 3 MiB (of the logical array) on are shared among the kernels' threads, packed ones
#: too (5 MiB while a sleeping thread took 20-60 us to start; now they spin: _pool.h). Shared, the
#: population's rows of 3-5.5 MiB took a median 0.74x their unshared time (seeds 0-2, default
#: threads; f32[1048576]{0:T(256)} to 0.99 -> 1.36x a copy), 2-3 MiB 1.02x, 1.5-2 MiB 1.11x.
THREAD_MIN_BYTES = 3 << 20
#: ... but a copy on one thread stays one kernel call (``_small``) up to here: from 3 MiB the
#: shared path's fill and tasks cost one thread 4.5% on the population's 3-5.5 MiB rows.
ONE_THREAD_SMALL_BYTES = 5 << 20
STREAM_MIN_BYTES = 1 << 24  # from 16 MiB on the kernel writes past the cache (non-temporal)
#: A shared copy is cut in this many pieces per thread, which the kernels' threads claim in
#: turn (a thread that wakes late takes fewer; 1, 2 and 8 measured alike).
PIECES_PER_THREAD = 8
#: ... and a streamed one (``STREAM_MIN_BYTES``) in this many: its boxes' pieces are cut along
#: their outer axis, which in a transpose shortens the rows each piece reads or writes (in 16
#: pieces pred[16384,2048]{0,1:T(4,128)(4,1)} to_physical reads 128 bytes of each source row
#: at a time). Two threads' CPU time over one thread's copy, 8 -> 2 pieces a thread: that one
#: 3.5 -> 2.1x, bf16[32768,1024]{0,1:T(2,128)(2,1)} to 4.0 -> 2.2-2.6, f16[512,65536]
#: {0,1:T(2,128)(2,1)} from 2.8-3.0 -> 2.2-2.3, s16[704,43384]{0,1:T(4,128)(2,1)} from
#: 2.7-3.0 -> 2.3-2.5; the rest alike (s64[1024,4096]{1,0:T(1,128)} 0.6-0.7 both).
STREAM_PIECES_PER_THREAD = 2
#: A padded buffer up to this size is filled whole before the copy: in cache, that costs less
#: than a view per padding box.
FILL_WHOLE_BYTES = 1 << 15
#: A copy into a physical buffer (``to_physical``, a one-pass ``relayout``) fills the whole
#: buffer with the pad value before the copy (one memset, no reads) when at least this share
#: of it is padding: measured against the fill of the padding boxes, both followed by the
#: copy, in rounds alternating with ``np.copyto`` (one thread). One-pass relayouts:
#: f32[2,512,256,4]{2,0,3,1:T(4,128)} to itself (half padding in 1 KiB runs) 2.19 -> 1.61x a
#: copy, pred[19,64,308,23]{2,0,1,3:T(8,128)(4,1)} -> {...T(32,128)(4,1)} 2.42 -> 1.92x,
#: s64[256,32,8,64]{0,3,1,2:T(1,128)} -> {3,1,0,2:T(128)} 1.91 -> 1.45x; to_physical: the same
#: f32 1.80-1.98 -> 0.95-1.20x, bf16[2048,1024,2]{0,2,1:T(4,128)(2,1)} 2.94-3.12 -> 2.49-2.61x,
#: f16[524288,64]{1,0:T(4,128)(2,1)} 1.57 -> 1.35x. With a tenth of padding (pred[5,52,4133]
#: T(4,128)(4,1) -> T(8,128)(4,1)) the boxes measured faster: 1.36 against 1.64x. Where the
#: steps of the tasks tile the buffer (``_tails.tailed``), a small ``to_physical`` or one-pass
#: ``relayout`` fills nothing first: its tasks write the padding behind each step as they go
#: (bf16[64,64,64,4]{0,3,1,2:T(4,128)(2,1)} to itself, half padding in 256-byte runs: the
#: kernel's copy 1.7x faster, one thread, in cache).
FILL_WHOLE_SHARE = 0.25


@dataclass(frozen=True)
class Settings:
    """The engine's switches as the kernel's small calls obey them, handed to C in one call
    (``_kernel.configure``) whenever one of them is set on this module.

    >>> settings().thread_min_bytes == THREAD_MIN_BYTES
    True
    """

    use_kernel: bool  # USE_KERNEL, and the kernel built and in use (_kernel)
    thread_min_bytes: int  # small calls only below both thresholds (as Prepared.run) ...
    stream_min_bytes: int
    one_thread_small_bytes: int  # ... or on one thread below this and stream_min_bytes (_small)


#: The module attributes the kernel's settings are made of.
SWITCHES = frozenset({"USE_KERNEL", "_kernel", "THREAD_MIN_BYTES", "STREAM_MIN_BYTES",
                      "ONE_THREAD_SMALL_BYTES"})


def settings() -> Settings:
    """The engine's settings as this module's switches stand."""
    return Settings(bool(USE_KERNEL) and _kernel is _BUILT is not None, int(THREAD_MIN_BYTES),
                    int(STREAM_MIN_BYTES), int(ONE_THREAD_SMALL_BYTES))


def configure() -> None:
    """Hand the engine's settings to the kernel (its small calls read nothing else of Python)."""
    if _BUILT is not None:  # (even when _kernel is switched off: then its small calls are)
        s = settings()
        _BUILT.configure(s.use_kernel, s.thread_min_bytes, s.stream_min_bytes, s.one_thread_small_bytes,
                         allocate, np.ndarray)


class _Engine(ModuleType):
    """This module's type: setting a switch (``engine.USE_KERNEL = False``, a test's
    monkeypatch) configures the kernel anew."""

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name in SWITCHES:
            configure()


sys.modules[__name__].__class__ = _Engine
configure()


def pieces(workers: int, stream: bool = False) -> int:
    """How many pieces each box of a copy is cut in for ``workers`` threads to claim
    (``stream``: a streamed copy's, ``STREAM_PIECES_PER_THREAD`` a thread).

    >>> pieces(1), pieces(2), pieces(2, stream=True)
    (1, 16, 4)
    """
    if workers < 2:
        return 1
    return (STREAM_PIECES_PER_THREAD if stream else PIECES_PER_THREAD) * workers


def kernel_available() -> bool:
    """True when the compiled copy kernel was built (else the numpy path runs)."""
    return _kernel is not None


def _copy_boxes(plan: Plan, target: PhysicalTarget, logical: np.ndarray, buf: np.ndarray,
                to_physical: bool, threads: int | None) -> None:
    _run(logical, buf, to_physical, threads,
         lambda pieces: kernel_tasks(plan, target, logical, buf, to_physical, pieces),
         lambda: [box_views(box, logical, buf) for box in plan.data])


def _run(logical: np.ndarray, buf: np.ndarray, to_physical: bool, threads: int | None,
         tasks: Callable[[int], list[Task]], pairs: Callable[[], list[Pair]], stream: bool = True) -> None:
    """Copy between ``logical`` and ``buf``: the kernel's ``tasks(pieces)``, or the numpy path
    over the (physical, logical) view ``pairs``, shared among threads when large; ``stream``:
    False keeps the kernel's stores in the cache at any size."""
    nbytes = logical.nbytes
    workers = thread_count(threads) if nbytes >= THREAD_MIN_BYTES else 1
    if _kernel is not None and USE_KERNEL and not buf.dtype.hasobject \
            and logical.flags.aligned and buf.flags.aligned:  # its typed loops assume alignment
        dst, src = (buf, logical) if to_physical else (logical, buf)
        stream = stream and max(nbytes, buf.nbytes) >= STREAM_MIN_BYTES  # on the bytes moved
        if workers == 1:  # small copies: no pool, no closure (the per-call cost matters)
            _kernel.copy(dst, src, tasks(1), stream, 1, to_physical)  # (padding written first)
            return
        _kernel.copy(dst, src, tasks(pieces(workers, stream)), stream, workers)
        return
    todo = [pair for pv, lv in pairs() for pair in numpy_tasks(pv, lv, to_physical)]
    share(workers, todo, _numpy_copies)


def _numpy_copies(pairs: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for dst, src in pairs:
        np.copyto(dst, src, casting="no")


def _small(nbytes: int, x: np.ndarray, y: np.ndarray, threads: int | None) -> ModuleType | None:
    """The kernel when a copy of ``nbytes`` between ``x`` and ``y`` on ``threads`` is one call of it
    (not shared, not streamed; the kernel in use, and its typed loops' alignment), else None."""
    alone = nbytes < THREAD_MIN_BYTES or (nbytes < ONE_THREAD_SMALL_BYTES and thread_count(threads) == 1)
    small = alone and nbytes < STREAM_MIN_BYTES and USE_KERNEL and x.flags.aligned and y.flags.aligned
    return _kernel if small else None


def _extended(array: np.ndarray, target: PhysicalTarget) -> np.ndarray:
    lead = len(target.leading_digits)
    return array.reshape((1,) * lead + array.shape) if lead else array


@dataclass(frozen=True, slots=True, eq=False)
class Prepared:
    """A strided target's copy in one direction, prepared for one stride pattern of the
    logical array and of the buffer: the plan and the kernel's one-thread tasks, so that a
    small copy is one kernel call (see :func:`prepare`)."""

    target: PhysicalTarget
    plan: Plan
    tasks: list[Task]
    to_physical: bool
    nbytes: int  # of the logical array
    padded: bool  # the buffer has padding slots (to_physical fills them)
    fill_whole: bool  # ... and is filled whole first (plan.fill_all, or small)
    tailed: Tails | None = None  # tasks filling it as they go, in one call (_tails)

    def run(self, logical: np.ndarray, buf: np.ndarray, pad_value: object = 0,
            threads: int | None = None) -> None:
        """``copy_in`` / ``copy_out`` between arrays of the prepared strides (which must not
        overlap): small ones in one kernel call, large ones through the thread pool."""
        small = _small(self.nbytes, logical, buf, threads)
        if self.tailed is not None and small is not None:
            tasks = self.tailed.for_pad(pad_value, buf.dtype)
            if tasks is not None:  # (the padding written as the copy goes)
                small.copy(buf, logical, tasks, False)
                return
        elif self.tailed is not None and _shared_tails(
                self.target, (logical.strides, buf.strides), logical, buf, pad_value, threads,
                lambda n: kernel_tasks(self.plan, self.target, _extended(logical, self.target), buf, True,
                                       n)):
            return
        if self.fill_whole:
            buf.fill(pad_value)
        elif self.padded:
            _fill_padding(buf, self.target, pad_value)
        if small is not None:
            if self.to_physical:
                small.copy(buf, logical, self.tasks, False, 1, True)  # (padding written first)
            else:
                small.copy(logical, buf, self.tasks, False)
            return
        _copy_boxes(self.plan, self.target, _extended(logical, self.target), buf, self.to_physical,
                    threads)


#: Copies into a physical buffer from ``THREAD_MIN_BYTES`` on whose tasks are tailed
#: (``Prepared.tailed``) write their padding as they go too, each thread its tasks'
#: (``_shared_tails``). False: they fill the buffer first.
SHARED_TAILS = True
#: ... streamed ones too (from ``STREAM_MIN_BYTES``; their stores then stay plain), where every
#: tail follows its task's first axis (``first_axis_tails``): one thread, alternately, tails off /
#: on, f8e5m2[131072,64]{1,0:T(4,128)(4,1)} to_physical 1.48 -> 0.73x a copy, one-pass into
#: {1,0:T(32,128)(4,1)} 1.66 -> 1.42x, s16[704,43384]{0,1:T(4,128)(2,1)} into {0,1:T(2,128)(2,1)}
#: 1.09 -> 0.87x. False: streamed copies fill first.
STREAMED_TAILS = True
#: per target and (strides, pieces): the tailed tasks of a copy in pieces (None: not tiled)
SHARED_TAILED: TargetMemo[tuple, Tails | None] = TargetMemo()


def _shared_tails(target: PhysicalTarget, key: tuple, logical: np.ndarray, buf: np.ndarray, pad_value: object,
                  threads: int | None, tasks: Callable[[int], list[Task]],
                  tiler: Callable[[list[Task], int, int], Tails | None] = tails) -> bool:
    """Copy ``logical`` into the physical ``buf`` (a copy too large for one kernel call) by its
    tasks in pieces, ``tasks(pieces)``, each writing the padding behind its
    steps (``SHARED_TAILS``; remembered on ``target`` per ``key`` and pieces); False when they
    do not (the pad value not one byte, the pieces not tiled): then nothing is written."""
    nbytes = logical.nbytes
    streamed = max(nbytes, buf.nbytes) >= STREAM_MIN_BYTES
    if not SHARED_TAILS or _kernel is None or not USE_KERNEL or nbytes < THREAD_MIN_BYTES \
            or (streamed and not STREAMED_TAILS) or not (logical.flags.aligned and buf.flags.aligned):
        return False
    workers = thread_count(threads)
    n = pieces(workers)
    shared = SHARED_TAILED.get(target, (*key, n), lambda: tiler(tasks(n), buf.nbytes, buf.itemsize))
    todo = None if shared is None else shared.for_pad(pad_value, buf.dtype)
    if shared is None or todo is None or (streamed and not first_axis_tails(todo)):
        return False
    _kernel.copy(buf, logical, todo, False, workers)
    shared.fill_gaps(buf, todo)
    return True


def prepare(target: PhysicalTarget, logical: np.ndarray, buf: np.ndarray, to_physical: bool) -> Prepared:
    """The copy between ``logical`` and the 1-D ``buf`` under the strided ``target``
    (``has_fast_path``), prepared for their strides: it also copies any other pair of arrays
    with the same shapes, strides and dtypes."""
    plan = copy_plan(target)
    tasks = kernel_tasks(plan, target, _extended(logical, target), buf, to_physical, 1)
    padded = to_physical and (plan.fill_all or bool(plan.padding) or plan.tail[0] < plan.tail[1])
    whole = padded and (plan.fill_all or buf.nbytes <= FILL_WHOLE_BYTES
                        or target.size <= (1 - FILL_WHOLE_SHARE) * target.physical_elements)
    tailed = tails(tasks, buf.nbytes, buf.itemsize) if padded and not plan.fill_all else None
    return Prepared(target, plan, tasks, to_physical, logical.nbytes, padded, whole, tailed)


def small_call(copy: Prepared | PreparedDirect | None, logical: np.ndarray, buf: np.ndarray, key: tuple,
               pad: object, alloc_shape: tuple[int, ...] | None) -> object | None:
    """``copy`` between arrays like ``logical`` and ``buf`` as a small call of the kernel, which
    repeats it under ``key`` (a remembered call's: the keyed array's dtype, strides and shape,
    the thread cap, then the raw pad value or out's strides) with every check of
    :meth:`Prepared.run`, or None when one kernel call does not do it (``_kernel.c``).
    ``from_physical``: ``buf`` is the buffer as given; ``pad``: the checked pad value;
    ``alloc_shape``: the shape ``allocate`` gives a result when there is no ``out`` (None:
    ``out`` must be given: ``from_physical`` made with one). A one-pass copy with padding to
    fill again after it (``PreparedDirect.refill``) is none, but for a buffer copied whole: then the
    kernel's masked copy writes that padding as it goes."""
    if _new_small_call is None or copy is None or not logical.size \
            or not (logical.flags.aligned and buf.flags.aligned) \
            or (isinstance(copy, PreparedDirect) and copy.refill and copy.how != "all"):
        return None
    fill = None
    tasks: list[Task] | list[TailedTask] | None = copy.tasks
    if isinstance(copy, PreparedDirect) and copy.how == "all" and copy.refill:  # (as its run: _masked_copy)
        return _masked_small(copy, logical, buf, key, pad, alloc_shape)
    if copy.padded:  # one item of the pad value, and where Prepared.run writes it
        one = pad_item(pad, buf.dtype)
        tasks = None if copy.tailed is None else copy.tailed.for_item(one)
        if tasks is not None and copy.tailed is not None and copy.tailed.gaps:  # (the rest first)
            gaps: list[tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = [
                (off, 0, (n // buf.itemsize,), (buf.itemsize,), (0,)) for off, n in copy.tailed.gaps]
            fill = (one, gaps)
        if tasks is None:  # (tailed tasks write it as they go)
            tasks = copy.tasks
            boxes = [(0, (buf.size,), (buf.itemsize,))] if copy.fill_whole \
                else [fill_order(box) for box in padding_boxes(copy.plan, buf.itemsize)]
            fill = (one, [(off, 0, shape, strides, (0,) * len(shape)) for off, shape, strides in boxes])
    dst, src = (buf, logical) if copy.to_physical else (logical, buf)
    return _new_small_call(dst, src, tasks, copy.to_physical, src.dtype, key[3],
                           key[4] if copy.to_physical else None, fill, copy.nbytes, src.dtype.alignment,
                           alloc_shape is None, alloc_shape)


def _masked_small(copy: PreparedDirect, logical: np.ndarray, buf: np.ndarray, key: tuple, pad: object,
                  alloc_shape: tuple[int, ...] | None) -> object | None:
    """``small_call`` of a buffer copied whole, its padding written as it goes (the kernel's masked
    copy, as ``PreparedDirect.run`` makes it: ``_masked_copy``), or None when it does not fit."""
    boxes = copy.refill.kernel_boxes(pad, buf.dtype, buf.nbytes)
    if _new_small_call is None or boxes is None or not MASKED_COPY or logical.nbytes != buf.nbytes \
            or not logical.flags.c_contiguous:
        return None
    return _new_small_call(buf, logical, [], True, logical.dtype, key[3], key[4], None, copy.nbytes,
                           logical.dtype.alignment, alloc_shape is None, alloc_shape, boxes)


def copy_in(array: np.ndarray, buf: np.ndarray, target: PhysicalTarget, pad_value: object,
            threads: int | None = None) -> None:
    """Write ``array`` (logical) into the 1-D ``buf`` (physical), padding slots = ``pad_value``."""
    if not has_fast_path(target):
        if target.size == 0 or _has_padding(target):
            buf[...] = pad_value
        if target.size:
            buf[target.offsets] = array.reshape(-1)
        return
    if np.may_share_memory(array, buf):  # before the padding overwrites it
        array = array.copy()
    prepare(target, array, buf, True).run(array, buf, pad_value, threads)


#: A one-pass copy of runs contiguous on both sides streams its stores (above
#: ``STREAM_MIN_BYTES``) only when the runs are this long: glibc's memcpy of shorter runs
#: through the cache measured faster (f8e4m3fn[131072,64]{1,0:T(4,128)(4,1)} to itself, 256-byte
#: runs, 16 MiB: 2.29 -> 1.40x a copy; on a 64-byte aligned buffer 1.37 -> 1.21x).
STREAM_MIN_RUN = 1 << 12
#: A one-pass copy runs ragged sub-tile rows whole into the padding past them, then fills
#: that padding again (``_direct.over_extents``): measured alternately with ``np.copyto``, one
#: thread, pred[19,64,308,23]{2,0,1,3:T(8,128)(4,1)} -> {...T(32,128)(4,1)} (3 rows of 4)
#: 2.48 -> 1.97x, s8[39,497,192]{1,2,0:T(4,128)(4,1)} to itself 1.26 -> 1.19x; with 1 row of 4
#: (f8e5m2[105,105,260]) 1.52 -> 2.32x, so over_extents leaves those. False: never.
OVER_COPY = True


@dataclass(frozen=True, slots=True, eq=False)
class PreparedDirect:
    """A one-pass relayout from ``src`` to ``dst`` prepared for 1-D contiguous buffers of one
    item size: the kernel's one-thread tasks and how the padding is filled (see
    :func:`prepare_direct`)."""

    src: PhysicalTarget
    dst: PhysicalTarget
    tasks: list[Task]
    nbytes: int  # of the source buffer
    padded: bool  # the destination has padding slots
    fill_whole: bool  # ... filled whole first (FILL_WHOLE_SHARE)
    stream: bool  # large copies may stream their stores (STREAM_MIN_RUN)
    refill: Refill  # padding the copy writes over (how), filled again after it
    how: str  # which boxes the copy moves (_direct.direct_pairs)
    tailed: Tails | None = None  # tasks filling the padding as they go, in one call (_tails)
    to_physical = True  # (as Prepared's: the copy writes a physical buffer, padding first)

    @property
    def plan(self) -> Plan:
        """The destination's copy plan (its padding boxes)."""
        return copy_plan(self.dst)

    def run(self, data: np.ndarray, buf: np.ndarray, pad_value: object = 0,
            threads: int | None = None) -> None:
        """Copy ``data`` into ``buf`` (1-D, contiguous, apart), padding slots = ``pad_value``."""
        if self.how == "all" and self.refill and _masked_copy(self.refill, data, buf, pad_value):
            return
        small = _small(self.nbytes, data, buf, threads)
        if self.tailed is None or not self._tailed(self.tailed, small, data, buf, pad_value, threads):
            self._filled(small, data, buf, pad_value, threads)
        if self.refill:
            self.refill(buf, pad_value)

    def _tailed(self, tailed: Tails, small: ModuleType | None, data: np.ndarray, buf: np.ndarray,
                pad_value: object, threads: int | None) -> bool:
        """The copy by the tailed tasks, padding written as they go (one kernel call, ``small``,
        or shared among threads: ``_shared_tails``); False when it is not (then nothing is
        written)."""
        if small is None:
            return _shared_tails(self.dst, (self.src, data.strides, self.how), data, buf, pad_value, threads,
                                 lambda n: _direct_tasks(self.src, self.dst, data, buf, n, self.how),
                                 gapped_tails)
        tasks = tailed.for_pad(pad_value, buf.dtype)
        if tasks is not None:
            small.copy(buf, data, tasks, False)
            tailed.fill_gaps(buf, tasks)
        return tasks is not None

    def _filled(self, small: ModuleType | None, data: np.ndarray, buf: np.ndarray, pad_value: object,
                threads: int | None) -> None:
        """The copy after a fill of the padding (in one kernel call, ``small``, if not None)."""
        if self.fill_whole:
            buf.fill(pad_value)
        elif self.padded:
            _fill_padding(buf, self.dst, pad_value)
        if small is not None:
            small.copy(buf, data, self.tasks, False, 1, True)  # (padding written first)
            return
        src, dst, how = self.src, self.dst, self.how

        def tasks(pieces: int) -> list[Task]:
            return _direct_tasks(src, dst, data, buf, pieces, how)

        _run(data, buf, True, threads, tasks, lambda: direct_pairs(src, dst, data, buf, how), self.stream)


#: A one-pass copy of a buffer whole onto the same layout on one thread writes the padding as it
#: goes (the kernel's ``masked_copy``), not after (``Refill``): one thread, alternately with a copy,
#: u8[55641,33]{0,1:T(8,128)(4,1)} to itself 1.50-1.61 -> 1.24-1.26x, pred[45,7,4230]{2,1,0:T(4,128)(4,1)}
#: 1.76-1.79 -> 1.17-1.20x. Not streamed (from ``STREAM_MIN_BYTES``): the copy whole, streamed, and then
#: the refill measured faster (pred[404,7716,11]{1,0,2:T(8,128)(4,1)} to itself, 33 MiB: 0.76 against 0.95x).
#: Below that, one thread also where the call may share its copy among threads: the shared copy
#: and the refill after it measured slower (default threads, wall time, alternately with a copy:
#: s8[171,6216,3]{1,2,0:T(4,128)(4,1)} to itself, 4 MiB, 2.11 -> 1.19x; s8[640,6216,3], 15 MiB,
#: 1.21 -> 1.02x). False: copy, then refill.
MASKED_COPY = True


def _masked_copy(refill: Refill, data: np.ndarray, buf: np.ndarray, pad_value: object) -> bool:
    """Copy the contiguous ``data`` whole into ``buf`` of the same length, the ``refill`` boxes
    written with ``pad_value`` as the copy goes, in one kernel call on one thread
    (``MASKED_COPY``); False when it does not (then nothing is written)."""
    if not MASKED_COPY or _kernel is None or not USE_KERNEL or data.nbytes != buf.nbytes \
            or buf.dtype.hasobject or data.nbytes >= STREAM_MIN_BYTES:
        return False
    boxes = refill.kernel_boxes(pad_value, buf.dtype, buf.nbytes)
    if boxes is not None:
        _kernel.masked_copy(buf, data, boxes)
    return boxes is not None


def _direct_tasks(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray, buf: np.ndarray, pieces: int,
                  how: str) -> list[Task]:
    """The kernel's tasks of a one-pass copy in ``pieces`` (remembered on ``dst``)."""
    key = (src, data.strides, buf.strides, data.itemsize, pieces, how)
    return DIRECT_TASKS.get(dst, key, lambda: onepass_tasks(src, dst, data, buf, pieces, how))


def prepare_direct(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray,
                   buf: np.ndarray) -> PreparedDirect:
    """The one-pass copy from the 1-D contiguous ``data`` under ``src`` into ``buf`` under
    ``dst`` (``is_direct(src, dst)`` holds), prepared for their item size: it also copies any
    other pair of such buffers. Where every element has the same offset on both sides and
    little of ``dst`` is padding, the buffer is copied whole and its padding filled after;
    ragged sub-tile rows are copied whole where both sides have the slots (``over_extents``),
    their padding filled again after the copy."""
    plan = copy_plan(dst)
    padding = 1 - dst.size / dst.physical_elements if dst.physical_elements else 0.0
    whole = padding > 0 and (plan.fill_all or padding >= FILL_WHOLE_SHARE)
    if padding > 0 and not whole and same_offsets(src, dst):
        how = "all"
    else:
        how = "over" if OVER_COPY and over_extents(src, dst) != src.logical_shape else "data"
        how = onepass_how(src, dst, data, buf, how) if OVER_COPY else how
    tasks = _direct_tasks(src, dst, data, buf, 1, how)
    if whole and not plan.fill_all and same_offsets(src, dst) and masked_pass(tasks, data.itemsize, padding):
        how, whole, tasks = "all", False, _direct_tasks(src, dst, data, buf, 1, "all")
    runs = [t[2][-1] * data.itemsize for t in tasks if t[2] and t[3][-1] == t[4][-1] == data.itemsize]
    stream = len(runs) < len(tasks) or min(runs, default=0) >= STREAM_MIN_RUN
    if how == "all":
        boxes = padding_boxes(plan, buf.itemsize, dense=False)
    else:
        boxes = [fill_order((_address(v) - _address(buf), v.shape, v.strides))
                 for v in over_padding(src, dst, buf, how == "lanes")] if how in ("over", "lanes") else []
    refill = Refill.of(boxes, buf.itemsize, buf.nbytes)
    padded = padding > 0 and how != "all"  # (the fill before the copy)
    tailed = gapped_tails(tasks, buf.nbytes, buf.itemsize) if padded and not plan.fill_all else None
    return PreparedDirect(src, dst, tasks, data.nbytes, padded, whole, stream, refill, how, tailed)


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def copy_direct(data: np.ndarray, buf: np.ndarray, src: PhysicalTarget, dst: PhysicalTarget,
                pad_value: object, threads: int | None = None) -> None:
    """Write the 1-D buffer ``data`` under ``src`` into the 1-D ``buf`` under ``dst`` in one
    pass (``is_direct(src, dst)`` holds), padding slots = ``pad_value``."""
    if np.may_share_memory(data, buf):  # before the padding overwrites it
        data = data.copy()
    prepare_direct(src, dst, data, buf).run(data, buf, pad_value, threads)


def _fill_padding(buf: np.ndarray, target: PhysicalTarget, pad_value: object) -> None:
    """Write ``pad_value`` into the padding slots of the contiguous ``buf`` under ``target``
    (all slots if they are not boxes)."""
    plan = copy_plan(target)
    if plan.fill_all:
        buf[...] = pad_value
        return
    boxes = PADDING_BOXES.get(target, buf.itemsize, lambda: padding_boxes(plan, buf.itemsize))
    for off, shape, strides in boxes:  # views built directly
        np.ndarray(shape, buf.dtype, buf, off, strides)[...] = pad_value  # (as_strided costs us)


def copy_out(buf: np.ndarray, out: np.ndarray, target: PhysicalTarget, threads: int | None = None) -> None:
    """Read the logical array ``out`` from the 1-D physical ``buf``."""
    if not has_fast_path(target):
        if target.size:
            out[...] = buf[target.offsets].reshape(out.shape)
        return
    if np.may_share_memory(out, buf):
        buf = buf.copy()
    prepare(target, out, buf, False).run(out, buf, None, threads)


def _has_padding(target: PhysicalTarget) -> bool:
    return target.size != target.physical_elements
