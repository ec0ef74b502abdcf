"""The copy kernels' own threads (``_pool.h``, one pool in ``_kernel`` and one in ``_pack``): a
shared copy's pieces claimed by the calling thread and the pool's, against the one-thread
result: many tasks and few, large ones (a caller that returned before its threads finished
would leave bytes unwritten), the thread cap, callers on several Python threads at once (one
copy is posted at a time, the others run alone; none may hang), and a forked child (whose pools
start afresh)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import from_physical, to_physical
from tests.relayout._reference import kernel_or_skip as _kernel

# the last two are _pack's
LAYOUTS = ["bf16[300,700]{1,0:T(8,128)(2,1)}", "f32[100,260]{0,1:T(8,128)}", "f32[40,24,100]{0,2,1:T(8,128)}",
           "s4[64,1000]{1,0:T(8,128)(8,1)E(4)}", "u1[40,1000]{1,0:T(8,128)(32,1)E(1)}"]


def _data(text: str, seed: int) -> np.ndarray:
    dims = tuple(int(x) for x in text[text.index("[") + 1:text.index("]")].split(","))
    rng = np.random.default_rng(seed)
    if text.startswith("s4"):
        return rng.integers(-8, 8, dims).astype(np.int8)
    if text.startswith("u1"):
        return rng.integers(0, 2, dims, np.uint8)
    return rng.integers(0, 60000, dims).astype(np.uint16 if text.startswith("bf16") else np.float32)


def _run_callers(n: int, rounds: int, work: object) -> list[str]:
    """Run ``work(k, round)`` on n Python threads, all starting each round together; what went
    wrong (a caller that has not finished after 30 s counts: it hangs)."""
    errors: list[str] = []
    barrier = threading.Barrier(n)

    def loop(k: int) -> None:
        try:
            for r in range(rounds):
                barrier.wait(timeout=20)
                if not work(k, r):  # type: ignore[operator]
                    errors.append(f"caller {k}, round {r}: wrong result")
                    return
        except threading.BrokenBarrierError:
            errors.append(f"caller {k}: the others stopped")

    callers = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(n)]
    for c in callers:
        c.start()
    for c in callers:
        c.join(timeout=30)
    return errors + [f"caller {k} hangs" for k, c in enumerate(callers) if c.is_alive()]


@pytest.mark.parametrize("workers", [1, 2, 3, 8, 100])
@pytest.mark.parametrize("count, size", [(1, 1000), (2, 1000), (5, 1000), (64, 1000), (16, 1 << 18)])
def test_raw_copy_with_workers_claims_every_task(workers: int, count: int, size: int) -> None:
    kernel = _kernel()
    src = np.random.default_rng(count).integers(1, 1 << 30, count * size, dtype=np.uint32)
    dst = np.zeros_like(src)
    tasks = [(i * 4 * size, i * 4 * size, (size,), (4,), (4,)) for i in range(count)]
    kernel.copy(dst, src, tasks, False, workers)  # type: ignore[attr-defined]
    assert np.array_equal(dst, src)  # every byte written by the time the call returns
    joined = kernel.pool_info()[1]  # type: ignore[attr-defined]
    assert joined <= min(workers - 1, count - 1, 7) or workers == 1 or count == 1


def test_threads_beyond_the_cap_do_not_join() -> None:
    # after a copy that started all seven pool threads, a copy capped at two takes one of them
    kernel = _kernel()
    src = np.arange(1 << 21, dtype=np.uint32)
    dst = np.zeros_like(src)
    tasks = [(i * (1 << 16), i * (1 << 16), (1 << 14,), (4,), (4,)) for i in range(128)]
    kernel.copy(dst, src, tasks, False, 8)  # type: ignore[attr-defined]
    for _ in range(20):
        kernel.copy(dst, src, tasks, False, 2)  # type: ignore[attr-defined]
        assert kernel.pool_info()[1] <= 1  # type: ignore[attr-defined]
    assert np.array_equal(dst, src)


def test_back_to_back_copies_are_each_written_whole() -> None:
    # a pool thread done with one copy spins for the next (POOL_SPIN_NS) and joins it awake;
    # the caller spins for the thread's last piece: each copy, however short, is whole when
    # its call returns (a caller that returns without waiting for the thread fails this: it
    # crashed the interpreter when tried)
    kernel = _kernel()
    rng = np.random.default_rng(5)
    for size in (64, 4096, 1 << 15):
        tasks = [(i * 4 * size, i * 4 * size, (size,), (4,), (4,)) for i in range(16)]
        for _ in range(100):
            src = rng.integers(1, 1 << 30, 16 * size, dtype=np.uint32)
            dst = np.zeros_like(src)
            kernel.copy(dst, src, tasks, False, 2)  # type: ignore[attr-defined]
            assert np.array_equal(dst, src)


def test_two_raw_callers_at_once_never_hang() -> None:
    # each round both callers share a copy at the same moment: one posts its copy, the other
    # runs alone or posts after; each waits for its own copy's threads only
    # (with one wake of one waiter for all copies, and 3 pool threads, this hung within seconds)
    kernel = _kernel()
    srcs = [np.random.default_rng(k).integers(0, 1 << 30, 8 << 14, dtype=np.uint32) for k in range(2)]
    dsts = [np.zeros_like(s) for s in srcs]
    tasks = [(i << 16, i << 16, (1 << 14,), (4,), (4,)) for i in range(8)]

    def work(k: int, r: int) -> bool:
        dsts[k][...] = 0
        kernel.copy(dsts[k], srcs[k], tasks, False, 4)  # type: ignore[attr-defined]
        return bool(np.array_equal(dsts[k], srcs[k]))

    assert not _run_callers(2, 2000, work)


@pytest.mark.parametrize("text", LAYOUTS)
def test_shared_copies_from_many_callers_at_once(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    _kernel()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # every copy shared
    data = [_data(text, seed) for seed in range(6)]
    want = [to_physical(a, text, threads=1) for a in data]

    def work(k: int, r: int) -> bool:
        buf = to_physical(data[k], text, threads=2 + r % 2)
        back = from_physical(buf, text, threads=3 - r % 2)
        return bool(np.array_equal(buf, want[k]) and np.array_equal(back, data[k]))

    assert not _run_callers(6, 20, work)


FORKED = """
import os
import numpy as np
import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import _pack_path, to_physical
engine.THREAD_MIN_BYTES = 1
text, s4 = {text!r}, {s4!r}
a = np.random.default_rng(7).integers(0, 60000, (300, 700)).astype(np.uint16)
nibbles = np.random.default_rng(7).integers(-8, 8, (64, 1000)).astype(np.int8)
want, packed = to_physical(a, text, threads=1), to_physical(nibbles, s4, threads=1)
pools = [p for p in (engine._kernel, _pack_path._pack) if p is not None]
def right():
    return (np.array_equal(to_physical(a, text, threads=2), want)
            and np.array_equal(to_physical(nibbles, s4, threads=2), packed))
assert right() and all(p.pool_info()[0] >= 1 for p in pools)  # the parent's pools started
pid = os.fork()
if pid == 0:  # the child: exit 0 only if it starts threads of its own and copies right
    fresh = all(p.pool_info()[0] == 0 for p in pools)
    ok = all(right() for _ in range(5))
    os._exit(0 if fresh and ok and all(p.pool_info()[0] >= 1 for p in pools) else 1)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
assert right()  # and the parent's pools still work
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_shares_copies_among_fresh_threads() -> None:
    # in a fresh interpreter (this one may run other libraries' threads, which fork does not
    # mix well with): a parent whose pools have started forks; the child's start afresh
    _kernel()
    code = FORKED.format(text=LAYOUTS[0], s4=LAYOUTS[3])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
