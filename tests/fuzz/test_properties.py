"""Properties from the definitions, on hypothesis-built values (derandomized, so seeded).

CuTe algebra on small layouts with non-negative strides, and XLA's tiled offsets: what a
helper returns must be what its contract says, checked point by point.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout import cute, xla
from tensorlayout.errors import TensorLayoutError

EXAMPLES = 20_000 if os.environ.get("TENSORLAYOUT_FUZZ") == "thorough" else 150
SEEDED = settings(derandomize=True, max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

MODES = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 24)), min_size=1, max_size=3)


def layout_of(modes: list[tuple[int, int]]) -> cute.Layout:
    shape, stride = zip(*modes)
    return cute.make_layout(tuple(shape), tuple(stride))


def values(layout: cute.Layout) -> list[int]:
    return [layout(i) for i in range(cute.size(layout))]


def refused(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except TensorLayoutError:
        return None


@SEEDED
@given(MODES, MODES)
def test_composition_is_a_after_b(a_modes: list[tuple[int, int]], b_modes: list[tuple[int, int]]) -> None:
    a, b = layout_of(a_modes), layout_of(b_modes)
    r = refused(cute.composition, a, b)
    av = values(a)
    if r is not None and all(x < len(av) for x in values(b)):
        assert values(r)[: cute.size(b)] == [av[x] for x in values(b)]


@SEEDED
@given(MODES)
def test_coalesce_keeps_the_function(modes: list[tuple[int, int]]) -> None:
    a = layout_of(modes)
    assert values(cute.coalesce(a)) == values(a)


@SEEDED
@given(MODES)
def test_inverses(modes: list[tuple[int, int]]) -> None:
    a = layout_of(modes)
    av = values(a)
    r = refused(cute.right_inverse, a)
    if r is not None:
        assert all(av[r(i)] == i for i in range(cute.size(r)))
    left = refused(cute.left_inverse, a)
    if left is not None and len(set(av)) == len(av):
        assert [left(x) for x in av] == list(range(len(av)))


@SEEDED
@given(MODES, st.integers(1, 64))
def test_complement_is_disjoint_and_ordered(modes: list[tuple[int, int]], cotarget: int) -> None:
    a = layout_of(modes)
    c = refused(cute.complement, a, cotarget)
    if c is None or len(set(values(a))) != len(values(a)):
        return
    cv = values(c)
    assert cv == sorted(cv)
    assert not set(cv[1:]) & set(values(a))


DIMS = st.lists(st.integers(1, 9), min_size=1, max_size=3)


@st.composite
def tiled_shapes(draw: st.DrawFn) -> str:
    dims = draw(DIMS)
    perm = draw(st.permutations(range(len(dims))))
    tiles = draw(st.lists(st.lists(st.sampled_from((1, 2, 3, 4, 8)), min_size=1, max_size=len(dims)),
                          max_size=2))
    tile_text = "".join(("T" if i == 0 else "") + "(" + ",".join(map(str, t)) + ")"
                        for i, t in enumerate(tiles))
    dtype = draw(st.sampled_from(("f32", "bf16", "s8", "s4", "pred")))
    layout = ",".join(map(str, perm)) + (":" + tile_text if tiles else "")
    return f"{dtype}[{','.join(map(str, dims))}]{{{layout}}}"


@SEEDED
@given(tiled_shapes())
def test_tiled_offsets_invert(text: str) -> None:
    """linear_index is injective, agrees with linear_indices, and multi_index inverts it."""
    shape = xla.parse_shape(text)
    assert xla.parse_shape(str(shape)) == shape
    try:
        xla.validate_layout(shape)
    except TensorLayoutError:
        return
    table = xla.linear_indices(shape).tolist()
    for flat, index in enumerate(_indices(shape.dimensions)):
        offset = xla.linear_index(shape, index)
        assert offset == table[flat]
        assert xla.multi_index(shape, offset) == index
    assert len(set(table)) == len(table)


def _indices(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for d in dims:
        out = [i + (k,) for i in out for k in range(d)]
    return out
