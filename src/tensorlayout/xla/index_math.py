"""Per-call index math of one XLA shape, prepared once: :func:`linear_index` and
:func:`multi_index` read the shape's digits in the layout core (:mod:`tensorlayout.xla.lowering`)
without building arrays; anything off the fast path goes through the core's general code.

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("f32[3,5]{1,0:T(2,2)}")
>>> linear_index(s, (2, 3)), multi_index(s, 17)
(17, (2, 3))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tensorlayout.errors import LayoutError
from tensorlayout.xla.lowering import allocated_elements, lower_shape
from tensorlayout.xla.shape import Shape, as_shape

__all__ = ["linear_index", "multi_index"]


class _IndexMath:
    """One shape's per-call index math, prepared once: each dim's digits as ``(block, extent,
    stride)`` and, when the digits decide the index (a mixed radix per dim, strides decisive,
    no swizzle), the digits by falling stride for reading an offset back. Anything off the
    fast path (other argument types, out of range, padding) goes through the core's general
    code, which raises the precise error.
    """

    __slots__ = ("base", "decode", "dims", "lay", "padded", "per_dim", "shape", "text", "total")

    def __init__(self, shape: Shape) -> None:
        lay = lower_shape(shape)
        self.shape, self.lay, self.dims, self.base = shape, lay, lay.shape, lay.base
        self.total = allocated_elements(shape)
        chains = lay.per_dim_digits() if lay.post is None else None
        self.per_dim: tuple[tuple[tuple[int, int, int], ...], ...] | None = None
        self.decode: tuple[tuple[int, int, int, int], ...] | None = None
        self.padded: tuple[tuple[int, int], ...] = ()
        self.text: str | None = None  # the shape's text, for error messages, once needed
        if chains is not None:
            self.per_dim = tuple(tuple((d.block, d.extent, d.stride) for d in ds if d.extent > 1 and d.stride)
                                 for ds in chains[0])
            if lay.decides_indices():
                self.decode = tuple(sorted(((d.stride, d.extent, d.block, k) for k, ds in enumerate(chains[0])
                                            for d in ds if d.extent > 1), reverse=True))
                # the dims whose digits reach past their size (the tile padding of a ragged dim)
                self.padded = tuple((k, n) for k, (ds, n) in enumerate(zip(chains[0], self.dims))
                                    if ds and ds[0].block * ds[0].extent > n)

    def linear(self, index: Sequence[int]) -> int:
        if self.per_dim is not None and type(index) is tuple and len(index) == len(self.dims):
            total = self.base
            for i, n, digits in zip(index, self.dims, self.per_dim):
                if type(i) is not int or not 0 <= i < n:
                    return self.lay.checked_offset(index)
                for b, e, s in digits:
                    total += i // b % e * s
            return total
        return self.lay.checked_offset(index)

    def multi(self, offset: int) -> tuple[int, ...]:
        if self.decode is not None and type(offset) is int and 0 <= offset < self.total:
            # the digits decide the index (positive nested strides): an offset they do not
            # read back to an in-bounds index holds no element
            rest = offset - self.base
            idx = [0] * len(self.dims)
            for s, e, b, k in self.decode:
                v = rest // s
                if not 0 <= v < e:
                    raise self._padding(offset)
                rest -= v * s
                idx[k] += v * b
            if rest or any(idx[k] >= n for k, n in self.padded):
                raise self._padding(offset)
            return tuple(idx)
        return self.slow_multi(offset)

    def slow_multi(self, offset: int) -> tuple[int, ...]:
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) \
                or not 0 <= offset < self.total:
            raise LayoutError(f"expected an offset in [0, {self.total}) for {self.shape}, but got {offset!r}")
        found = self.lay.index_of(int(offset))
        if found is None:
            raise self._padding(offset)
        return found

    def _padding(self, offset: int) -> LayoutError:
        if self.text is None:
            self.text = str(self.shape)
        return LayoutError(f"offset {offset} of {self.text} is a padding slot")


#: Prepared index math by the identity of the caller's shape object (a Shape or its text), and
#: by the identity of its lowering (equal shapes share one): ``(key object, math)``, the object
#: kept so that its id stays its own. Bounded: cleared when full.
_MATH_BY_ARG: dict[int, tuple[object, _IndexMath]] = {}
_MATH_BY_LAYOUT: dict[int, tuple[object, _IndexMath]] = {}
_MATH_LIMIT = 256


def _math(shape: Shape | str) -> _IndexMath:
    entry = _MATH_BY_ARG.get(id(shape))
    if entry is not None and entry[0] is shape:
        return entry[1]
    checked = as_shape(shape)
    lay = lower_shape(checked)
    found = _MATH_BY_LAYOUT.get(id(lay))
    math = found[1] if found is not None and found[0] is lay else _IndexMath(checked)
    for table, key in ((_MATH_BY_ARG, shape), (_MATH_BY_LAYOUT, lay)):
        if len(table) >= _MATH_LIMIT:
            table.clear()
        table[id(key)] = (key, math)
    return math


def linear_index(shape: Shape | str, index: Sequence[int]) -> int:
    """Offset (in elements) of logical ``index`` in the tiled physical buffer.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> linear_index(parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}"), (1, 2))
    5
    """
    return _math(shape).linear(index)


def multi_index(shape: Shape | str, offset: int) -> tuple[int, ...]:
    """The logical index stored at ``offset``; :class:`LayoutError` for a padding slot.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> multi_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), 17)
    (2, 3)
    """
    return _math(shape).multi(offset)
