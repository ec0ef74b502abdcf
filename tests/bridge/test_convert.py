"""Bridges between XLA tiling, CuTe/TLA layouts and indexing maps, checked by brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tensorlayout import convert
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import TensorLayoutError, UnsupportedError
from tensorlayout.relayout import from_cute, from_physical, to_physical
from tensorlayout.xla import Layout as XlaLayout
from tensorlayout.xla import Shape, Tile, element_type, linear_index, linear_indices, parse_shape


@st.composite
def tiled_shapes(draw: st.DrawFn) -> Shape:
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.lists(st.integers(1, 40), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles: list[Tile] = []
    if draw(st.booleans()):
        n = draw(st.integers(1, rank))
        first = tuple(draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=n, max_size=n)))
        tiles.append(Tile(first))
        if draw(st.booleans()) and first[0] % 2 == 0:
            tiles.append(Tile((2, 1) if len(first) >= 2 else (2,)))
    return Shape(element_type("f32"), dims, (False,) * rank, XlaLayout(m2m, tuple(tiles)))


def cute_offsets_on_logical(layout: Layout, dims: tuple[int, ...]) -> np.ndarray:
    """layout(i, j, ...) for every logical index, in C order."""
    grids = np.meshgrid(*[np.arange(d) for d in dims], indexing="ij")
    return np.asarray(layout(tuple(g.ravel() for g in grids) if len(dims) > 1 else grids[0].ravel()))


@given(tiled_shapes())
def test_xla_to_cute_agrees_with_linear_indices(shape: Shape) -> None:
    try:
        layout = convert.xla_to_cute(shape)
    except UnsupportedError:
        return
    got = cute_offsets_on_logical(layout, shape.dimensions)
    assert np.array_equal(got, linear_indices(shape).ravel())


def _tiles_fit(shape: Shape) -> bool:
    """No tile is wider than the dim it tiles (a padding-only digit makes the search ambiguous)."""
    assert shape.layout is not None
    phys = [shape.dimensions[d] for d in reversed(shape.layout.minor_to_major)]
    return all(t <= d for tile in shape.layout.tiles[:1] for t, d in zip(reversed(tile.dims), reversed(phys)))


@given(tiled_shapes())
def test_cute_to_xla_round_trip(shape: Shape) -> None:
    assume(_tiles_fit(shape))
    try:
        layout = convert.xla_to_cute(shape)
    except UnsupportedError:
        return
    back = convert.cute_to_xla(layout, "f32", dims=shape.dimensions)
    assert np.array_equal(linear_indices(back), linear_indices(shape))


@given(tiled_shapes(), st.data())
def test_indexing_map_agrees_with_linear_index(shape: Shape, data: st.DataObject) -> None:
    m = convert.to_indexing_map(shape)
    for _ in range(5):
        idx = tuple(data.draw(st.integers(0, d - 1)) for d in shape.dimensions)
        assert m.evaluate(list(idx)) == (linear_index(shape, idx),)


@pytest.mark.parametrize("tag", ["RowMajor", "ColumnMajor", "zN", "zZ", "nZ", "nN", "L0C"])
@pytest.mark.parametrize("dtype", ["f16", "f32", "s8"])
def test_tla_formats_through_every_bridge(tag: str, dtype: str) -> None:
    t = tla.make_format(tag, 37, 45, dtype)
    rows, cols = t.origin_shape
    want = np.array([[tla.crd2offset((r, c), t) for c in range(cols)] for r in range(rows)])
    m = convert.to_indexing_map(t)
    assert m.evaluate([36, 44]) == (int(want[36, 44]),)
    target = from_cute(t)
    assert np.array_equal(target.offsets.reshape(rows, cols), want)
    data = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    buf = to_physical(data, target, pad_value=-1)
    assert np.array_equal(buf[want.ravel()], data.ravel())
    assert np.array_equal(from_physical(buf, target), data)
    try:
        shape = convert.tla_to_xla(tag, 37, 45, dtype)
    except UnsupportedError as err:
        pytest.fail(f"{tag} should have an XLA form: {err}")
    assert np.array_equal(linear_indices(shape), want.ravel())


def test_seed_examples_in_every_notation() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert str(convert.xla_to_cute(shape)) == "((2,2),(2,3)):((2,12),(1,4))"
    assert convert.to_indexing_map(shape).evaluate([2, 3]) == (17,)
    fig2 = parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}")
    assert np.array_equal(cute_offsets_on_logical(convert.xla_to_cute(fig2), (4, 8)),
                          linear_indices(fig2).ravel())


def test_zn_needs_a_transposing_subtile() -> None:
    shape = convert.tla_to_xla("zN", 40, 72, "f16")
    assert str(shape) == "f16[40,72]{0,1:T(16,16)(16,1)}"


@pytest.mark.parametrize("text, why", [
    ("(4,8):(0,1)", "stride-0"), ("(4,8):(1,8)@", None), ("(2,2):(1,1)", "one offset"),
    ("(4,4):(1,8)", "holes"),
])
def test_cute_to_xla_says_why_not(text: str, why: str | None) -> None:
    with pytest.raises(TensorLayoutError) as info:
        convert.cute_to_xla(text)
    if why:
        assert why in str(info.value)


def test_combined_dims_have_no_cute_form_but_a_map() -> None:
    shape = parse_shape("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    with pytest.raises(UnsupportedError, match="combines"):
        convert.xla_to_cute(shape)
    m = convert.to_indexing_map(shape)
    for idx in [(0, 0, 0, 0, 0), (1, 6, 7, 10, 9), (1, 3, 5, 2, 4)]:
        assert m.evaluate(list(idx)) == (linear_index(shape, idx),)
