"""Rules for elementwise and data-movement ops that only rearrange indices.

Elementwise ops, bitcast, broadcast, concatenate, constant/iota/parameter, get-tuple-element,
reshape, reverse, slice, transpose, all-gather, scan and tuple (input→output only).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[20] parameter(0)\\n"
...                  " ROOT b = f32[10,20] broadcast(p), dimensions={1}\\n}")
>>> print(broadcast_o2i(m.entry.root, 0)[0][0])
(d0, d1) -> (d1), domain: d0 in [0, 9], d1 in [0, 19]
"""

from __future__ import annotations

from tensorlayout.errors import HloError
from tensorlayout.hlo.attributes import SliceDimension
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.opcodes import ELEMENTWISE_OPCODES
from tensorlayout.hlo.operand_indexing import Maps, OperandIndexing, Rule
from tensorlayout.hlo.ops._common import (
    array_dims,
    bitcast_map,
    bounds,
    dim_numbers,
    identity_map,
    operand_shape,
    output_shape,
    required,
    reshape_map,
    scalar_map,
)
from tensorlayout.indexing import Expr, IndexingMap, var

__all__ = ["INPUT_TO_OUTPUT", "OUTPUT_TO_INPUT"]



def _one(m: IndexingMap) -> list[OperandIndexing]:
    return [OperandIndexing(m)]


# --------------------------------------------------------------------------- elementwise


def elementwise_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Identity per operand; a scalar operand of a non-scalar op reads ``(d...) -> ()``."""
    out = array_dims(output_shape(instr, output_id))
    maps = []
    for op in instr.operands:
        is_scalar = op.shape.is_array and op.shape.rank == 0
        maps.append(_one(scalar_map(out) if is_scalar and out else identity_map(out)))
    return maps


def elementwise_i2o(instr: HloInstruction, input_id: int) -> Maps:
    """Identity over the output shape (even for a broadcast scalar operand, as XLA does)."""
    return [_one(identity_map(array_dims(instr.shape)))]


def no_operands(instr: HloInstruction, output_id: int) -> Maps:
    """constant, iota, parameter: nothing is read."""
    return []


# --------------------------------------------------------------------------- bitcast / reshape


def bitcast_o2i(instr: HloInstruction, output_id: int) -> Maps:
    return [_one(bitcast_map(instr.shape, operand_shape(instr, 0)))]


def bitcast_i2o(instr: HloInstruction, input_id: int) -> Maps:
    return [_one(bitcast_map(operand_shape(instr, 0), instr.shape))]


def reshape_o2i(instr: HloInstruction, output_id: int) -> Maps:
    return [_one(reshape_map(array_dims(operand_shape(instr, 0)), array_dims(instr.shape)))]


def reshape_i2o(instr: HloInstruction, input_id: int) -> Maps:
    return [_one(reshape_map(array_dims(instr.shape), array_dims(operand_shape(instr, 0))))]


# --------------------------------------------------------------------------- broadcast


def _broadcast_dims(instr: HloInstruction) -> tuple[int, ...]:
    dims = dim_numbers(instr, "dimensions", len(array_dims(instr.shape)), ())
    if len(dims) != len(array_dims(operand_shape(instr, 0))):
        raise HloError(f"{instr.name}: broadcast needs one output dim per operand dim, got {dims}")
    return dims


def broadcast_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Operand dim ``i`` is output dim ``dimensions[i]``."""
    out = array_dims(instr.shape)
    return [_one(IndexingMap([var(d) for d in _broadcast_dims(instr)], bounds(out)))]


def broadcast_i2o(instr: HloInstruction, input_id: int) -> Maps:
    """Broadcast output dims become range variables over their sizes."""
    out = array_dims(instr.shape)
    in_dims = array_dims(operand_shape(instr, 0))
    dims = _broadcast_dims(instr)
    n = len(in_dims)
    results: list[Expr] = []
    ranges: list[tuple[int, int]] = []
    for j, size in enumerate(out):
        if j in dims:
            results.append(var(dims.index(j)))
        else:
            results.append(var(n + len(ranges)))
            ranges.append((0, size - 1))
    return [_one(IndexingMap(results, bounds(in_dims), ranges))]


