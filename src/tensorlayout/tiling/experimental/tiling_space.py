"""XLA's experimental ``TilingSpace``: the dimensions a fusion is tiled over.

Parallel dimensions are the root's output dimensions (one tile id ``tid_i`` and tile size
``ts_i`` each); sequential dimensions are added, in use-before-def order, for the contracting
dimensions of a dot / scaled dot, the reduced dimensions of a reduce, the group and contracting
dimensions of a ragged dot, and a scan's scan dimension; runtime variables for the offsets of
a dynamic slice and a ragged dot's group sizes.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[100,10] parameter(0)\\n"
...                  " ROOT a0 = f32[100,10] exponential(p0)\\n}")
>>> space = TilingSpace.create(m.entry.root)
>>> print(space)  # doctest: +NORMALIZE_WHITESPACE
Dimensions:
0 type: parallel size: 100 dim ID:0 hlo: %a0 = f32[100,10]{1,0} exponential(%p0)
1 type: parallel size: 10 dim ID:1 hlo: %a0 = f32[100,10]{1,0} exponential(%p0)
Root tiles:
0 root tile: offsets [tid_0 * ts_0, tid_1 * ts_1] sizes [ts_0, ts_1] strides [1, 1] upper bounds [100, 10]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from tensorlayout.core.intmath import ceil_div
from tensorlayout.hlo.fusion import FusionAdaptor
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import Expr, IndexingMap, Interval, canonicalize, const, var
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.hlo_text import instruction_to_string
from tensorlayout.tiling.experimental.tile import DimTile, Tile, get_default_dim_tile
from tensorlayout.tiling.experimental.tiling_space_utils import get_flat_tilings_for_input_space
from tensorlayout.xla.shape import Shape

__all__ = ["DimensionInfo", "RTVarInfo", "TilingSpace", "dim_tile", "first_shape"]

PARALLEL, SEQUENTIAL = "parallel", "sequential"


@dataclass(frozen=True)
class DimensionInfo:
    """One tiled dimension: id, size, ``parallel``/``sequential``, defining HLO and position."""

    id: int
    dimension_size: int
    type: str
    hlo: HloInstruction
    dim_position: int
    tile_size: int | None = None

    def to_string(self) -> str:
        size = f" tile size: {self.tile_size}" if self.tile_size is not None else ""
        return (
            f"{self.id} type: {self.type} size: {self.dimension_size}{size} dim ID:{self.dim_position}"
            f" hlo: {instruction_to_string(self.hlo)}"
        )


@dataclass(frozen=True)
class RTVarInfo:
    """A runtime variable: id, bounds ``[0, upper]`` and the instruction whose value it is."""

    id: int
    bounds: Interval
    hlo: HloInstruction


def first_shape(instr: HloInstruction) -> Shape:
    """``GetFirstShape``: the shape, or element 0 of a tuple shape."""
    return instr.shape.tuple_shapes[0] if instr.shape.is_tuple else instr.shape


@dataclass(frozen=True)
class TilingSpace:
    """The dimensions and runtime variables of a fusion's tiling, its root tiles and (after
    :meth:`assign_tile_sizes`) the concrete tile sizes."""

    dimensions: tuple[DimensionInfo, ...]
    rt_vars: tuple[RTVarInfo, ...]
    tiled_roots: tuple[Tile, ...]
    hlo_to_dimension: dict[tuple[HloInstruction, int], int] = field(repr=False)
    hlo_to_rt_var: dict[tuple[HloInstruction, int], int] = field(repr=False)

    @property
    def num_dimensions(self) -> int:
        return len(self.dimensions)

    @property
    def num_parallel_dimensions(self) -> int:
        return sum(d.type == PARALLEL for d in self.dimensions)

    @property
    def num_rt_vars(self) -> int:
        return len(self.rt_vars)

    @property
    def is_symbolic(self) -> bool:
        """No tile sizes assigned yet."""
        return any(d.tile_size is None for d in self.dimensions) or not self.dimensions

    @classmethod
    def create(
        cls,
        fusion: HloInstruction,
        *,
        same_shape_multi_output_fusion: bool = False,
        triton_multi_output_fusion: bool = False,
    ) -> TilingSpace:
        """``TilingSpace::Create`` of a fusion (or a single instruction, as
        ``HloFusionAdaptor::ForInstruction`` sees it); the flags are XLA's debug options
        ``xla_gpu_experimental_enable_same_shape_multi_output_fusion`` and
        ``xla_gpu_unsupported_enable_triton_multi_output_fusion``."""
        adaptor = FusionAdaptor.for_instruction(fusion)
        roots = list(adaptor.roots)
        builder = _Builder()
        if len(roots) == 1 or triton_multi_output_fusion:
            builder.initialize(roots)
        elif same_shape_multi_output_fusion and _same_shapes(roots):
            builder.initialize(roots[:1])
            for root in roots[1:]:
                for i in range(first_shape(root).rank):
                    builder.hlo_to_dimension[(root, i)] = builder.hlo_to_dimension[(roots[0], i)]
        else:
            raise TilingStatusError(
                "kUnimplemented", "TilingSpace does not support fusions with multiple roots."
            )
        for instr in reversed(adaptor.post_order):
            _PROCESS.get(instr.opcode, _no_dims)(builder, instr)
        n = len(builder.dims)
        tiles = []
        for root in adaptor.roots:
            dims = first_shape(root).dimensions
            ids = [builder.dims[builder.hlo_to_dimension[(root, i)]].id for i in range(len(dims))]
            tile = Tile(
                n, len(builder.rts), tuple(get_default_dim_tile(k, var(n + k), d) for k, d in zip(ids, dims))
            )
            tiles += [tile] * (len(root.shape.tuple_shapes) if root.shape.is_tuple else 1)
        return cls(
            tuple(builder.dims),
            tuple(builder.rts),
            tuple(tiles),
            builder.hlo_to_dimension,
            builder.hlo_to_rt_var,
        )

    def get_dimension_info(self, hlo: HloInstruction, dim_position: int) -> DimensionInfo:
        """``GetDimensionInfo``."""
        k = self.hlo_to_dimension.get((hlo, dim_position))
        if k is None:
            raise TilingStatusError(
                "kInternal", f"Dimension not found for {instruction_to_string(hlo)} dimension {dim_position}"
            )
        return self.dimensions[k]

    def get_rt_var_info(self, hlo: HloInstruction, operand_id: int) -> RTVarInfo | None:
        """``GetRTVarInfo``: the runtime variable of ``hlo``'s operand ``operand_id``, if any."""
        k = self.hlo_to_rt_var.get((hlo, operand_id))
        return None if k is None else self.rt_vars[k]

    def tile_size_replacements(self, tile_sizes: Sequence[int]) -> dict[Expr, Expr]:
        """``GetTileSizeReplacementMap``: ``ts_i -> size``; ``tid_i -> 0`` where one tile covers."""
        n = self.num_dimensions
        out: dict[Expr, Expr] = {}
        for d, size in zip(self.dimensions, tile_sizes, strict=True):
            out[var(n + d.id)] = const(size)
            if d.dimension_size <= size:
                out[var(d.id)] = const(0)
        return out

    def assign_tile_sizes(self, tile_sizes: Sequence[int]) -> TilingSpace:
        """``AssignTileSizes``: the space with concrete tile sizes and simplified root tiles."""
        if not self.is_symbolic:
            raise TilingStatusError(
                "kInternal", "Tile sizes have already been assigned to this tiling space."
            )
        if len(tile_sizes) != self.num_dimensions:
            raise TilingStatusError(
                "kInvalidArgument", f"expected {self.num_dimensions} tile sizes, got {len(tile_sizes)}"
            )
        dims = tuple(replace(d, tile_size=int(s)) for d, s in zip(self.dimensions, tile_sizes))
        mapping = self.tile_size_replacements(tile_sizes)
        space = replace(self, dimensions=dims)
        roots = tuple(space.simplify_tile(t.replace_exprs(mapping)) for t in self.tiled_roots)
        return replace(space, tiled_roots=roots)

    def get_valid_tilings(self) -> list[tuple[int, ...]]:
        """``GetValidTilings``: every candidate tiling (powers of two and the size per
        dimension); a reduce's sequential dimensions are not tiled (their size).

        >>> from tensorlayout.hlo import parse_module
        >>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[3,4] parameter(0)\\n"
        ...                  " ROOT n = f32[3,4] negate(p0)\\n}")
        >>> TilingSpace.create(m.entry.root).get_valid_tilings()[:4]
        [(1, 1), (1, 2), (1, 4), (2, 1)]
        """
        untiled = [d.type == SEQUENTIAL and d.hlo.opcode == "reduce" for d in self.dimensions]
        space = [1 if u else d.dimension_size for d, u in zip(self.dimensions, untiled)]
        return [
            tuple(d.dimension_size if u else t for d, u, t in zip(self.dimensions, untiled, tiling))
            for tiling in get_flat_tilings_for_input_space(space)
        ]

    def _simplification_map(self, expr: Expr) -> IndexingMap:
        dims = [(0, ceil_div(d.dimension_size, d.tile_size or 1) - 1) for d in self.dimensions]
        ranges = [(0, 0)] * self.num_dimensions
        rts = [(r.bounds.lower, r.bounds.upper) for r in self.rt_vars]
        return IndexingMap([expr], dims, ranges, rts)

    def simplify_expression(self, expr: Expr) -> Expr:
        """``SimplifyExpression``: canonical form while symbolic, else simplified against the
        tile-id ranges ``[0, ceil(size / tile) - 1]`` and runtime-variable bounds."""
        if self.is_symbolic:
            return canonicalize(expr)
        return self._simplification_map(expr).simplify("preserve").results[0]

    def simplify_dim_tile(self, d: DimTile) -> DimTile:
        """``DimTile::Simplify``: every expression of one dimension simplified in this space."""
        return DimTile(*(self.simplify_expression(e) for e in (d.offset, d.size, d.stride, d.upper_bound)))

    def simplify_tile(self, tile: Tile) -> Tile:
        """``Tile::Simplify``: every expression of the tile simplified in this space."""
        return replace(
            tile,
            dim_tiles=tuple(self.simplify_dim_tile(d) for d in tile.dim_tiles),
            replica_ids=tuple(self.simplify_dim_tile(d) for d in tile.replica_ids),
        )

    def to_string(self) -> str:
        """``TilingSpace::ToString``."""
        lines = ["Dimensions:"] + [d.to_string() for d in self.dimensions]
        if self.rt_vars:
            lines.append("Runtime variables:")
            lines += [
                f"{r.id} bounds: [{r.bounds.lower}, {r.bounds.upper}] hlo: {instruction_to_string(r.hlo)}"
                for r in self.rt_vars
            ]
        lines.append("Root tiles:")
        lines += [
            f"{k} root tile: {t.to_string(print_variables=False)}" for k, t in enumerate(self.tiled_roots)
        ]
        return "\n".join(lines) + "\n"

    __str__ = to_string


