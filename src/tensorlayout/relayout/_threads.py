"""The relayout thread pool: large copies are shared among threads, capped by the caller.

The cap is, in order: the ``threads=`` argument of the call, the ``TENSORLAYOUT_THREADS``
environment variable, the machine's cores (at most 4); 0 and 1 both mean the calling thread
alone. Results do not depend on it.

>>> thread_count(1), thread_count(0)
(1, 1)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from tensorlayout.errors import LayoutError

__all__ = ["share", "thread_count"]

MAX_THREADS = 4
_CORES = os.cpu_count() or 1  # read once: os.cpu_count() measured 5 us, paid on every large call
_POOLS: dict[int, ThreadPoolExecutor] = {}


def thread_count(threads: int | None = None) -> int:
    """How many threads a large copy may use: ``threads`` if given, else the environment's
    ``TENSORLAYOUT_THREADS``, else the cores (at most ``MAX_THREADS``); at least 1."""
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
    return max(1, threads)


def _pool(workers: int) -> ThreadPoolExecutor | None:
    if workers < 2:
        return None
    if workers not in _POOLS:
        _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix="tensorlayout-relayout")
    return _POOLS[workers]


def share(workers: int, tasks: list[Any], work: Callable[[list[Any]], object],
          weight: Callable[[Any], int] | None = None) -> None:
    """Run ``work`` over ``tasks``, split in consecutive runs among ``workers`` threads, of
    equal length or, given ``weight``, of about equal weight: the calling thread takes the
    first run itself (it would only wait otherwise, and one pool thread fewer is woken)."""
    pool = _pool(workers)
    if pool is None or len(tasks) < 2:
        work(tasks)
        return
    runs = _runs(workers, tasks, weight)
    rest = [pool.submit(work, run) for run in runs[1:]]
    try:
        work(runs[0])
    finally:  # the runs in flight end before this returns or raises
        wait(rest)
    for future in rest:
        future.result()


def _runs(workers: int, tasks: list[Any], weight: Callable[[Any], int] | None) -> list[list[Any]]:
    """``tasks`` in at most ``workers`` consecutive non-empty runs: of equal length, or each
    ending next to where the running weight reaches its share of the total (before or after
    the task that crosses it, whichever is nearer).

    >>> _runs(2, [5, 1, 1, 1, 5, 5], None), _runs(2, [5, 1, 1, 1, 5, 5], lambda w: w)
    ([[5, 1, 1], [1, 5, 5]], [[5, 1, 1, 1], [5, 5]])
    """
    if weight is None:
        size = -(-len(tasks) // workers)
        return [tasks[i:i + size] for i in range(0, len(tasks), size)]
    weights = [weight(t) for t in tasks]
    runs: list[list[Any]] = []
    total, start, acc = sum(weights), 0, 0
    for i, w in enumerate(weights):
        mark = total * (len(runs) + 1)  # the next cut, times workers
        if len(runs) < workers - 1 and (acc + w) * workers >= mark:
            cut = i if i > start and (acc + w) * workers - mark > mark - acc * workers else i + 1
            runs.append(tasks[start:cut])
            start = cut
        acc += w
    if start < len(tasks):
        runs.append(tasks[start:])
    return runs
