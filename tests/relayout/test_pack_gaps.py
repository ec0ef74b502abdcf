"""Kind-2 packing tasks (data owning its column groups, ``_pack.c``): every column writes its
whole group, its codes then the pad code, on every path of the kernel; a target whose groups
cover the buffer is packed without filling it first (``_groups_cover``). Checked through the
public call against the numpy path and the definition, into buffers full of garbage (a byte
the kernel leaves unwritten shows), and on the raw kernel against a slot-by-slot model, with
tasks whose last groups would leave the buffer refused before anything is written."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.relayout import as_target, to_physical

from .test_pack import _path, random_data, reference
from .test_pack_kernel import ERRORS, GUARD, _guarded, _model_pack, _writes

kernel = pytest.importorskip("tensorlayout.relayout._pack")

SUBTILES = [32, 16, 8, 4, 2]
SHAPES = ["16,256", "13,256", "16,300", "13,300", "1,1", "8,128", "3,9,256", "2,24,128"]


def _texts() -> list[str]:
    out = []
    for ty, bits in (("u1", 1), ("u2", 2), ("s4", 4), ("u4", 4)):
        for sub in SUBTILES:
            for dims in SHAPES:
                minor = "2,1,0" if dims.count(",") == 2 else "1,0"
                out.append(f"{ty}[{dims}]{{{minor}:T(8,128)({sub},1)E({bits})}}")
    return out + ["u1[256,40]{0,1:T(8,128)(32,1)E(1)}", "u2[256,13]{0,1:T(8,128)(16,1)E(2)}"]


TEXTS = _texts()


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("threads", [1, 2, 3])  # 3: six pieces, 16-column blocks and tails
def test_owning_gaps_match_the_numpy_path_and_the_definition(monkeypatch: pytest.MonkeyPatch, text: str,
                                                             threads: int) -> None:
    if not pack_path.pack_available():
        pytest.skip("the _pack extension is not built")
    t = as_target(text)
    rng = np.random.default_rng(threads)
    n = t.buffer_bytes or 0
    for pad in (0, 1, -1, -(1 << (t.packed_bits - 1))) if t.signed else (0, 1, (1 << t.packed_bits) - 1):
        data = random_data(t, rng)
        want = reference(data, text, pad)
        _path(monkeypatch, "numpy")
        assert np.array_equal(to_physical(data, text, pad_value=pad), want)
        for path in ("pack", "pack-stream"):
            _path(monkeypatch, path)
            out = rng.integers(0, 256, n).astype(np.uint8)  # garbage: an unwritten byte shows
            assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
            assert np.array_equal(out, want), (path, pad)


@pytest.mark.parametrize("text", TEXTS)
def test_groups_cover_says_exactly_when_the_tasks_write_every_slot_once(text: str) -> None:
    # brute force from the tasks: the slots each one writes (its groups' gaps included)
    t = as_target(text)
    per = 8 // t.packed_bits
    whole, rest, _ = pack_path._tasks(t, np.zeros(t.logical_shape, np.int8).strides, True, 3)
    tasks = [*whole, *rest]
    count = np.zeros(-(-t.physical_elements // per) * per, np.int64)
    for task in tasks:
        for s, _ in _writes(task):
            count[s] += 1
    assert count.max(initial=0) <= 1  # no slot written twice
    # whole groups: kind 2, or rows of slot stride 1 filling groups of their length (columns on that grid)
    groups = {task[4][-2] if task[0] == pack_path.DATA_OWNING_GAPS
              else n if task[4][-1] == 1 and all(p % n == 0 for p in (task[1], *task[4][:-1])) else 0
              for task in tasks for n in [task[3][-1]]}
    owning = len(groups) == 1 and groups != {0} and groups != {1}
    covers = pack_path._groups_cover(tasks, t.physical_elements, per)
    assert covers == (owning and bool((count == 1).all()))


def test_targets_packed_without_a_fill_are_there() -> None:
    # the cover holds where the columns fill the tile rows (ragged rows included), not else
    def covers(text: str) -> bool:
        t = as_target(text)
        whole, rest, _ = pack_path._tasks(t, np.zeros(t.logical_shape, np.int8).strides, True, 1)
        return pack_path._groups_cover([*whole, *rest], t.physical_elements, 8 // t.packed_bits)

    assert covers("u1[4096,4096]{1,0:T(8,128)(32,1)E(1)}")
    assert covers("u1[13,256]{1,0:T(8,128)(32,1)E(1)}")  # the ragged tile row's groups too
    assert covers("s4[16,256]{1,0:T(8,128)(16,1)E(4)}")
    assert not covers("u1[16,300]{1,0:T(8,128)(32,1)E(1)}")  # columns 300..383 are nobody's
    assert covers("u1[16,256]{1,0:T(8,128)(8,1)E(1)}")  # dense: rows filling their groups of 8 (kind 0)


kind2_st = st.tuples(st.integers(0, 40), st.integers(0, 12), st.integers(0, 14), st.integers(0, 40),
                     st.booleans(), st.lists(st.tuples(st.integers(1, 4), st.integers(-40, 60)), max_size=1),
                     st.booleans())


@settings(max_examples=400, suppress_health_check=list(HealthCheck), deadline=None)
@given(bits=st.sampled_from([1, 2, 4]), nbytes=st.integers(0, 600), extra=st.integers(-8, 0),
       raw=st.lists(kind2_st, min_size=1, max_size=2), pad=st.integers(0, 15), serial=st.booleans(),
       stream=st.booleans(), seed=st.integers(0, 99))
def test_raw_kind2_tasks_write_their_groups_or_are_refused(bits: int, nbytes: int, extra: int, raw: list,
                                                           pad: int, serial: bool, stream: bool,
                                                           seed: int) -> None:
    # (slot, group G, n slots per column, columns, logical columns contiguous (the columns
    # path) or each column's bytes, [outer axis], whole bytes): columns G slots apart; G < n,
    # groups past nslots or off the byte grid all occur
    per = 8 // bits
    logical = np.random.default_rng(seed).integers(0, 256, 8192).astype(np.uint8)
    tasks = []
    for slot, group, n, cols, across, outer, whole in raw:
        if whole:  # (in bytes)
            slot, group, n, outer = slot * per, group * per, n % 9 * per, [(e, p * per) for e, p in outer]
        inner = (1, cols) if across else (n, 1)
        shape, ps, ls = (*[o[0] for o in outer], cols, n), (*[o[1] for o in outer], group, 1), \
            (*[700 for _ in outer], *inner)
        tasks.append((2, slot, 0, shape, ps, ls))
    pbase, packed = _guarded(nbytes, 0xA5)
    want = packed.copy()
    nslots = max(0, nbytes * per + extra)
    try:
        kernel.pack(packed, logical, tasks, bits, nslots, pad, serial, stream)
    except ERRORS:
        event("refused")
        assert np.array_equal(packed, want)
    else:
        checked = _model_pack(want, logical, logical, tasks, bits, pad)
        event("ran, compared with the model" if checked else "ran, a slot written twice")
        if checked:
            assert np.array_equal(packed, want)
        written = [s for task in tasks for s, _ in _writes(task)]
        assert max(written, default=-1) < nslots  # nothing written past the slots
    assert (pbase[:GUARD] == 0xA5).all() and (pbase[GUARD + nbytes:] == 0xA5).all()


@pytest.mark.parametrize("bits", [1, 2, 4])
@pytest.mark.parametrize("nc", [1, 15, 16, 17, 33])
def test_raw_kind2_tasks_whose_last_gaps_leave_the_buffer_are_refused(bits: int, nc: int) -> None:
    # data inside the slots, the last column's gaps not: IndexError before any byte is written,
    # on the columns path (logical columns contiguous) and the others
    per = 8 // bits
    group, n = 4 * per, per  # a byte of data, three of gaps per column
    need = nc * group
    logical = np.arange(nc * n, dtype=np.uint8)
    for ls in ((1, nc), (n, 1)):
        task = (2, 0, 0, (nc, n), (group, 1), ls)
        for nslots, nbytes in ((need - 1, need // per), (need - group + n, need // per),
                               (need - group + n, (need - group + n) // per)):
            pbase, packed = _guarded(nbytes, 0xA5)
            with pytest.raises(IndexError, match="packed buffer"):
                kernel.pack(packed, logical, [task], bits, nslots, 3, True)
            assert (pbase == 0xA5).all()
        _, packed = _guarded(need // per, 0xA5)
        kernel.pack(packed, logical, [task], bits, need, 3, True)  # exactly inside: runs
        want = np.full(need // per, 0xA5, np.uint8)
        assert _model_pack(want, logical, logical, [task], bits, 3) and np.array_equal(packed, want)
        assert sorted(s for s, _ in _writes(task)) == list(range(need))  # every byte


def test_kind2_tasks_of_other_shapes_are_refused() -> None:
    packed, logical = np.zeros(64, np.uint8), np.zeros(64, np.uint8)
    for shape, ps in (((8,), (1,)), ((4, 8), (32, 2)), ((4, 8), (4, 1)), ((4, 8), (-32, 1))):
        with pytest.raises(ValueError, match="kind-2"):
            kernel.pack(packed, logical, [(2, 0, 0, shape, ps, (1,) * len(shape))], 1, 512, 0, True)
    assert not packed.any()


FILLED_FIRST = ["s4[43,41,69]{0,1,2:T(8,128)(8,1)E(4)}", "u4[65,21,23,5]{0,1,2,3:T(8,128)(8,1)E(4)}",
                "u2[9,35,130]{1,2,0:T(8,128)(16,1)E(2)}", "u1[33,17]{0,1:T(8,128)(32,1)E(1)}"]


@pytest.mark.parametrize("text", FILLED_FIRST)
@pytest.mark.parametrize("threads", [1, 3])
def test_buffers_filled_first_match_the_numpy_path(monkeypatch: pytest.MonkeyPatch, text: str,
                                                    threads: int) -> None:
    # ragged sub-tiles over permuted dims: their missing rows' pad slots share bytes with data,
    # so the whole buffer is filled first and those pad tasks are dropped (_fill_first), or the
    # data tasks own them and pad runs of whole bytes cover the groups none owns (RUN_COST_BYTES)
    if not pack_path.pack_available():
        pytest.skip("the _pack extension is not built")
    t = as_target(text)
    whole, rest, fill = pack_path._tasks(t, np.zeros(t.logical_shape, np.int8).strides, True, 1)
    per = 8 // t.packed_bits
    pads = [task for task in [*whole, *rest] if task[0] == pack_path.PAD]
    runs_only = not fill and pads and all(pack_path._whole_bytes(task, per) for task in pads)
    assert (fill and not pads) or runs_only
    rng = np.random.default_rng(threads)
    for pad in (0, 1, -1) if t.signed else (0, 1, (1 << t.packed_bits) - 1):
        data = random_data(t, rng)
        want = reference(data, text, pad)
        _path(monkeypatch, "pack")
        out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage shows
        assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
        assert np.array_equal(out, want), pad