def dim_tile(space: TilingSpace, info: DimensionInfo) -> DimTile:
    """``GetDimTile``: the tile of a (sequential) tiling dimension."""
    n = space.num_dimensions
    size = const(info.tile_size) if info.tile_size is not None else var(n + info.id)
    covers = info.tile_size is not None and info.tile_size >= info.dimension_size
    offset = const(0) if covers else var(info.id) * size
    return DimTile(offset, size, const(1), const(info.dimension_size))


def _same_shapes(roots: Sequence[HloInstruction]) -> bool:
    shapes = [first_shape(r).dimensions for r in roots]
    return all(s == shapes[0] for s in shapes)


class _Builder:
    """The mutable state of one ``create`` call (the value it returns is frozen)."""

    def __init__(self) -> None:
        self.dims: list[DimensionInfo] = []
        self.rts: list[RTVarInfo] = []
        self.hlo_to_dimension: dict[tuple[HloInstruction, int], int] = {}
        self.hlo_to_rt_var: dict[tuple[HloInstruction, int], int] = {}

    def append_dimension(self, hlo: HloInstruction, position: int, size: int, kind: str) -> None:
        self.dims.append(DimensionInfo(len(self.dims), size, kind, hlo, position))
        self.hlo_to_dimension[(hlo, position)] = len(self.dims) - 1

    def append_rt_var(self, hlo: HloInstruction, operand_id: int, rt: HloInstruction, upper: int) -> None:
        self.rts.append(RTVarInfo(len(self.rts), Interval(0, upper), rt))
        self.hlo_to_rt_var[(hlo, operand_id)] = len(self.rts) - 1

    def initialize(self, roots: Sequence[HloInstruction]) -> None:
        for root in roots:
            if not root.shape.is_array and root.opcode not in ("reduce", "scan"):
                raise TilingStatusError(
                    "kInvalidArgument",
                    f"Unsupported root shape {root.shape} for root {instruction_to_string(root)}",
                )
            scan_dim = root.attribute("dimensions", (None,))[0] if root.opcode == "scan" else None
            for i, size in enumerate(first_shape(root).dimensions):
                self.append_dimension(root, i, size, SEQUENTIAL if i == scan_dim else PARALLEL)


