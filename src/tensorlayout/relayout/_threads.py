"""How many threads a large copy may use, how its boxes are cut for them, and the Python
thread pool of the numpy path (the C kernels have threads of their own: ``_pool.h``).

The cap is, in order: the ``threads=`` argument of the call, the ``TENSORLAYOUT_THREADS``
environment variable, the machine's cores (at most 4); 0 and 1 both mean the calling thread
alone, and more than ``MOST_THREADS`` mean that many. Results do not depend on it.

>>> thread_count(1), thread_count(0), thread_count(1000)
(1, 1, 8)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from tensorlayout.errors import LayoutError

__all__ = ["by_piece", "cuts", "share", "thread_count"]

MAX_THREADS = 4  # threads by default, at most
MOST_THREADS = 8  # threads at all, at most (the kernels' pools: 7 and the caller, POOL_MAX in _pool.h)
_CORES = os.cpu_count() or 1  # read once: os.cpu_count() measured 5 us, paid on every large call
_POOLS: dict[int, ThreadPoolExecutor] = {}


def thread_count(threads: int | None = None) -> int:
    """How many threads a large copy may use: ``threads`` if given, else the environment's
    ``TENSORLAYOUT_THREADS``, else the cores (at most ``MAX_THREADS``); at least 1, at most
    ``MOST_THREADS``."""
    if threads is None:
        env = os.environ.get("TENSORLAYOUT_THREADS", "").strip()
        if env:
            if not env.isdigit():
                raise LayoutError(f"TENSORLAYOUT_THREADS must be a whole number, not {env!r}")
            threads = int(env)
        else:
            threads = min(MAX_THREADS, _CORES)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise LayoutError(f"threads must be an int >= 0 (0 and 1: the calling thread alone), "
                          f"but got {threads!r}")
    return min(max(1, threads), MOST_THREADS)


def _pool(workers: int) -> ThreadPoolExecutor | None:
    if workers < 2:
        return None
    if workers not in _POOLS:
        _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix="tensorlayout-relayout")
    return _POOLS[workers]


def share(workers: int, tasks: list[Any], work: Callable[[list[Any]], object]) -> None:
    """The numpy path's threads: run ``work`` over ``tasks``, split in consecutive runs of equal
    length among ``workers`` threads: the calling thread takes the first run itself (it would
    only wait otherwise, and one pool thread fewer is woken)."""
    pool = _pool(workers)
    if pool is None or len(tasks) < 2:
        work(tasks)
        return
    size = -(-len(tasks) // workers)
    rest = [pool.submit(work, tasks[i:i + size]) for i in range(size, len(tasks), size)]
    try:
        work(tasks[:size])
    finally:  # the runs in flight end before this returns or raises
        wait(rest)
    for future in rest:
        future.result()


def cuts(n: int, pieces: int, unit: int = 1) -> list[int]:
    """Where to cut ``n`` items into at most ``pieces`` runs of near-equal size (sizes differ by
    ``unit`` at most), on multiples of ``unit``: the bounds, 0 and ``n`` included.

    >>> cuts(25, 4), cuts(3, 4), cuts(10, 3, unit=4)
    ([0, 6, 12, 18, 25], [0, 1, 2, 3], [0, 4, 10])
    """
    return sorted({i * n // pieces // unit * unit for i in range(pieces)} | {n})


def by_piece(parts: list[list[Any]]) -> list[Any]:
    """The first piece of every part, then the second, ...: threads claiming pieces in turn
    then work on every part at once and finish together (a ragged layout's main box and its
    small edge boxes, say; taken part by part, one thread was left the whole main box: 1.8x a
    copy, balanced 1.2x).

    >>> by_piece([[1, 2, 3], [10], [20, 21]])
    [1, 10, 20, 2, 21, 3]
    """
    return [part[i] for i in range(max(map(len, parts), default=0)) for part in parts if i < len(part)]
