"""Hypothesis strategies for the bridge tests, and the brute-force offset oracles they use.

* :func:`xla_shapes`: random XLA array shapes with layouts: rank 0-4 (size-1 dims included),
  any minor_to_major, 0-3 tiles (a tile may have fewer dims than the shape, or more, and be
  wider than the dims it tiles), ``(p,1)`` sub-tiles, optional ``*``, sub-byte types with
  ``E(bits)``, memory spaces ``S(n)`` and tail padding ``L(n)``;
* :func:`tpu_like_shapes`: the family the CuTe → XLA search must always find (one tile no
  wider than the dims, optionally a ``(p,1)`` sub-tile);
* :func:`cute_layouts`: random CuTe layouts, nested up to depth 3, strides 0 included.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tensorlayout.cute import Layout
from tensorlayout.xla import Layout as XlaLayout
from tensorlayout.xla import Shape, Tile, element_type
from tensorlayout.xla.layout import COMBINE_DIMENSION

TYPES = ["f32", "bf16", "f16", "s8", "pred", "f64", "f8e4m3fn"]
SUB_BYTE = ["s4", "u4", "u2", "s1"]
TILE_SIZES = [1, 2, 3, 4, 8, 16, 128]


@st.composite
def _tiles(draw: st.DrawFn, rank: int, combine: bool) -> tuple[Tile, ...]:
    tiles: list[Tile] = []
    for level in range(draw(st.integers(0, 3))):
        n = draw(st.integers(1, max(rank, 1) + (1 if level == 0 else 0)))
        dims = list(draw(st.lists(st.sampled_from(TILE_SIZES if level == 0 else [1, 2, 4, 8]),
                                  min_size=n, max_size=n)))
        if combine and level == 0 and n >= 2 and draw(st.booleans()):
            for k in range(n - 1):
                if draw(st.booleans()):
                    dims[k] = COMBINE_DIMENSION
        if level > 0 and n == 2 and draw(st.booleans()):
            dims = [draw(st.sampled_from([2, 4, 8])), 1]  # the TPU's (2,1)/(4,1)/(8,1) sub-tile
        tiles.append(Tile(tuple(dims)))
    return tuple(tiles)


@st.composite
def xla_shapes(draw: st.DrawFn, max_rank: int = 4, combine: bool = False, max_dim: int = 20) -> Shape:
    """A random XLA array shape with a layout (it may fail validation: callers filter)."""
    rank = draw(st.integers(0, max_rank))
    dims = tuple(draw(st.lists(st.one_of(st.just(1), st.integers(1, max_dim)), min_size=rank,
                               max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = draw(_tiles(rank, combine)) if rank else ()
    sub = draw(st.booleans())
    name = draw(st.sampled_from(SUB_BYTE if sub else TYPES))
    et = element_type(name)
    layout = XlaLayout(m2m, tiles, element_size_in_bits=et.bits if sub else 0,
                       memory_space=draw(st.sampled_from([0, 0, 1, 5])),
                       tail_padding_alignment_in_elements=draw(st.sampled_from([1, 1, 8])) if tiles else 1)
    return Shape(et, dims, (False,) * rank, layout)


@st.composite
def tpu_like_shapes(draw: st.DrawFn) -> Shape:
    """One tile no wider than the dims it tiles (all of them or the minor ones), maybe a (p,1)."""
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.lists(st.integers(1, 24), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    phys = [dims[d] for d in reversed(m2m)]
    n = draw(st.integers(1, rank))
    tile = tuple(draw(st.integers(1, d)) for d in phys[rank - n:])
    tiles = [Tile(tile)]
    if n >= 2 and draw(st.booleans()):
        p = draw(st.sampled_from([2, 4, 8]))
        if tile[-2] % p == 0:
            tiles.append(Tile((p, 1)))
    return Shape(element_type(draw(st.sampled_from(TYPES))), dims, (False,) * rank,
                 XlaLayout(m2m, tuple(tiles)))


@st.composite
def _mode(draw: st.DrawFn, depth: int) -> tuple[object, object]:
    if depth == 0 or draw(st.booleans()):
        return draw(st.integers(1, 5)), draw(st.sampled_from([0, 1, 2, 3, 4, 6, 8, 16, 32, 64]))
    parts = draw(st.lists(_mode(depth - 1), min_size=1, max_size=3))
    return tuple(p[0] for p in parts), tuple(p[1] for p in parts)


@st.composite
def _any_cute_layout(draw: st.DrawFn, max_rank: int) -> Layout:
    if draw(st.integers(0, 9)) == 0:
        s, d = draw(_mode(2))
        return Layout(s, d)  # a rank-1 layout with an int or tuple shape
    modes = draw(st.lists(_mode(2), min_size=1, max_size=max_rank))
    return Layout(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def cute_layouts(max_rank: int = 3, max_size: int | None = 1 << 16) -> st.SearchStrategy[Layout]:
    """A random CuTe layout: 1-3 top modes, each an int or nested up to depth 3; at most
    ``max_size`` elements (so the oracles can list them all), or any size with None."""
    layouts = _any_cute_layout(max_rank)
    return layouts if max_size is None else layouts.filter(lambda lay: lay.size() <= max_size)


def logical_indices(dims: tuple[int, ...]) -> np.ndarray:
    """Every logical index of ``dims``, C order, as an int array ``(n, rank)``."""
    if not dims:
        return np.zeros((1, 0), dtype=np.int64)
    return np.array(np.unravel_index(np.arange(int(np.prod(dims))), dims), dtype=np.int64).T


def cute_offsets(layout: Layout, dims: tuple[int, ...]) -> np.ndarray:
    """``layout(i, j, …)`` (CuTe's crd2idx, natural coordinates) for every index of ``dims``."""
    idx = logical_indices(dims)
    if not dims:
        return np.array([layout(0)], dtype=np.int64).reshape(-1)[:1]
    if len(dims) == 1:
        return np.asarray(layout(idx[:, 0]), dtype=np.int64).reshape(-1)
    return np.asarray(layout(tuple(idx.T)), dtype=np.int64).reshape(-1)
