"""Rules for ops that combine many input elements per output: dot, reduce, windows, convolution.

Reduced and contracted dimensions become range variables ``s_i``; windows compose a window
map ``s * window_dilation + stride * d`` with the padding map of the (base-dilated) input.

>>> print(window_map((3,), (8,), [(3, 2, 1)]))
(d0)[s0] -> (s0 + d0 * 2), domain: d0 in [0, 2], s0 in [0, 2]
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import HloError
from tensorlayout.hlo.attributes import ConvolutionDimensionNumbers, Window, WindowDimension
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.operand_indexing import Maps, OperandIndexing, Rule
from tensorlayout.hlo.ops._common import (
    array_dims,
    bounds,
    dim_numbers,
    operand_shape,
    output_shape,
    required,
    scalar_map,
)
from tensorlayout.hlo.ops.data import pad_map
from tensorlayout.indexing import Expr, IndexingMap, compose, var

__all__ = ["INPUT_TO_OUTPUT", "OUTPUT_TO_INPUT", "window_map"]



def _one(m: IndexingMap) -> list[OperandIndexing]:
    return [OperandIndexing(m)]


# --------------------------------------------------------------------------- dot


def _dot_maps(instr: HloInstruction) -> tuple[IndexingMap, IndexingMap]:
    lhs_d = array_dims(operand_shape(instr, 0))
    rhs_d = array_dims(operand_shape(instr, 1))
    out = array_dims(instr.shape)
    lb, rb = (dim_numbers(instr, "lhs_batch_dims", len(lhs_d), ()),
              dim_numbers(instr, "rhs_batch_dims", len(rhs_d), ()))
    lc, rc = (dim_numbers(instr, "lhs_contracting_dims", len(lhs_d), ()),
              dim_numbers(instr, "rhs_contracting_dims", len(rhs_d), ()))
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise HloError(f"{instr.name}: dot needs as many lhs as rhs batch and contracting dims")
    n = len(out)
    lhs: list[Expr | None] = [None] * len(lhs_d)
    rhs: list[Expr | None] = [None] * len(rhs_d)
    d = 0
    for li, ri in zip(lb, rb):
        lhs[li] = rhs[ri] = var(d)
        d += 1
    for i in range(len(lhs_d)):
        if i not in lb and i not in lc:
            lhs[i] = var(d)
            d += 1
    for i in range(len(rhs_d)):
        if i not in rb and i not in rc:
            rhs[i] = var(d)
            d += 1
    ranges: list[tuple[int, int]] = []
    for k, (li, ri) in enumerate(zip(lc, rc)):
        lhs[li] = rhs[ri] = var(n + k)
        ranges.append((0, lhs_d[li] - 1))
    lhs_e, rhs_e = [e for e in lhs if e is not None], [e for e in rhs if e is not None]
    if d != n or len(lhs_e) != len(lhs) or len(rhs_e) != len(rhs):
        raise HloError(f"{instr.name}: dot dimension numbers do not match the shapes")
    return (IndexingMap(lhs_e, bounds(out), ranges), IndexingMap(rhs_e, bounds(out), ranges))


def dot_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Batch dims, then lhs free, then rhs free dims; contracting pairs share a range variable."""
    lhs, rhs = _dot_maps(instr)
    return [_one(lhs), _one(rhs)]


