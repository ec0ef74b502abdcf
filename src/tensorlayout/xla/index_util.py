"""Index and iteration utilities with XLA's names (``IndexUtil``, ``LayoutUtil``).

Untiled offsets follow ``minor_to_major``; ``bump_indices`` ignores the layout (last
dim fastest) while ``for_each_index`` follows it, as in XLA.

>>> from tensorlayout.xla.shape import parse_shape
>>> s = parse_shape("f32[10,20]{0,1}")
>>> multidimensional_index_to_linear_index(s, (3, 5)), linear_index_to_multidimensional_index(s, 53)
(53, (3, 5))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from tensorlayout.errors import LayoutError
from tensorlayout.xla.layout import Layout, Tile
from tensorlayout.xla.shape import Shape

__all__ = [
    "bump_indices",
    "compare_indices",
    "for_each_index",
    "get_default_layout_for_rank",
    "get_dimension_stride",
    "index_in_bounds",
    "is_untiled_layout",
    "iter_indices",
    "linear_index_to_multidimensional_index",
    "make_ascending_layout",
    "make_descending_layout",
    "make_layout",
    "make_layout_from_major_to_minor",
    "move_dim_to_major",
    "move_dim_to_minor",
    "multidimensional_index_to_linear_index",
]


def _m2m(shape: Shape) -> tuple[int, ...]:
    if shape.layout is None:
        return tuple(range(shape.rank - 1, -1, -1))
    return shape.layout.minor_to_major


def multidimensional_index_to_linear_index(shape: Shape, index: Sequence[int]) -> int:
    """``IndexUtil::MultidimensionalIndexToLinearIndex`` (untiled, follows minor_to_major)."""
    if len(index) != shape.rank:
        raise LayoutError(f"expected {shape.rank} indices for {shape}, but got {len(index)}")
    linear, scale = 0, 1
    for d in _m2m(shape):
        if not 0 <= index[d] < shape.dimensions[d]:
            raise LayoutError(f"index {tuple(index)} out of bounds in dimension {d} of {shape}")
        linear += index[d] * scale
        scale *= shape.dimensions[d]
    return linear


def linear_index_to_multidimensional_index(shape: Shape, linear: int) -> tuple[int, ...]:
    """``IndexUtil::LinearIndexToMultidimensionalIndex``."""
    if not 0 <= linear < max(shape.elements_in(), 1):
        raise LayoutError(f"linear index {linear} out of range for {shape}")
    out = [0] * shape.rank
    div = 1
    for d in _m2m(shape):
        out[d] = (linear // div) % shape.dimensions[d]
        div *= shape.dimensions[d]
    return tuple(out)


def get_dimension_stride(shape: Shape, dim: int) -> int:
    """``IndexUtil::GetDimensionStride``: product of the dims more minor than ``dim``."""
    dim = shape.dim_index(dim)
    stride = 1
    for d in _m2m(shape):
        if d == dim:
            return stride
        stride *= shape.dimensions[d]
    return stride


def bump_indices(shape: Shape, indices: list[int]) -> bool:
    """``IndexUtil::BumpIndices``: odometer step, last dim fastest; False after the last.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> idx = [0, 1]; bump_indices(parse_shape("s32[2,2]"), idx), idx
    (True, [1, 0])
    """
    for d in range(shape.rank - 1, -1, -1):
        if indices[d] + 1 < shape.dimensions[d]:
            indices[d] += 1
            return True
        indices[d] = 0
    return False


def index_in_bounds(shape: Shape, index: Sequence[int]) -> bool:
    """``IndexUtil::IndexInBounds`` (like XLA, negative values are not checked)."""
    return len(index) == shape.rank and all(i < d for i, d in zip(index, shape.dimensions, strict=False))


def compare_indices(a: Sequence[int], b: Sequence[int]) -> int:
    """``IndexUtil::CompareIndices``: -1 if a < b lexicographically, +1 if a > b, else 0."""
    ta, tb = tuple(a), tuple(b)
    return -1 if ta < tb else (1 if ta > tb else 0)


def iter_indices(shape: Shape, base: Sequence[int] | None = None,
                 count: Sequence[int] | None = None,
                 incr: Sequence[int] | None = None) -> Iterator[tuple[int, ...]]:
    """Indices visited by ``ForEachIndex``: ``base`` first, minor dims (by layout) fastest."""
    rank = shape.rank
    base = list(base) if base is not None else [0] * rank
    count = list(count) if count is not None else list(shape.dimensions)
    incr = list(incr) if incr is not None else [1] * rank
    if not (len(base) == len(count) == len(incr) == rank):
        raise LayoutError(f"base, count and incr need {rank} entries each for {shape}")
    if any(c > 0 and i == 0 for c, i in zip(count, incr, strict=False)):
        raise LayoutError("an increment of 0 with a positive count would loop forever")
    if shape.elements_in() == 0 or any(c == 0 and i != 0 for c, i in zip(count, incr, strict=False)):
        return
    idx = list(base)
    order = _m2m(shape)
    while True:
        yield tuple(idx)
        for d in order:
            if incr[d] == 0:
                continue
            idx[d] += incr[d]
            if idx[d] < base[d] + count[d]:
                break
            idx[d] = base[d]
        else:
            return


def for_each_index(shape: Shape, fn: Callable[[tuple[int, ...]], bool | None],
                   base: Sequence[int] | None = None, count: Sequence[int] | None = None,
                   incr: Sequence[int] | None = None) -> int:
    """``ShapeUtil::ForEachIndex``; ``fn`` returning False stops. Returns the visit count."""
    n = 0
    for idx in iter_indices(shape, base, count, incr):
        n += 1
        if fn(idx) is False:
            break
    return n


def make_layout(minor_to_major: Sequence[int], tiles: Sequence[Sequence[int]] = (),
                **fields: object) -> Layout:
    """``LayoutUtil::MakeLayout``."""
    return Layout(tuple(minor_to_major), tuple(Tile(tuple(t)) for t in tiles), **fields)  # type: ignore[arg-type]


def make_layout_from_major_to_minor(major_to_minor: Sequence[int]) -> Layout:
    """``LayoutUtil::MakeLayoutFromMajorToMinor``: the reversed order as ``minor_to_major``."""
    return Layout(tuple(reversed(tuple(major_to_minor))))


def make_descending_layout(rank: int) -> Layout:
    """``{rank-1, ..., 0}``: dim 0 most major (XLA's default)."""
    return Layout(tuple(range(rank - 1, -1, -1)))


def make_ascending_layout(rank: int) -> Layout:
    """``{0, ..., rank-1}``: dim 0 most minor."""
    return Layout(tuple(range(rank)))


get_default_layout_for_rank = make_descending_layout


def move_dim_to_major(layout: Layout, dim: int) -> Layout:
    """``LayoutUtil::MoveDimToMajor``: ``{2,1,0}``, dim 1 → ``{2,0,1}``."""
    m2m = [d for d in layout.minor_to_major if d != dim] + [dim]
    return layout.replace(minor_to_major=tuple(m2m))


def move_dim_to_minor(layout: Layout, dim: int) -> Layout:
    """``LayoutUtil::MoveDimToMinor``: ``{2,0,3,1}``, dim 3 → ``{3,2,0,1}``."""
    m2m = [dim] + [d for d in layout.minor_to_major if d != dim]
    return layout.replace(minor_to_major=tuple(m2m))


def is_untiled_layout(tiles: Sequence[Tile | Sequence[int]],
                      physical_dims: Sequence[int]) -> bool:
    """``LayoutUtil::IsUntiledLayout``: tiling leaves plain row-major order unchanged.

    >>> is_untiled_layout([(8, 128)], [24, 128]), is_untiled_layout([(8, 128)], [2, 3, 4])
    (True, False)
    """
    dims = list(physical_dims)
    for tile in tiles:
        t = list(tile.dims if isinstance(tile, Tile) else tile)
        if len(t) > len(dims):
            dims = [1] * (len(t) - len(dims)) + dims
        k = len(dims) - len(t)
        tiled = dims[k:]
        if any(d % s for d, s in zip(tiled, t, strict=False)):
            return False
        counts = [d // s for d, s in zip(tiled, t, strict=False)]
        # Row-major order survives only if, after the first tile dim != 1, counts are 1.
        seen_non_one = False
        for c, s in zip(counts, t, strict=False):
            if seen_non_one and c != 1:
                return False
            if s != 1:
                seen_non_one = True
        dims = dims[:k] + counts + t
    return True