def _no_dims(b: _Builder, hlo: HloInstruction) -> None:
    """Instructions that add no dimension."""


def _dot_like(b: _Builder, hlo: HloInstruction) -> None:
    lhs = hlo.operands[0].shape
    rank = first_shape(hlo).rank
    for k, dim in enumerate(hlo.attribute("lhs_contracting_dims", ())):
        b.append_dimension(hlo, rank + k, lhs.dimensions[dim], SEQUENTIAL)


def _reduce(b: _Builder, hlo: HloInstruction) -> None:
    shape = hlo.operands[0].shape
    rank = first_shape(hlo).rank
    for k, dim in enumerate(hlo.attribute("dimensions", ())):
        b.append_dimension(hlo, rank + k, shape.dimensions[dim], SEQUENTIAL)


def _scan(b: _Builder, hlo: HloInstruction) -> None:
    k = b.hlo_to_dimension.get((hlo, hlo.attribute("dimensions", (0,))[0]))
    if k is not None:
        b.dims[k] = replace(b.dims[k], type=SEQUENTIAL, hlo=hlo)


def _dynamic_slice(b: _Builder, hlo: HloInstruction) -> None:
    shape = hlo.operands[0].shape
    for dim, size in enumerate(hlo.attribute("dynamic_slice_sizes", ())):
        b.append_rt_var(hlo, dim + 1, hlo.operands[dim + 1], shape.dimensions[dim] - size)