def _scale_map(m: IndexingMap, data: Sequence[int], scale: Sequence[int]) -> IndexingMap:
    """Each scaled dim reads block ``r / (n / s)``; a scale dim holds 1..n blocks (else no map)."""
    if any(not 0 < s <= n for n, s in zip(data, scale) if n != s):
        raise HloError(f"scale operand dims {list(scale)} do not divide data dims {list(data)} into "
                       "blocks (each must be between 1 and the data dim)")
    results = [r // (n // s) if n != s else r for r, n, s in zip(m.results, data, scale)]
    return IndexingMap(results, m.dim_vars, m.range_vars, m.rt_vars, m.constraints)


def scaled_dot_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """As dot; a scale operand reads ``r / (data_size / scale_size)`` on each scaled dim."""
    lhs, rhs = _dot_maps(instr)
    maps = [_one(lhs), _one(rhs)]
    for k, base in ((2, lhs), (3, rhs)):
        if k < len(instr.operands):
            data = array_dims(operand_shape(instr, k - 2))
            scale = array_dims(operand_shape(instr, k))
            maps.append(_one(_scale_map(base, data, scale)))
    return maps


# --------------------------------------------------------------------------- reduce


def _reduce_parts(instr: HloInstruction) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    n = len(instr.operands) // 2
    in_dims = array_dims(operand_shape(instr, 0))
    reduced = dim_numbers(instr, "dimensions", len(in_dims), ())
    return n, in_dims, reduced


def reduce_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Kept input dims are ``d0...``; reduced ones are range variables in input-dim order."""
    n, in_dims, reduced = _reduce_parts(instr)
    out = array_dims(output_shape(instr, output_id))
    nd = len(out)
    results = []
    ranges: list[tuple[int, int]] = []
    kept = 0
    for i, size in enumerate(in_dims):
        if i in reduced:
            results.append(var(nd + len(ranges)))
            ranges.append((0, size - 1))
        else:
            results.append(var(kept))
            kept += 1
    if kept != nd:
        raise HloError(f"{instr.name}: reduce output rank does not match")
    m = IndexingMap(results, bounds(out), ranges)
    return [_one(m) for _ in range(n)] + [_one(scalar_map(out)) for _ in range(n)]


def reduce_i2o(instr: HloInstruction, input_id: int) -> Maps:
    """Input → kept dims for every output; init → every output element (``()[s...] -> (s...)``)."""
    n, in_dims, reduced = _reduce_parts(instr)
    out = array_dims(output_shape(instr, 0))
    if input_id < n:
        m = IndexingMap([var(i) for i in range(len(in_dims)) if i not in reduced], bounds(in_dims))
    else:
        m = IndexingMap([var(i) for i in range(len(out))], [], bounds(out))
    return [_one(m) for _ in range(n)]


# --------------------------------------------------------------------------- windows


def window_map(out_dims: Sequence[int], padded_dims: Sequence[int],
               windows: Sequence[tuple[int, int, int]]) -> IndexingMap:
    """``(d)[s] -> (s * window_dilation + stride * d)`` with ``windows = [(size, stride, wdil)]``."""
    n = len(out_dims)
    results = [var(n + i) * wdil + var(i) * stride for i, (_, stride, wdil) in enumerate(windows)]
    if len(padded_dims) != n:
        raise HloError("window rank does not match")
    return IndexingMap(results, bounds(out_dims), [(0, size - 1) for size, _, _ in windows])


def windowed_input_map(in_dims: Sequence[int], out_dims: Sequence[int], window: object) -> IndexingMap:
    """Output (+ window symbols) → input index, through padding and base dilation (unsimplified)."""
    wdims = window.dimensions  # type: ignore[attr-defined]
    if len(wdims) != len(in_dims):
        raise HloError("window rank does not match the operand rank")
    padded = []
    padding = []
    for n, w in zip(in_dims, wdims):
        bd = w.base_dilation
        padded.append(n + w.padding_low + w.padding_high + (n - 1) * (bd - 1))
        padding.append((w.padding_low, w.padding_high, bd - 1))
    wm = window_map(out_dims, padded, [(w.size, w.stride, w.window_dilation) for w in wdims])
    return compose(wm, pad_map(in_dims, padded, padding))


def reduce_window_o2i(instr: HloInstruction, output_id: int) -> Maps:
    n = len(instr.operands) // 2
    in_dims = array_dims(operand_shape(instr, 0))
    out = array_dims(output_shape(instr, output_id))
    m = windowed_input_map(in_dims, out, required(instr, "window")).simplify().remove_unused_symbols()
    return [_one(m) for _ in range(n)] + [_one(scalar_map(out)) for _ in range(n)]


# --------------------------------------------------------------------------- convolution


def _conv_dims(instr: HloInstruction) -> ConvolutionDimensionNumbers:
    """``dim_labels`` checked against the ranks of input, kernel, output (and the window)."""
    dn: ConvolutionDimensionNumbers = required(instr, "dim_labels")
    if len(instr.operands) != 2:
        raise HloError(f"convolution {instr.name}: needs an input and a kernel operand")
    ranks = [len(array_dims(s)) for s in (operand_shape(instr, 0), operand_shape(instr, 1), instr.shape)]
    roles = [(dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions),
             (dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
              *dn.kernel_spatial_dimensions),
             (dn.output_batch_dimension, dn.output_feature_dimension, *dn.output_spatial_dimensions)]
    window = instr.attributes.get("window")
    ns = len(dn.input_spatial_dimensions)
    if (any(len(r) != n or sorted(r) != list(range(n)) for r, n in zip(roles, ranks))
            or (window is not None and len(window.dimensions) != ns)):
        raise HloError(f"{instr.name}: dim_labels {dn.text} do not fit operands of ranks {ranks[:2]}, "
                       f"an output of rank {ranks[2]} and the window")
    return dn


def convolution_o2i(instr: HloInstruction, output_id: int) -> Maps:
    """Spatial dims through the window; input features (and batch groups) are range variables.

    The kernel's spatial dims read the window variables, back to front where the window is
    reversed (``rhs_reversal=1``); feature groups pick the input-feature slab of the output
    feature's group; batch groups add a range variable over the groups (as XLA does).
    """
    a = instr.attributes
    dn = _conv_dims(instr)
    in_dims = array_dims(operand_shape(instr, 0))
    k_dims = array_dims(operand_shape(instr, 1))
    out = array_dims(instr.shape)
    fgc = int(a.get("feature_group_count", 1) or 1)
    bgc = int(a.get("batch_group_count", 1) or 1)
    window = a.get("window")
    ns = len(dn.input_spatial_dimensions)
    nd = len(out)
    if window is None:
        window = Window(tuple(WindowDimension(size=k_dims[d]) for d in dn.kernel_spatial_dimensions))
    sp_in = [in_dims[d] for d in dn.input_spatial_dimensions]
    sp_out = [out[d] for d in dn.output_spatial_dimensions]
    spatial = windowed_input_map(sp_in, sp_out, window)
    # re-index: spatial dim j -> output spatial dim, window symbol j -> s_j of the full map
    repl = {j: var(dn.output_spatial_dimensions[j]) for j in range(ns)}
    repl.update({ns + j: var(nd + j) for j in range(ns)})
    s_feature = var(nd + ns)
    ranges = [v.bounds for v in spatial.range_vars] + [(0, k_dims[dn.kernel_input_feature_dimension] - 1)]
    in_results: list[Expr] = [var(0)] * len(in_dims)
    for j, d in enumerate(dn.input_spatial_dimensions):
        in_results[d] = spatial.results[j].replace_variables(repl)
    if fgc > 1:
        group = out[dn.output_feature_dimension] // fgc
        per_group = k_dims[dn.kernel_input_feature_dimension]
        in_results[dn.input_feature_dimension] = (
            (var(dn.output_feature_dimension) // group) * per_group + s_feature)
    else:
        in_results[dn.input_feature_dimension] = s_feature
    ob = var(dn.output_batch_dimension)
    if bgc > 1:
        in_results[dn.input_batch_dimension] = var(nd + ns + 1) * out[dn.output_batch_dimension] + ob
        ranges.append((0, bgc - 1))
    else:
        in_results[dn.input_batch_dimension] = ob
    constraints = [(e.replace_variables(repl), iv) for e, iv in spatial.constraints.items()]
    if spatial.is_known_empty:
        lhs = IndexingMap.known_empty(nd, len(ranges), len(in_results))
        return [_one(lhs), _one(IndexingMap.known_empty(nd, len(ranges), len(k_dims)))]
    lhs = IndexingMap(in_results, bounds(out), ranges, constraints=constraints)
    k_results: list[Expr] = [var(0)] * len(k_dims)
    for j, d in enumerate(dn.kernel_spatial_dimensions):
        w = window.dimensions[j]
        # a reversed window reads the kernel back to front: -s_j + (size - 1)
        k_results[d] = var(nd + j) * -1 + (w.size - 1) if w.window_reversal else var(nd + j)
    k_results[dn.kernel_input_feature_dimension] = s_feature
    k_results[dn.kernel_output_feature_dimension] = var(dn.output_feature_dimension)
    rhs = IndexingMap(k_results, bounds(out), ranges)
    return [_one(lhs.simplify().remove_unused_symbols()), _one(rhs.simplify().remove_unused_symbols())]


OUTPUT_TO_INPUT: dict[str, Rule] = {
    "dot": dot_o2i,
    "scaled-dot": scaled_dot_o2i,
    "reduce": reduce_o2i,
    "reduce-window": reduce_window_o2i,
    "convolution": convolution_o2i,
}

INPUT_TO_OUTPUT: dict[str, Rule] = {
    "reduce": reduce_i2o,
}
