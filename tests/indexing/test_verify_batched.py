"""The batched exhaustive scan of verify_equivalent agrees with the pointwise one: the same
verdict, the same first counterexample and message, on random maps from the fuzz corpus."""

from __future__ import annotations

import random

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.indexing import IndexingMap
from tensorlayout.indexing.verify import _box, _compare_at, _scan, _scan_batched, _size
from tests.fuzz import _corpus, _gen


def _pairs(n: int) -> list[tuple[IndexingMap, IndexingMap]]:
    rng, out = random.Random(5), []
    while len(out) < n:
        try:
            a = IndexingMap.parse(_gen.from_seeds(rng, _corpus.seeds("map"), _gen.map_text))
            b = IndexingMap.parse(_gen.from_seeds(rng, _corpus.seeds("map"), _gen.map_text))
            if a.is_undefined or a.is_known_empty or _size(_box([a], a.num_vars)) > 4000:
                continue
            other = a.simplify() if rng.random() < 0.5 else b
        except TensorLayoutError:
            continue
        if other.num_dims == a.num_dims and other.num_symbols == a.num_symbols and \
                other.num_results == a.num_results and not other.is_known_empty:
            out.append((a, other))
    return out


@pytest.mark.parametrize("k", range(4))
def test_batched_scan_is_the_pointwise_scan(k: int) -> None:
    for a, b in _pairs(60)[k * 15:(k + 1) * 15]:
        box = _box([a, b], a.num_vars)
        if _size(box) > 4000:
            continue
        fast = _scan_batched(a, b, box, 10**9)
        slow = _scan(box, 10**9, 0, 0, lambda p, a=a, b=b: _compare_at(a, b, p))
        assert (fast.equivalent, fast.counterexample, fast.detail, fast.points_checked) == \
            (slow.equivalent, slow.counterexample, slow.detail, slow.points_checked), (str(a), str(b))
