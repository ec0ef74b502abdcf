"""XLA's documented tiling recipe, step by step: :class:`TilingPlan` pads, reshapes and
transposes once per tile as numpy operations, and :func:`layout_util_linear_index` is XLA's
``LayoutUtil::LinearIndex`` for parity. Both are independent statements of the semantics the
layout core computes (:mod:`tensorlayout.xla.tiling`), which the tests and benchmarks check it
against; the index math itself does not use them.

>>> from tensorlayout.xla.shape import parse_shape
>>> plan = tiling_plan(parse_shape("f32[3,5]{1,0:T(2,2)}"))
>>> plan.tiled_dims, layout_util_linear_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3))
((2, 3, 2, 2), 17)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tensorlayout.core.intmath import ceil_div, prod
from tensorlayout.core.layout import check_index
from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import COMBINE_DIMENSION, Tile
from tensorlayout.xla.lowering import checked_array
from tensorlayout.xla.shape import Shape, takes_shape

__all__ = ["TilingPlan", "TilingStep", "layout_util_linear_index", "tiling_plan"]


@dataclass(frozen=True, slots=True)
class TilingStep:
    """One tile applied to a list of dims (major to minor).

    ``groups`` lists, for each entry of ``merged_dims``, which input dims it merges (more
    than one only for ``*``); ``merged_dims`` is padded to ``padded_dims``, reshaped to
    ``split_dims`` (untiled dims, then a ``(count, tile)`` pair per tiled dim) and
    transposed by ``permutation`` into ``output_dims`` (untiled, counts, tile sizes).
    """

    tile: tuple[int, ...]
    input_dims: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    merged_dims: tuple[int, ...]
    padded_dims: tuple[int, ...]
    split_dims: tuple[int, ...]
    permutation: tuple[int, ...]
    output_dims: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TilingPlan:
    """The full pad → reshape → transpose recipe of a tiled layout.

    ``physical_order`` are the logical dims major to minor (``minor_to_major`` reversed);
    the physical buffer of ``x`` is obtained by ``x.transpose(physical_order)`` and then,
    for every step, merging (reshape to ``merged_dims``), padding to ``padded_dims``,
    reshaping to ``split_dims`` and transposing by ``permutation``; the result has shape
    ``tiled_dims`` and is raveled in C order.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> plan = tiling_plan(parse_shape("f32[3,5]{1,0:T(2,2)}"))
    >>> plan.steps[0].padded_dims, plan.steps[0].split_dims, plan.steps[0].permutation
    ((4, 6), (2, 2, 3, 2), (0, 2, 1, 3))
    """

    logical_dims: tuple[int, ...]
    physical_order: tuple[int, ...]
    steps: tuple[TilingStep, ...]
    tiled_dims: tuple[int, ...]

    def apply(self, x: np.ndarray, pad_value: object = 0) -> np.ndarray:
        """The reference numpy recipe: the physical buffer of ``x`` (1-D, padding filled)."""
        y = np.asarray(x).transpose(self.physical_order)
        for step in self.steps:
            y = y.reshape(step.merged_dims)
            pad = [(0, p - m) for p, m in zip(step.padded_dims, step.merged_dims, strict=False)]
            if any(hi for _, hi in pad):
                y = np.pad(y, pad, constant_values=np.asarray(pad_value, dtype=y.dtype))
            y = y.reshape(step.split_dims).transpose(step.permutation)
        return np.ascontiguousarray(y).reshape(-1)


def _plan_step(dims: tuple[int, ...], tile: tuple[int, ...]) -> TilingStep:
    if len(tile) > len(dims):  # missing major dims count as size 1
        dims = (1,) * (len(tile) - len(dims)) + dims
    untiled = len(dims) - len(tile)
    groups: list[tuple[int, ...]] = [(i,) for i in range(untiled)]
    sizes: list[int] = []
    pending: list[int] = []
    for k, t in enumerate(tile):
        pending.append(untiled + k)
        if t == COMBINE_DIMENSION:
            if k == len(tile) - 1:
                raise LayoutError(f"tile {Tile(tile)}: the most minor tile dim cannot be '*'")
            continue
        if t < 1:
            raise LayoutError(f"tile {Tile(tile)} has a size {t} < 1")
        groups.append(tuple(pending))
        sizes.append(t)
        pending = []
    merged = tuple(prod(dims[i] for i in g) for g in groups)
    n_untiled = untiled
    tiled_merged = merged[n_untiled:]
    counts = tuple(ceil_div(d, t) for d, t in zip(tiled_merged, sizes, strict=False))
    padded = merged[:n_untiled] + tuple(c * t for c, t in zip(counts, sizes, strict=False))
    split = merged[:n_untiled] + tuple(x for ct in zip(counts, sizes, strict=False) for x in ct)
    m = len(sizes)
    perm = (tuple(range(n_untiled)) + tuple(n_untiled + 2 * i for i in range(m))
            + tuple(n_untiled + 2 * i + 1 for i in range(m)))
    output = merged[:n_untiled] + counts + tuple(sizes)
    return TilingStep(tile, dims, tuple(groups), merged, padded, split, perm, output)


def tiling_plan(shape: Shape) -> TilingPlan:
    """The pad → reshape → transpose recipe of ``shape``'s layout (see :class:`TilingPlan`)."""
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA Shape, but got {type(shape).__name__}")
    return _tiling_plan(shape)


@lru_cache(maxsize=1024)
def _tiling_plan(shape: Shape) -> TilingPlan:
    checked_array(shape)
    assert shape.layout is not None
    order = shape.layout.major_to_minor
    dims = tuple(shape.dimensions[d] for d in order)
    steps = []
    for tile in shape.layout.tiles:
        step = _plan_step(dims, tile.dims)
        steps.append(step)
        dims = step.output_dims
    return TilingPlan(shape.dimensions, order, tuple(steps), dims)


@takes_shape
def layout_util_linear_index(shape: Shape, index: Sequence[int]) -> int:
    """XLA ``LayoutUtil::LinearIndex``, for parity: first tile only, rank 1 ignores tiles.

    It equals :func:`linear_index` for single-tile layouts of rank ≥ 2; for repeated tiles
    or rank-1 tiled shapes use :func:`linear_index`, which is exact.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> layout_util_linear_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3))
    17
    """
    checked_array(shape)
    idx = check_index(shape.dimensions, index, str(shape))
    assert shape.layout is not None
    if shape.rank == 0:
        return 0
    if shape.rank == 1:
        return idx[0]
    tile = shape.layout.tiles[0].dims if shape.layout.tiles else ()
    tile_mult = 1
    for t in tile:
        tile_mult *= t
    within, lin = 1, 0
    for k, d in enumerate(shape.layout.minor_to_major):
        i, n = idx[d], shape.dimensions[d]
        if k < len(tile):
            t = tile[len(tile) - 1 - k]
            lin += tile_mult * (i // t) + within * (i % t)
            tile_mult *= ceil_div(n, t)
            within *= t
        else:
            lin += i * tile_mult
            tile_mult *= n
    return lin
