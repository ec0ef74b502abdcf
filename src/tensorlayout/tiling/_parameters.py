"""The tiling parameters of a fusion, as XLA's symbolic tile analysis lays them out.

The real root's output dimensions come first, then, use before def (nested fusions included),
one parameter per contracting dimension of each dot; a root dot's own contracting parameters
precede its output ones. ``input_space`` gives each parameter's extent; the root indexing maps
all parameters to the root's output index. Also: whether a fusion keeps size-1 dimensions when
it simplifies maps (pads, size-1 concatenation dims, size-1 non-batch dot dims).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n a = f32[8,16] parameter(0)\\n b = f32[16,4] parameter(1)\\n"
...                  " ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\\n}")
>>> root = m.entry.root
>>> spec = TilingSpecification(parameter_mapping(root, post_order([root])))
>>> input_space(spec), str(root_indexing(root, spec))
([16, 8, 4], '(d0, d1, d2) -> (d1, d2), domain: d0 in [0, 15], d1 in [0, 7], d2 in [0, 3]')
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo import HloInstruction
from tensorlayout.indexing import IndexingMap, var
from tensorlayout.indexing.variables import dim_vars_from_tensor_sizes
from tensorlayout.tiling.symbolic_tiled_hlo import hlo_to_string
from tensorlayout.tiling.tiling_specification import InstructionMapping, TilingSpecification

__all__ = [
    "input_space",
    "is_dot",
    "parameter_mapping",
    "post_order",
    "preserves_point_dims",
    "root_indexing",
]

_DOTS = ("dot", "scaled-dot")


def is_dot(hlo: HloInstruction) -> bool:
    return hlo.opcode in _DOTS


# ---- the tiling parameters ------------------------------------------------------------------
def post_order(roots: Sequence[HloInstruction]) -> list[HloInstruction]:
    seen: set[int] = set()
    out: list[HloInstruction] = []

    def visit(h: HloInstruction) -> None:
        if id(h) in seen:
            return
        seen.add(id(h))
        for o in h.operands:
            visit(o)
        out.append(h)

    for r in roots:
        visit(r)
    return out


def parameter_mapping(
    real_root: HloInstruction, order: Sequence[HloInstruction]
) -> tuple[InstructionMapping, ...]:
    """The real root with one parameter per output dimension, then each dot's contracting dims."""
    mapping: list[InstructionMapping] = [(real_root, len(real_root.shape.dimensions))]
    _nested_parameters(order, mapping)
    return tuple(mapping)


def _nested_parameters(order: Sequence[HloInstruction], mapping: list[InstructionMapping]) -> None:
    """``PopulateNestedParameters``: each dot's contracting dims, use before def, nests included."""
    for h in reversed(order):
        if h.opcode == "fusion":
            nested = h.fused_computation.root
            _nested_parameters(
                post_order(nested.operands if nested.opcode == "tuple" else (nested,)), mapping
            )
        elif is_dot(h):
            n = len(h.attribute("lhs_contracting_dims", ()))
            at = next((i for i, (g, _) in enumerate(mapping) if g is h), None)
            if at is None:
                mapping.append((h, n))
            else:
                mapping[at] = (h, mapping[at][1] + n)


def input_space(spec: TilingSpecification) -> list[int]:
    """The extent of every tiling parameter: a dot's contracting dims first, then its outputs."""
    space: list[int] = []
    for h, n in spec.parameter_mapping:
        if is_dot(h):
            contracting = h.attribute("lhs_contracting_dims", ())
            space.extend(h.operands[0].shape.dimensions[c] for c in contracting)
            if n != len(contracting):
                space.extend(h.shape.dimensions)
        else:
            space.extend(h.shape.dimensions)
    return space


def root_indexing(root: HloInstruction, spec: TilingSpecification) -> IndexingMap:
    """The map from all tiling parameters to the root's output index."""
    space = input_space(spec)
    rank = len(root.shape.dimensions)
    offset = 0
    for h, n in spec.parameter_mapping:
        if h is root:
            results = [var(offset + i) for i in range(n - rank, n)]
            return IndexingMap(results, dim_vars_from_tensor_sizes(space))
        offset += n
    raise UnsupportedError(f"No mapping found for root instruction: {hlo_to_string(root)}")


# ---- simplification mode ----------------------------------------------------------------------
def _non_contracting(rank: int, contracting: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [d for d in range(rank) if d not in contracting and d not in batch]


def _dot_has_non_batch_point_dim(h: HloInstruction) -> bool:
    if not is_dot(h):
        return False
    lhs, rhs = h.operands[0].shape.dimensions, h.operands[1].shape.dimensions
    lc, rc = h.attribute("lhs_contracting_dims", ()), h.attribute("rhs_contracting_dims", ())
    ln = _non_contracting(len(lhs), lc, h.attribute("lhs_batch_dims", ()))
    rn = _non_contracting(len(rhs), rc, h.attribute("rhs_batch_dims", ()))
    return any(lhs[d] == 1 for d in [*ln, *lc]) or any(rhs[d] == 1 for d in rn)


def preserves_point_dims(h: HloInstruction) -> bool:
    """Pads, concatenates along a size-1 dim and dots with size-1 non-batch dims keep point dims."""
    if h.opcode == "pad":
        return True
    if h.opcode == "fusion":
        comp = h.fused_computation
        return any(preserves_point_dims(i) for i in comp.instructions if i.opcode != "parameter")
    if h.opcode == "concatenate":
        dim = h.attribute("dimensions")[0]
        return any(o.shape.dimensions[dim] == 1 for o in h.operands)
    return _dot_has_non_batch_point_dim(h)
