"""The buffers the relayout functions allocate or are given (``out=``): checked, with a
typed error when they cannot be allocated.

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

__all__ = ["allocate", "out_buffer"]

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


def out_buffer(out: np.ndarray | None, n: int, dtype: np.dtype, t: PhysicalTarget) -> np.ndarray:
    """``out`` as the 1-D buffer of ``n`` ``dtype`` elements it must be, or a new one."""
    if out is None:
        return allocate((n,), dtype, t)
    flags = out.flags if isinstance(out, np.ndarray) else None  # one flags object: it costs
    if flags is None or out.size != n or out.dtype != dtype or not (flags.c_contiguous and flags.writeable):
        raise LayoutError(f"{t}: out must be a writeable C-contiguous array of {n} {dtype} elements")
    return out if out.ndim == 1 else out.reshape(-1)
