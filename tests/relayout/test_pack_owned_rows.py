"""Data tasks owning their column groups without a fill first (``_owning_or_pads`` in
``_pack_path``): where a plan has pad boxes and every data task can own disjoint groups (a
sub-tile's unused rows, a ragged sub-tile's missing rows), the data tasks write those pad slots
with their rows and pad runs cover the groups nobody owns. Checked through the public calls
against the definition into buffers of garbage (a byte nobody writes shows), on random
layouts whose packed dim is short or ragged, in every ``minor_to_major``, both directions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorlayout.relayout._pack_groups as pack_groups
import tensorlayout.relayout._pack_path as pack_path
from tensorlayout.relayout import as_target, from_physical, to_physical

from .test_pack import _path, codes, random_data, reference

SUBS = {"s4": ["(8,1)E(4)"], "u4": ["(8,1)E(4)"], "u2": ["(16,1)E(2)"], "u1": ["(32,1)E(1)", "(8,1)E(1)"]}


def _texts(rng: np.random.Generator, etype: str) -> list[str]:
    out = []
    for sub in SUBS[etype]:
        for rank in (2, 3):
            for m2m in itertools.permutations(range(rank)):
                dims = [int(rng.integers(1, 60)) for _ in range(rank)]
                dims[m2m[1]] = int(rng.integers(1, 12))  # the tile's row dim: short or ragged
                dims[m2m[0]] = int(rng.integers(1, 300))
                out.append(f"{etype}[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}:T(8,128){sub}}}")
    return out


@pytest.mark.parametrize("etype", sorted(SUBS))
@pytest.mark.parametrize("threads", [1, 3])
def test_owned_rows_match_the_definition(monkeypatch: pytest.MonkeyPatch, etype: str, threads: int) -> None:
    if not pack_path.pack_available():
        pytest.skip("the _pack extension is not built")
    rng = np.random.default_rng(threads + 10 * len(etype))
    _path(monkeypatch, "pack")
    owned = 0
    for text in _texts(rng, etype):
        t = as_target(text)
        data = random_data(t, rng)
        whole, rest, fill = pack_path._make_tasks(t, data.strides, True, 2)
        owned += not fill and any(task[0] == pack_path.DATA_OWNING_GAPS for task in whole + rest)
        pad = int(rng.integers(-8, 8) if t.signed else rng.integers(0, 1 << t.packed_bits))
        out = rng.integers(0, 256, t.buffer_bytes or 0).astype(np.uint8)  # garbage
        assert to_physical(data, text, pad_value=pad, out=out, threads=threads) is out
        assert np.array_equal(out, reference(data, text, pad)), text
        back = np.full(t.logical_shape, 99, np.int8 if t.signed else np.uint8)
        assert np.array_equal(from_physical(out, text, out=back, threads=threads), codes(data, t)), text
    assert owned > 0  # the route ran


def test_short_packed_rows_own_their_groups_without_a_fill() -> None:
    # 4 of a (32,1) sub-tile's 32 rows: the columns write their 28 pad slots, nothing filled first
    t = as_target("u1[4096,4]{0,1:T(8,128)(32,1)E(1)}")
    whole, rest, fill = pack_path._make_tasks(t, (4, 1), True, 1)
    assert not fill and not rest
    assert [task[0] for task in whole] == [pack_path.DATA_OWNING_GAPS]
    # a ragged sub-tile (7 of 8 rows) beside whole ones: owned too, with pad runs elsewhere
    t = as_target("s4[1000,95]{0,1:T(8,128)(8,1)E(4)}")
    whole, rest, fill = pack_path._make_tasks(t, (95, 1), True, 1)
    assert not fill and not rest
    assert {task[0] for task in whole} == {pack_path.DATA_OWNING_GAPS, pack_path.PAD}


def _slots(tasks: list) -> list[int]:
    """Every slot the pad tasks write, in the order written, from their axes (brute force)."""
    out = []
    for _, slot, _, shape, ps, _ in tasks:
        out += [slot + sum(i * p for i, p in zip(index, ps)) for index in np.ndindex(*shape)]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_periodic_pad_runs_write_the_same_slots(seed: int) -> None:
    # runs in a repeating pattern (a period of 1-4 runs, D slots on), a ragged tail, or none
    rng = np.random.default_rng(seed)
    period = [(int(rng.integers(0, 50)), int(rng.integers(1, 20))) for _ in range(int(rng.integers(1, 5)))]
    period = sorted({start: length for start, length in period}.items())
    span = max(start + length for start, length in period) + int(rng.integers(0, 9))
    reps = int(rng.integers(1, 30))
    runs = [(r * span + start, length) for r in range(reps) for start, length in period]
    tail = period[:int(rng.integers(0, len(period) + 1))]
    runs += [(reps * span + start, length) for start, length in tail]
    runs = [run for k, run in enumerate(runs) if k == 0 or run[0] >= runs[k - 1][0] + runs[k - 1][1]]
    tasks = pack_groups._strided_runs(runs)
    folded = pack_groups._periodic(tasks)
    assert sorted(_slots(folded)) == sorted(_slots(tasks))
    assert len(set(_slots(folded))) == len(_slots(folded))  # no slot twice
    assert len(folded) <= len(tasks)
    if reps >= 4 and len(period) <= 2:
        assert len(folded) < len(tasks) or len(tasks) <= 2  # (the pattern was folded)
