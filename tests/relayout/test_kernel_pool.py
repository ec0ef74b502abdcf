"""The copy kernels' own threads (``_pool.h``, one pool in ``_kernel`` and one in ``_pack``): a
shared copy's pieces claimed by the calling thread and the pool's, against the one-thread
result: many tasks and few, callers on several Python threads at once (one copy holds the pool,
the others copy alone), and a forked child (whose pools start afresh)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import _pack_path as pack_path
from tensorlayout.relayout import from_physical, to_physical

# the last two are _pack's
LAYOUTS = ["bf16[300,700]{1,0:T(8,128)(2,1)}", "f32[100,260]{0,1:T(8,128)}", "f32[40,24,100]{0,2,1:T(8,128)}",
           "s4[64,1000]{1,0:T(8,128)(8,1)E(4)}", "u1[40,1000]{1,0:T(8,128)(32,1)E(1)}"]


def _kernel() -> object:
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    return engine._kernel


def _data(text: str, seed: int) -> np.ndarray:
    dims = tuple(int(x) for x in text[text.index("[") + 1:text.index("]")].split(","))
    rng = np.random.default_rng(seed)
    if text.startswith("s4"):
        return rng.integers(-8, 8, dims).astype(np.int8)
    if text.startswith("u1"):
        return rng.integers(0, 2, dims, np.uint8)
    return rng.integers(0, 60000, dims).astype(np.uint16 if text.startswith("bf16") else np.float32)


@pytest.mark.parametrize("workers", [1, 2, 3, 8, 100])
@pytest.mark.parametrize("count", [1, 2, 5, 64])
def test_raw_copy_with_workers_claims_every_task_once(workers: int, count: int) -> None:
    kernel = _kernel()
    src = np.arange(count * 1000, dtype=np.uint32)
    dst = np.zeros_like(src)
    tasks = [(i * 4000, i * 4000, (1000,), (4,), (4,)) for i in range(count)]
    kernel.copy(dst, src, tasks, False, workers)  # type: ignore[attr-defined]
    assert np.array_equal(dst, src)


@pytest.mark.parametrize("text", LAYOUTS)
def test_shared_copies_from_many_callers_at_once(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    _kernel()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)  # every copy shared
    data = [_data(text, seed) for seed in range(6)]
    want = [to_physical(a, text, threads=1) for a in data]
    errors: list[str] = []

    def work(k: int) -> None:
        for _ in range(20):
            buf = to_physical(data[k], text, threads=2)
            back = from_physical(buf, text, threads=3)
            if not np.array_equal(buf, want[k]) or not np.array_equal(back, data[k]):
                errors.append(f"caller {k}")
                return

    callers = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    assert not errors


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_shares_copies_among_fresh_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = _kernel()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    text = LAYOUTS[0]
    a = _data(text, 7)
    want = to_physical(a, text, threads=1)
    s4 = LAYOUTS[3]
    nibbles = _data(s4, 7)
    packed = to_physical(nibbles, s4, threads=1)
    pools = [kernel, pack_path._pack] if pack_path._pack is not None else [kernel]
    assert np.array_equal(to_physical(a, text, threads=2), want)
    assert np.array_equal(to_physical(nibbles, s4, threads=2), packed)
    assert all(p.pool_size() >= 1 for p in pools)  # type: ignore[attr-defined]  # the parent's pools started
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if it starts threads of its own and copies right
        fresh = all(p.pool_size() == 0 for p in pools)  # type: ignore[attr-defined]
        ok = all(np.array_equal(to_physical(a, text, threads=2), want)
                 and np.array_equal(to_physical(nibbles, s4, threads=2), packed) for _ in range(5))
        started = all(p.pool_size() >= 1 for p in pools)  # type: ignore[attr-defined]
        os._exit(0 if fresh and ok and started else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
