"""XLA's ``SymbolicTileAnalysis``: symbolic tiles propagated from a fusion's root to every instruction.

``SymbolicTileAnalysis.analyze_computation(fused_computation)`` gives the analysis, or a
``FusionDecision`` saying (in XLA's words) why the fusion cannot be tiled. The analysis holds
the symbolically tiled instructions (def before use), the ``TilingSpecification`` with the
constraints on the tile sizes, and computes the tiled computation for concrete sizes.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module('''HloModule m
... f {
...   p0 = f32[4,2] parameter(0)
...   ROOT r = f32[8] reshape(p0)
... }
... ENTRY e {
...   p0 = f32[4,2] parameter(0)
...   ROOT fusion = f32[8] fusion(p0), kind=kLoop, calls=f
... }''')
>>> a = SymbolicTileAnalysis.analyze_computation(m.computation("f"))
>>> print(a.get_tiling_specification().constraints.to_string(1))
2 mod d0 in [0, 0] || d0 mod 2 in [0, 0]
>>> [t for t in a.get_valid_tilings()]
[(1,), (2,), (4,), (8,)]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo import HloComputation, HloInstruction, OperandIndexing, output_to_input_indexing
from tensorlayout.indexing import IndexingMap, compose_indexing_maps, var
from tensorlayout.indexing.variables import dim_vars_from_tensor_sizes
from tensorlayout.tiling._parameters import (
    input_space,
    is_dot,
    parameter_mapping,
    post_order,
    preserves_point_dims,
    root_indexing,
)
from tensorlayout.tiling.constraint_expression import ConstraintExpression
from tensorlayout.tiling.symbolic_tile import SymbolicTile
from tensorlayout.tiling.symbolic_tiled_hlo import SymbolicTiledHloInstruction, hlo_to_string, tile_listing
from tensorlayout.tiling.tiled_computation import compute_tiled_computation
from tensorlayout.tiling.tiled_hlo import TiledHloComputation
from tensorlayout.tiling.tiled_hlo_schedule import (
    TiledHloScheduleBuilder,
    create_major_to_minor_tiled_hlo_schedule,
)
from tensorlayout.tiling.tiling_specification import (
    FlatTiling,
    Tiling,
    TilingSpecification,
)

__all__ = [
    "FusionDecision",
    "SymbolicTileAnalysis",
    "get_flat_tilings_for_input_space",
    "input_space",
    "iter_flat_tilings",
]



@dataclass(frozen=True, slots=True)
class FusionDecision:
    """Why XLA would not tile this fusion (``FusionDecision::Forbid``); ``explain()`` is the reason."""

    reason: str

    def explain(self) -> str:
        return self.reason

    def __bool__(self) -> bool:
        return False


class _Forbid(Exception):
    """Unwinds the analysis with XLA's reason (turned into a FusionDecision at the top)."""


class _Node:
    """A symbolic tiled instruction under construction (frozen once the analysis is done)."""

    __slots__ = ("hlo", "map", "nested", "operands", "regions", "rts", "tile")

    def __init__(self, hlo: HloInstruction, m: IndexingMap, rts: Sequence[_Node] = ()) -> None:
        self.hlo, self.map, self.rts = hlo, m, list(rts)
        self.operands: list[_Node] = []
        self.regions: list[list[_Node]] = []
        self.tile: SymbolicTile | None = None
        self.nested: tuple[list[_Node], tuple[HloInstruction, ...], TilingSpecification] | None = None

    def key(self) -> tuple[object, ...]:
        return (id(self.hlo), self.map, tuple(id(r) for r in self.rts))


