"""The copy without the compiled kernel: numpy strided copies, block by block, small
sub-tile axes peeled into separate passes and short contiguous runs moved as wide opaque
elements, so numpy's inner loop runs long."""

from __future__ import annotations

import numpy as np

from tensorlayout.relayout._views import Pair

__all__ = ["numpy_tasks"]

BLOCK_BYTES = 1 << 18  # bytes per block, so both sides stay in cache
PEEL_MAX = 8  # inner physical axes up to this extent are peeled into passes
WIDEN_MAX_BYTES = 64  # longer runs already copy at full speed as plain elements


def numpy_tasks(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> list[Pair]:
    """Blocks of the outer physical axis; small inner physical axes (the sub-tiles that
    interleave rows) peeled into separate passes so numpy's inner loop runs long."""
    peeled = 0
    while pv.ndim - peeled > 1 and pv.shape[pv.ndim - 1 - peeled] <= PEEL_MAX \
            and lv.strides[pv.ndim - 1 - peeled] != lv.itemsize:
        peeled += 1
    outer = pv.ndim - peeled
    pieces = [(pv, lv)]
    if pv.ndim and pv.shape[0] > 1:
        row = max(1, pv.nbytes // pv.shape[0])
        step = max(1, BLOCK_BYTES // row)
        pieces = [(pv[i:i + step], lv[i:i + step]) for i in range(0, pv.shape[0], step)]
    out: list[Pair] = []
    for p, q in pieces:
        for idx in np.ndindex(*p.shape[outer:]):
            key = (Ellipsis, *idx)
            out.append(_widen(p[key], q[key]) if to_physical else _widen(q[key], p[key]))
    return out


def _widen(dst: np.ndarray, src: np.ndarray) -> Pair:
    """Fold an inner axis contiguous on both sides into one wide opaque element (``V{bytes}``),
    so numpy moves whole runs per step instead of single elements."""
    item = dst.itemsize
    if dst.ndim < 2 or dst.shape[-1] < 2 or dst.shape[-1] * item > WIDEN_MAX_BYTES \
            or dst.strides[-1] != item or src.strides[-1] != item:
        return dst, src
    wide = np.dtype((np.void, dst.shape[-1] * item))
    return (np.asarray(_Interface(dst[..., 0], wide)), np.asarray(_Interface(src[..., 0], wide)))


class _Interface:
    """An ``__array_interface__`` over ``base``'s memory with another dtype (keeps it alive)."""

    def __init__(self, base: np.ndarray, dtype: np.dtype) -> None:
        self.base = base
        self.__array_interface__ = {"shape": base.shape, "strides": base.strides, "version": 3,
                                    "typestr": dtype.str, "data": (base.__array_interface__["data"][0],
                                                                   False)}
