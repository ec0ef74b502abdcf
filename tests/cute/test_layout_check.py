"""The check of a user-built ``Layout``: ``_dot.c``'s ``well_formed`` against its Python reference
``layout._well_formed`` on random well-formed and broken (shape, stride) pairs, and the typed
error a broken pair gets."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from tensorlayout.cute import Layout
from tensorlayout.cute import layout as layout_mod
from tensorlayout.cute.int_tuple import MAX_DEPTH, Int
from tensorlayout.errors import LayoutError

needs_c = pytest.mark.skipif(layout_mod._make_well_formed is None,
                             reason="the C extension tensorlayout.cute._dot (with well_formed) was not built")

_LEAVES: list[Any] = [0, 1, 3, 2**70, -1, -(2**70), Int(4), Int(-2), True, np.int64(2), 2.0, None, "3", [1]]


def _tree(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.4:
        return rng.choice(_LEAVES) if rng.random() < 0.2 else rng.randint(0, 9)
    return tuple(_tree(rng, depth - 1) for _ in range(rng.randint(0, 3)))


def _mutate(rng: random.Random, t: Any) -> Any:
    """A congruent copy with ints, or with one random change somewhere."""
    if isinstance(t, tuple):
        kids = [_mutate(rng, x) for x in t]
        if rng.random() < 0.05:
            kids = kids[:-1] if kids else [1]
        return tuple(kids) if rng.random() > 0.02 else list(kids)
    return rng.choice(_LEAVES) if rng.random() < 0.1 else rng.randint(-3, 99)


def _deep(n: int) -> Any:
    t: Any = 1
    for _ in range(n):
        t = (t,)
    return t


@needs_c
def test_c_check_agrees_with_the_python_reference() -> None:
    rng = random.Random(11)
    for _ in range(20000):
        shape = _tree(rng, 4)
        stride = _mutate(rng, shape)
        for s, d in ((shape, stride), (stride, shape)):
            assert layout_mod._check(s, d) is layout_mod._well_formed(s, d, 0), (s, d)
    for n in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1):
        assert layout_mod._check(_deep(n), _deep(n)) is layout_mod._well_formed(_deep(n), _deep(n), 0)


def test_broken_pairs_raise_typed_errors() -> None:
    with pytest.raises(LayoutError, match="not congruent"):
        Layout((2, (3, 4)), (1, 2))
    with pytest.raises(LayoutError, match="negative extent"):
        Layout((2, (3, -4)), (1, (2, 6)))
    with pytest.raises(LayoutError, match="a layout stride"):
        Layout((2, 3), (1, 2.0))
    big = Layout((Int(2), (3, 2**70)), (1, (Int(-2), 6)))
    assert str(big) == "(_2,(3,1180591620717411303424)):(1,(_-2,6))"
