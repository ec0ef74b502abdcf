"""Tiled index math: where logical element (i, j, ...) of an XLA array lives.

Tiling is pad → reshape → transpose, applied once per tile (``docs/tiled_layout.md``):
the physical dims (major to minor) are padded to tile multiples, each tiled dim d splits
into ``(ceil(d/t), t)``, and the tile parts move to the minor end. A later tile re-tiles
the dims the previous one produced; a ``*`` tile dim merges its dim into the next more
minor one first.

Seed Figure 1, ``f32[3,5]{1,0:T(2,2)}``: the 3x5 array pads to 4x6 and element (2,3) is
at offset 17:

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("f32[3,5]{1,0:T(2,2)}")
>>> linear_index(s, (2, 3)), tiled_shape(s)
(17, (2, 3, 2, 2))
>>> linear_indices(s).reshape(3, 5).tolist()
[[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import COMBINE_DIMENSION
from tensorlayout.xla.shape import Shape, takes_shape
from tensorlayout.xla.validate import problems

__all__ = [
    "TilingPlan",
    "TilingStep",
    "allocated_elements",
    "layout_util_linear_index",
    "linear_index",
    "linear_indices",
    "multi_index",
    "tiled_shape",
    "tiling_plan",
]


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
                y = np.pad(y, pad, constant_values=pad_value)
            y = y.reshape(step.split_dims).transpose(step.permutation)
        return np.ascontiguousarray(y).reshape(-1)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


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
                raise LayoutError(f"tile {_tile_str(tile)}: the most minor tile dim cannot be '*'")
            continue
        if t < 1:
            raise LayoutError(f"tile {_tile_str(tile)} has a size {t} < 1")
        groups.append(tuple(pending))
        sizes.append(t)
        pending = []
    merged = tuple(int(np.prod([dims[i] for i in g], dtype=object)) for g in groups)
    n_untiled = untiled
    tiled_merged = merged[n_untiled:]
    counts = tuple(_ceil_div(d, t) for d, t in zip(tiled_merged, sizes, strict=False))
    padded = merged[:n_untiled] + tuple(c * t for c, t in zip(counts, sizes, strict=False))
    split = merged[:n_untiled] + tuple(x for ct in zip(counts, sizes, strict=False) for x in ct)
    m = len(sizes)
    perm = (tuple(range(n_untiled)) + tuple(n_untiled + 2 * i for i in range(m))
            + tuple(n_untiled + 2 * i + 1 for i in range(m)))
    output = merged[:n_untiled] + counts + tuple(sizes)
    return TilingStep(tile, dims, tuple(groups), merged, padded, split, perm, output)


def _tile_str(tile: tuple[int, ...]) -> str:
    return "(" + ",".join("*" if t == COMBINE_DIMENSION else str(t) for t in tile) + ")"


def _checked_array(shape: Shape) -> Shape:
    if not isinstance(shape, Shape) or not shape.is_array:
        raise LayoutError(f"expected an array shape, but got {shape}")
    if shape.layout is None:
        raise LayoutError(f"shape {shape.to_string()} does not have a layout")
    if shape.is_dynamic:
        raise LayoutError(f"shape {shape} has dynamic dimensions; offsets need static sizes")
    found = problems(shape)
    if found:
        raise LayoutError(f"{shape}: {found[0]}")
    return shape


def tiling_plan(shape: Shape) -> TilingPlan:
    """The pad → reshape → transpose recipe of ``shape``'s layout (see :class:`TilingPlan`)."""
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA Shape, but got {type(shape).__name__}")
    return _tiling_plan(shape)


@lru_cache(maxsize=1024)
def _tiling_plan(shape: Shape) -> TilingPlan:
    _checked_array(shape)
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
def tiled_shape(shape: Shape) -> tuple[int, ...]:
    """Dims of the tiled (padded, split, transposed) view; row-major over it is memory order.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> tiled_shape(parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}"))
    (2, 2, 4, 128, 2, 1)
    """
    return tiling_plan(shape).tiled_dims


