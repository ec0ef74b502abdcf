"""Tiled index math: the seeds' figures, brute-force properties and the numpy recipe."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlayout.errors import LayoutError
from tensorlayout.xla import (
    Layout,
    Shape,
    Tile,
    allocated_elements,
    layout_util_linear_index,
    linear_index,
    linear_indices,
    multi_index,
    parse_shape,
    tiled_shape,
    tiling_plan,
)

FIGURE_1 = [[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]]
FIGURE_2 = [[0, 2, 4, 6, 8, 10, 12, 14], [1, 3, 5, 7, 9, 11, 13, 15],
            [16, 18, 20, 22, 24, 26, 28, 30], [17, 19, 21, 23, 25, 27, 29, 31]]


def test_seed_worked_example() -> None:
    assert linear_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3)) == 17


def test_seed_figure_1() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert linear_indices(shape).reshape(3, 5).tolist() == FIGURE_1
    padding = sorted(set(range(allocated_elements(shape))) - set(linear_indices(shape).tolist()))
    assert padding == [9, 11, 14, 15, 18, 19, 21, 22, 23]
    with pytest.raises(LayoutError, match="padding"):
        multi_index(shape, 9)


def test_seed_figure_2_repeated_tiles() -> None:
    shape = parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}")
    assert linear_indices(shape).reshape(4, 8).tolist() == FIGURE_2


def test_seed_combined_dimensions_act_as_merged_shape() -> None:
    combined = parse_shape("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    merged = parse_shape("f32[112,110]{1,0:T(2,3)}")
    got = linear_indices(combined).reshape(112, 110)
    assert np.array_equal(got, linear_indices(merged).reshape(112, 110))
    assert tiled_shape(combined) == tiled_shape(merged)


def test_tile_shorter_than_rank_tiles_minor_physical_dims() -> None:
    shape = parse_shape("f32[2,3,5]{0,2,1:T(2,2)}")  # physical order: dims 1, 2, 0
    for idx in itertools.product(range(2), range(3), range(5)):
        d0, d1, d2 = idx
        # tiled dims: [3 (dim1), ceil(5/2)=3, ceil(2/2)=1, 2, 2]
        expected = d1 * 12 + (d2 // 2) * 4 + (d0 // 2) * 4 + (d2 % 2) * 2 + d0 % 2
        assert linear_index(shape, idx) == expected


def test_rank1_quirk_of_layout_util_is_kept_for_parity_only() -> None:
    shape = parse_shape("bf16[300]{0:T(256)(128)(2,1)}")
    assert layout_util_linear_index(shape, (129,)) == 129  # XLA ignores tiles on rank 1
    assert linear_index(shape, (129,)) == 3  # row 1, column 1 of the (2,128) packing


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"expected an index of 2|"
            r"index \(0, -1\) is out of|"
            r"index \(3, 0\) is out of")


def test_out_of_bounds_and_bad_index_raise_layout_error() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    for bad in [(3, 0), (0, -1), (1,), ("a", 1)]:
        with pytest.raises(LayoutError, match=MESSAGES):
            linear_index(shape, bad)  # type: ignore[arg-type]
    with pytest.raises(LayoutError,
        match=r"expected an offset in \[0, 24\) for f32\[3,5\]\{1,0:T\(2,2\)\}, but"):
        multi_index(shape, 24)


# -- hypothesis: random tiled layouts ---------------------------------------------------

@st.composite
def tiled_shapes(draw: st.DrawFn) -> Shape:
    rank = draw(st.integers(1, 4))
    dims = tuple(draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = []
    for _ in range(draw(st.integers(0, 3))):
        n = draw(st.integers(1, rank + 1))
        tiles.append(Tile(tuple(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)))))
    return Shape.array("f32", dims, Layout(m2m, tuple(tiles)))


@given(tiled_shapes())
def test_linear_index_is_a_bijection_onto_non_padding_slots(shape: Shape) -> None:
    offsets = linear_indices(shape)
    slots = allocated_elements(shape)
    assert len(set(offsets.tolist())) == shape.elements_in()
    assert offsets.min() >= 0 and offsets.max() < slots
    for k, idx in enumerate(np.ndindex(*shape.dimensions)):
        assert linear_index(shape, idx) == offsets[k]
        assert multi_index(shape, int(offsets[k])) == idx
    for off in set(range(slots)) - set(offsets.tolist()):
        with pytest.raises(LayoutError, match=r"\)\} is a padding slot"):
            multi_index(shape, off)


@given(tiled_shapes())
def test_linear_indices_equal_the_pad_reshape_transpose_recipe(shape: Shape) -> None:
    labels = np.arange(1, shape.elements_in() + 1).reshape(shape.dimensions)
    buffer = tiling_plan(shape).apply(labels, pad_value=0)
    assert buffer.size == allocated_elements(shape)
    assert np.array_equal(buffer[linear_indices(shape)], labels.reshape(-1))
    assert np.count_nonzero(buffer) == shape.elements_in()


def test_unbounded_dynamic_dims_have_no_size() -> None:
    import pytest as _pytest

    from tensorlayout.errors import LayoutError
    from tensorlayout.xla import array_size, byte_size, parse_shape

    assert byte_size(parse_shape("f32[<=4,3]")) == 48  # a bounded dim counts its bound
    with _pytest.raises(LayoutError, match="unbounded"):
        byte_size(parse_shape("f32[<=4,?]"))
    with _pytest.raises(LayoutError, match="unbounded"):
        array_size("f32[?]{0:T(128)}")
