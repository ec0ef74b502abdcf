"""The brute-force physical buffer the relayout tests compare with, from the definition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, from_physical, to_physical
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


def extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Items (or bytes) from a box's first to its last element, both included: ``(2, 3)`` at
    strides ``(10, 1)`` spans 13."""
    return sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) + 1


def check_byte_layout(text: str, threads: int) -> None:
    """``to_physical`` and ``from_physical`` of random pred/u8/s8 data under ``text`` on
    ``threads`` threads against the buffer built from XLA's linear indices, every byte."""
    t = as_target(text)
    dtype = {"pred": np.bool_, "u8": np.uint8, "s8": np.int8}[text[:text.index("[")]]
    data = np.random.default_rng(len(text)).integers(0, 2 if dtype is np.bool_ else 100, t.logical_shape)
    data = data.astype(dtype)
    want = reference_buffer(data, text, 0)
    assert np.array_equal(to_physical(data, t, threads=threads).view(np.uint8), want.view(np.uint8))
    assert np.array_equal(from_physical(want, t, threads=threads), data)


def check_raw_task(kernel: Any, src: np.ndarray, shape: tuple[int, ...], ds: tuple[int, ...],
                   ss: tuple[int, ...], d_off: int, s_off: int, stream: bool, fill: int) -> None:
    """One raw kernel task (byte offsets and strides) from ``src`` into a destination of
    ``src``'s type filled with ``fill`` against numpy's strided assignment: the box's bytes
    moved, every byte around it kept."""
    item = src.itemsize
    dst = np.full((d_off + extent(shape, ds) + 64) // item, fill, src.dtype)
    want = dst.copy()
    as_strided(want[d_off // item:], shape, ds)[...] = as_strided(src[s_off // item:], shape, ss)
    kernel.copy(dst, src, [(d_off, s_off, shape, ds, ss)], stream)
    assert np.array_equal(dst, want)
