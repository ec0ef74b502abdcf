"""The brute-force physical buffer the relayout tests compare with, from the definition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target
from tensorlayout.xla import linear_indices, parse_shape


def reference_buffer(data: np.ndarray, text: str, pad: int) -> np.ndarray:
    """``data`` placed at its XLA linear indices in a buffer of ``pad`` elsewhere."""
    buf = np.full(as_target(text).physical_elements, pad, dtype=data.dtype)
    buf[linear_indices(parse_shape(text))] = data.reshape(-1)
    return buf


def kernel_or_skip() -> Any:
    """The compiled copy kernel in use (``_copy._kernel``), or skip the test when it was not
    built (no compiler at install time)."""
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    return engine._kernel
