"""Rules for ops whose reads depend on padding or on runtime offsets.

pad, dynamic-slice, dynamic-update-slice and gather. Runtime offsets become runtime
variables ``rt_i`` whose :class:`RuntimeVar` map says which element of the offset operand
holds the value; scalar constants in range and iota indices are folded.

>>> print(pad_map((2, 8), (10, 8), [(1, 7, 0), (0, 0, 0)]))
(d0, d1) -> (d0 - 1, d1), domain: d0 in [1, 2], d1 in [0, 7]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from tensorlayout.errors import HloError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.operand_indexing import Maps, OperandIndexing, Rule, RuntimeVar
from tensorlayout.hlo.ops._common import (
    array_dims,
    bounds,
    dim_numbers,
    int_literal,
    operand_shape,
    required,
    scalar_map,
)
from tensorlayout.indexing import Expr, IndexingMap, const, var

__all__ = ["INPUT_TO_OUTPUT", "OUTPUT_TO_INPUT", "pad_map"]



def pad_map(in_dims: Sequence[int], out_dims: Sequence[int],
            padding: Sequence[tuple[int, int, int]]) -> IndexingMap:
    """Padded index → operand index: ``(d - lo) / (interior + 1)`` on the non-padding region."""
    results: list[Expr] = []
    dim_bounds = []
    constraints = []
    for i, (n, (lo, hi, interior)) in enumerate(zip(out_dims, padding)):
        shifted = var(i) - lo
        if interior > 0:
            results.append(shifted // (interior + 1))
            constraints.append((shifted % (interior + 1), (0, 0)))
        else:
            results.append(shifted)
        dim_bounds.append((max(0, lo), min(n - 1, n - 1 - hi)))
    if len(in_dims) != len(out_dims):
        raise HloError("pad: operand and output ranks differ")
    return IndexingMap(results, dim_bounds, constraints=constraints)


def pad_o2i(instr: HloInstruction, output_id: int) -> Maps:
    out = array_dims(instr.shape)
    in_dims = array_dims(operand_shape(instr, 0))
    padding = [(p.low, p.high, p.interior) for p in required(instr, "padding")]
    return [[OperandIndexing(pad_map(in_dims, out, padding))], [OperandIndexing(scalar_map(out))]]


# --------------------------------------------------------------------------- runtime offsets


def _offset_term(start: HloInstruction, rt_index: int, feasible: tuple[int, int],
                 out: Sequence[int]) -> tuple[Expr | None, RuntimeVar | None]:
    """A folded constant offset, or a new runtime variable reading the scalar ``start``."""
    value = int_literal(start)
    if value is not None and feasible[0] <= value <= feasible[1]:
        return const(value), None
    return None, RuntimeVar(start, scalar_map(out))


def _runtime_offsets(instr: HloInstruction, starts: Sequence[HloInstruction], dims: Sequence[int],
                     sizes: Sequence[int], out: Sequence[int], sign: int) -> OperandIndexing:
    """``d_i ± start_i`` per dim; the sliced shape, the slice and the output share one rank."""
    if not len(dims) == len(sizes) == len(out):
        raise HloError(f"{instr.name}: ranks differ (operand {list(dims)}, slice {list(sizes)}, "
                       f"output {list(out)})")
    n = len(out)
    terms: list[Expr | None] = []
    rts: list[RuntimeVar] = []
    rt_bounds = []
    for i, start in enumerate(starts):
        feasible = (0, dims[i] - sizes[i])
        folded, rt = _offset_term(start, len(rts), feasible, out)
        if rt is not None:
            terms.append(var(n + len(rts)))
            rts.append(rt)
            rt_bounds.append(feasible)
        else:
            terms.append(folded)
    results = []
    for i in range(n):
        t = terms[i]
        assert t is not None
        results.append(var(i) + t if sign > 0 else var(i) - t)
    return OperandIndexing(IndexingMap(results, bounds(out), (), rt_bounds), rts)


def _starts(instr: HloInstruction, first: int, rank: int) -> list[HloInstruction]:
    starts = list(instr.operands[first:])
    if len(starts) != rank or any(s.shape.is_array and s.shape.rank != 0 for s in starts):
        raise HloError(f"{instr.name}: only the scalar start-index form has a rule")
    return starts


def dynamic_slice_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Operand: ``d_i + rt_i`` with ``rt_i in [0, in_i - size_i]``; start indices: ``(d...) -> ()``."""
    out = array_dims(instr.shape)
    in_dims = array_dims(operand_shape(instr, 0))
    starts = _starts(instr, 1, len(in_dims))
    operand = _runtime_offsets(instr, starts, in_dims, out, out, +1)
    return [[operand]] + [[OperandIndexing(scalar_map(out))] for _ in starts]


def dynamic_update_slice_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Operand: identity; update: ``d_i - rt_i``; start indices: ``(d...) -> ()``."""
    out = array_dims(instr.shape)
    upd = array_dims(operand_shape(instr, 1))
    starts = _starts(instr, 2, len(out))
    update = _runtime_offsets(instr, starts, out, upd, out, -1)
    ident = IndexingMap([var(i) for i in range(len(out))], bounds(out))
    return ([[OperandIndexing(ident)], [update]]
            + [[OperandIndexing(scalar_map(out))] for _ in starts])


# --------------------------------------------------------------------------- gather


class _GatherDims(NamedTuple):
    """A gather's dimension numbers, checked against its shapes."""

    op_dims: tuple[int, ...]
    idx_dims: tuple[int, ...]
    out: tuple[int, ...]
    offset_dims: tuple[int, ...]
    start_map: tuple[int, ...]
    op_batch: tuple[int, ...]
    idx_batch: tuple[int, ...]
    slice_sizes: tuple[int, ...]
    ivd: int
    window: list[int]  # operand dims that are neither collapsed nor batching, in order
    batch_out: list[int]  # output dims that are not offset dims
    idx_batch_axes: list[int]  # index dims other than index_vector_dim

    def index_coords(self, vector: Expr) -> list[Expr]:
        """The indices operand's coordinates: batch dims of the output, ``vector`` at ``ivd``."""
        return [vector if axis == self.ivd else var(self.batch_out[self.idx_batch_axes.index(axis)])
                for axis in range(len(self.idx_dims))]