@takes_shape
def allocated_elements(shape: Shape) -> int:
    """Element slots of the tiled buffer, padding included (product of ``tiled_shape``)."""
    n = 1
    for d in tiled_shape(shape):
        n *= d
    return n


def _check_index(shape: Shape, index: Sequence[int]) -> tuple[int, ...]:
    if isinstance(index, (str, bytes)) or not hasattr(index, "__iter__"):
        raise LayoutError(f"expected an index of {shape.rank} integers for {shape}, but got {index!r}")
    idx = tuple(index)
    if len(idx) != shape.rank or any(isinstance(i, bool) or not isinstance(i, (int, np.integer))
                                     for i in idx):
        raise LayoutError(f"expected an index of {shape.rank} integers for {shape}, "
                          f"but got {index!r}")
    for d, (i, n) in enumerate(zip(idx, shape.dimensions, strict=False)):
        if not 0 <= i < n:
            raise LayoutError(f"index {idx} is out of bounds: dimension {d} has size {n}, "
                              f"but the index is {i}")
    return tuple(int(i) for i in idx)


def _row_major(idx: Sequence[int], dims: Sequence[int]) -> int:
    out = 0
    for i, d in zip(idx, dims, strict=False):
        out = out * d + i
    return out


@takes_shape
def linear_index(shape: Shape, index: Sequence[int]) -> int:
    """Offset (in elements) of logical ``index`` in the tiled physical buffer.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> linear_index(parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}"), (1, 2))
    5
    """
    plan = tiling_plan(shape)
    idx = _check_index(shape, index)
    cur = tuple(idx[d] for d in plan.physical_order)
    for step in plan.steps:
        cur = (0,) * (len(step.input_dims) - len(cur)) + cur
        merged = [_row_major([cur[i] for i in g], [step.input_dims[i] for i in g])
                  for g in step.groups]
        n_untiled = len(step.groups) - len(step.tile) + step.tile.count(COMBINE_DIMENSION)
        sizes = step.output_dims[len(step.output_dims) - (len(merged) - n_untiled):]
        tiled = merged[n_untiled:]
        cur = (tuple(merged[:n_untiled]) + tuple(i // t for i, t in zip(tiled, sizes, strict=False))
               + tuple(i % t for i, t in zip(tiled, sizes, strict=False)))
    return _row_major(cur, plan.tiled_dims)


@takes_shape
def multi_index(shape: Shape, offset: int) -> tuple[int, ...]:
    """The logical index stored at ``offset``; :class:`LayoutError` for a padding slot.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> multi_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), 17)
    (2, 3)
    """
    plan = tiling_plan(shape)
    total = allocated_elements(shape)
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) \
            or not 0 <= offset < total:
        raise LayoutError(f"expected an offset in [0, {total}) for {shape}, but got {offset!r}")
    cur: list[int] = []
    rest = int(offset)
    for d in reversed(plan.tiled_dims):
        rest, r = divmod(rest, d)
        cur.append(r)
    cur.reverse()
    for step in reversed(plan.steps):
        m = len(step.groups) - (len(step.input_dims) - len(step.tile))
        m = len(step.output_dims) - (len(step.groups) - m) - m
        n_tiled = len(step.output_dims) - len(step.groups)
        n_untiled = len(step.groups) - n_tiled
        counts = cur[n_untiled:n_untiled + n_tiled]
        within = cur[n_untiled + n_tiled:]
        sizes = step.output_dims[n_untiled + n_tiled:]
        merged = cur[:n_untiled] + [c * t + w for c, t, w in zip(counts, sizes, within, strict=False)]
        unmerged = [0] * len(step.input_dims)
        for g, value in zip(step.groups, merged, strict=False):
            if value >= step.merged_dims[step.groups.index(g)]:
                raise LayoutError(f"offset {offset} of {shape} is a padding slot")
            for i in reversed(g):
                value, unmerged[i] = divmod(value, step.input_dims[i])
        del m
        cur = unmerged
    rank = shape.rank
    phys = cur[len(cur) - rank:] if rank else []
    if any(cur[: len(cur) - rank]):
        raise LayoutError(f"offset {offset} of {shape} is a padding slot")
    out = [0] * rank
    for p, d in enumerate(plan.physical_order):
        out[d] = phys[p]
    return tuple(out)


