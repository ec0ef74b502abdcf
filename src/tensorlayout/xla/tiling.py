"""Tiled index math under XLA's names: where logical element (i, j, ...) of an XLA array lives.

The index math (``linear_index``, ``multi_index``, ``linear_indices``, ``tiled_shape``) reads
the shape's lowering into the layout core (:mod:`tensorlayout.xla.lowering`, where the tiling
walk is written once). :class:`TilingPlan` is XLA's documented recipe itself — pad, reshape,
transpose, once per tile — as numpy operations: an independent statement of the same
semantics that the tests and benchmarks check the core against.

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

from tensorlayout.core.intmath import ceil_div, prod
from tensorlayout.core.layout import check_index
from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import COMBINE_DIMENSION, Tile
from tensorlayout.xla.lowering import checked_array, lower_shape
from tensorlayout.xla.shape import Shape, as_shape, takes_shape

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
def tiled_shape(shape: Shape) -> tuple[int, ...]:
    """Dims of the tiled (padded, split, transposed) view; row-major over it is memory order.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> tiled_shape(parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}"))
    (2, 2, 4, 128, 2, 1)
    """
    return tuple(d.extent for d in lower_shape(shape).digits)


@takes_shape
def allocated_elements(shape: Shape) -> int:
    """Element slots of the tiled buffer, padding included (product of ``tiled_shape``)."""
    return prod(tiled_shape(shape))


class _IndexMath:
    """One shape's per-call index math, prepared once: each dim's digits as ``(block, extent,
    stride)`` and, when the digits decide the index (a mixed radix per dim, strides decisive,
    no swizzle), the digits by falling stride for reading an offset back. Anything off the
    fast path (other argument types, out of range, padding) goes through the core's general
    code, which raises the precise error.
    """

    __slots__ = ("base", "decode", "dims", "lay", "padded", "per_dim", "shape", "text", "total")

    def __init__(self, shape: Shape) -> None:
        lay = lower_shape(shape)
        self.shape, self.lay, self.dims, self.base = shape, lay, lay.shape, lay.base
        self.total = allocated_elements(shape)
        chains = lay.per_dim_digits() if lay.post is None else None
        self.per_dim: tuple[tuple[tuple[int, int, int], ...], ...] | None = None
        self.decode: tuple[tuple[int, int, int, int], ...] | None = None
        self.padded: tuple[tuple[int, int], ...] = ()
        self.text: str | None = None  # the shape's text, for error messages, once needed
        if chains is not None:
            self.per_dim = tuple(tuple((d.block, d.extent, d.stride) for d in ds if d.extent > 1 and d.stride)
                                 for ds in chains[0])
            if lay.decides_indices():
                self.decode = tuple(sorted(((d.stride, d.extent, d.block, k) for k, ds in enumerate(chains[0])
                                            for d in ds if d.extent > 1), reverse=True))
                # the dims whose digits reach past their size (the tile padding of a ragged dim)
                self.padded = tuple((k, n) for k, (ds, n) in enumerate(zip(chains[0], self.dims))
                                    if ds and ds[0].block * ds[0].extent > n)

    def linear(self, index: Sequence[int]) -> int:
        if self.per_dim is not None and type(index) is tuple and len(index) == len(self.dims):
            total = self.base
            for i, n, digits in zip(index, self.dims, self.per_dim):
                if type(i) is not int or not 0 <= i < n:
                    return self.lay.checked_offset(index)
                for b, e, s in digits:
                    total += i // b % e * s
            return total
        return self.lay.checked_offset(index)

    def multi(self, offset: int) -> tuple[int, ...]:
        if self.decode is not None and type(offset) is int and 0 <= offset < self.total:
            # the digits decide the index (positive nested strides): an offset they do not
            # read back to an in-bounds index holds no element
            rest = offset - self.base
            idx = [0] * len(self.dims)
            for s, e, b, k in self.decode:
                v = rest // s
                if not 0 <= v < e:
                    raise self._padding(offset)
                rest -= v * s
                idx[k] += v * b
            if rest or any(idx[k] >= n for k, n in self.padded):
                raise self._padding(offset)
            return tuple(idx)
        return self.slow_multi(offset)

    def slow_multi(self, offset: int) -> tuple[int, ...]:
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) \
                or not 0 <= offset < self.total:
            raise LayoutError(f"expected an offset in [0, {self.total}) for {self.shape}, but got {offset!r}")
        found = self.lay.index_of(int(offset))
        if found is None:
            raise self._padding(offset)
        return found

    def _padding(self, offset: int) -> LayoutError:
        if self.text is None:
            self.text = str(self.shape)
        return LayoutError(f"offset {offset} of {self.text} is a padding slot")


#: Prepared index math by the identity of the caller's shape object (a Shape or its text), and
#: by the identity of its lowering (equal shapes share one): ``(key object, math)``, the object
#: kept so that its id stays its own. Bounded: cleared when full.
_MATH_BY_ARG: dict[int, tuple[object, _IndexMath]] = {}
_MATH_BY_LAYOUT: dict[int, tuple[object, _IndexMath]] = {}
_MATH_LIMIT = 256


def _math(shape: Shape | str) -> _IndexMath:
    entry = _MATH_BY_ARG.get(id(shape))
    if entry is not None and entry[0] is shape:
        return entry[1]
    checked = as_shape(shape)
    lay = lower_shape(checked)
    found = _MATH_BY_LAYOUT.get(id(lay))
    math = found[1] if found is not None and found[0] is lay else _IndexMath(checked)
    for table, key in ((_MATH_BY_ARG, shape), (_MATH_BY_LAYOUT, lay)):
        if len(table) >= _MATH_LIMIT:
            table.clear()
        table[id(key)] = (key, math)
    return math


def linear_index(shape: Shape | str, index: Sequence[int]) -> int:
    """Offset (in elements) of logical ``index`` in the tiled physical buffer.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> linear_index(parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}"), (1, 2))
    5
    """
    return _math(shape).linear(index)


def multi_index(shape: Shape | str, offset: int) -> tuple[int, ...]:
    """The logical index stored at ``offset``; :class:`LayoutError` for a padding slot.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> multi_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), 17)
    (2, 3)
    """
    return _math(shape).multi(offset)


@takes_shape
def linear_indices(shape: Shape) -> np.ndarray:
    """Offsets of every logical element, in logical (C) order, as an int64 array.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> linear_indices(parse_shape("f32[2,3]{0,1}")).tolist()
    [0, 2, 4, 1, 3, 5]
    """
    return lower_shape(shape).offsets()


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
