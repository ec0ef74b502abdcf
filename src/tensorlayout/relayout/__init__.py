"""Move real data between a logical numpy array and a layout's physical buffer.

``to_physical(array, target)`` returns the 1-D physical buffer of ``array`` under
``target`` (an XLA shape with layout, its text, or a :class:`PhysicalTarget` — the
protocol CuTe/TLA layouts plug into), padding slots filled with ``pad_value``;
``from_physical(buffer, target)`` inverts it and ``relayout(data, src, dst)`` converts a
buffer from one layout to another. Sub-byte types with ``E(4)`` (and ``E(2)``, ``E(1)``)
are packed, the first element in the low bits of a byte.

A call checks its arguments once per target and kind of call (the array's dtype, strides
and shape, the thread cap, an int ``pad_value`` or ``out``'s strides) and keeps the checked
call with its copy plan on the target (``_call``); targets are remembered by the value that
names them (a text, a ``Shape``, a CuTe/TLA layout) and by their lowered core layout, so every
form of a target reuses them. A repeated call whose copy is one kernel call (below 3 MiB; on
one thread below 5 MiB) runs in C from lookup to copy, every check included: a 64 KiB array
into ``out=`` takes about as long as a ``np.copyto`` of it (0.8 us), without ``out`` about 0.4 us
more for the new array. A one-pass ``relayout`` keeps its checked
calls the same way, per pair of targets (``_call.Direct``, on the destination), and its
repeated small calls run in C too. ``threads=`` or
``TENSORLAYOUT_THREADS`` caps the threads of large copies; results do not depend on it.

Seed Figure 1: ``f32[3,5]{1,0:T(2,2)}`` pads the 3x5 array to 4x6 and stores 2x2 tiles:

>>> import numpy as np
>>> a = np.arange(15, dtype=np.float32).reshape(3, 5)
>>> buf = to_physical(a, "f32[3,5]{1,0:T(2,2)}", pad_value=-1)
>>> buf.reshape(-1, 4).astype(int).tolist()
[[0, 1, 5, 6], [2, 3, 7, 8], [4, -1, 9, -1], [10, 11, -1, -1], [12, 13, -1, -1], [14, -1, -1, -1]]
>>> bool((from_physical(buf, "f32[3,5]{1,0:T(2,2)}") == a).all())
True
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from tensorlayout.core.intmath import show_int
from tensorlayout.errors import LayoutError
from tensorlayout.relayout._buffers import as_array, out_buffer
from tensorlayout.relayout._call import Direct, DirectCall, FromPhysical, ToPhysical, direct_pair, remember
from tensorlayout.relayout._checks import check_threads, check_width, checked_pad
from tensorlayout.relayout._copy import (
    from_physical_small,
    has_fast_path,
    prepare,
    prepare_direct,
    small_call,
    to_physical_small,
)
from tensorlayout.relayout._cute import as_target, from_cute, remembered_target
from tensorlayout.relayout._target import Digit, PhysicalTarget

__all__ = [
    "Digit",
    "PhysicalTarget",
    "as_target",
    "buffer_limit",
    "from_cute",
    "from_physical",
    "has_fast_path",
    "relayout",
    "to_physical",
]

TargetLike = object  # PhysicalTarget | tensorlayout.xla.Shape | str


#: A physical buffer larger than this many bytes is refused before allocating (``LayoutError``
#: says how large). None (the default): a quarter of the machine's physical memory
#: (:func:`buffer_limit`); set an int to raise or lower it.
MAX_BUFFER_BYTES: int | None = None


def buffer_limit() -> int:
    """The largest physical buffer relayout allocates: :data:`MAX_BUFFER_BYTES`, or when that is
    None a quarter of the physical memory (1 TiB where the machine does not say).

    >>> buffer_limit() > 0
    True
    """
    if MAX_BUFFER_BYTES is not None:
        return MAX_BUFFER_BYTES
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):  # no sysconf names on this platform
        return 1 << 40


def _check_size(target: PhysicalTarget, itemsize: int) -> None:
    size = target.buffer_bytes if target.packed_bits else target.physical_elements * itemsize
    limit = buffer_limit()
    if size is not None and size > limit:
        raise LayoutError(f"{target}: the physical buffer would take {show_int(size)} bytes, more than "
                          f"the {limit} relayout allocates (relayout.MAX_BUFFER_BYTES; default a quarter "
                          "of the physical memory); raise it to allow that")


def to_physical(array: np.ndarray, target: TargetLike, pad_value: object = 0, *,
                out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """The 1-D physical buffer of the logical ``array`` under ``target``.

    The buffer has the array's dtype and ``physical_elements`` entries (packed sub-byte
    types: ``uint8`` bytes); padding slots hold ``pad_value``. ``out`` (C-contiguous, the
    same size and dtype) receives the result instead of a new buffer. ``array`` and ``out`` may
    also be any host array exporting DLPack (jax, torch) or the buffer protocol, used in place
    (a foreign ``out`` is returned as given). ``threads`` caps the
    threads of a large copy (default: ``TENSORLAYOUT_THREADS``, else the cores, at most 4).

    >>> import numpy as np
    >>> to_physical(np.arange(8, dtype=np.uint16).reshape(4, 2), "u16[4,2]{1,0:T(2,2)(2,1)}").tolist()
    [0, 2, 1, 3, 4, 6, 5, 7]
    """
    t = target if type(target) is PhysicalTarget else remembered_target(target)
    if to_physical_small is not None:  # a remembered call, run in C
        done = to_physical_small(t, array, out, pad_value, threads)
        if done is not None:
            return done
    a = array if type(array) is np.ndarray else as_array(array)  # DLPack, buffers: in place
    # The key of a checked call (see _call). Pad values and thread caps count only as plain
    # ints: equal numbers of other types fill differently (-0.0 == 0) or are refused (2.0).
    plain = type(pad_value) is int and (threads is None or type(threads) is int)
    key = (a.dtype, a.strides, a.shape, threads, pad_value) if plain else None
    try:
        call = t._calls[key]
    except KeyError:  # the first of its kind (or not to be remembered: key None)
        return _first_to_physical(a, t, pad_value, out, threads, key)
    return call(a, out)


def _first_to_physical(a: np.ndarray, t: PhysicalTarget, pad_value: object, out: np.ndarray | None,
                       threads: int | None, key: tuple | None) -> np.ndarray:
    """``to_physical`` checked from scratch; the checked call is remembered under ``key``."""
    if a.shape != t.logical_shape:
        raise LayoutError(f"{t}: expected an array of shape {t.logical_shape}, but got {a.shape}")
    check_width(a.dtype, t)
    pad = checked_pad(pad_value, a.dtype, t)
    _check_size(t, a.dtype.itemsize)
    check_threads(threads)
    call = ToPhysical(t, np.dtype(np.uint8), t.buffer_bytes or 0, pad, threads) if t.packed_bits \
        else ToPhysical(t, a.dtype, t.physical_elements, pad, threads)
    buf = out_buffer(out, call.elements, call.dtype, t)
    small = None
    if not t.packed_bits and has_fast_path(t):
        call = replace(call, copy=prepare(t, a, buf, True))
        small = None if key is None else small_call(call.copy, a, buf, key, call.pad, (call.elements,))
    remember(t, key, call, small)
    return call(a, out, buf)


def from_physical(buffer: np.ndarray, target: TargetLike, *,
                  out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """The logical array stored in the physical ``buffer`` under ``target`` (inverse of
    :func:`to_physical`); packed sub-byte buffers come back as ``int8``/``uint8``.

    >>> import numpy as np
    >>> from_physical(np.array([0, 2, 1, 3], dtype=np.int16), "s16[2,2]{1,0:T(2,2)(2,1)}").tolist()
    [[0, 1], [2, 3]]
    """
    t = target if type(target) is PhysicalTarget else remembered_target(target)
    if from_physical_small is not None:  # a remembered call, run in C
        done = from_physical_small(t, buffer, out, threads)
        if done is not None:
            return done
    b = buffer if type(buffer) is np.ndarray else as_array(buffer)
    try:  # the key of a checked call (see _call and to_physical); a non-array out has no strides
        key = (b.dtype, b.strides, b.shape, threads, None if out is None else out.strides) \
            if threads is None or type(threads) is int else None
        call = t._calls[key]
    except KeyError:  # the first of its kind (or not to be remembered: key None)
        return _first_from_physical(b, t, out, threads, key)
    except (TypeError, AttributeError):  # a non-array out: checked there
        return _first_from_physical(b, t, out, threads, None)
    return call(b, out)


def _first_from_physical(b: np.ndarray, t: PhysicalTarget, out: np.ndarray | None,
                         threads: int | None, key: tuple | None) -> np.ndarray:
    """``from_physical`` checked from scratch; the checked call is remembered under ``key``."""
    check_width(b.dtype, t)
    check_threads(threads)
    n = t.buffer_bytes if t.packed_bits else t.physical_elements
    if t.packed_bits and b.dtype != np.uint8 and b.dtype != np.int8:
        raise LayoutError(f"{t}: a packed buffer must hold bytes (uint8), but got {b.dtype}")
    if b.size != n:
        raise LayoutError(f"{t}: expected a {'packed ' * bool(t.packed_bits)}buffer of {n} "
                          f"{'bytes' if t.packed_bits else 'elements'}, but got {b.size}")
    dtype = np.dtype(np.int8 if t.signed else np.uint8) if t.packed_bits else b.dtype
    call = FromPhysical(t, dtype, b.ndim != 1 or not b.flags.c_contiguous, threads)
    result = call.result(out)
    flat = np.ascontiguousarray(b).reshape(-1)  # the copy plans address a dense buffer
    small = None
    if not t.packed_bits and has_fast_path(t):
        call = replace(call, copy=prepare(t, result, flat, False))
        if key is not None and not call.flatten:
            small = small_call(call.copy, result, b, key, None, None if out is not None else t.logical_shape)
    remember(t, key, call, small)
    return call(flat, out, result)


def relayout(data: np.ndarray, src: TargetLike | None, dst: TargetLike | None,
             pad_value: object = 0, *, out: np.ndarray | None = None,
             threads: int | None = None) -> np.ndarray:
    """Convert ``data``, the physical buffer under ``src``, into the buffer under ``dst``.

    ``src=None`` means ``data`` is the logical array; ``dst=None`` returns the logical array.
    Between two strided targets whose tilings nest (all power-of-two tilings do) the copy
    goes from buffer to buffer in one pass; otherwise through the logical array.

    >>> import numpy as np
    >>> buf = to_physical(np.arange(6, dtype=np.int32).reshape(2, 3), "s32[2,3]{0,1}")
    >>> relayout(buf, "s32[2,3]{0,1}", "s32[2,3]{1,0}").tolist()
    [0, 1, 2, 3, 4, 5]
    """
    if src is not None and dst is not None:
        s = src if type(src) is PhysicalTarget else remembered_target(src)
        d = dst if type(dst) is PhysicalTarget else remembered_target(dst)
        pair = d._direct.get(s) or direct_pair(s, d)
        if pair is not None:
            if to_physical_small is not None:  # a remembered call, run in C
                done = to_physical_small(pair, data, out, pad_value, threads)
                if done is not None:
                    return done
            return _relayout_direct(as_array(data), s, d, pair, pad_value, out, threads)
    data = as_array(data)
    if dst is None:
        if src is not None:
            return from_physical(data, src, out=out, threads=threads)
        logical = np.asarray(data)
        if out is None:
            return logical
        if not isinstance(out, np.ndarray) or out.shape != logical.shape \
                or out.dtype != logical.dtype or not out.flags.writeable:
            raise LayoutError(f"out must be a writeable array of shape {logical.shape} and "
                              f"dtype {logical.dtype}")
        np.copyto(out, logical)
        return out
    logical = np.asarray(data) if src is None else from_physical(data, src, threads=threads)
    return to_physical(logical, dst, pad_value, out=out, threads=threads)


def _relayout_direct(data: np.ndarray, src: PhysicalTarget, dst: PhysicalTarget, pair: Direct,
                     pad_value: object, out: np.ndarray | None, threads: int | None) -> np.ndarray:
    """``relayout`` in one pass from buffer to buffer (the targets' radices nest); the checked
    call is remembered on ``pair`` under the key ``to_physical`` uses (the source buffer's)."""
    plain = type(pad_value) is int and (threads is None or type(threads) is int)
    key = (data.dtype, data.strides, data.shape, threads, pad_value) if plain else None
    call = pair._calls.get(key) if key is not None else None
    if call is not None:
        return call(data, out)
    check_width(data.dtype, src)
    check_width(data.dtype, dst)
    check_threads(threads)
    if data.size != src.physical_elements:
        raise LayoutError(f"{src}: expected a buffer of {src.physical_elements} elements, "
                          f"but got {data.size}")
    pad = checked_pad(pad_value, data.dtype, dst)
    _check_size(dst, data.dtype.itemsize)
    buf = out_buffer(out, dst.physical_elements, data.dtype, dst)
    flat = np.ascontiguousarray(data).reshape(-1)
    copy = prepare_direct(src, dst, flat, buf)
    call = DirectCall(dst, data.dtype, dst.physical_elements, pad, threads, copy)
    small = None
    if key is not None and data.flags.c_contiguous:
        small = small_call(call.copy, data, buf, key, pad, (call.elements,))
    remember(pair, key, call, small)
    return call(data, out, buf)