@takes_shape
def linear_indices(shape: Shape) -> np.ndarray:
    """Offsets of every logical element, in logical (C) order, as an int64 array.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> linear_indices(parse_shape("f32[2,3]{0,1}")).tolist()
    [0, 2, 4, 1, 3, 5]
    """
    plan = tiling_plan(shape)
    rank = shape.rank
    if shape.elements_in() == 0:
        return np.zeros(0, dtype=np.int64)
    # Per physical dim (or merged group of them), the offset contribution as a function of
    # the logical indices it depends on; contributions of different groups just add.
    # Each term: (tuple of logical dims it depends on, array over those dims' index space).
    terms: list[tuple[tuple[int, ...], np.ndarray]] = [
        ((d,), np.arange(shape.dimensions[d], dtype=np.int64)) for d in plan.physical_order]
    # ``terms[k]`` holds the index value of current dim k; walk the steps symbolically.
    for step in plan.steps:
        missing = len(step.input_dims) - len(terms)
        terms = [((), np.zeros((), dtype=np.int64))] * missing + terms
        merged = [_merge_terms([terms[i] for i in g], [step.input_dims[i] for i in g])
                  for g in step.groups]
        n_tiled = len(step.output_dims) - len(step.groups)
        n_untiled = len(step.groups) - n_tiled
        sizes = step.output_dims[n_untiled + n_tiled:]
        tiled = merged[n_untiled:]
        terms = (merged[:n_untiled] + [(dd, a // t) for (dd, a), t in zip(tiled, sizes, strict=False)]
                 + [(dd, a % t) for (dd, a), t in zip(tiled, sizes, strict=False)])
    strides = _strides(plan.tiled_dims)
    out = np.zeros(shape.dimensions, dtype=np.int64)
    for (deps, values), stride in zip(terms, strides, strict=False):
        if not deps or stride == 0:
            continue
        out += _broadcast(values * stride, deps, rank)
    return out.reshape(-1)


def _merge_terms(parts: list[tuple[tuple[int, ...], np.ndarray]], sizes: list[int]
                 ) -> tuple[tuple[int, ...], np.ndarray]:
    """Row-major combination of several index terms (a ``*`` merge)."""
    if len(parts) == 1:
        return parts[0]
    deps: tuple[int, ...] = tuple(sorted({d for dd, _ in parts for d in dd}))
    total = np.zeros([1] * len(deps), dtype=np.int64)
    for (dd, values), size in zip(parts, sizes, strict=False):
        total = total * size + _broadcast(values, dd, len(deps), deps)
    return deps, total


def _broadcast(values: np.ndarray, deps: tuple[int, ...], rank: int,
               axes: tuple[int, ...] | None = None) -> np.ndarray:
    """View ``values`` (indexed by ``deps`` in sorted order) broadcastable over ``rank`` axes."""
    axes = tuple(range(rank)) if axes is None else axes
    shape = [1] * len(axes)
    for d, n in zip(deps, values.shape, strict=False):
        shape[axes.index(d)] = n
    order = np.argsort(deps) if deps else []
    return values.transpose(order).reshape(shape) if deps else values.reshape(shape)


def _strides(dims: Sequence[int]) -> list[int]:
    out = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        out[k] = out[k + 1] * dims[k + 1]
    return out


@takes_shape
def layout_util_linear_index(shape: Shape, index: Sequence[int]) -> int:
    """XLA ``LayoutUtil::LinearIndex``, for parity: first tile only, rank 1 ignores tiles.

    It equals :func:`linear_index` for single-tile layouts of rank ≥ 2; for repeated tiles
    or rank-1 tiled shapes use :func:`linear_index`, which is exact.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> layout_util_linear_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3))
    17
    """
    _checked_array(shape)
    idx = _check_index(shape, index)
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
            tile_mult *= _ceil_div(n, t)
            within *= t
        else:
            lin += i * tile_mult
            tile_mult *= n
    return lin