def _get_tuple_element(b: _Builder, hlo: HloInstruction) -> None:
    for i in range(hlo.shape.rank if hlo.shape.is_array else 0):
        k = b.hlo_to_dimension.get((hlo, i))
        if k is not None:
            b.hlo_to_dimension[(hlo.operands[0], i)] = k


def _ragged_dot(b: _Builder, hlo: HloInstruction) -> None:
    """Ragged non-contracting: group dim and contracting dims sequential, group size an rt var;
    ragged batch: like a dot; ragged contracting: M sequential, group size and start rt vars."""
    lhs = hlo.operands[0].shape
    ragged = hlo.attribute("lhs_ragged_dims", (0,))[0]
    rank = first_shape(hlo).rank
    contracting = list(hlo.attribute("lhs_contracting_dims", ()))
    if ragged in hlo.attribute("lhs_batch_dims", ()):
        _dot_like(b, hlo)
        return
    m_total = lhs.dimensions[ragged]
    if ragged not in contracting:
        group = hlo.operands[1].shape.dimensions[hlo.attribute("rhs_group_dims", (0,))[0]]
        b.append_dimension(hlo, rank, group, SEQUENTIAL)
        for k, dim in enumerate(contracting):
            b.append_dimension(hlo, rank + 1 + k, lhs.dimensions[dim], SEQUENTIAL)
        b.append_rt_var(hlo, 2, hlo.operands[2], m_total)
        return
    b.append_dimension(hlo, rank, m_total, SEQUENTIAL)
    b.append_rt_var(hlo, 2, hlo.operands[2], m_total)
    b.append_rt_var(hlo, -1, hlo.operands[2], m_total)


_PROCESS: dict[str, Callable[[_Builder, HloInstruction], None]] = {
    "dot": _dot_like,
    "scaled-dot": _dot_like,
    "reduce": _reduce,
    "scan": _scan,
    "dynamic-slice": _dynamic_slice,
    "get-tuple-element": _get_tuple_element,
    "ragged-dot": _ragged_dot,
}
