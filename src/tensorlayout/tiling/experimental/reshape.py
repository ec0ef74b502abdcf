"""Tiles through reshapes: XLA's minimal-reshape analysis (``reshape_analysis``) and the
propagation of a tile across each minimal reshape (``PropagateTileThroughReshape``).

A reshape splits, left to right, into *minimal reshapes*: the shortest runs of input and
output dimensions with equal element counts (size-1 dimensions join the next run, trailing
ones the last). Each is an identity, a rank change, an expansion (one dimension into several),
a collapse (several into one) or generic (unsupported). A tile crosses a collapse or an
expansion only when the elements it covers stay a strided box: at most one partially covered
dimension, or exactly one strided dimension and every other of size 1.

>>> from tensorlayout.xla.shape import Shape
>>> for r in get_minimal_reshapes(Shape.parse("f32[2,4,8]"), Shape.parse("f32[8,4,2]")):
...     print(r)
[0, 2] -> [0, 1] (kCollapseShape)
[2, 1] -> [1, 2] (kExpandShape)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tensorlayout.core.intmath import prod
from tensorlayout.indexing import Expr, canonicalize, const
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.tile import (
    DimTile,
    Tile,
    delinearize_index,
    get_full_dim_tile,
    linearize_shape,
)
from tensorlayout.tiling.experimental.tiling_space import TilingSpace
from tensorlayout.xla.shape import Shape

__all__ = [
    "MinimalReshape",
    "get_minimal_reshape_category",
    "get_minimal_reshapes",
    "positions_of_non_trivial_dims",
    "propagate_tile_through_reshape",
]


@dataclass(frozen=True)
class MinimalReshape:
    """Input dims ``[start, start + count)`` reshaped into output dims, with the category."""

    input_dim_ids: tuple[int, int]  # (start, count)
    output_dim_ids: tuple[int, int]
    category: str

    def __str__(self) -> str:
        (a, b), (c, d) = self.input_dim_ids, self.output_dim_ids
        return f"[{a}, {b}] -> [{c}, {d}] ({self.category})"


def get_minimal_reshape_category(
    in_dims: Sequence[int], out_dims: Sequence[int], in_ids: Sequence[int], out_ids: Sequence[int]
) -> str:
    """``GetMinimalReshapeCategory`` of the run ``in_ids -> out_ids``."""
    big_in = [in_dims[i] for i in in_ids if in_dims[i] > 1]
    big_out = [out_dims[i] for i in out_ids if out_dims[i] > 1]
    if big_in == big_out:
        if len(in_ids) == len(out_ids):
            return "kIdentity"
        return "kIncreaseRank" if len(in_ids) < len(out_ids) else "kDecreaseRank"
    if len(big_in) == 1 and len(big_out) > 1:
        return "kExpandShape"
    if len(big_in) > 1 and len(big_out) == 1:
        return "kCollapseShape"
    return "kGeneric"


def _range(ids: list[int]) -> tuple[int, int]:
    return (ids[0] if ids else 0, len(ids))


def get_minimal_reshapes(input_shape: Shape, output_shape: Shape) -> list[MinimalReshape]:
    """``GetMinimalReshapes``: the reshape as a left-to-right list of minimal reshapes."""
    a, b = list(input_shape.dimensions), list(output_shape.dimensions)
    if prod(a) != prod(b):
        raise TilingStatusError(
            "kInvalidArgument", "Input and output shapes must have the same number of elements."
        )
    out: list[MinimalReshape] = []
    i = j = 0
    n_in = n_out = 1
    ins: list[int] = []
    outs: list[int] = []
    while i < len(a) or j < len(b) or ins or outs:
        if i < len(a) and (not ins or n_in < n_out):
            n_in *= a[i]
            ins.append(i)
            i += 1
            continue
        if j < len(b) and (not outs or n_out < n_in):
            n_out *= b[j]
            outs.append(j)
            j += 1
            continue
        while i == len(a) and j < len(b) and b[j] == 1:
            outs.append(j)
            j += 1
        while j == len(b) and i < len(a) and a[i] == 1:
            ins.append(i)
            i += 1
        out.append(MinimalReshape(_range(ins), _range(outs), get_minimal_reshape_category(a, b, ins, outs)))
        ins, outs, n_in, n_out = [], [], 1, 1
    return out


def positions_of_non_trivial_dims(dims: Sequence[int]) -> list[int]:
    """``PositionsOfNonTrivialDims``: the positions of dimensions of size other than 1."""
    return [k for k, d in enumerate(dims) if d != 1]


def _constant(e: Expr) -> int | None:
    c = canonicalize(e)
    return c.value if c.is_const else None


def _non_trivial(dims: Sequence[int], run: tuple[int, int]) -> list[int]:
    """``GetNonTrivialDimInfo``'s ids: the run's dims of size > 1, else its first dim."""
    start, count = run
    ids = [k for k in range(start, start + count) if dims[k] > 1]
    return ids or ([start] if count else [])


def _fully_covered(t: DimTile, dim: int) -> bool:
    size, stride = _constant(t.size), _constant(t.stride)
    return size is not None and (size == dim or (stride is not None and size * stride == dim))


class _Contiguity:
    """``VerifyReshapeContiguity`` of one collapse or expansion (concrete tile sizes only)."""

    def __init__(
        self,
        src: Sequence[int],
        src_tiles: Sequence[DimTile],
        dst: Sequence[int],
        dst_tiles: Sequence[DimTile],
    ) -> None:
        self.collapse = len(dst_tiles) < len(src_tiles)
        self.multi_dims = src if self.collapse else dst
        self.multi = list(src_tiles if self.collapse else dst_tiles)
        self.linear = list(dst_tiles if self.collapse else src_tiles)
        self.prefix = (
            f"Reshape is non-contiguous [{', '.join(map(str, src))}] -> [{', '.join(map(str, dst))}], "
            f"tiling {'; '.join(map(str, src_tiles))} -> {'; '.join(map(str, dst_tiles))}: "
        )

    def fail(self, message: str) -> TilingStatusError:
        return TilingStatusError("kUnimplemented", self.prefix + message)

    def strided_dims(self) -> list[int]:
        n = len(self.multi)
        checked = self.multi[: n - 1] if self.collapse else self.linear
        strides = []
        for t in checked:
            value = _constant(t.stride)
            if value is None or value <= 0:
                raise self.fail(f"Expect constant positive source tile stride. Got: {t.stride}")
            strides.append(value)
        if self.collapse:
            return [k for k, s in enumerate(strides) if s > 1]
        if strides[0] <= 1:
            return []
        flat = 1
        for k in range(n - 2, -1, -1):
            flat *= self.multi_dims[k + 1]
            if strides[0] == flat:
                return [k]
        raise self.fail(
            f"Source tile stride (={strides[0]}) does not match any of the flat strides of the "
            "target dimensions"
        )

    def verify(self) -> None:
        if len(self.linear) != 1:
            raise self.fail(f"Expected linear side to have 1 tile, got {len(self.linear)}.")
        if not self.multi:
            raise self.fail("Expected multidim side to be non-empty.")
        strided = self.strided_dims()
        if len(strided) > 1:
            raise self.fail(
                f"At most one dimension can have stride >1, found strided dimensions: "
                f"[{', '.join(map(str, strided))}]"
            )
        if strided:
            for k, t in enumerate(self.multi):
                if k != strided[0] and _constant(t.size) != 1:
                    raise self.fail(
                        f"For non-contiguous source tile stride, only the strided dimension "
                        f"{strided[0]} can have size > 1. Found: dim {k} has size {t.size}."
                    )
            return
        self.verify_box()

    def verify_box(self) -> None:
        """Ones, at most one partial dimension, then fully covered ones (inner size-1 tiles of
        a collapse may close the run)."""
        n = len(self.multi)
        i = 0
        while i < n and _constant(self.multi[i].size) == 1:
            i += 1
        j, all_ones = n - 1, True
        while j >= 0:
            size = _constant(self.multi[j].size)
            if size is None:
                break
            if _fully_covered(self.multi[j], self.multi_dims[j]):
                all_ones = all_ones and size <= 1
                j -= 1
            elif self.collapse and size == 1 and all_ones:
                j -= 1
            else:
                break
        if i < j:
            raise self.fail("Multiple dimensions are partially tiled")


def _collapse(space: TilingSpace, src: list[DimTile], src_dims: list[int]) -> DimTile:
    """The linear tile of a collapse: linearized offsets and inclusive bounds; the stride of the
    innermost dimension tiled beyond one element times the sizes inside it."""
    total: Expr = const(1)
    for t in src:
        total = total * t.size
    last = [(t.offset + (t.size - 1) * t.stride).min(t.upper_bound - 1) for t in src]
    stride, inner = src[-1].stride, 1
    for k in range(len(src) - 1, -1, -1):
        if _constant(src[k].size) != 1:
            stride = src[k].stride * inner
            break
        inner *= src_dims[k]
    tile = DimTile(
        linearize_shape(src_dims, [t.offset for t in src]), total, stride, linearize_shape(src_dims, last) + 1
    )
    return space.simplify_dim_tile(tile)


def _expand(space: TilingSpace, source: DimTile, dst_dims: list[int]) -> list[DimTile]:
    """The tiles of an expansion: the first and last element delinearized per dimension."""
    first = delinearize_index(dst_dims, source.offset)
    last = delinearize_index(dst_dims, source.offset + (source.size - 1) * source.stride)
    return [space.simplify_dim_tile(DimTile(f, l - f + 1, const(1), l + 1)) for f, l in zip(first, last)]


def _through_minimal(
    space: TilingSpace, r: MinimalReshape, src: Shape, dst_dims: list[int], tile: Tile, out: list[DimTile]
) -> None:
    src_dims = list(src.dimensions)
    s_ids, d_ids = _non_trivial(src_dims, r.input_dim_ids), _non_trivial(dst_dims, r.output_dim_ids)
    s_tiles = [tile.dim_tiles[k] for k in s_ids]
    s_sizes, d_sizes = [src_dims[k] for k in s_ids], [dst_dims[k] for k in d_ids]
    if r.category in ("kIdentity", "kIncreaseRank", "kDecreaseRank"):
        for a, b in zip(s_ids, d_ids):
            out[b] = tile.dim_tiles[a]
        return
    if r.category == "kCollapseShape":
        out[d_ids[0]] = _collapse(space, s_tiles, s_sizes)
    elif r.category == "kExpandShape":
        for k, t in zip(d_ids, _expand(space, s_tiles[0], d_sizes)):
            out[k] = t
    else:
        raise TilingStatusError(
            "kUnimplemented", "Unsupported minimal reshape: should already be rejected by IsSupportedReshape"
        )
    if not space.is_symbolic:
        _Contiguity(s_sizes, s_tiles, d_sizes, [out[k] for k in d_ids]).verify()


def propagate_tile_through_reshape(space: TilingSpace, tile: Tile, src: Shape, dst: Shape) -> Tile:
    """``PropagateTileThroughReshape``: a tile of ``src`` as a tile of ``dst`` (reshape to the
    non-trivial dims of ``dst``, then a broadcast adding its size-1 dims)."""
    keep = positions_of_non_trivial_dims(dst.dimensions)
    mid_dims = [dst.dimensions[k] for k in keep]
    mid = Shape.array(src.element_type, mid_dims)
    reshapes = get_minimal_reshapes(src, mid)
    if any(r.category == "kGeneric" for r in reshapes):
        raise TilingStatusError("kUnimplemented", "Unsupported reshape (kGeneric).")
    dims = [get_full_dim_tile(d) for d in mid_dims]
    for r in reshapes:
        _through_minimal(space, r, src, mid_dims, tile, dims)
    full = [dims[keep.index(k)] if k in keep else get_full_dim_tile(d) for k, d in enumerate(dst.dimensions)]
    return tile.clone_with_new_dims(full)
