"""The native code's contract (issue 31): every task is bounded without overflow by the one
reader both kernels share (``_task.h``); the engine's switches reach C as one settings struct
and C reads no module's globals; the weave rule is decided in C only; each header stands on
its own, so no order of inclusion is a hidden rule."""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.relayout import from_physical, to_physical
from tests.relayout._reference import reference_buffer

NATIVE = Path(engine.__file__).parent
BIG = 2**63 - 2  # near PY_SSIZE_T_MAX: a bounds check that adds to it overflows


def _kernel() -> object:
    if engine._BUILT is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    return engine._BUILT


def _pack() -> object:
    if pack_path._pack is None:
        pytest.skip("the C packing kernel was not built")
    return pack_path._pack


@pytest.mark.parametrize("task", [
    (BIG, 0, (1,), (1,), (1,)),  # the destination offset
    (0, BIG, (1,), (1,), (1,)),  # the source offset
    (-BIG, 0, (1,), (1,), (1,)),
    (0, 0, (2,), (BIG,), (1,)),  # a stride
    (0, 0, (BIG, 2), (1, BIG), (1, 1)),  # a product
    (BIG, BIG, (1,), (1,), (1,), False, 8),  # a wide item
])
def test_a_task_far_outside_the_arrays_raises(task: tuple) -> None:
    k = _kernel()
    dst, src = np.zeros(64, np.uint8), np.arange(64, dtype=np.uint8)
    with pytest.raises((IndexError, ValueError), match=r"copy: a task leaves|copy: a task's"):
        k.copy(dst, src, [task])  # type: ignore[attr-defined]
    assert not dst.any()


def test_a_task_offset_of_2_63_minus_2_raises_in_both_kernels() -> None:
    k, p = _kernel(), _pack()
    dst, src = np.zeros(16, np.uint8), np.ones(16, np.uint8)
    with pytest.raises(IndexError, match="copy: a task leaves the destination array"):
        k.copy(dst, src, [(BIG, 0, (1,), (1,), (1,))])  # type: ignore[attr-defined]
    with pytest.raises(IndexError, match="pack: a task leaves the logical array"):
        p.pack(dst, src, [(0, 0, BIG, (1,), (1,), (1,))], 4, 32, 0, True)  # type: ignore[attr-defined]
    assert not dst.any()


def test_an_empty_array_holds_no_task() -> None:
    k = _kernel()
    with pytest.raises(IndexError, match="copy: a task leaves the destination array"):
        k.copy(np.zeros((0, 8), np.uint8), np.ones(8, np.uint8), [(0, 0, (1,), (1,), (1,))])  # type: ignore[attr-defined]
    with pytest.raises(IndexError, match="copy: a task leaves the source array"):
        k.copy(np.zeros(8, np.uint8), np.ones((8, 0), np.uint8), [(0, 0, (1,), (1,), (1,))])  # type: ignore[attr-defined]


def test_tasks_at_the_edges_still_copy() -> None:
    k = _kernel()
    dst, src = np.zeros(64, np.uint8), np.arange(64, dtype=np.uint8)
    k.copy(dst, src, [(63, 0, (1,), (1,), (1,)), (0, 48, (2, 8), (8, 1), (8, 1))])  # type: ignore[attr-defined]
    assert dst[63] == 0 and dst[:16].tolist() == list(range(48, 64))
    back = np.zeros(64, np.uint8)
    k.copy(back, src[::-1], [(0, 0, (64,), (1,), (-1,))])  # type: ignore[attr-defined]
    assert (back == src[::-1]).all()  # from its first element (63) down


def test_the_kernel_gets_the_engine_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    k = _kernel()

    def seen() -> engine.Settings:
        use, thread_min, stream_min, one_small, allocate, ndarray = k.settings()  # type: ignore[attr-defined]
        assert allocate is engine.allocate and ndarray is np.ndarray
        return engine.Settings(use, thread_min, stream_min, one_small)

    want = engine.Settings(True, engine.THREAD_MIN_BYTES, engine.STREAM_MIN_BYTES,
                           engine.ONE_THREAD_SMALL_BYTES)
    assert seen() == engine.settings() == want
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 123)
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1 << 70)  # past a long long: never
    monkeypatch.setattr(engine, "ONE_THREAD_SMALL_BYTES", 456)
    assert seen() == engine.Settings(True, 123, 2**63 - 1, 456)
    monkeypatch.setattr(engine, "USE_KERNEL", False)
    assert not seen().use_kernel
    monkeypatch.setattr(engine, "USE_KERNEL", True)
    monkeypatch.setattr(engine, "_kernel", None)
    assert not seen().use_kernel
    monkeypatch.undo()
    assert seen() == engine.settings() and seen().use_kernel


