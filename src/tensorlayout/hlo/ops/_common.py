"""Helpers shared by the per-op rules: shapes, identity maps, reshape and bitcast maps.

Variables are numbered as in :mod:`tensorlayout.indexing`: dims first, then range variables,
then runtime variables.

>>> print(reshape_map((4, 8), (32,)))
(d0) -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorlayout.core.intmath import prod, row_major_strides
from tensorlayout.errors import HloError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.indexing import Expr, IndexingMap, const, var
from tensorlayout.xla.shape import Shape

__all__ = [
    "array_dims",
    "bitcast_map",
    "bounds",
    "delinearize",
    "dim_numbers",
    "identity_map",
    "is_identity",
    "linearize",
    "major_to_minor",
    "operand_shape",
    "output_shape",
    "required",
    "reshape_exprs",
    "reshape_map",
    "scalar_map",
]


def array_dims(shape: Shape) -> tuple[int, ...]:
    """The dimensions of an array shape (error for tuples and tokens)."""
    if not shape.is_array:
        raise HloError(f"expected an array shape, but got {shape}")
    return tuple(shape.dimensions)


def operand_shape(instr: HloInstruction, k: int) -> Shape:
    """The shape of operand ``k``; :class:`HloError` when ``instr`` has fewer operands."""
    ops = instr.operands
    if not 0 <= k < len(ops):
        raise HloError(f"{instr.opcode} {instr.name} has {len(ops)} operand(s), not an operand {k}")
    return ops[k].shape


def required(instr: HloInstruction, name: str) -> Any:
    """The attribute ``name`` of ``instr``; :class:`HloError` when the instruction lacks it."""
    try:
        return instr.attributes[name]
    except KeyError:
        raise HloError(f"{instr.opcode} {instr.name} has no attribute {name}") from None


def dim_numbers(instr: HloInstruction, name: str, rank: int, default: Sequence[int] | None = None
                ) -> tuple[int, ...]:
    """The dimension-number list ``name`` (e.g. ``dimensions={1,0}``), each in ``[0, rank)``."""
    dims = tuple(required(instr, name) if default is None else instr.attributes.get(name, default))
    bad = [d for d in dims if not 0 <= d < rank]
    if bad:
        raise HloError(f"{instr.opcode} {instr.name}: {name} {bad[0]} is not a dimension of a "
                       f"rank-{rank} shape")
    return dims


def output_shape(instr: HloInstruction, output_id: int = 0) -> Shape:
    """The array shape of output ``output_id`` (a tuple element for multi-output ops)."""
    shape = instr.shape
    if shape.is_tuple:
        if not 0 <= output_id < len(shape.tuple_shapes):
            raise HloError(f"{instr.name} has no output {output_id}")
        shape = shape.tuple_shapes[output_id]
    return shape


def bounds(dims: Sequence[int]) -> list[tuple[int, int]]:
    """``[0, n-1]`` for each size."""
    return [(0, n - 1) for n in dims]


_IDENTITY: dict[tuple[int, ...], IndexingMap] = {}
_SCALAR: dict[tuple[int, ...], IndexingMap] = {}


def identity_map(dims: Sequence[int]) -> IndexingMap:
    """``(d0, ..., dn) -> (d0, ..., dn)`` over ``dims`` (maps are immutable, so cached)."""
    key = tuple(dims)
    m = _IDENTITY.get(key)
    if m is None:
        m = IndexingMap([var(i) for i in range(len(key))], bounds(key))
        if len(_IDENTITY) < 4096:
            _IDENTITY[key] = m
    return m


def scalar_map(dims: Sequence[int]) -> IndexingMap:
    """``(d0, ..., dn) -> ()``: every output element reads the one scalar (cached)."""
    key = tuple(dims)
    m = _SCALAR.get(key)
    if m is None:
        m = IndexingMap([], bounds(key))
        if len(_SCALAR) < 4096:
            _SCALAR[key] = m
    return m


def is_identity(m: IndexingMap) -> bool:
    """True for ``(d0, ..., dn) -> (d0, ..., dn)`` with no symbols and no constraints."""
    if m.is_undefined or m.is_known_empty or m.num_symbols or m.constraints:
        return False
    res = m.results
    return len(res) == m.num_dims and all(r.is_var and r.value == i for i, r in enumerate(res))


def linearize(exprs: Sequence[Expr], sizes: Sequence[int]) -> Expr:
    """Row-major ``sum(e_i * stride_i)`` built left to right."""
    strides = row_major_strides(sizes)
    out: Expr | None = None
    for e, s in zip(exprs, strides):
        term = e * s
        out = term if out is None else out + term
    return const(0) if out is None else out


def delinearize(x: Expr, sizes: Sequence[int]) -> list[Expr]:
    """``[x / stride_0, (x mod stride_0) / stride_1, ...]`` (row-major)."""
    strides = row_major_strides(sizes)
    out = []
    rem = x
    for i, s in enumerate(strides):
        out.append(rem // s)
        if i + 1 < len(strides):
            rem = rem % s
    return out


def reshape_exprs(in_dims: Sequence[int], out_dims: Sequence[int], out_vars: Sequence[Expr]) -> list[Expr]:
    """Index of ``in`` as expressions of the ``out`` index (XLA's ``ComputeReshapeIndexingMap``).

    Both shapes are split left to right into minimal groups with equal element counts; a
    group is copied (1:1), linearized (expand), delinearized (collapse) or both.
    """
    if prod(in_dims) == 0:
        return [const(0)] * len(in_dims)
    results: list[Expr] = []
    i = j = 0
    n_in, n_out = len(in_dims), len(out_dims)
    while i < n_in or j < n_out:
        gi: list[int] = []
        go: list[int] = []
        ci = co = 1
        while True:
            if i < n_in and (not gi or ci < co):
                gi.append(i)
                ci *= in_dims[i]
                i += 1
            elif j < n_out and (not go or co < ci):
                go.append(j)
                co *= out_dims[j]
                j += 1
            else:
                break
        if not gi and not go:
            break
        if not gi:
            continue  # trailing output-only group (size-1 dims): no result
        if not go:
            results.extend(const(0) for _ in gi)
            continue
        in_sizes = [in_dims[k] for k in gi]
        out_vars_g = [out_vars[k] for k in go]
        out_sizes = [out_dims[k] for k in go]
        if len(gi) == 1 and len(go) == 1:
            results.append(out_vars_g[0])
        elif len(gi) == 1:
            results.append(linearize(out_vars_g, out_sizes))
        elif len(go) == 1:
            results.extend(delinearize(out_vars_g[0], in_sizes))
        else:
            results.extend(delinearize(linearize(out_vars_g, out_sizes), in_sizes))
    return results


def reshape_map(in_dims: Sequence[int], out_dims: Sequence[int]) -> IndexingMap:
    """Map from the ``out`` index to the ``in`` index of a reshape ``in -> out`` (kPreserve)."""
    exprs = reshape_exprs(in_dims, out_dims, [var(k) for k in range(len(out_dims))])
    return IndexingMap(exprs, bounds(out_dims)).simplify("preserve")


def major_to_minor(shape: Shape) -> tuple[int, ...]:
    """Logical dims from most major to most minor (``ToTransposeDimensions``); default descending.

    >>> major_to_minor(Shape.parse("f32[10,20,30]{1,0,2}"))
    (2, 0, 1)
    """
    layout = shape.layout
    if layout is None:
        return tuple(range(shape.rank))
    order = tuple(reversed(layout.minor_to_major))
    if sorted(order) != list(range(shape.rank)):
        raise HloError(f"expected a layout that permutes the {shape.rank} dims of {shape}, "
                       f"but got minor_to_major {layout.minor_to_major}")
    return order


def bitcast_exprs(from_shape: Shape, to_shape: Shape, from_vars: Sequence[Expr]) -> list[Expr] | None:
    """Index of ``to_shape`` from the index of ``from_shape`` when both share one buffer.

    Transpose to physical order, reshape between the physical shapes, transpose back (the
    transpose–reshape–transpose decomposition). None if the element counts differ.
    """
    fd, td = array_dims(from_shape), array_dims(to_shape)
    if prod(fd) != prod(td) or from_shape.element_type.bit_width != to_shape.element_type.bit_width:
        return None
    f_order, t_order = major_to_minor(from_shape), major_to_minor(to_shape)
    f_phys_dims = [fd[k] for k in f_order]
    t_phys_dims = [td[k] for k in t_order]
    f_phys = [from_vars[k] for k in f_order]
    t_phys = reshape_exprs(t_phys_dims, f_phys_dims, f_phys)
    out: list[Expr] = [const(0)] * len(td)
    for p, k in enumerate(t_order):
        out[k] = t_phys[p]
    return out


def bitcast_map(from_shape: Shape, to_shape: Shape) -> IndexingMap:
    """XLA's ``GetBitcastMap(from, to)``: dims index ``from``, results index ``to``; kPreserve."""
    fd = array_dims(from_shape)
    exprs = bitcast_exprs(from_shape, to_shape, [var(k) for k in range(len(fd))])
    if exprs is None:
        return IndexingMap.undefined()
    return IndexingMap(exprs, bounds(fd)).simplify("preserve")


def int_literal(instr: HloInstruction) -> int | None:
    """The value of a scalar integer constant, else None."""
    if instr.opcode != "constant" or instr.literal is None or not instr.shape.is_array or instr.shape.rank:
        return None
    text = instr.literal.strip()
    try:
        return int(text)
    except ValueError:
        return None