class _OrderedSet:
    """Nodes deduplicated by (hlo, indexing map, runtime variables), in insertion order."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[object, ...], _Node] = {}

    def insert(self, node: _Node) -> tuple[_Node, bool]:
        found = self.by_key.setdefault(node.key(), node)
        return found, found is node


def _fusion_kind(computation: HloComputation) -> str | None:
    """The ``fusion_backend_config`` kind of the fusion calling ``computation`` (``__triton``...)."""
    for caller in computation.callers:
        m = re.search(r'"kind"\s*:\s*"([^"]*)"', caller.raw_attributes.get("backend_config", ""))
        if m:
            return m.group(1)
    return None


# ---- propagation ----------------------------------------------------------------------------
def _any_operand_is_fusion(hlo: HloInstruction) -> bool:
    return any(o.opcode == "fusion" for o in hlo.operands)


def _is_loop(hlo: HloInstruction) -> bool:
    """``IsControlFlowLoop``: a dot whose operands are not nested fusions (its body is a region)."""
    return is_dot(hlo) and not _any_operand_is_fusion(hlo)


def _is_condition(hlo: HloInstruction) -> bool:
    """``IsControlFlowCondition``: a concatenate whose operands are not nested fusions."""
    return hlo.opcode == "concatenate" and not _any_operand_is_fusion(hlo)


def _bail_out(node: _Node, computation: HloComputation) -> str | None:
    """XLA's temporary bail-outs (pad outside GEMM fusions, untileable standalone reshapes)."""
    hlo = node.hlo
    if hlo.opcode == "concatenate" and not (
        _fusion_kind(computation) == "__triton_nested_gemm_fusion" or _is_condition(hlo)
    ):
        return f"Bailing out on {hlo_to_string(hlo, full=True)}"
    if hlo.opcode == "pad" and _fusion_kind(computation) not in (
        "__triton_nested_gemm_fusion",
        "__triton_gemm",
    ):
        return f"Bailing out on {hlo_to_string(hlo, full=True)}"
    if hlo.opcode in ("reshape", "bitcast"):
        m = output_to_input_indexing(hlo).maps(0)[0]
        if SymbolicTile.from_indexing_map(m) is None:
            return f"Bailing out on reshape {hlo_to_string(hlo, full=True)} with indexing map {m}"
    return None


def _operand_indexings(hlo: HloInstruction) -> list[OperandIndexing]:
    """One map per operand; a pad's operand map gets the full output domain (padding is tiled)."""
    indexing = output_to_input_indexing(hlo)
    first = [next(iter(indexing[k])) for k in range(len(indexing))]
    if hlo.opcode == "pad":
        m = first[0].map
        full = IndexingMap(
            m.results, dim_vars_from_tensor_sizes(hlo.shape.dimensions), m.range_vars, m.rt_vars
        )
        first[0] = OperandIndexing(full, first[0].runtime_vars)
    return first


