"""Pad tasks of many short whole-byte lines (``pad_rows`` in ``_pack_loops.h``): a sub-tile's
unused rows (u4[4,164,1123,5]{1,0,3,2:T(8,128)(8,1)E(4)}: 4 of every 8 slots) written in one loop
of fixed-size stores. Raw kernel calls with guard bytes around every line (each line's bytes, and
only those, get the pad byte), and layouts whose sub-tile rows are a minor dim shorter than the
sub-tile, through ``to_physical`` against the definition into random bytes, threads 1 and more."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .test_pack import check_against_numpy

_pack = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=150, deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), q=st.integers(1, 12), gap=st.integers(0, 9), rows=st.integers(1, 40),
       outer=st.integers(1, 3), first=st.integers(0, 5), pad=st.integers(0, 15))
def test_pad_lines_write_their_bytes_and_no_other(bits: int, q: int, gap: int, rows: int, outer: int,
                                                  first: int, pad: int) -> None:
    per, pad = 8 // bits, pad & ((1 << bits) - 1)
    pb = q + gap  # bytes from one line to the next
    block = rows * pb + 3  # bytes from one block of rows to the next
    n = first + outer * block + 4
    buf = np.full(n, 0xA5, np.uint8)
    task = (1, first * per, 0, (outer, rows, q * per), (block * per, pb * per, 1), (0, 0, 0))
    _pack.pack(buf, None, [task], bits, n * per, pad, False, False)
    want = np.full(n, 0xA5, np.uint8)
    byte = sum(pad << (k * bits) for k in range(per))
    for o in range(outer):
        for r in range(rows):
            at = first + o * block + r * pb
            want[at:at + q] = byte
    assert np.array_equal(buf, want)


@pytest.mark.parametrize("text", ["u4[4,164,112,5]{1,0,3,2:T(8,128)(8,1)E(4)}",
                                  "s4[3,40,17,6]{1,0,3,2:T(8,128)(8,1)E(4)}",
                                  "u4[2,300,9]{1,0,2:T(8,128)(8,1)E(4)}",
                                  "u1[20,37,33]{2,0,1:T(8,128)(32,1)E(1)}"])
@pytest.mark.parametrize("threads", [1, 3])
def test_short_sub_tile_rows_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                                  threads: int) -> None:
    check_against_numpy(monkeypatch, text, threads)
