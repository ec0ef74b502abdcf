"""The packing kernel's columns tails (``pack_tail`` / ``unpack_tail`` in ``_pack.c``): fewer
than 16 logically contiguous columns after the last whole block (a short minor dim moved
outermost by the layout), packed from whole vectors read inside the logical array, unpacked
with exactly the columns' bytes written. Against the definition, for every sub-byte width and
sub-tile, contiguous, reversed and strided logical arrays (their last rows end at the array's
end, where the vectors may not read on), into buffers of garbage, on 1 or 3 threads."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, random_data, reference

pytest.importorskip("tensorlayout.relayout._pack")

TEXTS = ["u4[9,37,5]{0,1,2:T(8,128)(8,1)E(4)}", "s4[65,20,23,5]{0,1,2,3:T(8,128)(8,1)E(4)}",
         "s4[30,17,3]{0,1,2:T(8,128)(8,1)E(4)}", "u2[40,33,7]{0,1,2:T(8,128)(16,1)E(2)}",
         "u1[70,9,13]{0,1,2:T(8,128)(32,1)E(1)}", "u1[21,9,11]{0,1,2:T(8,128)(8,1)E(1)}",
         "u4[3,19,21]{0,1,2:T(8,128)(8,1)E(4)}", "s4[17,35]{0,1:T(8,128)(8,1)E(4)}"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("how", ["contiguous", "reversed", "strided"])
@pytest.mark.parametrize("threads", [1, 3])
def test_short_columns_match_the_definition(monkeypatch: pytest.MonkeyPatch, text: str, how: str,
                                            threads: int) -> None:
    t = as_target(text)
    rng = np.random.default_rng(threads)
    data = random_data(t, rng)
    if how == "reversed":
        data = data[::-1].copy()[::-1]  # a negative outer stride, the same values
    elif how == "strided":
        wide = np.zeros((*data.shape[:-1], 2 * data.shape[-1]), data.dtype)
        wide[..., ::2] = data
        data = wide[..., ::2]
    pad = -1 if t.signed else 1
    want = reference(data, text, pad)
    _path(monkeypatch, "pack")
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
    assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
    assert np.array_equal(out, want)
    back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)  # every logical byte written
    assert np.array_equal(from_physical(out, text, out=back, threads=threads), data)
