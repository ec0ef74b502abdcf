"""XLA's experimental tile propagation: from an instruction's output tile to its operands'
tiles (``PropagateTileToInput``) and from an operand's tile to the output's
(``PropagateTileToOutput``), one rule per opcode.

>>> from tensorlayout.hlo import parse_module
>>> from tensorlayout.tiling.experimental.tiling_space import TilingSpace
>>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[10,30] parameter(0)\\n"
...                  " ROOT b = f32[10,20,30] broadcast(p0), dimensions={0,2}\\n}")
>>> space = TilingSpace.create(m.entry.root)
>>> print(tiles_to_string(propagate_tile_to_input(space, m.entry.root, space.tiled_roots[0], 0)))
0) (tid_0, tid_1, tid_2) -> offsets [tid_0 * ts_0, tid_2 * ts_2] sizes [ts_0, ts_2] strides [1, 1] \
upper bounds [10, 30]
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.opcodes import ELEMENTWISE_OPCODES
from tensorlayout.hlo.ops._common import int_literal, major_to_minor
from tensorlayout.indexing import Expr, canonicalize, const, var
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.hlo_text import instruction_to_string
from tensorlayout.tiling.experimental.ragged_dot import propagate_tile_to_input_for_ragged_dot
from tensorlayout.tiling.experimental.reshape import propagate_tile_through_reshape
from tensorlayout.tiling.experimental.tile import DimTile, Tile, get_full_dim_tile, tiles_to_string
from tensorlayout.tiling.experimental.tiling_space import SEQUENTIAL, TilingSpace, dim_tile, first_shape
from tensorlayout.xla.shape import Shape

__all__ = ["propagate_tile_to_input", "propagate_tile_to_output", "tiles_to_string"]

Tiles = list[Tile]


def _constant(e: Expr) -> int | None:
    c = canonicalize(e)
    return c.value if c.is_const else None


def _scalar_tile(tile: Tile) -> Tile:
    """The empty tile of a scalar operand (init value, padding value, slice offset)."""
    return Tile(tile.num_dimensions, tile.num_rt_vars, ())


def _permute(tile: Tile, permutation: Sequence[int]) -> Tile:
    """``PropagateTileThroughTransposeOp``: dimension ``d`` of ``tile`` goes to ``permutation[d]``."""
    dims: list[DimTile | None] = [None] * len(tile.dim_tiles)
    for d, p in enumerate(permutation):
        dims[p] = tile.dim_tiles[d]
    return tile.clone_with_new_dims([d for d in dims if d is not None])


def _inverse(permutation: Sequence[int]) -> list[int]:
    out = [0] * len(permutation)
    for i, p in enumerate(permutation):
        out[p] = i
    return out


# ---- to the operands ---------------------------------------------------------------------------


def _cwise_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [tile] * len(hlo.operands)


def _broadcast_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [tile.clone_with_new_dims([tile.dim_tiles[d] for d in hlo.attribute("dimensions", ())])]


def _transpose_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [_permute(tile, hlo.attribute("dimensions", ()))]


def _bitcast_transpose(src: Shape, dst: Shape) -> list[int] | None:
    """``DeduceTransposeDimensionsForBitcast``: ``T`` with ``dst.dim[i] = src.dim[T[i]]`` and the
    same physical order, or None."""
    if src.rank != dst.rank or src.element_type.bit_width != dst.element_type.bit_width:
        return None
    src_m2m, dst_m2m = list(reversed(major_to_minor(src))), list(reversed(major_to_minor(dst)))
    perm = [src_m2m[dst_m2m.index(i)] for i in range(dst.rank)]
    if any(dst.dimensions[i] != src.dimensions[perm[i]] for i in range(dst.rank)):
        return None
    return perm


def _physical(shape: Shape) -> tuple[list[int], Shape]:
    """The transpose to the physical (major-to-minor) order and the shape it gives."""
    order = list(major_to_minor(shape))
    return order, Shape.array(shape.element_type, [shape.dimensions[k] for k in order])


def _bitcast(space: TilingSpace, tile: Tile, src: Shape, dst: Shape) -> Tile:
    """``PropagateTileForBitcastOp`` from a tile of ``src`` to one of ``dst``: a transpose, a
    reshape, or transpose-reshape-transpose through the physical shapes."""
    if src.elements_in() != dst.elements_in():
        raise TilingStatusError("kInvalidArgument", "Bitcast is not decomposable.")
    perm = _bitcast_transpose(src, dst) if src.rank else None
    if perm is not None:
        return _permute(tile, _inverse(perm))
    t1, src_physical = _physical(src)
    t2_order, dst_physical = _physical(dst)
    moved = _permute(tile, _inverse(t1))
    reshaped = propagate_tile_through_reshape(space, moved, src_physical, dst_physical)
    t2 = [t2_order.index(i) for i in range(dst.rank)]
    return _permute(reshaped, _inverse(t2))


def _bitcast_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [_bitcast(space, tile, hlo.shape, hlo.operands[0].shape)]


def _reshape_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [propagate_tile_through_reshape(space, tile, hlo.shape, hlo.operands[0].shape)]


def _slice_tile(tile: Tile, starts: Sequence[Expr], strides: Sequence[int]) -> Tile:
    """Element ``r`` of the result reads ``start + stride * r``."""
    dims = [
        DimTile(s + d.offset * st, d.size, d.stride * st, d.upper_bound * st + s)
        for d, s, st in zip(tile.dim_tiles, starts, strides)
    ]
    return tile.clone_with_new_dims(dims)


def _slice_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    spec = hlo.attribute("slice", ())
    return [_slice_tile(tile, [const(s.start) for s in spec], [s.stride for s in spec])]


def _dynamic_slice_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    n = space.num_dimensions
    starts: list[Expr] = []
    for dim in range(len(tile.dim_tiles)):
        info = space.get_rt_var_info(hlo, dim + 1)
        if info is None:
            raise TilingStatusError(
                "kInternal", f"Runtime variable not found for {instruction_to_string(hlo)} operand {dim + 1}"
            )
        literal = int_literal(hlo.operands[dim + 1]) if hlo.operands[dim + 1].opcode == "constant" else None
        if literal is not None:
            starts.append(const(min(max(literal, info.bounds.lower), info.bounds.upper)))
        else:
            starts.append(var(2 * n + info.id))
    return [_slice_tile(tile, starts, [1] * len(starts))] + [_scalar_tile(tile)] * len(tile.dim_tiles)


def _pad_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    dims = []
    for d, pad, size in zip(tile.dim_tiles, hlo.attribute("padding"), hlo.operands[0].shape.dimensions):
        if pad.interior != 0:
            raise TilingStatusError(
                "kUnimplemented", "Can't propagate tile to input of pad op with interior padding."
            )
        dims.append(DimTile(d.offset - pad.low, d.size, d.stride, const(size)))
    return [tile.clone_with_new_dims(dims), _scalar_tile(tile)]


def _dot_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    """Batch dims, then lhs and rhs non-contracting dims from the output tile; contracting
    dims from the dot's sequential dimensions."""
    lhs, rhs = hlo.operands[0].shape, hlo.operands[1].shape
    lb, rb = list(hlo.attribute("lhs_batch_dims", ())), list(hlo.attribute("rhs_batch_dims", ()))
    lc, rc = list(hlo.attribute("lhs_contracting_dims", ())), list(hlo.attribute("rhs_contracting_dims", ()))
    lt: list[DimTile | None] = [None] * lhs.rank
    rt: list[DimTile | None] = [None] * rhs.rank
    out = 0
    for a, b in zip(lb, rb):
        lt[a] = rt[b] = tile.dim_tiles[out]
        out += 1
    for dims, table, batch, contracting in ((range(lhs.rank), lt, lb, lc), (range(rhs.rank), rt, rb, rc)):
        for d in dims:
            if d not in batch and d not in contracting:
                table[d] = tile.dim_tiles[out]
                out += 1
    for a, b in zip(lc, rc):
        info = space.get_dimension_info(hlo, out)
        if info.type != SEQUENTIAL:
            raise TilingStatusError(
                "kInternal",
                f"Expected a sequential dimension info for contracting "
                f"dimension {a} in dot (like) op {instruction_to_string(hlo)}",
            )
        lt[a] = rt[b] = dim_tile(space, info)
        out += 1
    return [
        tile.clone_with_new_dims([d for d in lt if d is not None]),
        tile.clone_with_new_dims([d for d in rt if d is not None]),
    ]


