"""A small numpy evaluator for HLO, used to check indexing maps against semantics.

``evaluate(instr, operands)`` computes one instruction (sums stand in for every reduction
computation; a variadic reducer mixes all its operands, as an argmax does);
``reads(instr, k, operands)`` finds, by perturbing one element of operand ``k`` at a time,
which operand elements each output element depends on. Supported: parameter,
constant (scalar), iota, transpose, reshape, bitcast (layout-aware), broadcast, slice, pad,
concatenate, reverse, gather, dynamic-slice, dynamic-update-slice, reduce, dot,
reduce-window, convolution, fusion, get-tuple-element, tuple and monotone elementwise ops.

>>> import numpy as np
>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p = f32[2,3] parameter(0)\\n"
...                  " ROOT t = f32[3,2] transpose(p), dimensions={1,0}\\n}")
>>> evaluate(m.entry.root, [np.arange(6.0).reshape(2, 3)]).tolist()
[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo.attributes import parse_literal
from tensorlayout.hlo.model import HloComputation, HloInstruction
from tensorlayout.hlo.ops._common import major_to_minor

__all__ = ["evaluate", "evaluate_computation", "reads"]

_UNARY = {
    "copy": lambda x: x, "convert": lambda x: x, "negate": np.negative, "exponential": np.exp,
    "sqrt": np.sqrt, "abs": np.abs,
}
_BINARY = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract, "divide": np.divide}


def _dims(shape: Any) -> tuple[int, ...]:
    return tuple(shape.dimensions)


def _bitcast(x: np.ndarray, src: Any, dst: Any) -> np.ndarray:
    src_order, dst_order = major_to_minor(src), major_to_minor(dst)
    phys = np.transpose(x, src_order).reshape([dst.dimensions[k] for k in dst_order])
    inverse = np.argsort(dst_order)
    return np.transpose(phys, inverse)


def _pad(x: np.ndarray, value: Any, padding: Sequence[Any]) -> np.ndarray:
    # interior first, then edge padding (negative padding crops)
    for axis, p in enumerate(padding):
        if p.interior and x.shape[axis] > 1:
            n = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * p.interior
            y = np.full(shape, value, dtype=x.dtype)
            idx = [slice(None)] * x.ndim
            idx[axis] = slice(0, None, p.interior + 1)
            y[tuple(idx)] = x
            x = y
        lo, hi = p.low, p.high
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=value)
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(-min(lo, 0), x.shape[axis] + min(hi, 0))
        x = x[tuple(idx)]
    return x


def _gather(op: np.ndarray, idx: np.ndarray, instr: HloInstruction) -> np.ndarray:
    a = instr.attributes
    out_dims = _dims(instr.shape)
    offset_dims = tuple(a.get("offset_dims", ()))
    collapsed = tuple(a.get("collapsed_slice_dims", ()))
    start_map = tuple(a.get("start_index_map", ()))
    op_batch = tuple(a.get("operand_batching_dims", ()))
    idx_batch = tuple(a.get("start_indices_batching_dims", ()))
    ivd = a.get("index_vector_dim", idx.ndim)
    sizes = tuple(a.get("slice_sizes", ()))
    if ivd == idx.ndim:
        idx = idx[..., None]
    idx_batch_axes = [d for d in range(idx.ndim) if d != ivd]
    batch_out = [d for d in range(len(out_dims)) if d not in offset_dims]
    window_op = [d for d in range(op.ndim) if d not in collapsed and d not in op_batch]
    out = np.zeros(out_dims, dtype=op.dtype)
    for o in itertools.product(*(range(n) for n in out_dims)):
        g = [o[d] for d in batch_out]
        pos: list[Any] = [0] * idx.ndim
        for axis, v in zip(idx_batch_axes, g):
            pos[axis] = v
        pos[ivd] = slice(None)
        vec = idx[tuple(pos)]
        start = [0] * op.ndim
        for k, d in enumerate(start_map):
            start[d] = int(vec[k])
        for od, idd in zip(op_batch, idx_batch):
            start[od] = g[idx_batch_axes.index(idd)]
        for d in range(op.ndim):
            start[d] = min(max(start[d], 0), op.shape[d] - sizes[d])
        full = list(start)
        for k, d in enumerate(window_op):
            full[d] += o[offset_dims[k]]
        out[o] = op[tuple(full)]
    return out


def _reduce_window(x: np.ndarray, init: Any, window: Any, out_dims: Sequence[int]) -> np.ndarray:
    out = np.full(out_dims, init, dtype=x.dtype)
    wd = window.dimensions
    for o in itertools.product(*(range(n) for n in out_dims)):
        total = out[o]
        for w in itertools.product(*(range(d.size) for d in wd)):
            pos = [_window_source(o[i], w[i], d, x.shape[i]) for i, d in enumerate(wd)]
            if all(p is not None for p in pos):
                total = total + x[tuple(pos)]
        out[o] = total
    return out


def _dot(lhs: np.ndarray, rhs: np.ndarray, instr: HloInstruction) -> np.ndarray:
    a = instr.attributes
    lb, rb = tuple(a.get("lhs_batch_dims", ())), tuple(a.get("rhs_batch_dims", ()))
    lc, rc = tuple(a.get("lhs_contracting_dims", ())), tuple(a.get("rhs_contracting_dims", ()))
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [""] * lhs.ndim
    rs = [""] * rhs.ndim
    out = []
    for i, j in zip(lb, rb):
        ls[i] = rs[j] = next(letters)
        out.append(ls[i])
    for i, j in zip(lc, rc):
        ls[i] = rs[j] = next(letters)
    for i in range(lhs.ndim):
        if not ls[i]:
            ls[i] = next(letters)
            out.append(ls[i])
    for j in range(rhs.ndim):
        if not rs[j]:
            rs[j] = next(letters)
            out.append(rs[j])
    return np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs, rhs)


def _window_source(o: int, w: int, d: Any, n: int) -> int | None:
    """Input position read by output ``o`` at window position ``w`` (None: padding or a hole)."""
    p = o * d.stride + w * d.window_dilation - d.padding_low
    if p % d.base_dilation or not 0 <= p // d.base_dilation < n:
        return None
    return p // d.base_dilation


def _convolution(x: np.ndarray, k: np.ndarray, instr: HloInstruction) -> np.ndarray:
    """XLA convolution with feature groups, batch groups, dilations and window reversal."""
    a = instr.attributes
    dn = a["dim_labels"]
    out_dims = _dims(instr.shape)
    wd = a["window"].dimensions if "window" in a else ()
    spatial = list(zip(dn.input_spatial_dimensions, dn.kernel_spatial_dimensions,
                       dn.output_spatial_dimensions, wd))
    k_in = k.shape[dn.kernel_input_feature_dimension]
    out_f = out_dims[dn.output_feature_dimension]
    per_feature_group = out_f // int(a.get("feature_group_count", 1))
    per_batch_group = out_f // int(a.get("batch_group_count", 1))
    out = np.zeros(out_dims, dtype=float)
    for o in itertools.product(*(range(n) for n in out_dims)):
        fo = o[dn.output_feature_dimension]
        xi, ki = [0] * x.ndim, [0] * k.ndim
        xi[dn.input_batch_dimension] = ((fo // per_batch_group) * out_dims[dn.output_batch_dimension]
                                        + o[dn.output_batch_dimension])
        ki[dn.kernel_output_feature_dimension] = fo
        for w in itertools.product(*(range(d.size) for d in wd)):
            for (idim, kdim, odim, d), wj in zip(spatial, w):
                p = _window_source(o[odim], wj, d, x.shape[idim])
                if p is None:
                    break
                xi[idim] = p
                ki[kdim] = d.size - 1 - wj if d.window_reversal else wj
            else:
                for ci in range(k_in):
                    xi[dn.input_feature_dimension] = (fo // per_feature_group) * k_in + ci
                    ki[dn.kernel_input_feature_dimension] = ci
                    out[o] += x[tuple(xi)] * k[tuple(ki)]
    return out


def evaluate(instr: HloInstruction, operands: Sequence[Any]) -> Any:
    """The value of ``instr`` given its operand values (numpy arrays, tuples for tuples)."""
    op, a = instr.opcode, instr.attributes
    x = operands[0] if operands else None
    if op in _UNARY:
        return _UNARY[op](x)
    if op in _BINARY:
        return _BINARY[op](x, operands[1])
    if op == "constant":
        value = parse_literal(instr.literal or "0")
        return np.broadcast_to(np.asarray(value, dtype=float), _dims(instr.shape)).copy()
    if op == "iota":
        dims = _dims(instr.shape)
        d = a.get("iota_dimension", 0)
        shape = [1] * len(dims)
        shape[d] = dims[d]
        return np.broadcast_to(np.arange(dims[d]).reshape(shape), dims).copy()
    if op == "transpose":
        return np.transpose(x, a["dimensions"])
    if op == "reshape":
        return np.reshape(x, _dims(instr.shape))
    if op == "bitcast":
        return _bitcast(x, instr.operands[0].shape, instr.shape)
    if op == "broadcast":
        dims = tuple(a.get("dimensions", ()))
        out = _dims(instr.shape)
        shape = [1] * len(out)
        for i, d in enumerate(dims):
            shape[d] = x.shape[i]
        return np.broadcast_to(np.reshape(x, shape), out).copy()
    if op == "slice":
        return x[tuple(slice(s.start, s.limit, s.stride) for s in a["slice"])]
    if op == "pad":
        return _pad(x, operands[1].item(), a["padding"])
    if op == "concatenate":
        return np.concatenate(operands, axis=a["dimensions"][0])
    if op == "reverse":
        return np.flip(x, axis=tuple(a.get("dimensions", ()))) if a.get("dimensions") else x
    if op == "dynamic-slice":
        sizes = a["dynamic_slice_sizes"]
        starts = [min(max(int(s), 0), n - k) for s, n, k in zip(operands[1:], x.shape, sizes)]
        return x[tuple(slice(s, s + k) for s, k in zip(starts, sizes))].copy()
    if op == "dynamic-update-slice":
        upd = operands[1]
        starts = [min(max(int(s), 0), n - k) for s, n, k in zip(operands[2:], x.shape, upd.shape)]
        out = np.array(x, copy=True)
        out[tuple(slice(s, s + k) for s, k in zip(starts, upd.shape))] = upd
        return out
    if op == "gather":
        return _gather(x, np.asarray(operands[1]), instr)
    if op == "reduce":
        n = len(operands) // 2
        dims = tuple(a.get("dimensions", ()))
        total = sum(np.sum(operands[i], axis=dims) + operands[n + i] for i in range(n))
        return tuple([total] * n) if instr.shape.is_tuple else total
    if op == "reduce-window":
        n = len(operands) // 2
        shapes = instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,)
        total = sum(_reduce_window(operands[i], operands[n + i].item(), a["window"], _dims(shapes[i]))
                    for i in range(n))
        return tuple([total] * n) if instr.shape.is_tuple else total
    if op == "dot":
        return _dot(x, operands[1], instr)
    if op == "convolution":
        return _convolution(x, operands[1], instr)
    if op == "tuple":
        return tuple(operands)
    if op == "get-tuple-element":
        return x[a["index"]]
    if op == "fusion":
        return evaluate_computation(instr.fused_computation, operands)
    raise UnsupportedError(f"the reference evaluator has no rule for {op}")


def evaluate_computation(comp: HloComputation, args: Sequence[Any]) -> Any:
    """Evaluate every instruction of ``comp`` in dependency order; returns the root's value."""
    values: dict[int, Any] = {}

    def value_of(i: HloInstruction) -> Any:
        stack = [i]
        while stack:
            node = stack[-1]
            if id(node) in values:
                stack.pop()
                continue
            pending = [o for o in node.operands if id(o) not in values]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if node.opcode == "parameter":
                values[id(node)] = args[node.parameter_number or 0]
            else:
                values[id(node)] = evaluate(node, [values[id(o)] for o in node.operands])
        return values[id(i)]

    return value_of(comp.root)


def reads(instr: HloInstruction, k: int, operands: Sequence[np.ndarray],
          output_id: int = 0) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """Per output index, the indices of operand ``k`` it depends on (found by perturbation).

    Operand values should be positive floats so that sums and products do not cancel.
    """
    def out_of(vals: Sequence[Any]) -> np.ndarray:
        r = evaluate(instr, vals)
        return np.asarray(r[output_id] if isinstance(r, tuple) else r, dtype=float)

    base = out_of(operands)
    result: dict[tuple[int, ...], set[tuple[int, ...]]] = {
        o: set() for o in itertools.product(*(range(n) for n in base.shape))}
    src = np.asarray(operands[k], dtype=float)
    for e in itertools.product(*(range(n) for n in src.shape)):
        bumped = src.copy()
        bumped[e] += 1.0 + abs(bumped[e])
        vals = list(operands)
        vals[k] = bumped
        changed = np.atleast_1d(out_of(vals) != base)
        if base.ndim == 0:
            if changed[0]:
                result[()].add(tuple(int(v) for v in e))
            continue
        for o in zip(*np.nonzero(changed)):
            result[tuple(int(v) for v in o)].add(tuple(int(v) for v in e))
    return result
