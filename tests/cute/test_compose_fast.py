"""The one-mode fast path of composition (``compose._scale_modes``) against the general walk.

When ``A`` coalesces to one mode the general walk takes no step (``_compose_mode`` at ``m == 0``)
and checks nothing more, so the fast path must give the same layout, or the same error, on
every input; here on random layouts, including zero extents and strides past the limit.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tensorlayout.cute import Layout, composition
from tensorlayout.cute import compose as C
from tensorlayout.cute._checks import Prefixes
from tensorlayout.errors import AlgebraError


def _shape(rng: random.Random, depth: int = 2) -> Any:
    if depth == 0 or rng.random() < 0.4:
        return rng.choice((0, 1, 2, 3, 4, 8))
    return tuple(_shape(rng, depth - 1) for _ in range(rng.randint(1, 3)))


def _like(rng: random.Random, shape: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(_like(rng, s) for s in shape)
    return rng.choice((0, 1, 2, -3, 5, 1 << 70, -(1 << 200)))


def _general(a: Layout, b: Layout, limit: int) -> Any:
    """The general walk of ``_compose_plain`` for a one-mode ``A`` (its checks cannot fire)."""
    cs, cd = C._coalesce_x(a)
    exact = [True]
    live: list[tuple[int, int, int]] = []
    pre = Prefixes(cs)
    out = C._compose_layout(a, cs, cd, b._shape, b._stride, live, exact, pre, limit)
    assert exact[0] and not C.carries(pre, cs, live)
    return Layout(*out)


def _outcome(f: Any) -> Any:
    try:
        return f()
    except AlgebraError as e:
        return ("error", str(e))


@pytest.mark.parametrize("seed", range(4))
def test_one_mode_fast_path_matches_general_walk(seed: int) -> None:
    rng = random.Random(seed)
    seen = 0
    for _ in range(500):
        n = rng.choice((1, 2, 4, 7))
        d0 = rng.choice((1, 3, -2, 1 << 80))
        a = Layout((n, 1), (d0, rng.choice((0, 5)))) if rng.random() < 0.3 else Layout(n, d0)
        if len(C._coalesce_x(a)[0]) != 1:
            a = Layout(n, d0)
        shape = _shape(rng)
        b = Layout(shape, _like(rng, shape))
        limit = rng.choice((40, 1 << 62))
        fast = _outcome(lambda: C._compose_plain(a, b, limit=limit))  # noqa: B023
        slow = _outcome(lambda: _general(a, b, limit))  # noqa: B023
        assert fast == slow, (a, b, limit)
        seen += isinstance(fast, tuple)
    assert seen, "no input reached a refusal"


def test_one_mode_fast_path_refuses_zero_extent() -> None:
    with pytest.raises(AlgebraError, match="zero extent"):
        composition(Layout(4, 2), Layout((2, 0), (1, 3)))


def _flat_a(rng: random.Random) -> Layout:
    """A random A of 2-9 leaves: extents 1-8 (some 1s), strides mostly products of the extents
    before (so modes coalesce or leave gaps), sometimes negative or zero."""
    n = rng.randint(2, 9)
    shape = [rng.choice((1, 2, 2, 3, 4, 6, 8)) for _ in range(n)]
    stride, cur = [], 1
    for s in shape:
        cur *= rng.choice((1, 1, 2, 3))
        stride.append(rng.choice((cur, cur, -cur, 0)))
        cur *= s
    return Layout(tuple(shape), tuple(stride))


def _b_for(rng: random.Random, a: Layout) -> Layout:
    """A random B whose strides are often products of A's leading extents (so the walk skips
    modes), sometimes negative, zero or past a word."""
    ps = [1]
    for s in C._coalesce_x(a)[0]:
        ps.append(ps[-1] * s)
    shape = _shape(rng)

    def stride(x: Any) -> Any:
        if isinstance(x, tuple):
            return tuple(stride(y) for y in x)
        return rng.choice((1, 2, 3, -1, 0, 1 << 70, rng.choice(ps), -rng.choice(ps), rng.choice(ps) * 3))
    return Layout(shape, stride(shape))


@pytest.mark.parametrize("seed", range(4))
def test_short_walk_matches_prefix_walk(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A short coalesced A skips modes one by one (no Prefixes): the same answer, error, and
    carry records as the walk by dividing_prefix."""
    rng = random.Random(100 + seed)
    cases = []
    for _ in range(400):
        a = _flat_a(rng)
        b = _b_for(rng, a)
        cs, cd = C._coalesce_x(a)
        if len(cs) > 1 and C._short(cs):
            cases.append((a, b, cs, cd, rng.choice((40, 1 << 62))))
    assert len(cases) > 200
    short = [_outcome(lambda: C._compose_plain(a, b, limit=lim)) for a, b, _, _, lim in cases]  # noqa: B023
    lives = []
    for a, b, cs, cd, lim in cases:
        for pre in (None, Prefixes(cs)):
            live: list[tuple[int, int, int]] = []
            out = _outcome(lambda: C._compose_layout(a, cs, cd, b._shape, b._stride, live, [True],  # noqa: B023
                                                     pre, lim))  # noqa: B023
            lives.append((out, live))
        assert lives[-1] == lives[-2], (a, b)
    monkeypatch.setattr(C, "_short", lambda cs: False)
    general = [_outcome(lambda: C._compose_plain(a, b, limit=lim)) for a, b, _, _, lim in cases]  # noqa: B023
    assert short == general
    assert any(isinstance(x, tuple) for x in short), "no input reached a refusal"
    assert any(len(live) > 1 for _, live in lives), "no input reached the carry check"
