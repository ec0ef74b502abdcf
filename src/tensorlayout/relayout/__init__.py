"""Move real data between a logical numpy array and a layout's physical buffer.

``to_physical(array, target)`` returns the 1-D physical buffer of ``array`` under
``target`` (an XLA shape with layout, its text, or a :class:`PhysicalTarget` — the
protocol CuTe/TLA layouts plug into), padding slots filled with ``pad_value``;
``from_physical(buffer, target)`` inverts it and ``relayout(data, src, dst)`` converts a
buffer from one layout to another. Sub-byte types with ``E(4)`` (and ``E(2)``, ``E(1)``)
are packed, the first element in the low bits of a byte.

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

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.errors import LayoutError
from tensorlayout.relayout._copy import copy_direct, copy_in, copy_out, has_fast_path
from tensorlayout.relayout._cute import as_target, from_cute
from tensorlayout.relayout._direct import is_direct
from tensorlayout.relayout._pack_path import from_physical_packed, to_physical_packed
from tensorlayout.relayout._target import Digit, PhysicalTarget

__all__ = [
    "Digit",
    "PhysicalTarget",
    "as_target",
    "from_cute",
    "from_physical",
    "has_fast_path",
    "relayout",
    "to_physical",
]

TargetLike = object  # PhysicalTarget | tensorlayout.xla.Shape | str


#: A physical buffer larger than this is refused before allocating (``LayoutError`` says how
#: large); raise it for machines with more memory.
MAX_BUFFER_BYTES = 1 << 40
ALIGN_BYTES = 64  # buffers the library allocates start on a cache line


def _check_width(dtype: np.dtype, target: PhysicalTarget) -> None:
    """The array's dtype can be stored under ``target``: no objects or raw records, and one
    element as wide as the target's (any integer for packed sub-byte targets)."""
    if dtype.hasobject or dtype.kind == "V":
        raise LayoutError(f"{target}: relayout moves numbers, not {dtype} (object or void) elements")
    if target.packed_bits:
        if not (np.issubdtype(dtype, np.integer) or dtype == np.bool_):
            raise LayoutError(f"{target}: packed {target.packed_bits}-bit elements need an integer "
                              f"array, but got {dtype}")
        return
    if target.element_bits and dtype.itemsize * 8 != target.element_bits:
        raise LayoutError(f"{target}: elements are {target.element_bits} bits, but the array's "
                          f"dtype {dtype} has {dtype.itemsize * 8}")


def _check_pad(pad_value: object, dtype: np.dtype, target: PhysicalTarget) -> None:
    """``pad_value`` is a number the buffer's dtype holds exactly (a typed error otherwise).

    Integers must be in the dtype's range (the packed width's for sub-byte targets), reals
    need no imaginary part, and integer buffers take no fraction; a ``bool`` buffer takes
    any real number as its truth value, as numpy does. Plain ints already accepted for a
    dtype are remembered on the target (small copies pay per call).
    """
    seen: set[tuple[np.dtype, int]] = target._cache.setdefault("pads", set())
    if type(pad_value) is int and (dtype, pad_value) in seen:
        return
    _check_pad_value(pad_value, dtype, target)
    if type(pad_value) is int and len(seen) < 64:
        seen.add((dtype, pad_value))


def _check_pad_value(pad_value: object, dtype: np.dtype, target: PhysicalTarget) -> None:
    value = _number(pad_value)
    if value is not None and dtype.kind == "b" and not target.packed_bits:
        value = None if isinstance(value, complex) else value
    elif value is not None and (target.packed_bits or dtype.kind in "iu"):
        low, high = _int_range(dtype, target)
        value = value if isinstance(value, int) else None
        if value is not None and not low <= value <= high:
            value = None
    elif value is not None and dtype.kind == "f" and isinstance(value, complex):
        value = None
    if value is None:
        raise LayoutError(f"{target}: pad_value {pad_value!r} does not fit the {dtype} buffer")


def _number(x: object) -> int | float | complex | None:
    """``x`` as an exact Python number (an integral float becomes an int), None if not one."""
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return int(x) if float(x).is_integer() else float(x)
    if isinstance(x, (complex, np.complexfloating)):
        return _number(complex(x).real) if complex(x).imag == 0 else complex(x)
    return None


