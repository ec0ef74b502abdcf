"""CuTe's maps between coordinates and indices of an IntTuple shape: ``idx2crd``, ``crd2idx``
(the inner product with a stride, in C when ``_dot.c`` was built) and ``crd2crd``.

>>> idx2crd(16, (3, (2, 3))), crd2idx((1, 5), (3, (2, 3)), (3, (12, 1)))
((1, (1, 2)), 17)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorlayout.core.intmath import fits_int64
from tensorlayout.cute.int_tuple import (
    _LEAF_TYPES,
    Int,
    IntTuple,
    _valid,
    _valid_crd,
    _valid_fast,
    bad_coordinate,
    describe,
    format_int_tuple,
    not_int_tuple,
    prefix_product,
    product,
)
from tensorlayout.errors import AlgebraError, LayoutError

_make_dot: Callable[[type[int]], Callable[[Any, Any, Any], int | None]] | None
try:
    from tensorlayout.cute._dot import make_dot as _make_dot
except ImportError:  # built without a C compiler: the Python _dot below runs
    _make_dot = None

__all__ = ["checked_crd2idx", "crd2crd", "crd2idx", "idx2crd"]


def idx2crd(idx: Any, shape: IntTuple) -> IntTuple:
    """Colexicographic coordinate of ``idx`` in ``shape``; the last mode is not reduced (as C++).

    ``idx`` may be an int, a tuple coordinate (converted mode by mode) or a numpy array.

    >>> idx2crd(20, (3, (2, 3)))
    (2, (0, 3))
    """
    if not _valid_fast(shape):
        raise not_int_tuple("idx2crd", shape)
    if not _valid_crd(idx):
        raise bad_coordinate("idx2crd", idx)
    return _idx2crd(idx, shape)


def _idx2crd(idx: Any, shape: IntTuple) -> IntTuple:
    if isinstance(idx, tuple):
        if not isinstance(shape, tuple) or len(idx) != len(shape):
            raise AlgebraError(f"coordinate {format_int_tuple(idx)} does not match the rank of shape "
                               f"{format_int_tuple(shape)}")
        return tuple(_idx2crd(i, s) for i, s in zip(idx, shape))
    if isinstance(shape, tuple):
        out = []
        last = len(shape) - 1
        if not isinstance(idx, (int, np.integer, np.ndarray)) or isinstance(idx, bool):
            raise bad_coordinate("idx2crd", idx)
        for k, s in enumerate(shape):
            if k == last:
                out.append(_idx2crd(idx, s))
            else:
                n = product(s)
                if n == 0:
                    raise LayoutError(f"shape {format_int_tuple(shape)} has a zero extent: no index "
                                      "splits over it")
                idx, r = _split(idx, n)
                out.append(_idx2crd(r, s))
        return tuple(out)
    return idx


def _split(idx: Any, n: int) -> tuple[Any, Any]:
    """``(idx // n, idx % n)``; numpy scalars become exact ints, an int64 array keeps its dtype
    when ``n`` is beyond int64 (every non-negative int64 value is then its own remainder)."""
    if isinstance(idx, np.integer):
        idx = int(idx)
    if idx.__class__ is np.ndarray and not fits_int64(n):
        if (idx < 0).any():
            raise LayoutError(f"a negative int-array index against an extent of {n}, beyond int64, "
                              "has no int64 coordinate")
        return np.zeros_like(idx), idx
    return idx // n, idx % n


def _leaf_index(crd: Any, stride: int) -> Any:
    """``crd * stride`` for one leaf: exact for ints and numpy scalars; an int array needs an
    int64 stride (as :meth:`Layout.offsets` needs int64 offsets)."""
    if isinstance(crd, np.integer):
        return int(crd) * stride
    if crd.__class__ is np.ndarray and not fits_int64(stride):
        raise LayoutError(f"stride {stride} is beyond int64: an int-array coordinate is evaluated in "
                          "int64; pass Python ints for the exact value")
    return crd * stride


def crd2idx(crd: Any, shape: IntTuple, stride: IntTuple | None = None) -> Any:
    """Index of coordinate ``crd`` under ``stride`` (default: compact colexicographic strides).

    An int coordinate against a tuple shape is split colexicographically, the last mode taking
    any overflow. Works elementwise on numpy integer arrays too.

    >>> crd2idx(20, (3, (2, 3)), (3, (12, 1)))
    9
    """
    if stride is not None:
        out = _fast_dot(crd, shape, stride)
        if out is not None:  # congruent ints: the common case, checked as it is summed
            return out
        if type(crd) is not np.ndarray:
            try:  # compute first, check after: a well-formed call pays for no separate validation
                out = _crd2idx(crd, shape, stride)
            except (TypeError, AttributeError, RecursionError, OverflowError):  # checked below
                out = None
            if out.__class__ is int and _valid_crd(crd):
                return out
    for t in (shape, stride):
        if t is not None and not _valid_fast(t):
            raise not_int_tuple("crd2idx", t)
    if not _valid_crd(crd):
        raise bad_coordinate("crd2idx", crd)
    if stride is None:
        stride = prefix_product(shape)
    return checked_crd2idx(crd, shape, stride)


def checked_crd2idx(crd: Any, shape: IntTuple, stride: IntTuple) -> Any:
    """``_crd2idx`` of checked arguments, numpy's int64 overflow (an int-array coordinate meeting
    a part beyond int64) as a LayoutError."""
    try:
        return _crd2idx(crd, shape, stride)
    except OverflowError:
        raise LayoutError("an int-array coordinate is evaluated in int64, and a part of this index "
                          "is beyond it; pass Python ints for the exact value") from None


def _dot(crd: Any, shape: Any, stride: Any) -> int | None:
    """``Σ c·d`` when ``crd``, ``shape`` and ``stride`` are congruent with int leaves (exact ints
    in ``crd``, ints or :class:`Int` in ``shape`` and ``stride``; C++'s inner product of a natural
    coordinate), else None (the caller takes the general path). The reference of ``_dot.c``.

    >>> _dot((1, (2, 0)), (2, (3, 4)), (1, (2, 6))), _dot(3, (2, 2), (1, 2))
    (5, None)
    """
    if type(crd) is not tuple:
        if type(crd) is int and type(shape) in _LEAF_TYPES and type(stride) in _LEAF_TYPES:
            return crd * stride
        return None
    if type(shape) is not tuple or type(stride) is not tuple or \
            not len(crd) == len(shape) == len(stride):
        return None
    total = 0
    i = 0
    for c in crd:  # index loops: a ``zip`` call costs more here
        s = shape[i]
        d = stride[i]
        i += 1
        if type(c) is int and type(s) is int and type(d) is int:
            total += c * d
            continue
        v = _dot(c, s, d)
        if v is None:
            return None
        total += v
    return total


#: :func:`_dot` as the optional C extension ``_dot.c`` computes it when it was built (12-25 ns
#: a call against 80-420 ns for small coordinates; None past its ``MAX_DEPTH`` levels of nesting,
#: where the general path answers), else :func:`_dot` itself: crd2idx and ``Layout.__call__`` call
#: this one name.
_fast_dot: Callable[[Any, Any, Any], int | None] = _dot if _make_dot is None else _make_dot(Int)


def _crd2idx(crd: Any, shape: IntTuple, stride: IntTuple) -> Any:
    if isinstance(crd, tuple):
        if not isinstance(shape, tuple) or len(crd) != len(shape):
            raise AlgebraError(f"coordinate {format_int_tuple(crd)} does not match the rank of shape "
                               f"{format_int_tuple(shape)}")
        if not isinstance(stride, tuple) or len(stride) != len(shape):
            raise AlgebraError("shape and stride are not congruent")
        total: Any = 0
        for c, s, d in zip(crd, shape, stride):
            if type(c) is int and type(s) is int and type(d) is int:  # the common flat case
                total += c * d
            else:
                total = total + _crd2idx(c, s, d)
        return total
    if isinstance(shape, tuple):
        if not isinstance(stride, tuple) or len(stride) != len(shape):
            raise AlgebraError("shape and stride are not congruent")
        total = 0
        last = len(shape) - 1
        for k, (s, d) in enumerate(zip(shape, stride)):
            if k == last:
                total = total + _crd2idx(crd, s, d)
            else:
                n = product(s)
                if n == 0:
                    raise LayoutError(f"shape {format_int_tuple(shape)} has a zero extent: no index "
                                      "splits over it")
                crd, r = _split(crd, n)
                total = total + _crd2idx(r, s, d)
        return total
    if isinstance(stride, tuple):
        raise AlgebraError("shape and stride are not congruent")
    if not isinstance(crd, (int, np.integer, np.ndarray)) or isinstance(crd, bool):
        raise bad_coordinate("crd2idx", crd)
    if shape.__class__ not in _LEAF_TYPES or stride.__class__ not in _LEAF_TYPES:
        raise LayoutError(f"crd2idx: shape and stride leaves must be ints, got {describe(shape)} and "
                          f"{describe(stride)}")
    return _leaf_index(crd, stride)


def crd2crd(crd: IntTuple, dst_shape: IntTuple, src_shape: IntTuple | None = None) -> IntTuple:
    """Convert a coordinate of ``src_shape`` to one of ``dst_shape`` (through the 1-D index).

    >>> crd2crd((1, 5), (2, (3, 2)), (2, 6)), crd2crd(5, (2, 3), (6,))
    ((1, (2, 1)), (1, 2))
    """
    for t in (crd, dst_shape, src_shape):
        if t is not None and not _valid(t):
            raise not_int_tuple("crd2crd", t)
    return _crd2crd(crd, dst_shape, src_shape)


def _crd2crd(crd: IntTuple, dst_shape: IntTuple, src_shape: IntTuple | None) -> IntTuple:
    """:func:`crd2crd` of checked IntTuples."""
    if isinstance(crd, tuple) and isinstance(dst_shape, tuple) and len(crd) == len(dst_shape):
        s = src_shape if isinstance(src_shape, tuple) else (None,) * len(crd)
        return tuple(_crd2crd(c, d, x) for c, d, x in zip(crd, dst_shape, s))
    if src_shape is None:
        raise AlgebraError("crd2crd needs the source shape to convert a coordinate of another rank")
    return idx2crd(crd2idx(crd, src_shape), dst_shape)
