"""Integer helpers every layer shares: division that rounds up, row-major strides, int64 limits.

Everything here works on Python ints (exact, unbounded); the int64 helpers say where a value
leaves the range XLA and CuTe compute in.

>>> ceil_div(7, 2), round_up(7, 4), row_major_strides((2, 3, 4)), wrap_int64(2**63)
(4, 8, (12, 4, 1), -9223372036854775808)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "UINT64_LIMIT",
    "ceil_div",
    "col_major_strides",
    "fits_int64",
    "literal_in_range",
    "nested_lists",
    "prod",
    "round_up",
    "row_major_coords",
    "row_major_index",
    "row_major_strides",
    "show_int",
    "trunc_div",
    "trunc_mod",
    "wrap_int64",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: One past the largest uint64 (XLA rejects a dimension of 2**64 or more).
UINT64_LIMIT = 2**64


def ceil_div(a: int, b: int) -> int:
    """``a / b`` rounded towards +infinity (floor semantics for negative values, as Python's ``//``).

    >>> ceil_div(-7, 2)
    -3
    """
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    """The least multiple of ``b`` that is ``>= a`` (``b > 0``).

    >>> round_up(129, 128)
    256
    """
    return ceil_div(a, b) * b


def trunc_div(a: int, b: int) -> int:
    """C++ integer division: ``a / b`` rounded toward zero (XLA's and CuTe's ``/``).

    >>> trunc_div(-7, 2), -7 // 2
    (-3, -4)
    """
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def trunc_mod(a: int, b: int) -> int:
    """C++ ``a % b``: the remainder of :func:`trunc_div`, with the sign of ``a``.

    >>> trunc_mod(-7, 2), -7 % 2
    (-1, 1)
    """
    return a - b * trunc_div(a, b)


def prod(xs: Iterable[int]) -> int:
    """Product of ``xs`` as an exact Python int (1 for none).

    >>> prod([2, 3, 4])
    24
    """
    out = 1
    for x in xs:
        out *= int(x)
    return out


def row_major_strides(dims: Sequence[int]) -> tuple[int, ...]:
    """Strides of a dense row-major (C order, last dim fastest) array of ``dims``.

    >>> row_major_strides((3, 5))
    (5, 1)
    """
    out = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        out[k] = out[k + 1] * int(dims[k + 1])
    return tuple(out)


def col_major_strides(dims: Sequence[int]) -> tuple[int, ...]:
    """Strides of a dense column-major (first dim fastest, CuTe's default) array of ``dims``.

    >>> col_major_strides((3, 5))
    (1, 3)
    """
    out = [1] * len(dims)
    for k in range(1, len(dims)):
        out[k] = out[k - 1] * int(dims[k - 1])
    return tuple(out)


def row_major_index(index: Sequence[int], dims: Sequence[int]) -> int:
    """Row-major linear position of ``index`` in ``dims`` (Horner's rule).

    >>> row_major_index((2, 3), (3, 5))
    13
    """
    out = 0
    for i, d in zip(index, dims, strict=True):
        out = out * int(d) + int(i)
    return out


def row_major_coords(position: int, dims: Sequence[int]) -> tuple[int, ...]:
    """The index at row-major ``position`` in ``dims`` (the inverse of :func:`row_major_index`,
    for any rank, unlike numpy's ``unravel_index``).

    >>> row_major_coords(13, (3, 5))
    (2, 3)
    """
    out = []
    for d in reversed(dims):
        position, i = divmod(position, int(d))
        out.append(i)
    return tuple(reversed(out))


def nested_lists(values: Sequence[int], dims: Sequence[int]) -> list:
    """Row-major ``values`` as lists nested ``len(dims)`` deep (numpy's ``reshape(dims).tolist()``
    for any rank).

    >>> nested_lists([0, 1, 2, 3, 4, 5], (2, 3))
    [[0, 1, 2], [3, 4, 5]]
    """
    if not dims:
        return values[0]  # type: ignore[return-value]  # a 0-d array lists as its value
    if 0 in dims:  # no values: empty lists under the dims before the first zero
        dims = dims[:list(dims).index(0) + 1]
        values = [[] for _ in range(prod(dims[:-1]))]  # type: ignore[misc]
        dims = dims[:-1]
        if not dims:
            return []
    out: list = list(values)
    for d in reversed(dims[1:]):
        out = [out[k:k + int(d)] for k in range(0, len(out), int(d))]
    return out


def fits_int64(x: int) -> bool:
    """Whether ``x`` is representable as a signed 64-bit integer.

    >>> fits_int64(2**63), fits_int64(-(2**63))
    (False, True)
    """
    return INT64_MIN <= x <= INT64_MAX


def literal_in_range(text: str, low: int, high: int) -> bool:
    """Whether the decimal literal ``text`` (``-?[0-9]+``) lies in ``[low, high)``, without
    converting a literal longer than the bounds need (Python refuses over 4,300 digits).

    >>> literal_in_range("-0" + "0" * 5000 + "7", -8, 8), literal_in_range("9" * 5000, 0, 2**64)
    (True, False)
    """
    digits = text.lstrip("-").lstrip("0")
    if len(digits) > max(len(str(abs(low))), len(str(abs(high)))):
        return False
    value = int(digits or "0")
    return low <= (-value if text.startswith("-") else value) < high


def wrap_int64(x: int) -> int:
    """``x`` reduced to a signed 64-bit integer with two's-complement wrap-around.

    >>> wrap_int64(2**64 + 5)
    5
    """
    return (x + 2**63) % 2**64 - 2**63


#: Integers of at most this many decimal digits print in full; longer ones in scientific form.
SHOWN_DIGITS = 60


def show_int(n: int) -> str:
    """``n`` for a message: in decimal up to :data:`SHOWN_DIGITS` digits, beyond that its leading
    digits and power of ten (Python refuses ``str()`` of ints past 4,300 digits).

    >>> show_int(12345), show_int(-(7 * 10**5000 + 10**4990))
    ('12345', '-7.000e+5000')
    """
    m = abs(n)
    exp = int((m.bit_length() - 1) * 0.30102999566398120)  # floor(log10(m)), or one below it
    if exp < SHOWN_DIGITS:
        return str(n)
    if m >= 10 ** (exp + 1):
        exp += 1
    lead = m // 10 ** (exp - 3)
    return f"{'-' if n < 0 else ''}{lead // 1000}.{lead % 1000:03d}e+{exp}"
