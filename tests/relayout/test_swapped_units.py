"""One-pass relayout of a (2,1) sub-tile against a transposed one: the C kernel moves 2 x 2
blocks of 1- or 2-byte items whole, [a, b, c, d] written as [a, c, b, d] (``swap`` in
``_kernel.c``, ``units`` in ``_kernel_path``). Against the two-pass recipe and a brute-force
reference on random layouts, dtypes, ragged and odd dims, odd input buffers, cached or
streamed, 1 or N threads, with and without the kernel; and the raw entry point on
hand-made tasks (every unit width, the bounds checked a whole unit wide)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._copy as engine
from tensorlayout.errors import LayoutError
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.relayout._direct import is_direct
from tests.relayout._reference import kernel_or_skip as _kernel
from tests.relayout._reference import reference_buffer

TYPES = {"bf16": np.uint16, "u16": np.uint16, "s8": np.int8, "u8": np.uint8}
TILED = ["T(8,128)(2,1)", "T(4,128)(2,1)", "T(16,128)(2,1)", "T(8,64)(2,1)", "T(2,8)(2,1)"]


@settings(suppress_health_check=list(HealthCheck), max_examples=50, deadline=None)
@given(dtype=st.sampled_from(sorted(TYPES)), tiles=st.tuples(st.sampled_from(TILED), st.sampled_from(TILED)),
       rows=st.integers(1, 70), cols=st.integers(1, 300), threads=st.sampled_from([1, 3]),
       pad=st.integers(0, 9), flip=st.booleans())
def test_swapped_relayout_matches_thereference_buffer(engine_mode: str, dtype: str, tiles: tuple[str, str],
                                                 rows: int, cols: int, threads: int, pad: int,
                                                 flip: bool) -> None:
    order = ["{1,0:%s}", "{0,1:%s}"][::-1 if flip else 1]
    s = f"{dtype}[{rows},{cols}]" + order[0] % tiles[0]
    d = f"{dtype}[{rows},{cols}]" + order[1] % tiles[1]
    if tiles[0] == tiles[1] and min(rows, cols) >= 16:
        assert is_direct(as_target(s), as_target(d))
    data = np.random.default_rng(rows * cols).integers(0, 100, (rows, cols)).astype(TYPES[dtype])
    buf = reference_buffer(data, s, 5)
    want = reference_buffer(data, d, pad)
    got = relayout(buf, s, d, pad_value=pad, threads=threads)
    assert np.array_equal(got, want)
    assert np.array_equal(relayout(buf, s, d, pad_value=pad, threads=1), got)  # 1 vs N threads
    assert np.array_equal(from_physical(got, d), data)


@pytest.mark.parametrize("how", ["reversed", "strided", "readonly", "unaligned", "aliased-out"])
def test_swapped_relayout_odd_buffers(engine_mode: str, how: str) -> None:
    s, d = "bf16[30,260]{1,0:T(8,128)(2,1)}", "bf16[30,260]{0,1:T(8,128)(2,1)}"
    data = np.random.default_rng(2).integers(0, 1000, (30, 260)).astype(np.uint16)
    buf, want = to_physical(data, s), to_physical(data, d)
    if how == "reversed":
        arg = np.ascontiguousarray(buf[::-1])[::-1]
    elif how == "strided":
        arg = np.zeros(2 * buf.size, np.uint16)[::2]
        arg[...] = buf
    elif how == "unaligned":  # items 2-aligned, units not 8-aligned
        arg = np.zeros(buf.size + 1, np.uint16)[1:]
        arg[...] = buf
    else:
        arg = buf.copy()
        arg.setflags(write=how != "readonly")
    if how == "aliased-out":
        store = np.zeros(max(buf.size, want.size), np.uint16)
        store[:buf.size] = buf
        assert np.array_equal(relayout(store[:buf.size], s, d, out=store[:want.size]), want)
        return
    out = np.zeros(want.size + 1, np.uint16)[1:] if how == "unaligned" else None
    assert np.array_equal(relayout(arg, s, d, out=out), want)
    with pytest.raises(LayoutError,
        match=r"bf16\[30,260\]\{0,1:T\(8,128\)\(2,1\)\}: out must be a writeable"):
        relayout(arg, s, d, out=np.zeros(want.size - 1, np.uint16))


def test_swapped_relayout_large_streamed_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    # past the streaming and threading thresholds as set: gathered, streamed, split in pieces
    if not engine.kernel_available():
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    s, d = "bf16[520,640]{1,0:T(8,128)(2,1)}", "bf16[520,640]{0,1:T(8,128)(2,1)}"
    data = np.random.default_rng(4).integers(0, 60000, (520, 640)).astype(np.uint16)
    want = reference_buffer(data, d, 0)
    buf = to_physical(data, s)
    for threads in (1, 2, 4):
        assert np.array_equal(relayout(buf, s, d, threads=threads), want)



@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("na, nb", [(1, 1), (3, 5), (4, 4), (8, 8), (9, 17), (64, 64), (33, 70)])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_swapped_units(dtype: type, na: int, nb: int, stream: bool) -> None:
    kernel = _kernel()
    u = 4 * np.dtype(dtype).itemsize
    src = np.random.default_rng(na * nb).integers(0, 250, (nb, na, 4)).astype(dtype)
    dst = np.zeros((na, nb, 4), dtype)
    task = (0, 0, (na, nb), (nb * u, u), (u, na * u), True)  # transposing
    kernel.copy(dst.reshape(-1), src.reshape(-1), [task], stream)  # type: ignore[attr-defined]
    assert np.array_equal(dst, src.transpose(1, 0, 2)[..., [0, 2, 1, 3]])
    same = np.zeros((nb, na, 4), dtype)
    task = (0, 0, (nb, na), (na * u, u), (na * u, u), True)  # runs: unit by unit
    kernel.copy(same.reshape(-1), src.reshape(-1), [task], stream)  # type: ignore[attr-defined]
    assert np.array_equal(same, src[..., [0, 2, 1, 3]])
    one = np.zeros(4, dtype)
    kernel.copy(one, src.reshape(-1), [(0, 0, (), (), (), True)])  # type: ignore[attr-defined]
    assert np.array_equal(one, src[0, 0, [0, 2, 1, 3]])


def test_raw_swapped_units_are_bounds_checked_a_unit_wide() -> None:
    kernel = _kernel()
    src, dst = np.arange(16, dtype=np.uint16), np.zeros(16, np.uint16)
    kernel.copy(dst, src, [(24, 0, (), (), (), True)])  # type: ignore[attr-defined]  # the last unit
    for bad in [(26, 0, (), (), (), True), (0, 26, (), (), (), True), (0, 0, (3,), (13,), (8,), True)]:
        with pytest.raises(IndexError, match=r"copy: a task leaves the"):
            kernel.copy(dst, src, [bad])  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="1- or 2-byte"):
        kernel.copy(np.zeros(8, np.uint32), np.zeros(8, np.uint32), [(0, 0, (), (), (), True)])  # type: ignore[attr-defined]
