"""The paths that keep composition and the inverses linear in the number of modes give the
answers (and the refusals) of the plain walks they shortcut: the batched composition walk
against the step-by-step one and pycute, the lazy prefix products against their products, the
numpy count behind C++'s exchange order against counting."""

from __future__ import annotations

import math
import random
from itertools import accumulate
from typing import Any

import pycute
import pytest

from tensorlayout import cute
from tensorlayout.cute import compose
from tensorlayout.cute._checks import Prefixes, _below, carries, dividing_prefix, nested, trailing_zeros
from tensorlayout.cute.inverses import _exchange_sort, _smaller_before, exchange_order
from tensorlayout.errors import AlgebraError, TensorLayoutError


def _outcome(a: cute.Layout, b: cute.Layout) -> Any:
    """The composition's text, or its refusal's type and message."""
    try:
        return str(compose._composition(a, b))
    except TensorLayoutError as e:
        return type(e).__name__, str(e)


def _long_layouts(rng: random.Random) -> tuple[cute.Layout, cute.Layout]:
    """A with 100-300 small modes (its size far past the batching threshold), B one to three
    modes whose first extent is most of size(A) (so its walk runs batched), some not dividing."""
    n = rng.randint(100, 300)
    shape = tuple(rng.choice((2, 3, 4, 6)) for _ in range(n))
    stride = tuple(rng.choice((1, 3, 5, 7, 100)) for _ in range(n))
    a = cute.Layout(shape, stride)
    size = math.prod(shape)
    cut = rng.randint(1, 20)
    first = math.prod(shape[:n - cut]) * rng.choice((1, 1, 1, 5, 7))  # 5, 7: may not divide
    step = rng.choice((1, 1, 2, 3, 4))
    if rng.random() < 0.5:
        return a, cute.Layout(first, step)
    return a, cute.Layout((first, 2), (step, size // 2 if rng.random() < 0.5 else 0))


def test_batched_walk_matches_the_step_by_step_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(2033)
    cases = [_long_layouts(rng) for _ in range(300)]
    batched = [_outcome(a, b) for a, b in cases]
    monkeypatch.setattr(compose, "_MANY", 1 << 100000)  # never batch
    plain = [_outcome(a, b) for a, b in cases]
    assert batched == plain
    kinds = {type(x) for x in batched}
    assert kinds == {str, tuple}  # both answers and refusals were compared


def test_batched_walk_matches_pycute() -> None:
    rng = random.Random(33)
    compared = 0
    for _ in range(200):
        a, b = _long_layouts(rng)
        try:
            ours = compose._composition(a, b)
        except AlgebraError:
            continue
        ref = pycute.composition(pycute.Layout(a.shape, a.stride), pycute.Layout(b.shape, b.stride))
        assert cute.coalesce(ours) == cute.coalesce(cute.Layout(ref.shape, ref.stride)), (a, b)
        compared += 1
    assert compared > 50


def test_identity_over_a_long_layout_gives_it_back() -> None:
    n = 2000
    a = cute.Layout((2,) * n, tuple(3 + 2 * (k % 5) for k in range(n)))
    assert cute.composition(a, cute.Layout(2**n, 1)) == a


def test_a_shape_divisibility_failure_past_4300_digits_prints_its_size() -> None:
    n = 15000  # 2^15000 has 4516 digits: its message gives the order of magnitude
    a = cute.Layout((3,) + (2,) * n, (2,) + tuple(3 + 2 * (k % 5) for k in range(n)))
    with pytest.raises(AlgebraError, match=r"shape divisibility fails: about 2\^15001 elements remain but "
                       "mode 0 .* supplies 3"):
        compose._composition(a, cute.Layout(2**n, 1))


@pytest.mark.parametrize("cs", [[4, 6, 5], [2] * 70, [2, 8, 3, 2**70, 5, 2], [2**80, 3 * 2**65, 7], [1], []])
def test_lazy_prefixes_are_the_products(cs: list[int]) -> None:
    pre = Prefixes(cs)
    full = list(accumulate(cs[:-1], lambda x, y: x * y, initial=1))
    assert len(pre) == len(full)
    for k in reversed(range(len(full))):  # asked for out of order, as a walk may
        assert pre[k] == full[k]
        assert pre.bits[k] <= full[k].bit_length()
        assert pre.zeros[k] == trailing_zeros(full[k])
        assert pre.at_most(k, full[k])
        assert full[k] == 1 or not pre.at_most(k, full[k] - 1)
    twos = next((k for k, p in enumerate(full) if p & (p - 1)), len(full))
    assert pre.twos == twos


def test_dividing_prefix_and_carries_by_definition() -> None:
    rng = random.Random(5)
    for _ in range(500):
        cs = [rng.choice((2, 3, 4, 8, 5)) for _ in range(rng.randint(2, 12))]
        full = list(accumulate(cs[:-1], lambda x, y: x * y, initial=1))
        x = rng.choice(full) * rng.choice((1, 2, 3, 7))
        m = len(cs) - 1
        want = max(j for j in range(m + 1) if x % full[j] == 0)
        assert dividing_prefix(Prefixes(cs), x, m) == want
    assert carries(Prefixes([4, 8]), [4, 8], [(2, 1, 0), (4, 1, 0)])


@pytest.mark.parametrize("x", [1, 40, -40, 1 << 300, -3 << 200, (5 << 1000) + (1 << 61)])
def test_trailing_zeros(x: int) -> None:
    assert trailing_zeros(x) == (x & -x).bit_length() - 1


def test_smaller_before_counts() -> None:
    rng = random.Random(9)
    for _ in range(300):
        rank = [rng.randint(0, rng.choice((1, 3, 40))) for _ in range(rng.randint(1, 70))]
        want = [sum(1 for q in range(p) if rank[q] < rank[p]) for p in range(len(rank))]
        assert _smaller_before(rank) == want


def test_exchange_order_with_few_and_many_groups() -> None:
    rng = random.Random(11)
    for _ in range(300):
        n = rng.randint(17, 120)
        keys = [rng.randint(0, rng.choice((1, 3, 13, n // 2, 10**30))) for _ in range(n)]
        assert exchange_order(keys) == _exchange_sort(keys)


def test_right_inverse_of_many_modes_refuses_an_unreadable_extent() -> None:
    # 20 modes that do not coalesce (each pair swapped), then one of 13,301 bits: all joins
    stride = [1 << (k ^ 1) for k in range(20)] + [1 << 20]
    lay = cute.Layout((2,) * 20 + (2**13300,), tuple(stride))
    with pytest.raises(AlgebraError, match="more than 4000 digits"):
        cute.right_inverse(lay)


def test_inverses_of_permuted_compact_layouts_by_definition() -> None:
    rng = random.Random(4)
    for n in (17, 40, 90):
        order = list(range(n))
        rng.shuffle(order)
        lay = cute.Layout((2,) * n, tuple(1 << p for p in order))
        right, left = cute.right_inverse(lay), cute.left_inverse(lay)
        for i in [0, 1, 2, 3, 2**n - 1] + [rng.randrange(2**n) for _ in range(50)]:
            assert lay(right(i)) == i
            assert left(lay(i)) == i


_LONG = 2**15000  # 4,516 digits: past what str() of an int prints


@pytest.mark.parametrize("call", [
    lambda: cute.composition(cute.Layout((2, 2), (3, _LONG)), cute.Layout(2, _LONG + 1)),
    lambda: cute.composition(cute.Layout(4, 1), -_LONG),
    lambda: cute.left_inverse(cute.Layout((2, 2), (3, 3 * _LONG + 1))),
    lambda: cute.complement(cute.Layout((2, 2), (_LONG, _LONG + 1))),
])
def test_refusals_holding_long_integers_are_typed(call: Any) -> None:
    with pytest.raises(TensorLayoutError, match=r"about -?2\^\d+|past the 4000-digit limit"):
        call()


def test_nested_decides_long_spans_by_their_leading_words() -> None:
    rng = random.Random(12)
    for _ in range(20000):
        p = rng.choice([0, 1, rng.randrange(1 << 70), rng.randrange(1 << 200), 1 << rng.randrange(300)])
        s = rng.choice([1, 2, 3, rng.randrange(1, 1 << 70)])
        d = max(0, rng.choice([p * s, p * s - 1, p * s + 1, rng.randrange(1 << 300), p]))
        assert _below(d, p, s) == (d < p * s), (d, p, s)
    n = 300
    gapped = [4**i for i in range(n)]
    assert nested([2] * n, gapped, list(range(n)))
    assert not nested([3] * n, [2**i for i in range(n)], list(range(n)))
