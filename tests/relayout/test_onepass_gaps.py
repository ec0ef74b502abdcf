"""One-pass relayouts whose tasks write the padding behind their steps though they do not tile the
buffer alone (``_tails.gapped``): tasks stepping alike (a tile row's full tiles, then its ragged
last tile's rows, each with its tail) and the gaps no tail reaches, filled apart. Every byte
against the definition, the source's padding random, ``out=`` between guard bytes, on one kernel
call, the remembered small call and the tasks shared among threads."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import PhysicalTarget, relayout
from tensorlayout.relayout._tails import gapped, tails
from tests.relayout._reference import kernel_or_skip, reference_buffer

GUARD = 9


@pytest.mark.parametrize(("src", "dst"), [
    ("f64[3389,13]{0,1:T(1,128)}", "f64[3389,13]{0,1:T(8,128)}"),  # 26 full tiles and 61 lanes a tile row
    ("f64[37,68,3,13]{1,2,3,0:T(2,128)}", "f64[37,68,3,13]{1,0,3,2:T(2,128)}"),
    ("f16[445,207]{1,0:T(2,128)(2,1)}", "f16[445,207]{1,0:T(8,128)(2,1)}"),  # and a gap at the end
])
@pytest.mark.parametrize("shared", [False, True])
def test_gapped_tails_write_every_byte(monkeypatch: pytest.MonkeyPatch, src: str, dst: str,
                                      shared: bool) -> None:
    kernel_or_skip()
    if shared:  # (the tasks in pieces, among threads: _shared_tails)
        monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    s, d = PhysicalTarget.from_xla(src), PhysicalTarget.from_xla(dst)
    dtype = np.dtype({16: np.float16, 64: np.float64}[s.element_bits])
    rng = np.random.default_rng(len(src))
    data = np.frombuffer(rng.bytes(s.size * dtype.itemsize), dtype).reshape(s.logical_shape)
    buf = np.frombuffer(rng.bytes(s.physical_elements * dtype.itemsize), dtype).copy()
    buf[s.offsets] = data.reshape(-1)  # (random padding, which must not survive)
    nbytes = d.physical_elements * dtype.itemsize
    prepared = engine.prepare_direct(s, d, buf, np.empty(d.physical_elements, dtype))
    assert prepared.tailed is not None and tails(prepared.tasks, nbytes, dtype.itemsize) is None
    for pad in (0, 3):
        want = reference_buffer(data, dst, pad)
        for threads in (1, 1, 2):  # (the second call: the remembered small call)
            store = np.full(nbytes + 2 * GUARD + 8, 0x6B, np.uint8)
            out = store[8:8 + nbytes].view(dtype)
            got = relayout(buf, s, d, pad_value=pad, out=out, threads=threads)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (src, pad, threads)
            assert (store[:8] == 0x6B).all() and (store[8 + nbytes:] == 0x6B).all()


def test_steps_that_overlap_or_leave_many_gaps_are_not_tailed() -> None:
    box = (0, 0, (2, 512), (1024, 1), (512, 1), False, 0)
    assert gapped([box], 2048, 1) is not None
    assert gapped([box, (512, 0, (512,), (1,), (1,), False, 0)], 2048, 1) is None  # the two overlap
    runs = [(k * 1100, 0, (2, 300), (512, 1), (300, 1), False, 0) for k in range(20)]  # 76 bytes apart
    assert gapped(runs, 20 * 1100, 1) is None  # 20 gaps: filled first instead
    assert gapped(runs[:10], 10 * 1100, 1) is not None
