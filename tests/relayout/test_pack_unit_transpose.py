"""The packing kernel's unit rows in 16 x 16 register transposes (``unit_rows16`` in
``_pack_words.h``): E(4) kind-2 tasks of one code a 4-byte column group (a ragged sub-tile's one
row) whose rows of lines continue each column's logical run go 16 columns x 16 rows a block, the
rest of the rows and the last ``nc % 16`` columns word by word as before. Direct tasks (ragged
row and column counts, rows of lines further apart than the columns span, odd offsets) against
the slow model of ``test_pack_kernel`` with guards either side; and layouts whose first dim
leaves one row in its last sub-tile against the definition and the numpy path, threads 1 and
default."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout.relayout import as_target

from .test_pack import check_against_numpy
from .test_pack_kernel import GUARD, _guarded, _model_pack

kernel = pytest.importorskip("tensorlayout.relayout._pack")


@settings(max_examples=200, suppress_health_check=list(HealthCheck), deadline=None)
@given(nr=st.integers(1, 70), nc=st.integers(4, 50), longer=st.integers(0, 20),
       spread=st.sampled_from([0, 4, 36]), offset=st.integers(0, 9), loff=st.integers(0, 7),
       seed=st.integers(0, 99), pad=st.integers(0, 15))
def test_unit_rows_match_the_model(nr: int, nc: int, longer: int, spread: int, offset: int, loff: int,
                                   seed: int, pad: int) -> None:
    # nr rows of lines pb bytes apart, each nc columns of one code in a 4-byte group (kind 2);
    # column k's codes are nr logically contiguous bytes, L = nr + longer apart
    L = nr + longer
    pb = 4 * nc + spread
    size = loff + nc * L
    lbase = np.random.default_rng(seed).integers(0, 256, size + 2 * GUARD).astype(np.uint8)
    logical = lbase[GUARD:GUARD + size]
    nbytes = offset + nr * pb
    task = (2, 2 * offset, loff, (nr, nc, 1), (2 * pb, 8, 1), (1, L, 1))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    kernel.pack(packed, logical, [task], 4, 2 * nbytes, pad, False, False)
    assert _model_pack(want, lbase, logical, [task], 4, pad)
    assert np.array_equal(packed, want)
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()


@settings(max_examples=200, suppress_health_check=list(HealthCheck), deadline=None)
@given(nr=st.integers(1, 70), nc=st.integers(4, 50), longer=st.integers(0, 20),
       spread=st.sampled_from([0, 4, 36]), offset=st.integers(0, 9), loff=st.integers(0, 7),
       seed=st.integers(0, 99), signed=st.booleans())
def test_unit_rows_unpack_every_code(nr: int, nc: int, longer: int, spread: int, offset: int, loff: int,
                                     seed: int, signed: bool) -> None:
    # the same tasks of kind 0 the other way: each column's nr codes into its logical run, the
    # bytes around them (a gap of `longer` between runs) kept
    L = nr + longer
    pb = 4 * nc + spread
    nbytes = offset + nr * pb
    packed = np.random.default_rng(seed).integers(0, 256, nbytes).astype(np.uint8)
    size = loff + nc * L
    lbase = np.full(size + 2 * GUARD, 0x5A, np.uint8)
    logical = lbase[GUARD:GUARD + size]
    task = (0, 2 * offset, loff, (nr, nc, 1), (2 * pb, 8, 1), (1, L, 1))
    kernel.unpack(logical, packed, [task], 4, 2 * nbytes, signed)
    want = np.full(size, 0x5A, np.uint8)
    first = packed[offset:].reshape(-1)[:nr * pb].reshape(nr, pb)[:, :4 * nc:4].T & 0x0F  # [column][row]
    if signed:
        first = (first ^ 8) - 8
    want[loff:].reshape(-1)[:nc * L].reshape(nc, L)[:, :nr] = first.astype(np.uint8)
    assert np.array_equal(logical, want)
    assert (lbase[:GUARD] == 0x5A).all() and (lbase[GUARD + size:] == 0x5A).all()


TEXTS = ["u4[9,40,37]{1,0,2:T(8,128)(8,1)E(4)}", "s4[17,33,50]{1,0,2:T(8,128)(8,1)E(4)}",
         "u4[25,5,19,47]{2,0,3,1:T(8,128)(8,1)E(4)}", "s4[41,150,16]{1,0,2:T(8,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, None])
def test_one_row_sub_tiles_match_the_definition_and_numpy(monkeypatch: pytest.MonkeyPatch, text: str,
                                                          threads: int | None) -> None:
    check_against_numpy(monkeypatch, text, threads, (-1, 5) if as_target(text).signed else (1, 12))
