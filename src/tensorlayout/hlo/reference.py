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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo.attributes import parse_literal
from tensorlayout.hlo.model import HloComputation, HloInstruction
from tensorlayout.hlo.ops._common import major_to_minor

__all__ = ["EVALUATE", "evaluate", "evaluate_computation", "reads"]

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


# Each rule: ``(instruction, operand values) -> value`` (numpy arrays; tuples for tuple shapes).
Eval = Callable[[HloInstruction, Sequence[Any]], Any]


def _constant(instr: HloInstruction, ops: Sequence[Any]) -> np.ndarray:
    value = parse_literal(instr.literal or "0")
    return np.broadcast_to(np.asarray(value, dtype=float), _dims(instr.shape)).copy()


def _iota(instr: HloInstruction, ops: Sequence[Any]) -> np.ndarray:
    dims = _dims(instr.shape)
    d = instr.attributes.get("iota_dimension", 0)
    shape = [1] * len(dims)
    shape[d] = dims[d]
    return np.broadcast_to(np.arange(dims[d]).reshape(shape), dims).copy()


def _broadcast(instr: HloInstruction, ops: Sequence[Any]) -> np.ndarray:
    x, out = ops[0], _dims(instr.shape)
    shape = [1] * len(out)
    for i, d in enumerate(instr.attributes.get("dimensions", ())):
        shape[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, shape), out).copy()


def _reverse(instr: HloInstruction, ops: Sequence[Any]) -> np.ndarray:
    dims = tuple(instr.attributes.get("dimensions", ()))
    return np.flip(ops[0], axis=dims) if dims else ops[0]


def _dynamic_slice(instr: HloInstruction, ops: Sequence[Any]) -> np.ndarray:
    x, sizes = ops[0], instr.attributes["dynamic_slice_sizes"]
    starts = [min(max(int(s), 0), n - k) for s, n, k in zip(ops[1:], x.shape, sizes)]
    return np.array(x[tuple(slice(s, s + k) for s, k in zip(starts, sizes))], copy=True)


def _dynamic_update_slice(instr: HloInstruction, ops: Sequence[Any]) -> np.ndarray:
    x, upd = ops[0], ops[1]
    starts = [min(max(int(s), 0), n - k) for s, n, k in zip(ops[2:], x.shape, upd.shape)]
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(starts, upd.shape))] = upd
    return out


def _reduce(instr: HloInstruction, ops: Sequence[Any]) -> Any:
    """Sum over ``dimensions`` plus the init value; a variadic reduce mixes all its operands."""
    n = len(ops) // 2
    dims = tuple(instr.attributes.get("dimensions", ()))
    total = sum(np.sum(ops[i], axis=dims) + ops[n + i] for i in range(n))
    return tuple([total] * n) if instr.shape.is_tuple else total


def _reduce_window_rule(instr: HloInstruction, ops: Sequence[Any]) -> Any:
    n = len(ops) // 2
    shapes = instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,)
    window = instr.attributes["window"]
    total = sum(_reduce_window(ops[i], ops[n + i].item(), window, _dims(shapes[i])) for i in range(n))
    return tuple([total] * n) if instr.shape.is_tuple else total


def _unary(f: Callable[[Any], Any]) -> Eval:
    return lambda instr, ops: f(ops[0])


def _binary(f: Callable[[Any, Any], Any]) -> Eval:
    return lambda instr, ops: f(ops[0], ops[1])


#: opcode -> rule (XLA opcode names); elementwise ops are the monotone ones the tests use.
EVALUATE: dict[str, Eval] = {
    "copy": _unary(lambda x: x), "convert": _unary(lambda x: x), "negate": _unary(np.negative),
    "exponential": _unary(np.exp), "sqrt": _unary(np.sqrt), "abs": _unary(np.abs),
    "add": _binary(np.add), "multiply": _binary(np.multiply), "subtract": _binary(np.subtract),
    "divide": _binary(np.divide),
    "constant": _constant,
    "iota": _iota,
    "transpose": lambda instr, ops: np.transpose(ops[0], instr.attributes["dimensions"]),
    "reshape": lambda instr, ops: np.reshape(ops[0], _dims(instr.shape)),
    "bitcast": lambda instr, ops: _bitcast(ops[0], instr.operands[0].shape, instr.shape),
    "broadcast": _broadcast,
    "slice": lambda instr, ops: ops[0][tuple(slice(s.start, s.limit, s.stride)
                                             for s in instr.attributes["slice"])],
    "pad": lambda instr, ops: _pad(ops[0], ops[1].item(), instr.attributes["padding"]),
    "concatenate": lambda instr, ops: np.concatenate(ops, axis=instr.attributes["dimensions"][0]),
    "reverse": _reverse,
    "dynamic-slice": _dynamic_slice,
    "dynamic-update-slice": _dynamic_update_slice,
    "gather": lambda instr, ops: _gather(ops[0], np.asarray(ops[1]), instr),
    "reduce": _reduce,
    "reduce-window": _reduce_window_rule,
    "dot": lambda instr, ops: _dot(ops[0], ops[1], instr),
    "convolution": lambda instr, ops: _convolution(ops[0], ops[1], instr),
    "tuple": lambda instr, ops: tuple(ops),
    "get-tuple-element": lambda instr, ops: ops[0][instr.attributes["index"]],
    "fusion": lambda instr, ops: evaluate_computation(instr.fused_computation, ops),
}


def evaluate(instr: HloInstruction, operands: Sequence[Any]) -> Any:
    """The value of ``instr`` given its operand values (numpy arrays, tuples for tuples)."""
    rule = EVALUATE.get(instr.opcode)
    if rule is None:
        raise UnsupportedError(f"the reference evaluator has no rule for {instr.opcode}")
    return rule(instr, operands)


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
