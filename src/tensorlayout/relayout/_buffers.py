"""The buffers the relayout functions allocate or are given (``out=``): checked, with a
typed error when they cannot be allocated. Arrays of other frameworks are used in place: a
DLPack exporter's memory (jax, torch or cupy host arrays, numpy's own export) or a
buffer-protocol object's is viewed as a numpy array, never copied (:func:`as_array`,
:func:`out_view`).

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> out_buffer(np.zeros((2, 3), np.int8), 6, np.dtype(np.int8), PhysicalTarget.from_xla("s8[6]{0}")).shape
(6,)
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from tensorlayout.errors import LayoutError
from tensorlayout.relayout._target import PhysicalTarget

__all__ = ["allocate", "as_array", "out_buffer", "out_view"]

ALIGN_BYTES = 64  # large buffers the library allocates start on a cache line
#: Smaller results are allocated as numpy does (16-byte aligned): aligning costs about a
#: microsecond, more than a copy that small gains from it (a transposing 256 KiB copy into an
#: array 16 bytes past a line took 19 us instead of 14; a 64 KiB one the same 2.5 us).
ALIGN_MIN_BYTES = 1 << 17


def allocate(shape: tuple[int, ...], dtype: np.dtype, t: PhysicalTarget) -> np.ndarray:
    """An empty array (on a 64-byte cache line when large: the kernel streams whole lines)."""
    size = math.prod(shape) * dtype.itemsize  # C ints: math.prod is exact and fast
    try:
        if size < ALIGN_MIN_BYTES:
            return np.empty(shape, dtype)
        raw = np.empty(size + ALIGN_BYTES, dtype=np.uint8)
    except MemoryError:
        raise LayoutError(f"{t}: {size} bytes for the result could not be allocated") from None
    # The address through ctypes.c_char (raw.ctypes.data takes 3x as long); an ndarray is a buffer.
    start = -ctypes.addressof(ctypes.c_char.from_buffer(raw)) % ALIGN_BYTES  # type: ignore[arg-type]
    return raw[start:start + size].view(dtype).reshape(shape)


#: DLPack's device types whose memory the host reads: CPU, CUDA host, ROCm host, CUDA managed.
HOST_DEVICES = frozenset({1, 3, 11, 13})


def _check_host(obj: object, what: str) -> None:
    """:class:`LayoutError` when a DLPack exporter says its memory is on a device, not the host."""
    try:
        kind, number = obj.__dlpack_device__()  # type: ignore[attr-defined]
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return  # no device reported: numpy's reader decides
    if int(kind) not in HOST_DEVICES:
        raise LayoutError(f"{what}: the {type(obj).__name__} is in memory of DLPack device type "
                          f"{int(kind)} (device {number}), not the host's; copy it to the CPU first")


def as_array(obj: object) -> np.ndarray:
    """``obj`` as a numpy array over its own memory: an ndarray as it is, a DLPack exporter's
    or a buffer-protocol object's memory viewed in place; anything else as ``np.asarray``
    makes it (a list, a scalar, an object with ``__array__``).

    >>> class Exported:  # only DLPack, as a framework's array offers it
    ...     def __init__(self, a): self.a = a
    ...     def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
    ...     def __dlpack_device__(self): return self.a.__dlpack_device__()
    >>> a = np.arange(6, dtype=np.int16)
    >>> bool(np.shares_memory(as_array(Exported(a)), a))
    True
    """
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "__dlpack__"):
        _check_host(obj, "array")
        try:
            return np.from_dlpack(obj)
        except (BufferError, TypeError, ValueError, RuntimeError):  # not host memory numpy reads
            pass  # numpy's own conversion decides (and raises what it raises)
    return np.asarray(obj)


def out_view(out: object, t: PhysicalTarget) -> np.ndarray:
    """The caller's ``out`` as a writeable numpy view of its memory: an ndarray as it is, a
    DLPack or buffer-protocol array's memory; :class:`LayoutError` if it has none to write.

    >>> import array
    >>> out_view(array.array("h", [0, 0, 0]), PhysicalTarget.from_xla("s16[3]{0}")).dtype
    dtype('int16')
    """
    if isinstance(out, np.ndarray):
        return out
    if hasattr(out, "__dlpack__"):
        _check_host(out, f"{t}: out")
    try:
        view = np.from_dlpack(out) if hasattr(out, "__dlpack__") else np.asarray(memoryview(out))  # type: ignore[arg-type]
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        raise LayoutError(f"{t}: out must be an array in host memory (numpy, DLPack or the buffer "
                          f"protocol), but got {type(out).__name__}: {e}") from None
    if not view.flags.writeable:
        raise LayoutError(f"{t}: out ({type(out).__name__}) is read-only")
    return view


def out_buffer(out: object, n: int, dtype: np.dtype, t: PhysicalTarget) -> np.ndarray:
    """``out`` (any array :func:`out_view` takes) as the 1-D buffer of ``n`` ``dtype``
    elements it must be, or a new one."""
    if out is None:
        return allocate((n,), dtype, t)
    if not isinstance(out, np.ndarray):
        out = out_view(out, t)
    flags = out.flags if isinstance(out, np.ndarray) else None  # one flags object: it costs
    if flags is None or out.size != n or out.dtype != dtype or not (flags.c_contiguous and flags.writeable):
        raise LayoutError(f"{t}: out must be a writeable C-contiguous array of {n} {dtype} elements")
    return out if out.ndim == 1 else out.reshape(-1)