# --------------------------------------------------------------------------- concatenate


def _concat_dim(instr: HloInstruction) -> int:
    """The concatenated dim; every operand has the output's rank (else there is no map)."""
    rank = len(array_dims(instr.shape))
    dims = dim_numbers(instr, "dimensions", rank, ())
    if len(dims) != 1:
        raise HloError(f"{instr.name}: concatenate needs one dimension")
    if any(len(array_dims(op.shape)) != rank for op in instr.operands):
        raise HloError(f"{instr.name}: concatenate operands must have the output's rank {rank}")
    return dims[0]


def concatenate_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Operand k: identity with ``d_c - offset_k``, ``d_c`` bounded to the operand's slab."""
    out = array_dims(instr.shape)
    c = _concat_dim(instr)
    maps = []
    offset = 0
    for op in instr.operands:
        size = array_dims(op.shape)[c]
        results = [var(i) - offset if i == c else var(i) for i in range(len(out))]
        dim_bounds = bounds(out)
        dim_bounds[c] = (offset, offset + size - 1)
        maps.append(_one(IndexingMap(results, dim_bounds)))
        offset += size
    return maps


def concatenate_i2o(instr: HloInstruction, input_id: int) -> Maps:
    c = _concat_dim(instr)
    offset = sum(array_dims(op.shape)[c] for op in instr.operands[:input_id])
    in_dims = array_dims(operand_shape(instr, input_id))
    results = [var(i) + offset if i == c else var(i) for i in range(len(in_dims))]
    return [_one(IndexingMap(results, bounds(in_dims)))]


# --------------------------------------------------------------------------- transpose / reverse / slice


def _permutation(instr: HloInstruction) -> tuple[int, ...]:
    """``dimensions`` of a transpose: a permutation of the output's dims."""
    rank = len(array_dims(instr.shape))
    perm = dim_numbers(instr, "dimensions", rank)
    if sorted(perm) != list(range(rank)):
        raise HloError(f"transpose {instr.name}: dimensions {perm} is not a permutation of {rank} dims")
    return perm


def transpose_o2i(instr: HloInstruction, output_id: int) -> Maps:
    out = array_dims(instr.shape)
    perm = _permutation(instr)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return [_one(IndexingMap([var(inv[j]) for j in range(len(perm))], bounds(out)))]


def transpose_i2o(instr: HloInstruction, input_id: int) -> Maps:
    in_dims = array_dims(operand_shape(instr, 0))
    perm = _permutation(instr)
    return [_one(IndexingMap([var(p) for p in perm], bounds(in_dims)))]