class _Analyzer:
    """One run of ``AnalyzeFromInstruction`` over a computation (recursing into regions)."""

    def __init__(self, computation: HloComputation, spec: TilingSpecification, mode: str) -> None:
        self.computation, self.spec, self.mode = computation, spec, mode
        self.constraints = ConstraintExpression.get_always_satisfied()

    def contains(self, hlo: HloInstruction) -> bool:
        return hlo.opcode != "parameter" and hlo.parent is self.computation

    def set_tile(self, node: _Node) -> None:
        if self.contains(node.hlo):
            reason = _bail_out(node, self.computation)
            if reason:
                raise _Forbid(reason)
        tile = SymbolicTile.from_indexing_map(node.map)
        if tile is None:
            raise _Forbid(
                f"Failed to compute symbolic tile for {node.map} for HLO {hlo_to_string(node.hlo, full=True)}"
            )
        if not tile.is_satisfiable:
            raise _Forbid(
                f"Symbolic tile {tile.to_string()} is not satisfiable for {node.map} "
                f"for HLO {hlo_to_string(node.hlo, full=True)}"
            )
        node.tile = tile

    def insert_contracting_parameters(self, consumer: HloInstruction, k: int, m: IndexingMap) -> IndexingMap:
        """Range variables of a dot's contracting dims become the dot's tiling parameters."""
        if not is_dot(consumer) or not m.num_range_vars:
            return m
        contracting = consumer.attribute(
            "lhs_contracting_dims" if k in (0, 2) else "rhs_contracting_dims", ()
        )
        by_symbol: dict[int, int] = {}
        for i, c in enumerate(contracting):
            r = m.results[c]
            sym = r if r.is_var else r.lhs
            assert sym is not None and sym.is_var
            by_symbol[sym.value - m.num_dims] = self.spec.parameter_index(consumer, i)
        symbols = sorted(by_symbol)
        moved = m.convert_range_variables_to_dimensions(symbols)
        results = [var(i) for i in range(m.num_dims)] + [var(by_symbol[s]) for s in symbols]
        first = IndexingMap(results, dim_vars_from_tensor_sizes([d.bounds.upper + 1 for d in m.dim_vars]))
        return compose_indexing_maps(first, moved)

    def compose(
        self, node: _Node, pos: int, oi: OperandIndexing, nodes: _OrderedSet, new: list[_Node]
    ) -> tuple[IndexingMap, list[_Node]]:
        """``ComposeInstructionIndexing``: the operand's map and runtime-variable nodes."""
        composed = compose_indexing_maps(node.map, oi.map)
        if composed.is_undefined:
            return composed, []
        ranges = composed.num_range_vars
        composed = composed.simplify(self.mode).rescale_symbols()
        composed, removed = composed.remove_unused_symbols_with_mask()
        kept = [not (i < len(removed) and removed[i]) for i in range(composed.num_symbols + len(removed))]
        rts = [rt for i, rt in enumerate(node.rts) if kept[i + ranges]]
        for i, rv in enumerate(oi.runtime_vars):
            if not kept[i + len(node.rts) + ranges]:
                continue
            rt_node, inserted = nodes.insert(
                _Node(rv.instruction, compose_indexing_maps(node.map, rv.map), node.rts)
            )
            rts.append(rt_node)
            if inserted:
                new.append(rt_node)
        if composed.num_range_vars:
            composed = self.insert_contracting_parameters(node.hlo, pos, composed)
        return composed, rts

    def analyze_nest(
        self, fusion: HloInstruction, node: _Node
    ) -> tuple[list[_Node], tuple[HloInstruction, ...], TilingSpecification]:
        """``AnalyzeNestedFusion``: the nest's own analysis, rooted at ``node``'s indexing."""
        comp = fusion.fused_computation
        roots = tuple(comp.root.operands) if comp.root.opcode == "tuple" else (comp.root,)
        roots = tuple(
            fusion.operands[r.parameter_number or 0] if r.opcode == "parameter" else r for r in roots
        )
        if len(roots) != 1:
            raise _Forbid(f"Nested fusion {fusion.name} has {len(roots)} roots.")
        if roots[0].opcode == "fusion":
            raise _Forbid("Root fusion instruction is not supported.")
        nested = _Analyzer(comp, self.spec, self.mode)
        nodes = nested.analyze_from(_Node(roots[0], node.map, node.rts))
        self.constraints = (self.constraints & nested.constraints).simplify()
        return nodes, roots, TilingSpecification(self.spec.parameter_mapping, nested.constraints)

    def analyze_from(self, root: _Node) -> list[_Node]:
        """``AnalyzeFromInstruction``: the nodes reached from ``root``, def before use."""
        if root.map.num_range_vars:
            raise _Forbid("Range variables must be converted to dimensions")
        nodes = _OrderedSet()
        worklist = [root]
        while worklist:
            node = worklist.pop()
            self.set_tile(node)
            assert node.tile is not None
            self.constraints = (self.constraints & node.tile.constraints).simplify()
            if not self.constraints.is_satisfiable:
                raise _Forbid(
                    f"Tiling constraints are unsatisfiable at HLO {hlo_to_string(node.hlo, full=True)}"
                )
            if not self.contains(node.hlo):
                continue
            if node.hlo.opcode == "fusion":  # analysed as a nest when it was reached
                continue
            self.visit_operands(node, nodes, worklist)
        ordered = _sorted_post_order(list(nodes.by_key.values()), root)
        if _is_loop(root.hlo) and ordered:
            root.regions.append(ordered)
            ordered = []
        return [*ordered, root]

    def visit_operands(self, node: _Node, nodes: _OrderedSet, worklist: list[_Node]) -> None:
        for pos, (operand, oi) in enumerate(
            zip(node.hlo.operands, _operand_indexings(node.hlo), strict=True)
        ):
            new: list[_Node] = []
            m, rts = self.compose(node, pos, oi, nodes, new)
            if m.is_undefined:
                raise _Forbid(
                    f"Couldn't compose indexing of instruction {hlo_to_string(node.hlo, full=True)} "
                    f"and operand {hlo_to_string(operand, full=True)}"
                )
            worklist.extend(new)
            child = _Node(operand, m, rts)
            if operand.opcode == "fusion" and self.contains(operand):
                child.nested = self.analyze_nest(operand, child)
                found, inserted = nodes.insert(child)
                node.operands.append(found)
                if inserted:
                    worklist.append(found)
                continue
            is_condition = _is_condition(node.hlo)
            if _is_loop(operand) or is_condition:
                region = self.analyze_from(child)
                if is_condition:
                    node.operands.append(region[-1])
                    node.regions.append(region)
                    continue
                child = region[-1]
                found, _ = nodes.insert(child)
                node.operands.append(found)
                continue
            found, inserted = nodes.insert(child)
            node.operands.append(found)
            if inserted:
                worklist.append(found)


