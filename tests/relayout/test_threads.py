"""How a large copy is shared among threads (``_threads``): near-equal cuts of a box's outer
axis and the piece-by-piece order of the pieces, against their definitions on random input."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from tensorlayout.relayout._threads import by_piece, cuts


@given(n=st.integers(0, 10_000), pieces=st.integers(1, 16), unit=st.sampled_from([1, 2, 4, 8]))
def test_cuts_are_near_equal_on_whole_units(n: int, pieces: int, unit: int) -> None:
    bounds = cuts(n, pieces, unit)
    assert bounds[0] == 0 and bounds[-1] == n and bounds == sorted(set(bounds))
    assert len(bounds) - 1 <= max(pieces, 1) and all(b % unit == 0 for b in bounds[:-1])
    sizes = [j - i for i, j in itertools.pairwise(bounds)]
    if len(sizes) > 1:  # the last run takes the rest: at most one unit more or less
        assert max(sizes[:-1]) - min(sizes[:-1]) <= unit and abs(sizes[-1] - sizes[0]) <= 2 * unit


@given(parts=st.lists(st.lists(st.integers(), max_size=6), max_size=6))
def test_by_piece_takes_each_part_in_order_piece_by_piece(parts: list[list[int]]) -> None:
    tagged = [[(k, i, x) for i, x in enumerate(part)] for k, part in enumerate(parts)]
    order = by_piece(tagged)
    assert sorted(order) == sorted(t for part in tagged for t in part)  # every piece, once
    assert [t[1] for t in order] == sorted(t[1] for t in order)  # first pieces first, ...
    for k in range(len(parts)):  # ... and each part's own order kept
        assert [t[1] for t in order if t[0] == k] == list(range(len(parts[k])))