def reverse_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Reversed dims read ``-d + (n - 1)``."""
    out = array_dims(instr.shape)
    rev = set(dim_numbers(instr, "dimensions", len(out), ()))
    results = [var(i) * -1 + (n - 1) if i in rev else var(i) for i, n in enumerate(out)]
    return [_one(IndexingMap(results, bounds(out)))]


def _slice_spec(instr: HloInstruction, out: tuple[int, ...]) -> tuple[SliceDimension, ...]:
    """``slice={[start:limit:step], ...}``: one entry per dim, positive steps."""
    spec = tuple(required(instr, "slice"))
    if len(spec) != len(out) or any(s.stride <= 0 for s in spec):
        raise HloError(f"slice {instr.name}: needs one [start:limit:step] per dim with step > 0")
    return spec


def slice_o2i(instr: HloInstruction, output_id: int) -> Maps:
    out = array_dims(instr.shape)
    spec = _slice_spec(instr, out)
    results = [var(i) * s.stride + s.start for i, s in enumerate(spec)]
    return [_one(IndexingMap(results, bounds(out)))]


def slice_i2o(instr: HloInstruction, input_id: int) -> Maps:
    """``(d - start) / stride`` on ``d in [start, (out-1)*stride + start]``, stride-aligned."""
    out = array_dims(instr.shape)
    in_dims = array_dims(operand_shape(instr, 0))
    spec = _slice_spec(instr, out)
    results = []
    dim_bounds = []
    constraints = []
    for i, s in enumerate(spec):
        shifted = var(i) - s.start
        results.append(shifted // s.stride)
        dim_bounds.append((s.start, (out[i] - 1) * s.stride + s.start))
        constraints.append((shifted % s.stride, (0, 0)))
    m = IndexingMap(results, dim_bounds, constraints=constraints)
    if len(in_dims) != len(out):
        raise HloError(f"{instr.name}: slice rank mismatch")
    return [_one(m)]


# --------------------------------------------------------------------------- tuples, collectives, scan


def get_tuple_element_o2i(instr: HloInstruction, output_id: int) -> Maps:
    return [_one(identity_map(array_dims(instr.shape)))]


def async_result_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """``async-done`` / ``async-update``: each output element is the same element of the async
    tuple it waits on (the wrapped result, or the same tuple element for an update)."""
    return [_one(identity_map(array_dims(output_shape(instr, output_id))))]


def tuple_i2o(instr: HloInstruction, input_id: int) -> Maps:
    return [_one(identity_map(array_dims(operand_shape(instr, input_id))))]


def all_gather_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Gather dim reads ``d_g mod n_g``; the replica map says which replica: ``d_g / n_g``."""
    if len(instr.operands) != 1:
        raise HloError(f"{instr.name}: variadic all-gather has no rule")
    out = array_dims(instr.shape)
    g = next(iter(dim_numbers(instr, "dimensions", len(out))), None)
    if g is None or len(array_dims(operand_shape(instr, 0))) != len(out):
        raise HloError(f"all-gather {instr.name}: needs one gather dimension of a same-rank operand")
    n_g = array_dims(operand_shape(instr, 0))[g]
    results = [var(i) % n_g if i == g else var(i) for i in range(len(out))]
    replica = IndexingMap([var(g) // n_g], bounds(out))
    return [[OperandIndexing(IndexingMap(results, bounds(out)), (), replica)]]


def scan_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Array outputs read the scanned operands elementwise and each carry as a whole."""
    out = array_dims(output_shape(instr, output_id))
    carries = int(instr.attributes.get("num_carries", 0))
    n = len(instr.operands)
    if not out:
        return [_one(IndexingMap([], [])) for _ in range(n)]
    maps = []
    for k, op in enumerate(instr.operands):
        if k >= n - carries:
            maps.append(_one(scalar_map(out)))
        elif op.shape.is_array and op.shape.rank == len(out):
            maps.append(_one(identity_map(out)))
        else:
            maps.append([OperandIndexing.undefined()])
    return maps


OUTPUT_TO_INPUT: dict[str, Rule] = {
    **dict.fromkeys(ELEMENTWISE_OPCODES, elementwise_o2i),
    "constant": no_operands,
    "iota": no_operands,
    "parameter": no_operands,
    "bitcast": bitcast_o2i,
    "reshape": reshape_o2i,
    "broadcast": broadcast_o2i,
    "concatenate": concatenate_o2i,
    "transpose": transpose_o2i,
    "reverse": reverse_o2i,
    "slice": slice_o2i,
    "get-tuple-element": get_tuple_element_o2i,
    "async-done": async_result_o2i,
    "async-update": async_result_o2i,
    "all-gather": all_gather_o2i,
    "scan": scan_o2i,
}

INPUT_TO_OUTPUT: dict[str, Rule] = {
    **dict.fromkeys(ELEMENTWISE_OPCODES, elementwise_i2o),
    "bitcast": bitcast_i2o,
    "reshape": reshape_i2o,
    "broadcast": broadcast_i2o,
    "concatenate": concatenate_i2o,
    "transpose": transpose_i2o,
    "reverse": reverse_o2i,
    "slice": slice_i2o,
    "tuple": tuple_i2o,
}
