"""Pad runs instead of a fill first for buffers of any size (``RUN_COST_BYTES`` in
``_pack_path``): where data tasks own their column groups and the groups none owns make few
runs, those runs are the only padding written; where the runs would cost more than filling the
buffer (a few KiB), the buffer is filled first. Both against the definition, into buffers
holding random bytes (so every byte must be written)."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.relayout import _pack_path, as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference

pytest.importorskip("tensorlayout.relayout._pack")

CASES = [("u1[6936,205]{0,1:T(8,128)(32,1)E(1)}", False), ("u1[1000,205]{0,1:T(8,128)(32,1)E(1)}", False),
         ("u1[6936,13]{0,1:T(8,128)(32,1)E(1)}", False), ("u1[130,20]{0,1:T(8,128)(32,1)E(1)}", True),
         ("s4[300,77]{0,1:T(8,128)(8,1)E(4)}", None), ("u1[999,3]{0,1:T(8,128)(32,1)E(1)}", None)]


@pytest.mark.parametrize(("text", "fill"), CASES)
def test_small_buffers_get_pad_runs_where_they_cost_less(monkeypatch: pytest.MonkeyPatch, text: str,
                                                         fill: bool | None) -> None:
    t = as_target(text)
    whole, rest, filled = _pack_path._make_tasks(t, (t.logical_shape[-1], 1), True, 1)
    runs = [task for task in whole + rest if task[0] == _pack_path.PAD]
    if fill is not None:  # (None: whatever the plan, the bytes below)
        assert filled == fill and bool(runs) == (not fill), (filled, runs)
        assert len(runs) * _pack_path.RUN_COST_BYTES <= (t.buffer_bytes or 0) or fill
    rng = np.random.default_rng(len(text))
    for path in ("pack", "pack-stream"):
        _path(monkeypatch, path)
        for threads in (1, 3):
            data = random_data(t, rng)
            pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 1 << t.packed_bits))
            out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)
            assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
            assert np.array_equal(out, reference(data, text, pad)), (text, path, threads)
            back = from_physical(out, text, threads=threads)
            assert np.array_equal(back, codes(data, t))
