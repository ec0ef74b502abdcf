"""Pad runs instead of a fill first (``_uncovered`` / ``_strided_runs`` in ``_pack_path``): where
data tasks own their column groups (kind 2) but leave some groups to no one, buffers of a MiB and
more get pad tasks over exactly those groups (equally long runs equally far apart as one task)
rather than the whole buffer filled and written again. Checked against a slot-by-slot marking of
the groups, and through ``to_physical`` on large layouts against the definition and the numpy
path, into garbage buffers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference


def _slots(tasks: list) -> set[int]:
    """Every slot the tasks write: a kind-2 task's groups whole, a pad task's run."""
    out: set[int] = set()
    for kind, slot, _, shape, ps, _ in tasks:
        starts = [slot]
        cut = -1 if kind == 2 else len(shape)
        for n, p in zip(shape[:cut], ps[:cut]):
            starts = [s + i * p for s in starts for i in range(n)]
        width = ps[-2] if kind == 2 else 1
        out |= {s + k for s in starts for k in range(width)}
    return out


@given(group=st.sampled_from([4, 8, 32]), boxes=st.lists(st.tuples(st.integers(0, 30), st.integers(1, 3),
                                                                    st.integers(1, 9), st.integers(1, 5)),
                                                          min_size=1, max_size=4),
       extra=st.integers(0, 40))
def test_runs_cover_exactly_the_groups_left(group: int, boxes: list, extra: int) -> None:
    # boxes of m rows (step groups apart) of n columns, one group each (the kind-2 column stride)
    tasks = [(2, first * group, 0, (m, n, 3), (step * group, group, 1), (1, 1, 1))
             for first, m, step, n in boxes]
    last = max(first + (m - 1) * step + n for first, m, step, n in boxes)
    nslots = last * group + extra
    owned = _slots(tasks)
    runs = pack_path._uncovered(tasks, nslots)
    assert runs is not None and all(kind == pack_path.PAD for kind, *_ in runs)
    padded = _slots(runs)
    assert padded == set(range(nslots)) - owned  # every slot left, nothing owned
    assert sum(int(np.prod(shape)) for _, _, _, shape, _, _ in runs) == len(padded)  # none twice


def test_runs_refuse_tasks_off_the_group_grid() -> None:
    assert pack_path._uncovered([(2, 4, 0, (2, 3), (32, 1), (1, 1))], 128) is None
    assert pack_path._uncovered([(0, 0, 0, (2, 3), (32, 1), (1, 1))], 128) is None
    assert pack_path._uncovered([], 128) is None


LARGE = ["u1[3000,4000]{0,1:T(8,128)(32,1)E(1)}", "u1[1000,3000]{1,0:T(8,128)(32,1)E(1)}",
         "u2[1400,2300]{1,0:T(8,128)(16,1)E(2)}"]


@pytest.mark.parametrize("text", LARGE)
def test_large_buffers_get_pad_runs_and_match(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    if not pack_path.pack_available():
        pytest.skip("the _pack extension is not built")
    t = as_target(text)
    whole, rest, fill = pack_path._tasks(t, np.zeros(t.logical_shape, np.uint8).strides, True, 2)
    assert not fill and any(task[0] == pack_path.PAD for task in [*whole, *rest])
    rng = np.random.default_rng(len(text))
    data = random_data(t, rng)
    pad = (1 << t.packed_bits) - 1
    want = reference(data, text, pad)
    _path(monkeypatch, "numpy")
    assert np.array_equal(to_physical(data, text, pad_value=pad), want)
    _path(monkeypatch, "pack")
    out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage: an unwritten byte shows
    assert to_physical(data, text, pad_value=pad, out=out, threads=2) is out
    assert np.array_equal(out, want)
    assert np.array_equal(from_physical(out, text, threads=2), codes(data, t))
