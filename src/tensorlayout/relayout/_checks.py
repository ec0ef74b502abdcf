"""The checks a relayout call makes before it allocates anything: the dtype can be stored
under the target, the pad value fits it, the thread cap is a count. Each raises
:class:`LayoutError`; the public functions run them once per target, dtype and stride
pattern (see ``_call``).

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> checked_pad(2.0 + 0j, np.dtype(np.int8), PhysicalTarget.from_xla("s8[4]{0}"))
2
"""

from __future__ import annotations

import math

import numpy as np

from tensorlayout.errors import LayoutError
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.relayout._threads import thread_count

__all__ = ["check_threads", "check_width", "checked_pad"]


def is_extension_number(dtype: np.dtype) -> bool:
    """A number type registered with numpy from outside it (``ml_dtypes``' bfloat16, float8_*,
    int4..., what jax arrays of those types become): numpy calls it user-defined. Its kind says
    little (``V`` like a raw record for most, ``f`` for float8_e5m2, whose limits ``np.finfo``
    does not know).

    >>> is_extension_number(np.dtype("V2")), is_extension_number(np.dtype([("a", "i2")]))
    (False, False)
    """
    return dtype.isbuiltin == 2 and dtype.fields is None and not issubclass(dtype.type, np.void)


def is_extension_integer(dtype: np.dtype) -> bool:
    """An extension number type that holds only integers: it cannot hold one half (every float
    type ``ml_dtypes`` defines, e8m0 and e2m1 included, holds 0.5; int2/int4/uint4 give 0).

    >>> is_extension_integer(np.dtype(np.float16))
    False
    """
    if not is_extension_number(dtype):
        return False
    with np.errstate(all="ignore"):
        return float(np.array(0.5).astype(dtype).astype(np.float64)) != 0.5


def check_width(dtype: np.dtype, target: PhysicalTarget) -> None:
    """The array's dtype can be stored under ``target``: no objects or raw records, and one
    element as wide as the target's (any integer for packed sub-byte targets). Extension number
    types (``ml_dtypes``' bfloat16 and the like) are numbers of their width."""
    if dtype.hasobject or (dtype.kind == "V" and not is_extension_number(dtype)):
        raise LayoutError(f"{target}: relayout moves numbers, not {dtype} (object or void) elements")
    if target.packed_bits:
        if not (np.issubdtype(dtype, np.integer) or dtype == np.bool_):
            raise LayoutError(f"{target}: packed {target.packed_bits}-bit elements need an integer "
                              f"array, but got {dtype}")
        return
    if target.element_bits and dtype.itemsize * 8 != target.element_bits:
        raise LayoutError(f"{target}: elements are {target.element_bits} bits, but the array's "
                          f"dtype {dtype} has {dtype.itemsize * 8}")


def checked_pad(pad_value: object, dtype: np.dtype, target: PhysicalTarget) -> int | float | complex:
    """``pad_value`` as the Python number the buffer's padding slots get (a typed error if the
    dtype does not hold it).

    Integers must be in the dtype's range (the packed width's for sub-byte targets) and
    integer buffers take no fraction; reals take no imaginary part, and a finite value must
    stay finite in a float buffer; a ``bool`` buffer takes any real number as its truth
    value, as numpy does.
    """
    value = _number(pad_value)
    fit = None if value is None else _fit(value, pad_value, dtype, target)
    if fit is None:
        raise LayoutError(f"{target}: pad_value {repr(pad_value)[:60]} does not fit the {dtype} buffer")
    return fit


def _fit(value: int | float | complex, given: object, dtype: np.dtype,
         target: PhysicalTarget) -> int | float | complex | None:
    """The fill value for ``given`` (exactly ``value``) in a ``dtype`` buffer, None if none."""
    if is_extension_number(dtype):
        return _extension_fit(value, given, dtype)
    if target.packed_bits or dtype.kind in "iu":
        low, high = _int_range(dtype, target)
        return value if isinstance(value, int) and low <= value <= high else None
    if dtype.kind == "b":
        return None if isinstance(value, complex) else bool(value)
    if dtype.kind == "f":
        real = complex(given).real if isinstance(given, (complex, np.complexfloating)) else given
        return None if isinstance(value, complex) else _float_in(real, dtype)
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        z = complex(given) if isinstance(given, (complex, np.complexfloating)) else None
        re = _float_in(given if z is None else z.real, part)
        im = 0.0 if z is None else _float_in(z.imag, part)
        return None if re is None or im is None else complex(re, im)
    return None


def _extension_fit(value: int | float | complex, given: object, dtype: np.dtype) -> int | float | None:
    """The fill value in an extension number buffer: an integer type takes an integer it holds
    exactly; a float type any real, a finite one staying finite (rounded, as numpy rounds)."""
    if isinstance(value, complex):
        return None
    with np.errstate(all="ignore"):
        stored = float(np.array(given, dtype=np.float64).astype(dtype).astype(np.float64))
    if is_extension_integer(dtype):
        return value if isinstance(value, int) and stored == value else None
    real = float(given)  # type: ignore[arg-type]  # a real number, checked by _number
    return value if not math.isfinite(real) or math.isfinite(stored) else None


def _float_in(x: object, dtype: np.dtype) -> float | None:
    """``x`` as a float (its sign kept: -0.0), None if a finite ``x`` overflows the float ``dtype``."""
    try:
        f = float(x)  # type: ignore[arg-type]  # a real number, checked by _number
    except OverflowError:  # an int past the float range
        return None
    if not math.isfinite(f) or abs(f) <= float(np.finfo(dtype).max):
        return f
    with np.errstate(over="ignore"):
        return f if bool(np.isfinite(np.array(f).astype(dtype))) else None


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


def check_threads(threads: object) -> None:
    """``threads`` is None or a whole number (small copies never read it, so check it here)."""
    if threads is not None:
        thread_count(threads)  # type: ignore[arg-type]  # it raises the typed error
