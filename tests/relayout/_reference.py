"""The brute-force physical buffer the relayout tests compare with, from the definition."""

from __future__ import annotations

import numpy as np

from tensorlayout.relayout import as_target
from tensorlayout.xla import linear_indices, parse_shape


def reference_buffer(data: np.ndarray, text: str, pad: int) -> np.ndarray:
    """``data`` placed at its XLA linear indices in a buffer of ``pad`` elsewhere."""
    buf = np.full(as_target(text).physical_elements, pad, dtype=data.dtype)
    buf[linear_indices(parse_shape(text))] = data.reshape(-1)
    return buf