def _sorted_post_order(nodes: list[_Node], root: _Node) -> list[_Node]:
    """Def-before-use order of a DFS from ``root`` (operands, then runtime variables)."""
    order: dict[int, int] = {}

    def visit(n: _Node) -> None:
        if id(n) in order:
            return
        for o in n.operands:
            visit(o)
        for r in n.rts:
            visit(r)
        order[id(n)] = len(order)

    visit(root)
    return sorted(nodes, key=lambda n: order.get(id(n), len(order)))


def _freeze(
    nodes: Sequence[_Node], memo: dict[int, SymbolicTiledHloInstruction]
) -> tuple[SymbolicTiledHloInstruction, ...]:
    def one(n: _Node) -> SymbolicTiledHloInstruction:
        if id(n) not in memo:
            regions = tuple(_freeze(r, memo) for r in n.regions)
            nest = None
            if n.nested is not None:
                nodes, roots, spec = n.nested
                nest = SymbolicTileAnalysis(_freeze(nodes, memo), roots, 0, n.map, spec)
            memo[id(n)] = SymbolicTiledHloInstruction(
                n.hlo,
                n.map,
                n.tile,
                tuple(one(o) for o in n.operands),
                tuple(one(r) for r in n.rts),
                regions,
                nest,
            )
        return memo[id(n)]

    return tuple(one(n) for n in nodes)


EmitterConstraints = Callable[[FlatTiling], bool]


