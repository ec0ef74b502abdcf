"""Short contiguous lines (``short_rows`` in ``_pack_short.h``): n codes a line, n a multiple of 8
and at most 8 packed bytes (E(1) 8..64, E(2) 8..32, E(4) 8, 16), the rows of lines not continuing
them, the axis outside the rows in the same call; a kind-2 task's gap bytes after each line.
Raw tasks against the slot-by-slot model with guard bytes either side of both buffers (rows far
apart and side by side, blocks in either order, kinds 0 and 2, 1 and 3 threads, cached and
streaming stores; either buffer ending at an inaccessible page), and public calls on layouts
whose plans read the lines on (``_lines_on`` in ``_pack_path.py``) against the definition."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tensorlayout.relayout import _pack_path, as_target

from .test_pack import _path, round_trip
from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")

LINES = [(1, n) for n in (8, 16, 24, 32, 40, 56, 64)] + [(2, 8), (2, 16), (2, 32), (4, 8), (4, 16)]


def _check(bits: int, task: tuple, lsize: int, nbytes: int, seed: int) -> None:
    """Pack the task from random codes into a random buffer (1 and 3 threads, cached and
    streaming) against the model, then unpack it (kind 0) against the codes."""
    rng = np.random.default_rng(seed)
    per = 8 // bits
    lbase = rng.integers(0, 256, lsize + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + lsize]
    for threads, stream in ((1, False), (3, True)):
        pad = int(rng.integers(0, 1 << bits))
        pbase, packed = _guarded(nbytes, 0xA5)
        packed[:] = rng.integers(0, 256, nbytes)
        want = packed.copy()
        kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False, stream, threads)
        assert _model_pack(want, lbase, logical, [task], bits, pad)
        assert np.array_equal(packed, want), (task, threads, stream)
        assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
        for signed in (False, True):
            back_base = np.full(lsize + 2 * GUARD, 0x5A, np.uint8)
            back = back_base[GUARD:GUARD + lsize]
            back_want = back.copy()
            kernel.unpack(back, packed, [(0, *task[1:])], bits, nbytes * per, signed, stream, threads)
            _, slot, loff, shape, ps, ls = task
            for index in np.ndindex(*shape):
                s = slot + sum(i * p for i, p in zip(index, ps))
                o = loff + sum(i * q for i, q in zip(index, ls))
                code = (int(packed[s // per]) >> (s % per * bits)) & ((1 << bits) - 1)
                back_want[o] = _codes(np.array([code]), bits, signed).view(np.uint8)[0]
            assert np.array_equal(back, back_want), (task, threads, stream, signed)
            assert (back_base[:GUARD] == 0x5A).all() and (back_base[GUARD + lsize:] == 0x5A).all()


@pytest.mark.parametrize(("bits", "n"), LINES)
@pytest.mark.parametrize("kind", [0, 2])
@pytest.mark.parametrize("rows", [2, 7, 17])
def test_rows_of_far_lines_match_the_model(bits: int, n: int, kind: int, rows: int) -> None:
    per = 8 // bits
    # (gaps of 80 bytes: one-word lines too far apart for the words path, WORDS_MAX_P)
    for extra, blocks, gap in ((8, 3, 0), (40, 1, 8 * per), (n, 2, 24 * per), (8, 2, 80 * per)):
        width = n + extra  # the rows' logical stride: never the line (the lines are not continued)
        group = n + (gap or 8 * per * (kind == 2))  # (slots between the lines; kind 2 owns them)
        task = (kind, 0, 0, (blocks, rows, n), (rows * group, group, 1), (rows * width, width, 1))
        _check(bits, task, blocks * rows * width, blocks * rows * group // per, rows * n + extra)


@pytest.mark.parametrize(("bits", "n"), LINES)
@pytest.mark.parametrize("kind", [0, 2])
def test_lines_read_on_match_the_model(bits: int, n: int, kind: int) -> None:
    # the order _lines_on plans: rows of lines (rows lines of the logical array apart), each row's
    # next line (the run continued) in the axis outside the rows, each a block of columns apart
    per = 8 // bits
    rows, parts, tiles = 19, 3, 2
    group = n + (8 * per if kind == 2 else 0)
    width = parts * n + 5  # a logical row: the parts of its line, then 5 bytes no task reads
    shape = (tiles, parts, rows, n)
    ps = (parts * rows * group, rows * group, group, 1)
    ls = (rows * width, n, width, 1)
    task = (kind, 0, 0, shape, ps, ls)
    _check(bits, task, tiles * rows * width, tiles * parts * rows * group // per, n + kind)


LAYOUTS = ["u1[300,100]{0,1:T(64,128)(32,1)E(1)}", "u1[129,65]{0,1:T(64,128)(32,1)E(1)}",
           "u1[64,2000]{0,1:T(64,128)(32,1)E(1)}", "u1[3,130,70]{0,2,1:T(64,128)(32,1)E(1)}",
           "u1[130,40]{0,1:T(64,128)(32,1)E(1)}", "s4[100,33]{0,1:T(16,128)(16,1)E(4)}",
           "u2[100,64]{0,1:T(32,128)(32,1)E(2)}", "u1[257,130]{0,1:T(64,128)(32,1)E(1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_short_line_layouts_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                                 threads: int) -> None:
    rng = np.random.default_rng(threads + len(text))
    for path in ("pack", "pack-stream"):
        _path(monkeypatch, path)
        round_trip(text, rng, threads)


def test_the_plan_reads_half_lines_on() -> None:
    # a u1 (32,1) sub-tile of a 64-row tile: 32-code lines, half a cache line; the tile's second
    # half and the next tiles' columns continue each row's run outside the rows
    t = as_target("u1[4096,8192]{0,1:T(64,128)(32,1)E(1)}")
    whole, rest, fill = _pack_path._make_tasks(t, (8192, 1), True, 1)
    assert (rest, fill) == ([], False)
    assert whole == [(0, 0, 0, (32, 128, 2, 128, 32), (8192, 262144, 4096, 32, 1),
                      (1048576, 64, 32, 8192, 1))]
    # whole lines (64 codes) and longer runs (a 32-row tile's next tiles) keep the stage
    assert _pack_path._lines_on([(64, 524288, 128), (32, 16384, 1048576), (2, 8192, 64), (128, 64, 8192),
                                 (64, 1, 1)], 8)[-2:] == [(128, 64, 8192), (64, 1, 1)]
    assert _pack_path._lines_on([(32, 4096, 1048576), (128, 131072, 32), (128, 32, 8192), (32, 1, 1)],
                                8) == [(32, 4096, 1048576), (128, 131072, 32), (128, 32, 8192), (32, 1, 1)]


PAGE_END = """
import ctypes, mmap, numpy as np
from tensorlayout.relayout import _pack as kernel
page = mmap.PAGESIZE
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
mem = mmap.mmap(-1, 2 * page)
raw = np.frombuffer(mem, np.uint8)
assert libc.mprotect(raw.ctypes.data + page, page, 0) == 0  # the page after: no access
for bits, n in [(1, 16), (1, 32), (1, 64), (2, 32), (4, 16)]:
    per, rows, width = 8 // bits, 9, n + 8
    q, lsize = n // per, (rows - 1) * width + n  # the last row's line ends the logical array
    logical = raw[page - lsize:page]
    logical[:] = np.arange(lsize) % 251
    out = np.zeros(rows * q, np.uint8)
    task = (0, 0, 0, (rows, n), (n, 1), (width, 1))
    kernel.pack(out, logical, [task], bits, rows * n, 0, False, False, 1)
    logical = logical.copy()
    src = raw[page - rows * q:page]  # the packed buffer ends there (over the codes)
    src[:] = out
    back = np.zeros(lsize, np.uint8)
    kernel.unpack(back, src, [task], bits, rows * n, False, False, 1)
    assert all((back[r * width:r * width + n] == logical[r * width:r * width + n] % (1 << bits)).all()
               for r in range(rows))
print("ok")
"""


def test_nothing_is_read_past_the_buffers() -> None:
    # the codes (packing) or the packed buffer (unpacking) end where an inaccessible page begins:
    # a read past them kills the child
    run = subprocess.run([sys.executable, "-c", PAGE_END], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