def _gather_dims(instr: HloInstruction) -> _GatherDims:
    """Read and check a gather's dimension numbers; :class:`HloError` when they do not fit."""
    op_dims = array_dims(operand_shape(instr, 0))
    idx_dims = array_dims(operand_shape(instr, 1))
    out = array_dims(instr.shape)
    offset_dims = dim_numbers(instr, "offset_dims", len(out), ())
    collapsed = dim_numbers(instr, "collapsed_slice_dims", len(op_dims), ())
    start_map = dim_numbers(instr, "start_index_map", len(op_dims), ())
    op_batch = dim_numbers(instr, "operand_batching_dims", len(op_dims), ())
    idx_batch = dim_numbers(instr, "start_indices_batching_dims", len(idx_dims), ())
    slice_sizes = tuple(instr.attributes.get("slice_sizes", ()))
    ivd = instr.attributes.get("index_vector_dim", len(idx_dims))
    if not 0 <= ivd <= len(idx_dims):  # XLA's shape inference: index_vector_dim in [0, rank]
        raise HloError(f"{instr.name}: index_vector_dim={ivd} is not a dimension of the indices "
                       f"(rank {len(idx_dims)}) or one past them")
    idx_batch_axes = [d for d in range(len(idx_dims)) if d != ivd]
    batch_out = [d for d in range(len(out)) if d not in offset_dims]
    window = [d for d in range(len(op_dims)) if d not in collapsed and d not in op_batch]
    vector_len = idx_dims[ivd] if ivd < len(idx_dims) else 1
    if (len(batch_out) != len(idx_batch_axes) or len(window) != len(offset_dims)
            or len(slice_sizes) != len(op_dims) or vector_len != len(start_map)
            or len(op_batch) != len(idx_batch) or any(d == ivd for d in idx_batch)):
        raise HloError(f"{instr.name}: gather dimension numbers do not match the shapes")
    return _GatherDims(op_dims, idx_dims, out, offset_dims, start_map, op_batch, idx_batch,
                       slice_sizes, ivd, window, batch_out, idx_batch_axes)


def gather_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Operand dim ``i`` reads ``d_{offset}`` (window dims), the batch coordinate (batching dims)
    or 0 (collapsed dims), plus a runtime variable if ``i`` is in ``start_index_map``.

    Runtime variables are numbered in operand-dim order; the one for ``start_index_map[j]``
    reads index-vector entry ``j`` (``start_index_map={1,0}``: rt0 reads ``(d0, 1)``).

    XLA has a rule only for the canonical form (indices ``[N, k]``, ``index_vector_dim=1``,
    nothing collapsed), where this gives the same maps; other forms are an extension.
    """
    g = _gather_dims(instr)
    indices = instr.operands[1]
    n = len(g.out)
    results: list[Expr] = [const(0)] * len(g.op_dims)
    for k, d in enumerate(g.window):
        results[d] = var(g.offset_dims[k])
    for od, idd in zip(g.op_batch, g.idx_batch):
        results[od] = var(g.batch_out[g.idx_batch_axes.index(idd)])
    rts: list[RuntimeVar] = []
    rt_bounds = []
    # Runtime variables follow the operand dims; rt for dim ``start_map[j]`` reads column j.
    for dim, j in sorted((dim, j) for j, dim in enumerate(g.start_map)):
        feasible = (0, g.op_dims[dim] - g.slice_sizes[dim])
        rt_map = IndexingMap(g.index_coords(const(j)), bounds(g.out))
        folded = _fold_index_read(indices, rt_map, feasible)
        if folded is not None:
            results[dim] = results[dim] + folded
            continue
        results[dim] = results[dim] + var(n + len(rts))
        rts.append(RuntimeVar(indices, rt_map))
        rt_bounds.append(feasible)
    operand_map = OperandIndexing(IndexingMap(results, bounds(g.out), (), rt_bounds), rts)
    if g.ivd < len(g.idx_dims):
        indices_map = IndexingMap(g.index_coords(var(n)), bounds(g.out), [(0, len(g.start_map) - 1)])
    else:
        indices_map = IndexingMap(g.index_coords(const(0)), bounds(g.out))
    return [[operand_map], [OperandIndexing(indices_map)]]


def _fold_index_read(source: HloInstruction, rt_map: IndexingMap, feasible: tuple[int, int]) -> Expr | None:
    """The value an index read yields when it is known statically (iota, in-range constant)."""
    if source.opcode == "iota":
        dim = source.attributes.get("iota_dimension", 0)
        if not 0 <= dim < len(rt_map.results):
            raise HloError(f"iota {source.name}: iota_dimension {dim} is not one of its dims")
        return rt_map.results[dim]
    value = int_literal(source)
    if value is not None and feasible[0] <= value <= feasible[1]:
        return const(value)
    return None


OUTPUT_TO_INPUT: dict[str, Rule] = {
    "pad": pad_o2i,
    "dynamic-slice": dynamic_slice_o2i,
    "dynamic-update-slice": dynamic_update_slice_o2i,
    "gather": gather_o2i,
}

INPUT_TO_OUTPUT: dict[str, Rule] = {}
