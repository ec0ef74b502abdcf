"""The compiled ``_pack`` kernel called directly with random tasks: it either refuses a task (a
``ValueError``/``IndexError``/``TypeError`` before touching memory) or does exactly what a slow
Python model of the task says, and never writes (or reads) outside its two buffers, which sit
between guard bytes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

kernel = pytest.importorskip("tensorlayout.relayout._pack")

GUARD = 64
ERRORS = (ValueError, IndexError, TypeError)


def _guarded(n: int, fill: int) -> tuple[np.ndarray, np.ndarray]:
    base = np.full(n + 2 * GUARD, fill, np.uint8)
    return base, base[GUARD:GUARD + n]


def check_pack(kernel: Any, lbase: np.ndarray, logical: np.ndarray, tasks: list, nbytes: int,
               pad: int) -> None:
    """E(4) ``tasks`` packed from ``logical`` (a view of ``lbase``) into ``nbytes`` bytes between
    guards: the model's bytes, the guards kept."""
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, tasks, 4, 2 * nbytes, pad, False, False)
    assert _model_pack(want, lbase, logical, tasks, 4, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()


def _logical(base: np.ndarray, rows: int, cols: int, how: str) -> np.ndarray:
    """A view of rows*cols bytes inside ``base`` (guards either side), with other strides."""
    view = base[GUARD:GUARD + rows * cols].reshape(rows, cols)
    if how == "reversed":
        return view[::-1, ::-1]
    if how == "gapped":
        return view[:, ::2]
    return view


def _elements(task: tuple) -> list[tuple[int, int]]:
    """(slot, logical byte offset) of every element of a task, in no particular order."""
    _, slot, loff, shape, ps, ls = task
    out = [(slot, loff)]
    for n, p, q in zip(shape, ps, ls):
        out = [(s + i * p, o + i * q) for s, o in out for i in range(n)]
    return out


def _writes(task: tuple) -> list[tuple[int, int | None]]:
    """(slot, logical byte offset, or None for the pad code) of every slot a task writes: a
    kind-2 task's column groups whole (its columns' codes, then the pad code up to the next
    column's slot stride)."""
    kind, slot, _, shape, ps, ls = task
    if min(shape, default=1) <= 0:
        return []  # an empty task: nothing to move
    out: list[tuple[int, int | None]] = [(s, None if kind == 1 else o) for s, o in _elements(task)]
    if kind == 2:
        firsts = _elements((0, slot + shape[-1], 0, shape[:-1], ps[:-1], ls[:-1]))
        out += [(s + k, None) for s, _ in firsts for k in range(ps[-2] - shape[-1])]
    return out


def _model_pack(packed: np.ndarray, memory: np.ndarray, logical: np.ndarray, tasks: list, bits: int,
                pad: int) -> bool:
    """Apply the tasks to ``packed`` the slow way (``logical`` is a view of ``memory``); False
    when a slot is written twice (then the order decides, which the kernel does not promise)."""
    per, mask = 8 // bits, (1 << bits) - 1
    origin = logical.__array_interface__["data"][0] - memory.__array_interface__["data"][0]
    seen: set[int] = set()
    for task in tasks:
        for slot, off in _writes(task):
            if slot in seen:
                return False
            seen.add(slot)
            value = pad & mask if off is None else int(memory[origin + off]) & mask
            shift = (slot % per) * bits
            packed[slot // per] = (int(packed[slot // per]) & ~(mask << shift) & 0xFF) | (value << shift)
    return True


axes_st = st.lists(st.tuples(st.integers(0, 9), st.integers(-3, 40), st.integers(-30, 30)), max_size=3)
tasks_st = st.lists(st.tuples(st.integers(0, 2), st.integers(-4, 300), st.integers(-40, 300), axes_st),
                    max_size=4)


def _codes(logical: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """The ``bits``-bit codes of ``logical`` as unpack writes them back: the low bits, sign
    extended when ``signed``, as int8 or uint8."""
    low = logical.astype(np.int64) & ((1 << bits) - 1)
    if signed:
        low -= (low >> (bits - 1)) << bits
    return low.astype(np.int8 if signed else np.uint8)


def _as_tasks(raw: list) -> list:
    return [(kind, slot, loff, *(tuple(a[k] for a in axes) for k in range(3)))
            for kind, slot, loff, axes in raw]


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), nbytes=st.integers(0, 80), extra=st.integers(-8, 8),
       rows=st.integers(1, 9), cols=st.integers(1, 24), how=st.sampled_from(["plain", "reversed", "gapped"]),
       raw=tasks_st, pad=st.integers(0, 15), serial=st.booleans(), stream=st.booleans())
def test_pack_stays_inside_and_matches_the_model(bits: int, nbytes: int, extra: int, rows: int, cols: int,
                                                  how: str, raw: list, pad: int, serial: bool,
                                                  stream: bool) -> None:
    pbase, packed = _guarded(nbytes, 0xA5)
    lbase = np.random.default_rng(nbytes).integers(0, 256, rows * cols + 2 * GUARD).astype(np.uint8)
    lbase_before = lbase.copy()
    logical = _logical(lbase, rows, cols, how)
    nslots = max(0, nbytes * (8 // bits) + extra)
    tasks = _as_tasks(raw)
    want = packed.copy()
    try:
        kernel.pack(packed, logical, tasks, bits, nslots, pad, serial, stream)
    except ERRORS:
        event("refused")
        assert np.array_equal(packed, want)  # refused before touching anything
    else:
        checked = _model_pack(want, lbase, logical, tasks, bits, pad)
        event("ran, compared with the model" if checked else "ran, a slot written twice")
        if checked:
            assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    assert np.array_equal(lbase, lbase_before)  # pack never writes the logical side


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), nbytes=st.integers(0, 80), extra=st.integers(-8, 8),
       rows=st.integers(1, 9), cols=st.integers(1, 24), how=st.sampled_from(["plain", "reversed", "gapped"]),
       raw=tasks_st, signed=st.booleans())
def test_unpack_stays_inside(bits: int, nbytes: int, extra: int, rows: int, cols: int, how: str, raw: list,
                             signed: bool) -> None:
    packed = np.random.default_rng(nbytes).integers(0, 256, nbytes + 2 * GUARD).astype(np.uint8)
    packed_before = packed.copy()
    lbase, _ = _guarded(rows * cols, 0x5A)
    logical = _logical(lbase, rows, cols, how)
    nslots = max(0, nbytes * (8 // bits) + extra)
    tasks = [(False, *t[1:]) for t in _as_tasks(raw)]
    try:
        kernel.unpack(logical, packed[GUARD:GUARD + nbytes], tasks, bits, nslots, signed)
    except ERRORS:
        event("refused")
        assert (lbase == 0x5A).all()
    else:
        event("ran")
    # the guards are untouched (the kernel checks the view's memory extent, which for a gapped
    # view includes its gaps: the caller's tasks address elements only)
    assert (lbase[:GUARD] == 0x5A).all() and (lbase[GUARD + rows * cols:] == 0x5A).all()
    assert np.array_equal(packed, packed_before)


def test_refusals_name_the_problem() -> None:
    packed = np.zeros(8, np.uint8)
    logical = np.zeros((2, 8), np.uint8)
    task = (False, 0, 0, (2, 8), (8, 1), (8, 1))
    kernel.pack(packed, logical, [task], 4, 16, 0)
    with pytest.raises(IndexError, match="packed buffer"):
        kernel.pack(packed, logical, [task], 4, 17, 0)  # more slots than the buffer holds
    with pytest.raises(IndexError, match="packed buffer"):
        kernel.pack(packed, logical, [(False, 2, 0, (2, 8), (8, 1), (8, 1))], 4, 16, 0)
    with pytest.raises(IndexError, match="logical array"):
        kernel.pack(packed, logical, [(False, 0, 1, (2, 8), (8, 1), (8, 1))], 4, 16, 0)
    with pytest.raises(ValueError, match="serial"):
        kernel.pack(packed, logical, [(False, 0, 0, (2, 7), (8, 1), (8, 1))], 4, 16, 0)
    with pytest.raises(ValueError, match="bits"):
        kernel.pack(packed, logical, [task], 3, 16, 0)
    with pytest.raises(ValueError, match="single bytes"):
        kernel.pack(packed, np.zeros((2, 8), np.int16), [task], 4, 16, 0)
    with pytest.raises(ValueError, match="kinds 1"):
        kernel.unpack(logical, packed, [(True, 0, 0, (2, 8), (8, 1), (8, 1))], 4, 16, False)
    with pytest.raises((ValueError, BufferError), match=r"buffer source array is read-only"):
        kernel.unpack(_readonly(logical), packed, [task], 4, 16, False)


def _readonly(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.setflags(write=False)
    return a


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), q=st.sampled_from([1, 2, 3, 4, 8]),
       gap=st.sampled_from([0, 1, 2, 3, 4, 6, 12]), nc=st.integers(1, 40), n0=st.integers(1, 3),
       shift=st.integers(-2, 2), signed=st.booleans(), how=st.sampled_from(["plain", "reversed"]),
       seed=st.integers(0, 99), kind=st.sampled_from([0, 2]), pad=st.integers(0, 15), stream=st.booleans())
def test_tile_like_tasks_match_the_model(bits: int, q: int, gap: int, nc: int, n0: int, shift: int,
                                         signed: bool, how: str, seed: int, kind: int, pad: int,
                                         stream: bool) -> None:
    # the shapes of real TPU tiles: rows woven into bytes, 16-column blocks and their tails;
    # of kind 2, the gaps between columns written too (the last block's and tail's included)
    per = 8 // bits
    rows, P = n0 * q * per, q + gap
    lbase = np.random.default_rng(seed).integers(0, 256, rows * nc + 2 * GUARD).astype(np.uint8)
    logical = _logical(lbase, rows, nc, how)
    row, col = logical.strides
    nbytes = n0 * nc * P + 2
    slot0 = per + shift  # off the byte grid when shift is odd for per > 1
    task = (kind, slot0, 0, (n0, nc, q * per), (nc * P * per, P * per, 1), (q * per * row, col, row))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    try:
        kernel.pack(packed, logical, [task], bits, nbytes * per, pad, True, stream)
    except ERRORS:
        event("refused")
        assert np.array_equal(packed, want)
        return
    event(("columns" if col == 1 and shift % per == 0 else "other") + f", kind {kind}")
    assert _model_pack(want, lbase, logical, [task], bits, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
    back = _logical(np.full_like(lbase, 0x5A), rows, nc, how)  # the same strides
    kernel.unpack(back, packed, [(0, *task[1:])], bits, nbytes * per, signed)
    assert np.array_equal(back.view(np.int8) if signed else back, _codes(logical, bits, signed))
