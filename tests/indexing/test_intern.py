"""The expression intern table: bounded by the live expressions, emptied of the rest by
``clear_caches()``, while equal structure stays the same node."""

from __future__ import annotations

import gc
import random

from tensorlayout.indexing import IndexingMap, clear_caches, var
from tensorlayout.indexing.expr import Expr, const, interned_count


def _random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0:
        return var(rng.randrange(4)) if rng.random() < 0.7 else const(rng.randint(-10**6, 10**6))
    a, b = _random_expr(rng, depth - 1), _random_expr(rng, depth - 1)
    return [a + b, a * rng.randint(2, 99), a // rng.randint(2, 99), a % rng.randint(2, 99)][rng.randrange(4)]


def test_intern_table_shrinks_back_after_clear_caches() -> None:
    clear_caches()
    gc.collect()
    before = interned_count()
    rng = random.Random(7)
    maps = [IndexingMap([_random_expr(rng, 4)], [(0, 15)] * 4, []) for _ in range(3000)]
    for m in maps:
        m.simplify()
    grown = interned_count()
    assert grown > before + 5000
    del maps, m
    clear_caches()
    gc.collect()
    assert interned_count() < before + 100, (before, grown, interned_count())


def test_live_nodes_stay_canonical_across_clear_caches() -> None:
    e = (var(0) + 42) * var(1) // 3
    text = str(e)
    clear_caches()
    gc.collect()
    again = (var(0) + 42) * var(1) // 3
    assert again is e and str(again) == text
    assert IndexingMap.parse("(d0) -> (d0 * 2 + 1)").results[0] is var(0) * 2 + 1


def test_substitution_leaves_no_cycles_for_the_gc() -> None:
    """replace_variables / replace rebuild without closures: nothing they leave needs the cyclic
    GC (a recursive closure left a function <-> cell cycle per call)."""
    e = (var(0) + var(1) * 3) // 2 + var(0) % 5
    gc.collect()
    got = (e.replace_variables([var(2), None]), e.replace({var(0): var(3)}), e.replace(var(1) * 3, const(7)))
    assert gc.collect() == 0
    assert [str(x) for x in got] == ["(v2 + v1 * 3) / 2 + v2 mod 5", "(v3 + v1 * 3) / 2 + v3 mod 5",
                                     "(v0 + 7) / 2 + v0 mod 5"]