def _int_range(dtype: np.dtype, target: PhysicalTarget) -> tuple[int, int]:
    if target.packed_bits:
        low = -(1 << (target.packed_bits - 1)) if target.signed else 0
        return low, low + (1 << target.packed_bits) - 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _check_size(target: PhysicalTarget, itemsize: int) -> None:
    size = target.buffer_bytes if target.packed_bits else target.physical_elements * itemsize
    if size is not None and size > MAX_BUFFER_BYTES:
        raise LayoutError(f"{target}: the physical buffer would take {size} bytes, more than "
                          f"relayout.MAX_BUFFER_BYTES ({MAX_BUFFER_BYTES}); raise it to allow that")


def to_physical(array: np.ndarray, target: TargetLike, pad_value: object = 0, *,
                out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """The 1-D physical buffer of the logical ``array`` under ``target``.

    The buffer has the array's dtype and ``physical_elements`` entries (packed sub-byte
    types: ``uint8`` bytes); padding slots hold ``pad_value``. ``out`` (C-contiguous, the
    same size and dtype) receives the result instead of a new buffer.

    >>> import numpy as np
    >>> to_physical(np.arange(8, dtype=np.uint16).reshape(4, 2), "u16[4,2]{1,0:T(2,2)(2,1)}").tolist()
    [0, 2, 1, 3, 4, 6, 5, 7]
    """
    t = as_target(target)
    a = np.asarray(array)
    if a.shape != t.logical_shape:
        raise LayoutError(f"{t}: expected an array of shape {t.logical_shape}, but got {a.shape}")
    _check_width(a.dtype, t)
    _check_pad(pad_value, a.dtype, t)
    _check_size(t, a.dtype.itemsize)
    if t.packed_bits:
        fast = to_physical_packed(a, t, pad_value, out, threads)
        return fast if fast is not None else _pack(a, t, pad_value, out)
    buf = _out_buffer(out, t.physical_elements, a.dtype, t)
    copy_in(a, buf, t, pad_value, threads)
    return buf if out is None else out


def from_physical(buffer: np.ndarray, target: TargetLike, *,
                  out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """The logical array stored in the physical ``buffer`` under ``target`` (inverse of
    :func:`to_physical`); packed sub-byte buffers come back as ``int8``/``uint8``.

    >>> import numpy as np
    >>> from_physical(np.array([0, 2, 1, 3], dtype=np.int16), "s16[2,2]{1,0:T(2,2)(2,1)}").tolist()
    [[0, 1], [2, 3]]
    """
    t = as_target(target)
    b = np.ascontiguousarray(buffer).reshape(-1)  # the copy plans address a dense buffer
    _check_width(b.dtype, t)
    if t.packed_bits:
        fast = from_physical_packed(b, t, out, threads)
        if fast is not None:
            return fast
        b = _unpack(b, t)
    elif b.size != t.physical_elements:
        raise LayoutError(f"{t}: expected a buffer of {t.physical_elements} elements, but got {b.size}")
    if out is None:
        out = _allocate(t.logical_shape, b.dtype, t)
    elif not isinstance(out, np.ndarray) or out.shape != t.logical_shape or out.dtype != b.dtype \
            or not out.flags.writeable:
        raise LayoutError(f"{t}: out must be a writeable array of shape {t.logical_shape} and "
                          f"dtype {b.dtype}")
    copy_out(b, out, t, threads)
    return out


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
    if src is not None and is_direct(as_target(src), as_target(dst)):
        return _relayout_direct(data, as_target(src), as_target(dst), pad_value, out, threads)
    logical = np.asarray(data) if src is None else from_physical(data, src, threads=threads)
    return to_physical(logical, dst, pad_value, out=out, threads=threads)


def _relayout_direct(data: np.ndarray, src: PhysicalTarget, dst: PhysicalTarget, pad_value: object,
                     out: np.ndarray | None, threads: int | None) -> np.ndarray:
    """``relayout`` in one pass from buffer to buffer (the targets' radices nest)."""
    b = np.ascontiguousarray(data).reshape(-1)
    _check_width(b.dtype, src)
    _check_width(b.dtype, dst)
    if b.size != src.physical_elements:
        raise LayoutError(f"{src}: expected a buffer of {src.physical_elements} elements, but got {b.size}")
    _check_pad(pad_value, b.dtype, dst)
    _check_size(dst, b.dtype.itemsize)
    buf = _out_buffer(out, dst.physical_elements, b.dtype, dst)
    copy_direct(b, buf, src, dst, pad_value, threads)
    return buf if out is None else out


def _allocate(shape: tuple[int, ...], dtype: np.dtype, t: PhysicalTarget) -> np.ndarray:
    """An empty array starting on a 64-byte cache line (the kernel streams whole lines)."""
    size = prod(shape) * dtype.itemsize
    try:
        raw = np.empty(size + ALIGN_BYTES, dtype=np.uint8)
    except MemoryError:
        raise LayoutError(f"{t}: {size} bytes for the result could not be allocated") from None
    start = -raw.ctypes.data % ALIGN_BYTES
    return raw[start:start + size].view(dtype).reshape(shape)


def _out_buffer(out: np.ndarray | None, n: int, dtype: np.dtype, t: PhysicalTarget) -> np.ndarray:
    if out is None:
        return _allocate((n,), dtype, t)
    if not isinstance(out, np.ndarray) or out.size != n or out.dtype != dtype \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise LayoutError(f"{t}: out must be a writeable C-contiguous array of {n} {dtype} elements")
    return out if out.ndim == 1 else out.reshape(-1)


# -- sub-byte packing ---------------------------------------------------------------------
def _pack(a: np.ndarray, t: PhysicalTarget, pad_value: object, out: np.ndarray | None) -> np.ndarray:
    """One byte per slot through the copy engine (the low byte of each value), then ``8 //
    bits`` slots per byte, lowest bits first."""
    bits = t.packed_bits
    mask = (1 << bits) - 1
    per = 8 // bits
    slots = _allocate((-(-t.physical_elements // per) * per,), np.dtype(np.uint8), t)
    arr = np.asarray(a)
    low = arr.view(np.uint8) if arr.dtype.itemsize == 1 else arr.astype(np.uint8)  # modular
    pad = int(pad_value) & mask  # type: ignore[call-overload]  # an int: checked by _check_pad
    copy_in(low, slots[: t.physical_elements], t, pad)
    slots[t.physical_elements:] = 0
    n = t.buffer_bytes or 0
    result = _out_buffer(out, n, np.dtype(np.uint8), t)
    if bits == 1:
        np.bitwise_and(slots, 1, out=slots)
        result[...] = np.packbits(slots, bitorder="little")[:n]
        return result if out is None else out
    lanes = slots.reshape(-1, per)
    packed = np.bitwise_and(lanes[:, 0], mask)
    for k in range(1, per):
        lane = lanes[:, k] if k == per - 1 else np.bitwise_and(lanes[:, k], mask)
        packed |= lane << np.uint8(k * bits)  # the top lane's high bits shift out
    result[...] = packed[:n]
    return result if out is None else out


def _unpack(b: np.ndarray, t: PhysicalTarget) -> np.ndarray:
    """The slots of a packed buffer, one byte each, sign-extended for signed types."""
    bits = t.packed_bits
    per = 8 // bits
    if b.dtype != np.uint8 and b.dtype != np.int8:
        raise LayoutError(f"{t}: a packed buffer must hold bytes (uint8), but got {b.dtype}")
    if b.size != t.buffer_bytes:
        raise LayoutError(f"{t}: expected a packed buffer of {t.buffer_bytes} bytes, but got {b.size}")
    raw = b.view(np.uint8)
    if bits == 1:
        codes = np.unpackbits(raw, bitorder="little")
    else:
        codes = np.empty(raw.size * per, dtype=np.uint8)
        for k in range(per):
            np.bitwise_and(raw >> np.uint8(k * bits), (1 << bits) - 1, out=codes[k::per])
    codes = codes[: t.physical_elements]
    if t.signed:  # (v ^ half) - half sign-extends a bits-wide value
        half = np.int8(1 << (bits - 1)) if bits < 8 else np.int8(0)
        signed = codes.view(np.int8)
        signed ^= half
        signed -= half
        return signed
    return codes
