"""Joined columns of 4-byte words (``join4_row`` in ``_pack_bits.h``): n = 1 to 4 (and 8) codes of
E(1) or E(4) a column (a short logical minor dim under an (8,1) / (32,1) sub-tile, u1[N,4]{0,1:
T(8,128)(32,1)E(1)}), the columns' logical bytes one after the other, 16 / n columns a step in
SSE2 lanes (3 codes: 4 columns a step, a byte shuffle, where the CPU has AVX2; 8 codes of E(1):
16 columns a step by movemasks) and the rest through the stage. Raw tasks against the
slot-by-slot model with guard bytes either side of both buffers (column counts around the step,
several rows of lines, 1 and 3 threads, cached and streaming stores, a packed buffer ending
inside the last column's word when unpacking; either buffer ending at an inaccessible page),
and the public calls on such layouts against the definition."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from .test_pack import _path, round_trip
from .test_pack_kernel import GUARD, _codes, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")

COLUMNS = [1, 3, 4, 5, 15, 16, 17, 31, 33, 100, 4099]


@pytest.mark.parametrize("bits", [1, 4])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("nc", COLUMNS)
def test_word_columns_match_the_model(bits: int, n: int, nc: int) -> None:
    per = 8 // bits
    rng = np.random.default_rng(nc * 10 + n + bits)
    for rows, threads, stream in ((1, 1, False), (3, 3, True), (2, 1, True)):
        size = rows * nc * n
        lbase = rng.integers(0, 256, size + 2 * GUARD).astype(np.uint8)
        logical = lbase[GUARD:GUARD + size].reshape(rows, nc, n)
        nbytes = rows * nc * 4
        pad = int(rng.integers(0, 1 << bits))
        task = (2, 0, 0, (rows, nc, n), (nc * 4 * per, 4 * per, 1), (nc * n, n, 1))
        pbase, packed = _guarded(nbytes, 0xA5)
        packed[:] = rng.integers(0, 256, nbytes)
        want = packed.copy()
        kernel.pack(packed, logical, [task], bits, nbytes * per, pad, False, stream, threads)
        assert _model_pack(want, lbase, logical, [task], bits, pad)
        assert np.array_equal(packed, want), (rows, threads, stream)
        assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()
        for signed in (False, True):
            # unpacking from a buffer that ends at the last column's last code byte
            end = nbytes - 4 + -(-n * bits // 8)
            src = np.full(end + 2 * GUARD, 0xA5, np.uint8)
            src[GUARD:GUARD + end] = packed[:end]
            back_base = np.full(size + 2 * GUARD, 0x5A, np.uint8)
            back = back_base[GUARD:GUARD + size].reshape(rows, nc, n)
            kernel.unpack(back, src[GUARD:GUARD + end], [(0, *task[1:])], bits, end * per, signed, stream,
                          threads)
            got = back.view(np.int8) if signed else back
            assert np.array_equal(got, _codes(logical, bits, signed)), (rows, threads, stream, signed)
            assert (back_base[:GUARD] == 0x5A).all() and (back_base[GUARD + size:] == 0x5A).all()


LAYOUTS = ["u1[4099,4]{0,1:T(8,128)(32,1)E(1)}", "u1[1000,2]{0,1:T(8,128)(32,1)E(1)}",
           "u1[1001,3]{0,1:T(8,128)(32,1)E(1)}", "s4[700,3]{0,1:T(8,128)(8,1)E(4)}",
           "u1[1003,8]{0,1:T(8,128)(32,1)E(1)}",
           "u1[517,1]{0,1:T(8,128)(32,1)E(1)}", "s4[2050,4]{0,1:T(8,128)(8,1)E(4)}",
           "u4[999,2]{0,1:T(8,128)(8,1)E(4)}", "u1[7,300,4]{1,0,2:T(8,128)(32,1)E(1)}"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_word_column_layouts_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                                  threads: int) -> None:
    rng = np.random.default_rng(threads)
    for path in ("pack", "pack-stream"):
        _path(monkeypatch, path)
        round_trip(text, rng, threads)


PAGE_END = """
import ctypes, mmap, numpy as np
from tensorlayout.relayout import _pack as kernel
page = mmap.PAGESIZE
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
for bits, n, nc in [(b, n, nc) for b in (1, 4) for n in (1, 2, 3, 4, 8) for nc in (16, 17, 33, 100)]:
    per, end = 8 // bits, (nc - 1) * 4 + -(-n * bits // 8)
    mem = mmap.mmap(-1, 2 * page)
    raw = np.frombuffer(mem, np.uint8)
    base = raw.ctypes.data
    assert libc.mprotect(base + page, page, 0) == 0  # the page after the buffer: no access
    src = raw[page - end:page]
    src[:] = np.arange(end) % 251
    back = np.zeros((nc, n), np.uint8)
    task = (0, 0, 0, (nc, n), (4 * per, 1), (n, 1))
    kernel.unpack(back, src, [task], bits, end * per, False, False, 1)
    kernel.unpack(back, src, [task], bits, end * per, True, True, 1)
    logical = raw[page - nc * n:page].reshape(nc, n)  # packing from codes that end there
    logical[...] = back
    out = np.zeros(nc * 4, np.uint8)
    task = (2, 0, 0, (nc, n), (4 * per, 1), (n, 1))
    kernel.pack(out, logical, [task], bits, nc * 4 * per, 1, False, False, 1)
print("ok")
"""


def test_nothing_is_read_past_the_buffers() -> None:
    # the packed buffer (unpacking) or the codes (packing) end where an inaccessible page begins:
    # a read past them kills the child
    run = subprocess.run([sys.executable, "-c", PAGE_END], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
