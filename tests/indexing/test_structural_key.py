"""IndexingMap.structural_key: equal for maps built separately from one text, different when any
part of the structure differs, and a memo keyed on it gives what a fresh computation gives."""

from __future__ import annotations

import pytest

from tensorlayout.hlo.operand_indexing import OperandIndexing, clear_caches, compose_simplified
from tensorlayout.indexing import IndexingMap

TEXTS = [
    "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]",
    "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 8]",
    "(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 3]",
    "(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 3], d0 + s0 in [0, 5]",
    "(d0) -> (d0 floordiv 2, d0 mod 2), domain: d0 in [0, 15]",
    "(d0) -> (d0), domain: d0 in [0, 15]",
]


@pytest.mark.parametrize("text", TEXTS)
def test_same_text_same_key(text: str) -> None:
    a, b = IndexingMap.parse(text), IndexingMap.parse(text)
    assert a is not b
    assert a.structural_key() == b.structural_key()
    assert hash(a.structural_key()) == hash(b.structural_key())


def test_different_maps_different_keys() -> None:
    keys = {IndexingMap.parse(t).structural_key() for t in TEXTS}
    assert len(keys) == len(TEXTS)


def test_equal_keys_mean_equal_maps() -> None:
    for t in TEXTS:
        for u in TEXTS:
            a, b = IndexingMap.parse(t), IndexingMap.parse(u)
            if a.structural_key() == b.structural_key():
                assert a == b and str(a) == str(b)


def test_compose_memo_by_value_matches_fresh() -> None:
    pairs = [(t, u) for t in TEXTS for u in TEXTS
             if IndexingMap.parse(t).num_results == IndexingMap.parse(u).num_dims]
    assert pairs
    for t, u in pairs:
        clear_caches()
        def fresh(text: str) -> OperandIndexing:
            return OperandIndexing(IndexingMap.parse(text))

        cold = compose_simplified(fresh(t), fresh(u))
        # new objects of the same value: answered from the by-value memo
        warm = compose_simplified(fresh(t), fresh(u))
        assert str(warm) == str(cold) and warm == cold