def _scale_tile(scale: Shape, operand: Shape, tile: Tile) -> Tile:
    """The tile of a block scale: dims of equal size copy the operand's, blocked dims divide."""
    dims = []
    for d, (s, o) in enumerate(zip(scale.dimensions, operand.dimensions)):
        t = tile.dim_tiles[d]
        if s == o:
            dims.append(t)
            continue
        block = o // s
        low = t.offset // block
        high = (t.offset + (t.size - 1) * t.stride) // block
        dims.append(DimTile(low, high - low + 1, const(1), t.upper_bound // block))
    return tile.clone_with_new_dims(dims)


def _scaled_dot_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    lhs, rhs = _dot_in(space, hlo, tile, k)
    ops = hlo.operands
    return [
        lhs,
        rhs,
        _scale_tile(ops[2].shape, ops[0].shape, lhs),
        _scale_tile(ops[3].shape, ops[1].shape, rhs),
    ]


def _reduce_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    reduced = list(hlo.attribute("dimensions", ()))
    rank = first_shape(hlo).rank
    dims, out = [], 0
    for d in range(hlo.operands[0].shape.rank):
        if d in reduced:
            dims.append(dim_tile(space, space.get_dimension_info(hlo, rank + reduced.index(d))))
        else:
            dims.append(tile.dim_tiles[out])
            out += 1
    inputs = len(hlo.operands) // 2
    return [tile.clone_with_new_dims(dims)] * inputs + [_scalar_tile(tile)] * inputs


def _concatenate_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    dim = hlo.attribute("dimensions", (0,))[0]
    _verify_concatenate_alignment(space, hlo, tile, dim)
    bound = tile.dim_tiles[dim].upper_bound
    tiles, offset = [], 0
    for operand in hlo.operands:
        size = operand.shape.dimensions[dim]
        dims = list(tile.dim_tiles)
        d = dims[dim]
        dims[dim] = DimTile(d.offset - offset, d.size, d.stride, (bound - offset).min(size).max(0))
        tiles.append(tile.clone_with_new_dims(dims))
        offset += size
    return tiles


def _verify_concatenate_alignment(space: TilingSpace, hlo: HloInstruction, tile: Tile, dim: int) -> None:
    """With concrete tile sizes, a tile must not straddle two operands: the base offset's
    operand remainder and every later operand (but the last) are multiples of the tile size."""
    if space.is_symbolic:
        return
    where = f"Tiling propagation rejected for {instruction_to_string(hlo)}: "
    zero = {var(d): const(0) for d in range(space.num_dimensions)}
    offset = tile.dim_tiles[dim].offset
    base = _constant(offset.replace(zero))
    if base is None or base < 0:
        raise TilingStatusError(
            "kFailedPrecondition",
            where
            + f"The base offset {offset.replace(zero)} is "
            + ("not a constant." if base is None else "negative."),
        )
    sizes = [op.shape.dimensions[dim] for op in hlo.operands]
    index, start = 0, 0
    while index < len(sizes) and base >= start + sizes[index]:
        start += sizes[index]
        index += 1
    if index >= len(sizes):
        raise TilingStatusError(
            "kFailedPrecondition",
            where + f"The base offset {base} falls completely "
            f"outside the total concatenate dimension size {start}",
        )
    tile_size = _constant(tile.dim_tiles[dim].size)
    if tile_size is None:
        raise TilingStatusError("kFailedPrecondition", where + "The tile size is not a constant.")
    step = canonicalize(offset - base)
    if not step.is_multiple_of(tile_size):
        raise TilingStatusError(
            "kFailedPrecondition",
            where + f"The variable step expression '{step}' must be "
            f"a clean multiple of its tile size {tile_size}",
        )
    remaining = start + sizes[index] - base
    if index < len(sizes) - 1 and remaining % tile_size:
        raise TilingStatusError(
            "kFailedPrecondition",
            where + f"The remaining dimension size {remaining} in "
            f"the concatenate operand {index} must be a clean multiple of its tile size "
            f"{tile_size}",
        )
    for size in sizes[index + 1 : -1]:
        if size % tile_size:
            raise TilingStatusError(
                "kFailedPrecondition",
                where + f"The operand dimension size {size} in the "
                f"concatenate dimension must be a multiple of the tile size {tile_size}",
            )


def _all_gather_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    """The gathered dimension reads ``offset mod local`` of replica ``offset / local``."""
    dim = hlo.attribute("dimensions", (0,))[0]
    local = hlo.operands[0].shape.dimensions[dim]
    replicas = hlo.shape.dimensions[dim] // local
    d = tile.dim_tiles[dim]
    dims = list(tile.dim_tiles)
    dims[dim] = DimTile(d.offset % local, d.size, d.stride, const(local))
    replica = DimTile(d.offset // local, const(1), const(1), const(replicas))
    return [Tile(tile.num_dimensions, tile.num_rt_vars, tuple(dims), (*tile.replica_ids, replica))]


def _scan_tiles(hlo: HloInstruction, tile: Tile) -> Tiles:
    carries = int(hlo.attribute("num_carries", 0))
    scan_dim = hlo.attribute("dimensions", (0,))[0]
    carry = tile.clone_with_new_dims([d for i, d in enumerate(tile.dim_tiles) if i != scan_dim])
    return [tile] * (len(hlo.operands) - carries) + [carry] * carries


def _scan_in(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    if k >= len(hlo.operands) - int(hlo.attribute("num_carries", 0)):
        raise TilingStatusError(
            "kInvalidArgument", "Output to input tile propagation not implemented from scan carry outputs."
        )
    return _scan_tiles(hlo, tile)


def _identity(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [tile]


_TO_INPUT: dict[str, Callable[[TilingSpace, HloInstruction, Tile, int], Tiles]] = {
    "all-reduce": _cwise_in,
    "map": _cwise_in,
    "all-gather": _all_gather_in,
    "bitcast": _bitcast_in,
    "broadcast": _broadcast_in,
    "concatenate": _concatenate_in,
    "dynamic-slice": _dynamic_slice_in,
    "dot": _dot_in,
    "scaled-dot": _scaled_dot_in,
    "pad": _pad_in,
    "reduce": _reduce_in,
    "ragged-dot": lambda space, hlo, tile, k: propagate_tile_to_input_for_ragged_dot(space, hlo, tile),
    "transpose": _transpose_in,
    "reshape": _reshape_in,
    "slice": _slice_in,
    "scan": _scan_in,
    "get-tuple-element": _identity,
}


def propagate_tile_to_input(
    space: TilingSpace, hlo: HloInstruction, tile: Tile, output_index: int = 0
) -> Tiles:
    """``PropagateTileToInput``: the tile of every operand read for ``tile`` of output
    ``output_index``; :class:`TilingStatusError` with XLA's status code when unsupported."""
    rule = _cwise_in if hlo.opcode in ELEMENTWISE_OPCODES else _TO_INPUT.get(hlo.opcode)
    if rule is None:
        raise TilingStatusError(
            "kInvalidArgument", f"Output to input tile propagation not implemented for {hlo.opcode}"
        )
    return rule(space, hlo, tile, output_index)


# ---- to the output -----------------------------------------------------------------------------


def _broadcast_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    bdims = list(hlo.attribute("dimensions", ()))
    dims = [
        tile.dim_tiles[bdims.index(i)] if i in bdims else get_full_dim_tile(size)
        for i, size in enumerate(hlo.shape.dimensions)
    ]
    return [tile.clone_with_new_dims(dims)]


def _transpose_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [_permute(tile, _inverse(hlo.attribute("dimensions", ())))]


def _bitcast_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [_bitcast(space, tile, hlo.operands[0].shape, hlo.shape)]


def _reshape_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    return [propagate_tile_through_reshape(space, tile, hlo.operands[0].shape, hlo.shape)]


def _reduce_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    if k >= len(hlo.operands) // 2:
        raise TilingStatusError(
            "kInvalidArgument",
            "Input to output tile propagation not implemented from reduction init operands.",
        )
    reduced = set(hlo.attribute("dimensions", ()))
    return [tile.clone_with_new_dims([d for i, d in enumerate(tile.dim_tiles) if i not in reduced])]


def _concatenate_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    dim = hlo.attribute("dimensions", (0,))[0]
    shift = sum(op.shape.dimensions[dim] for op in hlo.operands[:k])
    dims = list(tile.dim_tiles)
    d = dims[dim]
    dims[dim] = DimTile(d.offset + shift, d.size, d.stride, d.upper_bound + shift)
    return [tile.clone_with_new_dims(dims)]


def _scan_out(space: TilingSpace, hlo: HloInstruction, tile: Tile, k: int) -> Tiles:
    if k >= len(hlo.operands) - int(hlo.attribute("num_carries", 0)):
        raise TilingStatusError(
            "kInvalidArgument", "Input to output tile propagation not implemented from scan carry operands."
        )
    return _scan_tiles(hlo, tile)


_TO_OUTPUT: dict[str, Callable[[TilingSpace, HloInstruction, Tile, int], Tiles]] = {
    "map": _identity,
    "bitcast": _bitcast_out,
    "broadcast": _broadcast_out,
    "transpose": _transpose_out,
    "reshape": _reshape_out,
    "reduce": _reduce_out,
    "concatenate": _concatenate_out,
    "scan": _scan_out,
    "get-tuple-element": _identity,
}


def propagate_tile_to_output(
    space: TilingSpace, hlo: HloInstruction, tile: Tile, input_index: int = 0
) -> Tiles:
    """``PropagateTileToOutput``: the output tile written from ``tile`` of operand ``input_index``."""
    rule = _identity if hlo.opcode in ELEMENTWISE_OPCODES else _TO_OUTPUT.get(hlo.opcode)
    if rule is None:
        raise TilingStatusError(
            "kInvalidArgument", f"Input to output tile propagation not implemented for {hlo.opcode}"
        )
    return rule(space, hlo, tile, input_index)
