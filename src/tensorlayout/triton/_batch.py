"""A linear layout applied to many inputs at once with numpy (packed columns, see
:mod:`tensorlayout.triton._packed`): every input via XOR doubling, or given arrays bit by bit.

>>> apply_all((1, 2), (("dim0", 0, 3),)).ravel().tolist()
[0, 1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tensorlayout.errors import LayoutError

__all__ = ["apply_all", "apply_batch"]

#: ``(out dim, shift, mask)`` of each out dim's field in a column.
Fields = Sequence[tuple[str, int, int]]

#: Up to this many inputs the table is built in Python (numpy's per-call cost dominates below).
SMALL = 256


def apply_all(cols: Sequence[int], fields: Fields) -> np.ndarray:
    """The outputs of every input (row ``i``: the input whose bits are ``i``), one column per out
    dim, ``int64``."""
    if len(cols) <= SMALL.bit_length() - 1:
        small = [0]
        for c in cols:
            small += [x ^ c for x in small]
        if len(small) <= 16 or len(fields) == 1:
            rows = small if len(fields) == 1 else [[x >> s & m for _, s, m in fields] for x in small]
            return np.array(rows, np.int64).reshape(len(small), len(fields))
        flat = np.array(small, np.uint64)
    else:
        flat = np.zeros(1, np.uint64)
        for c in cols:
            flat = np.concatenate((flat, flat ^ np.uint64(c)))
    if len(fields) == 1:
        return flat.astype(np.int64).reshape(-1, 1)
    out = np.empty((flat.size, len(fields)), np.int64)
    for j, (_, s, m) in enumerate(fields):
        out[:, j] = flat >> np.uint64(s) & np.uint64(m)
    return out


def apply_batch(per_dim: Sequence[tuple[str, Sequence[int]]], fields: Fields,
                ins: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The outputs of the inputs in ``ins`` (one integer array per in dim, broadcast together)."""
    arrays = {n: np.asarray(ins[n]) for n, _ in per_dim}
    if any(a.dtype.kind not in "iu" for a in arrays.values()):
        raise LayoutError("apply_batch needs integer arrays")
    acc = np.zeros(np.broadcast_shapes(*(a.shape for a in arrays.values())), np.uint64)
    for name, cols in per_dim:
        x = arrays[name].astype(np.uint64)
        for i, c in enumerate(cols):
            if c:
                acc ^= (x >> np.uint64(i) & np.uint64(1)) * np.uint64(c)
    return {n: (acc >> np.uint64(s) & np.uint64(m)).astype(np.int64) for n, s, m in fields}
