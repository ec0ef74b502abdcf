"""The brute-force physical buffer the relayout tests compare with, from the definition."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
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


def check_layout(text: str, threads: int | None, guarded: bool = False) -> None:
    """``to_physical`` and ``from_physical`` of random data under ``text`` (random bytes in items
    of the element's width; pred 0 or 1) on ``threads`` threads against the buffer built from
    XLA's linear indices, every byte; ``guarded``: each into an ``out`` followed by sentinel
    bytes that must stay as they were."""
    t = as_target(text)
    rng = np.random.default_rng(len(text))
    if text.startswith("pred"):
        data = rng.integers(0, 2, t.logical_shape).astype(np.bool_)
    else:
        width = t.element_bits // 8
        data = rng.integers(0, 256, (*t.logical_shape, width), np.uint8).view(f"<u{width}")[..., 0]
    want = reference_buffer(data, text, 0)
    for call, src, like in ((lambda x, **k: to_physical(x, t, **k), data, want),
                            (lambda x, **k: from_physical(x, t, **k), want, data)):
        if not guarded:
            assert np.array_equal(call(src, threads=threads).view(np.uint8), like.view(np.uint8))
            continue
        raw = np.full(like.nbytes + 64, 0xAB, np.uint8)
        out = raw[:like.nbytes].view(like.dtype).reshape(like.shape)
        assert call(src, out=out, threads=threads) is out
        assert np.array_equal(out.view(np.uint8), like.view(np.uint8))
        assert (raw[like.nbytes:] == 0xAB).all()


def random_box_task(rng: np.random.Generator, it: int, shape: tuple[int, ...], ds: tuple[int, ...],
                    ss: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """(dst, src, task, want): a kernel task moving the box (``shape``, byte strides ``ds`` /
    ``ss``) of ``it``-byte items at random byte offsets of random arrays, and the destination
    numpy's strided assignment makes (the bytes outside the box as they were)."""
    d_off, s_off = (int(x) for x in rng.integers(0, it + 1, 2))
    span = lambda st: sum((n - 1) * s for n, s in zip(shape, st, strict=True)) + it  # noqa: E731
    dst = rng.integers(0, 256, d_off + span(ds) + 7).astype(np.uint8)
    src = rng.integers(0, 256, s_off + span(ss) + 7).astype(np.uint8)
    want = dst.copy()
    box = as_strided(src[s_off:], shape + (it,), ss + (1,))
    as_strided(want[d_off:], shape + (it,), ds + (1,))[...] = box
    return dst, src, (d_off, s_off, shape, ds, ss, False, it), want


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


#: A child's script: each raw kernel task of TASKS (byte offsets and strides, items of ITEM
#: bytes) with its source bytes ending where a page that may not be read begins (and, again,
#: starting where one ends), against numpy's strided assignment; prints "ok". A read past the
#: source's bytes kills the child. The arrays are of ITEM-byte integers (the kernel reads its
#: item size off them), of bytes where the task moves WIDE-byte units of bytes.
_PAGE_EDGES = """
import ctypes, mmap, numpy as np
from numpy.lib.stride_tricks import as_strided
import tensorlayout.relayout._copy as engine
page = mmap.PAGESIZE
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
item, wide = {item}, {wide}
unit, moved = np.dtype(f"u{{1 if wide else item}}"), np.dtype((np.void, item))
for shape, ds, ss, d_off, s_off, stream, span in {tasks!r}:
    pages = -(-span // page)
    mem = mmap.mmap(-1, (pages + 2) * page)
    raw = np.frombuffer(mem, np.uint8)
    assert libc.mprotect(raw.ctypes.data, page, 0) == 0  # no access before ...
    assert libc.mprotect(raw.ctypes.data + (pages + 1) * page, page, 0) == 0  # ... nor after
    for start in ((pages + 1) * page - span, page):  # the bytes end at the page after; begin after the first
        src = raw[start:start + span]
        src[:] = np.arange(span) % 251
        dst = np.full((d_off + sum((e - 1) * s for e, s in zip(shape, ds)) + item + 64) // item * item, 0xAB,
                      np.uint8)
        want = dst.copy()
        as_strided(want[d_off:d_off + item].view(moved), shape, ds)[...] = as_strided(
            src[s_off:s_off + item].view(moved), shape, ss)
        task = (d_off, s_off, shape, ds, ss) + ((False, wide) if wide else ())
        engine._kernel.copy(dst.view(unit), src.view(unit), [task], stream)
        assert np.array_equal(dst, want), (shape, ds, ss, start)
print("ok")
"""

PageTask = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int]  # shape, ds, ss, d_off, s_off


def check_page_edges(tasks: list[PageTask], item: int = 1, wide: int = 0,
                     stream: bool | list[bool] = False) -> None:
    """Each raw kernel task ``(shape, ds, ss, d_off, s_off)`` (bytes; ``item``-byte items, moved as
    the kernel's ``wide``-byte units of bytes where not 0; ``stream``: the call's flag, or each
    task's) run in a child whose source is exactly the task's bytes (``s_off`` before the box and
    nothing after it) between two pages it may not touch: a read outside them kills the child,
    and the result is checked too."""
    streams = stream if isinstance(stream, list) else [stream] * len(tasks)
    spans = [(*task, flag, task[4] + extent(task[0], task[2]) + item - 1)
             for task, flag in zip(tasks, streams, strict=True)]
    run_child_ok(_PAGE_EDGES.format(tasks=spans, item=item, wide=wide), timeout=300)


#: The head of a child script that ``edged(n)``: n bytes that end where a page it may not touch
#: begins, and n that begin right after one (the mapping first, to keep while they are in use).
EDGED = """
import ctypes, mmap, numpy as np
page = mmap.PAGESIZE
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
def edged(n):
    mem = mmap.mmap(-1, 3 * page)
    raw = np.frombuffer(mem, np.uint8)
    base = raw.ctypes.data
    assert libc.mprotect(base, page, 0) == 0 and libc.mprotect(base + 2 * page, page, 0) == 0
    return mem, raw[2 * page - n:2 * page], raw[page:page + n]
"""


def run_child_ok(code: str, timeout: int = 120) -> None:
    """Run ``code`` in a child Python, which must exit normally having printed "ok" (a touch
    outside its buffers kills it)."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-2000:])


def rerun_without_avx512(test_file: str) -> None:
    """Run the tests of ``test_file`` again in a child process with ``TENSORLAYOUT_NO_AVX512=1``
    (the AVX2 forms of the kernels); skipped in that child itself."""
    if os.environ.get("TENSORLAYOUT_NO_AVX512"):
        pytest.skip("already the child")
    env = {**os.environ, "TENSORLAYOUT_NO_AVX512": "1"}
    args = [sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", test_file]
    run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900,
                         cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