@dataclass(frozen=True, slots=True)
class SymbolicTileAnalysis:
    """``SymbolicTileAnalysis``: the symbolically tiled instructions and the tiling specification."""

    instructions: tuple[SymbolicTiledHloInstruction, ...]
    roots: tuple[HloInstruction, ...]
    real_root_index: int
    real_root_indexing: IndexingMap
    tiling_specification: TilingSpecification
    emitter_specific_constraints: EmitterConstraints | None = None

    @classmethod
    def analyze_computation(
        cls, computation: HloComputation, emitter_specific_constraints: EmitterConstraints | None = None
    ) -> SymbolicTileAnalysis | FusionDecision:
        """``AnalyzeComputation``: the analysis of a fused computation, or XLA's reason it cannot be tiled."""
        try:
            return cls._analyze(computation, emitter_specific_constraints)
        except _Forbid as why:
            return FusionDecision(str(why))

    @classmethod
    def _analyze(
        cls, computation: HloComputation, emitter: EmitterConstraints | None
    ) -> SymbolicTileAnalysis:
        root = computation.root
        roots = tuple(root.operands) if root.opcode == "tuple" else (root,)
        real = _real_root_index(roots, root)
        order = post_order(roots)
        if roots[real].shape.is_tuple:
            text = hlo_to_string(roots[real], full=True)
            raise _Forbid(f"Instruction {text} has non-array shape: {roots[real].shape}")
        spec = TilingSpecification(parameter_mapping(roots[real], order))
        if roots[real].opcode == "fusion":
            raise _Forbid("Root fusion instruction is not supported.")
        indexing = root_indexing(roots[real], spec)
        mode = (
            "preserve"
            if any(preserves_point_dims(h) for h in order if h.parent is computation)
            else "replace"
        )
        analyzer = _Analyzer(computation, spec, mode)
        nodes = analyzer.analyze_from(_Node(roots[real], indexing))
        spec = TilingSpecification(spec.parameter_mapping, analyzer.constraints)
        return cls(_freeze(nodes, {}), roots, real, indexing, spec, emitter)

    # ---- XLA's accessors -----------------------------------------------------------------
    def get_symbolic_tiled_hlo_computation(self) -> tuple[SymbolicTiledHloInstruction, ...]:
        return self.instructions

    def get_tiling_specification(self) -> TilingSpecification:
        return self.tiling_specification

    def get_roots(self) -> tuple[HloInstruction, ...]:
        return self.roots

    def get_real_root(self) -> HloInstruction:
        return self.roots[self.real_root_index]

    def parameters_satisfy_constraints(self, tiling: Tiling) -> bool:
        """``ParametersSatisfyConstraints``: emitter predicate and ``tiling.conforms_to(spec)``.

        A tiling that does not flatten against the specification raises UnsupportedError.
        """
        flat = tiling.flatten(self.tiling_specification)
        if self.emitter_specific_constraints is not None and not self.emitter_specific_constraints(flat):
            return False
        return tiling.conforms_to(self.tiling_specification)

    def compute_tiled_computation(
        self,
        tiling: Tiling,
        schedule_builder: TiledHloScheduleBuilder = create_major_to_minor_tiled_hlo_schedule,
        constraints_are_known_satisfied: bool = False,
        compute_all_tile_offset_indexing_maps: bool = False,
    ) -> TiledHloComputation:
        """``ComputeTiledComputation``: every tile for these sizes (UnsupportedError if invalid)."""
        if not constraints_are_known_satisfied and not self.parameters_satisfy_constraints(tiling):
            raise UnsupportedError("Tiling does not satisfy constraints.")
        flat = tiling.flatten(self.tiling_specification)
        schedule = schedule_builder(self.tiling_specification)
        return compute_tiled_computation(
            self.instructions,
            self.roots,
            self.real_root_indexing,
            flat,
            schedule,
            compute_all_tile_offset_indexing_maps,
        )

    def get_valid_tilings(self) -> list[FlatTiling]:
        """``GetValidTilings``: power-of-two sizes (and the full extent) that satisfy the constraints."""
        spec = self.tiling_specification
        out = []
        for flat in get_flat_tilings_for_input_space(input_space(spec)):
            if self.parameters_satisfy_constraints(Tiling.unflatten(flat, spec)):
                out.append(flat)
        return out

    def to_string(self) -> str:
        """Per instruction ``name.tile_0 = opcode(operand tiles)`` then its fields; regions nested."""
        return tile_listing(self.instructions, _print_symbolic)


def _print_symbolic(instrs: Sequence[SymbolicTiledHloInstruction], head: Callable[[Any], str],
                    lines: list[str], indent: str) -> None:
    """XLA's analysis printout: each instruction after the regions that define its operands."""
    for t in instrs:
        lines.append(f"{indent}{head(t)}")
        lines.extend(f"{indent}{line}" for line in t.to_string().split("\n"))
        for i, region in enumerate(t.regions):
            lines.append(f"{indent}region {i} {{")
            _print_symbolic(region, head, lines, indent + "  ")
            lines.append(f"{indent}}}")


def _real_root_index(roots: Sequence[HloInstruction], tuple_root: HloInstruction) -> int:
    """The one root that no other instruction of the fusion uses (the others feed it)."""
    free = [i for i, r in enumerate(roots) if not [u for u in r.users if u is not tuple_root]]
    if not free:
        raise _Forbid("Each fusion should have at least one root without users but no root was found.")
    if len(free) > 1:
        raise _Forbid(
            "Only simple multi-output fusions with one real root are supported but multiple roots were found."
        )
    return free[0]


def _sizes_for(n: int) -> list[int]:
    if n < 0:
        raise UnsupportedError("Dimension size must be non-negative.")
    if n == 0:
        return [0]
    out, t = [], 1
    while t < n:
        out.append(t)
        t *= 2
    return [*out, n]


def iter_flat_tilings(space: Sequence[int]) -> Iterator[FlatTiling]:
    """The candidates of :func:`get_flat_tilings_for_input_space`, one at a time, in its order."""
    return itertools.product(*(_sizes_for(n) for n in space))


def get_flat_tilings_for_input_space(space: Sequence[int]) -> list[FlatTiling]:
    """``GetFlatTilingsForInputSpace``: per parameter ``1, 2, 4, ... < n`` then ``n``; the product."""
    return list(iter_flat_tilings(space))