def test_no_module_reads_another_modules_globals_from_c() -> None:
    lookups = re.compile(r"PyDict_GetItem|PyModule_GetDict|PyEval_GetGlobals|PyImport_|"
                         r"PyObject_GetAttrString\s*\(\s*module|globals")
    for path in sorted(NATIVE.parent.rglob("*.[ch]")):
        code = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)  # comments may say the word
        assert not lookups.search(code), f"{path.name} looks up Python state by name"
    assert not hasattr(_kernel(), "setup_small")


def _rule(item: int, m: int, ds_k: int, ss_k: int, ds_b: int, ss_b: int) -> int:
    """The weave rule from its definition: b (m items) contiguous in dst, k in src and M = 2,
    4 or 8 items apart in dst, m = M or a partial group 2 <= m < M (M); the same with src and
    dst swapped (-M); the smallest such M."""
    for group in (2, 4, 8):
        if not 2 <= m <= group:
            continue
        if (ds_b, ss_k, ds_k) == (item, item, group * item):
            return group
        if (ss_b, ds_k, ss_k) == (item, item, group * item):
            return -group
    return 0


def test_the_weave_rule_is_the_kernels() -> None:
    k = _kernel()
    rng = np.random.default_rng(31)
    for _ in range(3000):
        n, item = int(rng.integers(1, 5)), int(rng.choice([1, 2, 4, 8]))
        shape = tuple(int(x) for x in rng.choice([1, 2, 3, 4, 8, 16], n))
        ds = tuple(int(x) * item for x in rng.choice([1, 2, 4, 8, 16, -1], n))
        ss = tuple(int(x) * item for x in rng.choice([1, 2, 4, 8, 16, -1], n))
        want = next(((a, b) for a in range(n) for b in range(n)
                     if a != b and _rule(item, shape[b], ds[a], ss[a], ds[b], ss[b])), None)
        assert k.weave_axes(shape, ds, ss, item) == want  # type: ignore[attr-defined]
    path = (NATIVE / "_kernel_path.py").read_text()
    assert "weave_axes" in path  # Python asks the kernel; it does not decide


HEADERS = sorted(p.name for p in NATIVE.glob("*.h"))


@pytest.mark.parametrize("header", HEADERS)
def test_each_header_stands_on_its_own(header: str, tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    unit = tmp_path / "unit.c"
    others = [h for h in reversed(HEADERS) if h != header]  # then all of them, in another order
    unit.write_text(f'#include "{header}"\n' + "".join(f'#include "{h}"\n' for h in others))
    flags = ["-fsyntax-only", "-std=c11", f"-I{NATIVE}", f"-I{sysconfig.get_paths()['include']}"]
    done = subprocess.run([cc, *flags, str(unit)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("threads", [None, 0, 1, 2, 10**30])  # (a cap past a C long: many threads)
def test_one_thread_calls_past_the_sharing_threshold_stay_small(monkeypatch: pytest.MonkeyPatch,
                                                                 threads: int | None) -> None:
    # between THREAD_MIN_BYTES and ONE_THREAD_SMALL_BYTES a call on one thread is one kernel call
    # (the remembered one in C too), others share: every form comes out right, first and remembered
    _kernel()
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1 << 12)
    monkeypatch.setattr(engine, "ONE_THREAD_SMALL_BYTES", 1 << 20)
    text = "f32[100,260]{0,1:T(8,128)}"
    data = np.random.default_rng(3).integers(0, 1 << 20, (100, 260)).astype(np.float32)
    want = reference_buffer(data, text, 0)
    out, back = np.empty_like(want), np.empty_like(data)
    for _ in range(3):
        assert np.array_equal(to_physical(data, text, out=out, threads=threads), want)
        assert np.array_equal(from_physical(want, text, out=back, threads=threads), data)
