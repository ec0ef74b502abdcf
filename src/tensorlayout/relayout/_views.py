"""The two strided views of one copy box: the physical one over the buffer, the logical one
over the array, axes sorted by physical stride and merged where both sides allow."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout._plan import Box

__all__ = ["Pair", "box_views", "coalesce"]

Pair = tuple[np.ndarray, np.ndarray]  # (destination view, source view)


def box_views(box: Box, logical: np.ndarray, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (physical, logical) views of one box, axes sorted by physical stride (major first)."""
    item = buf.itemsize
    index: tuple[Any, ...] = (Ellipsis, *[slice(a, b) for a, b in box.ranges])
    sl = logical[index]  # a view, also of a 0-d array (``a[()]`` would give a scalar copy)
    axes = sorted(box.axes, key=lambda a: -a[3])
    shape = tuple(a[1] for a in axes)
    lstrides = tuple(a[2] * sl.strides[a[0]] for a in axes)
    pstrides = tuple(a[3] * item for a in axes)
    pv = as_strided(buf[box.offset:], shape, pstrides)
    lv = as_strided(sl, shape, lstrides)
    return coalesce(pv, lv)


def coalesce(pv: np.ndarray, lv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge each axis into the one before it where both views allow (axes major first)."""
    shape, ps, ls = list(pv.shape), list(pv.strides), list(lv.strides)
    k = len(shape) - 1
    while k > 0:
        if ps[k - 1] == ps[k] * shape[k] and ls[k - 1] == ls[k] * shape[k]:
            shape[k - 1] *= shape[k]
            ps[k - 1], ls[k - 1] = ps[k], ls[k]
            del shape[k], ps[k], ls[k]
        k -= 1
    return as_strided(pv, tuple(shape), tuple(ps)), as_strided(lv, tuple(shape), tuple(ls))
