"""Partial (4,1) quads of bytes (``_kernel_bytes_runs.h``, ``_kernel_bytes.h``): runs of m bytes
into and out of groups of G > m (group_runs: a sub-tile over a dim of 2 or 3 rows), and the
last 1 to 3 rows of a ragged sub-tile transposed against the other side's rows (quads_to with
masked stores, quads_from_part; ``_bytes_path.quad_part_views`` orders their boxes). Hand-made
tasks through the raw entry point at the least counts and past whole rounds, odd offsets and
strides, every byte of the destination and its guards (the groups' other bytes must stay as
they were) against numpy's strided assignment; the source between pages it may not touch;
layouts through the public calls on one thread and several. Where the CPU has the AVX-512
forms they are on, and the same checks run again in a child with ``TENSORLAYOUT_NO_AVX512``
set (the AVX2 loops)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tensorlayout.relayout._kernel_path as kp
from tensorlayout.relayout import as_target, to_physical
from tests.relayout._reference import (
    PageTask,
    check_layout,
    check_page_edges,
    check_raw_task,
    extent,
    kernel_or_skip,
    rerun_without_avx512,
)

LAYOUTS = ["s8[171,621,3]{1,2,0:T(4,128)(4,1)}", "u8[33,300,2]{1,2,0:T(4,128)(4,1)}",
           "pred[7,130,3]{1,2,0:T(8,128)(4,1)}", "f8e5m2[69,5,83,9]{0,1,3,2:T(8,128)(4,1)}",
           "u8[40,6,30,20]{0,1,3,2:T(8,128)(4,1)}", "pred[3,125,23,56]{1,2,3,0:T(8,128)(4,1)}",
           "s8[130,33,17]{1,0,2:T(4,128)(4,1)}",
           "u8[19,47,22]{0,1,2:T(8,128)(4,1)}", "pred[50,9,40]{0,1,2:T(8,128)(4,1)}"]


def _cpu_flags() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


@pytest.mark.parametrize("m", [1, 2, 3, 5])
@pytest.mark.parametrize("group", [4, 8, 32])
@pytest.mark.parametrize("n", [2, 3, 15, 16, 17, 100])
@pytest.mark.parametrize("into", [True, False])
def test_raw_runs_into_and_out_of_groups(m: int, group: int, n: int, into: bool) -> None:
    if m >= group:
        pytest.skip("runs as long as their groups are whole")
    kernel = kernel_or_skip()
    rng = np.random.default_rng(m * 1000 + group * 10 + n + into)
    ds, ss = ((group, 1), (m, 1)) if into else ((m, 1), (group, 1))
    shape = (n, m)
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + int(rng.integers(0, 2)) * 64).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xAB)


@pytest.mark.parametrize("nb", [1, 2, 3])
@pytest.mark.parametrize("ng", [8, 9, 70, 130])
@pytest.mark.parametrize("na", [15, 16, 17, 65, 106])
def test_raw_partial_quads_into_rows(nb: int, ng: int, na: int) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(nb * 100000 + ng * 256 + na)
    sb = na + int(rng.integers(0, 5))  # the source rows (g, b) of na bytes
    sg = nb * sb + int(rng.integers(0, 11))
    da = ng * 4 + int(rng.integers(0, 9))  # the destination rows a of ng quads
    shape, ds, ss = (ng, na, nb), (4, da, 1), (sg, 1, sb if nb > 1 else 0)
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss)).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xAB)


@pytest.mark.parametrize("nb", [1, 2, 3])
@pytest.mark.parametrize("ng", [8, 9, 10, 70, 130])
@pytest.mark.parametrize("na", [15, 16, 17, 65, 106])
@pytest.mark.parametrize("tight", [True, False])
def test_raw_partial_quads_out_of_rows(nb: int, ng: int, na: int, tight: bool) -> None:
    kernel = kernel_or_skip()
    rng = np.random.default_rng(nb * 100000 + ng * 256 + na * 2 + tight)
    sa = ng * 4 + int(rng.integers(0, 9))  # the source rows a of ng quads
    db = na + int(rng.integers(0, 5))
    dg = nb * db + int(rng.integers(0, 11))
    shape, ds, ss = (ng, nb, na), (dg, db if nb > 1 else 0, 1), (4, 1, sa)
    d_off, s_off = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    src = rng.integers(0, 256, s_off + extent(shape, ss) + (0 if tight else 64)).astype(np.uint8)
    check_raw_task(kernel, src, shape, ds, ss, d_off, s_off, False, 0xAB)


def test_partial_quads_read_only_their_bytes() -> None:
    kernel_or_skip()
    tasks: list[PageTask] = []
    for nb in (1, 2, 3):
        tasks.append(((9, nb, 17), (60, 17, 1), (4, 1, 37), 0, 3))  # from: rows out of quads
        tasks.append(((9, 17, nb), (4, 37, 1), (nb * 17 + 1, 1, 17), 5, 0))  # to: rows into quads
    for m, group in ((3, 4), (2, 4), (1, 4), (5, 8)):
        tasks.append(((37, m), (group, 1), (m, 1), 3, 0))
        tasks.append(((37, m), (m, 1), (group, 1), 0, 1))
    check_page_edges(tasks)


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_partial_quads_through_the_public_calls(text: str, threads: int) -> None:
    kernel_or_skip()
    check_layout(text, threads, guarded=True)


def test_the_layouts_take_the_partial_paths() -> None:
    """Each layout above has a box the new paths order (so the calls above run them)."""
    kernel_or_skip()
    seen: list[list] = []
    orig = kp.pair_tasks

    def spy(*args: object, **kw: object) -> list:
        got = orig(*args, **kw)  # type: ignore[arg-type]
        seen.append(got)
        return got

    memo = kp.KERNEL_TASKS
    kp.pair_tasks = spy
    try:
        for text in LAYOUTS:
            seen.clear()
            kp.KERNEL_TASKS = type(memo)()  # (fresh: the calls make their tasks again)
            dtype = np.bool_ if text.startswith("pred") else np.uint8
            to_physical(np.zeros(as_target(text).logical_shape, dtype), text, threads=1)
            tasks = [t for got in seen for t in got]
            runs = any((len(t[2]) >= 2 and t[2][-1] < 4 and t[3][-2] == 4 and t[4][-2] == t[2][-1])
                       or (t[6] == 2 and t[3][-1] == 4 and t[4][-1] == 2) for t in tasks)  # (pairs as items)
            part = any(len(t[2]) >= 3 and t[2][-1] < 4 and t[3][-3] == 4 and t[3][-1] == 1 for t in tasks)
            assert runs or part, text
    finally:
        kp.pair_tasks = orig
        kp.KERNEL_TASKS = memo


def test_the_forms_are_on_where_the_cpu_has_them() -> None:
    kernel = kernel_or_skip()
    flags = _cpu_flags()
    if os.environ.get("TENSORLAYOUT_NO_AVX512"):
        assert kernel.BYTE_RUNS_VBMI == 0 and kernel.QUADS_AVX512 == 0
    elif " avx512vbmi " not in flags or " avx512bw " not in flags:
        pytest.skip("no AVX-512 VBMI on this CPU")
    else:
        assert kernel.BYTE_RUNS_VBMI == 1 and kernel.QUADS_AVX512 == 1


def test_the_avx2_loops_match_the_reference_too() -> None:
    kernel_or_skip()
    rerun_without_avx512(__file__)
