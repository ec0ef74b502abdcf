"""Tiled computations against their definition, on the fusions of the HLO corpus: for every
program, every element of a fusion parameter that the output tile reads (through the
instruction's indexing map, all reduced indices included) lies in that parameter's tile
``offset + stride * [0, size)``; and the emitter predicate of ``ParametersSatisfyConstraints``."""

from __future__ import annotations

import itertools
from math import prod

import pytest

from tensorlayout.hlo import HloInstruction, parse_module
from tensorlayout.tiling import FusionDecision, SymbolicTileAnalysis, Tiling
from tensorlayout.tiling.search import naive_tiling, rank_tilings
from tensorlayout.tiling.symbolic_tile import evaluate_tile_sizes, evaluate_tile_strides
from tensorlayout.tiling.tiled_computation import active_parameters, output_tiling_info, tile_offset_indexing
from tensorlayout.tiling.tiled_hlo_schedule import MajorToMinorTiledHloSchedule
from tests.conftest import DATA

PROGRAMS = 4  # programs checked per fusion
READS = 800  # output elements x reduced indices enumerated per program, at most


def _fusions() -> list[tuple[str, HloInstruction]]:
    out = []
    for path in sorted((DATA / "hlo").glob("*.opt.hlo")):
        module = parse_module(path.read_text())
        out += [(f"{path.stem}:{i.name}", i) for i in module.instructions() if i.opcode == "fusion"]
    return out


FUSIONS = _fusions()


def _tiling(a: SymbolicTileAnalysis) -> tuple[int, ...]:
    naive = naive_tiling(a)
    if a.get_tiling_specification().constraints.is_satisfied_by(naive):
        return naive
    return rank_tilings(a, limit=2000)[0].tiling


def _points(m, out_index, budget):  # type: ignore[no-untyped-def]
    """Operand indices the map reads for one output index (range variables enumerated)."""
    ranges = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.range_vars]
    for syms in itertools.islice(itertools.product(*ranges), budget):
        if m.contains(list(out_index), list(syms)):
            yield m.evaluate(list(out_index), list(syms))


def _in_tile(point, offsets, strides, sizes) -> bool:  # type: ignore[no-untyped-def]
    """``point`` is ``offsets + strides * i`` for some ``0 <= i < sizes``."""
    for p, o, s, n in zip(point, offsets, strides, sizes, strict=True):
        if s == 0:
            if p != o:
                return False
        elif (p - o) % s or not 0 <= (p - o) // s < n:
            return False
    return True


@pytest.mark.parametrize("name,fusion", FUSIONS, ids=[n for n, _ in FUSIONS])
def test_parameter_tiles_cover_what_the_output_tile_reads(name: str, fusion: HloInstruction) -> None:
    a = SymbolicTileAnalysis.analyze_computation(fusion.fused_computation)
    if isinstance(a, FusionDecision):
        pytest.skip(f"XLA does not tile it: {a.explain()[:80]}")
    instrs = a.get_symbolic_tiled_hlo_computation()
    if any(t.regions or t.runtime_variables or t.indexing_map.num_rt_vars for t in instrs):
        pytest.skip("loops, branches and runtime offsets are checked by the XLA vectors")
    flat = _tiling(a)
    root_map = a.real_root_indexing
    info = output_tiling_info(root_map, flat, active_parameters(root_map), MajorToMinorTiledHloSchedule())
    root = instrs[-1]
    assert root.symbolic_tile is not None
    root_sizes = evaluate_tile_sizes(root.symbolic_tile, flat)
    dims = root.hlo.shape.dimensions
    checked = 0
    for t in (t for t in instrs if t.hlo.opcode == "parameter"):
        assert t.symbolic_tile is not None
        sizes, strides = (
            evaluate_tile_sizes(t.symbolic_tile, flat),
            evaluate_tile_strides(t.symbolic_tile, flat),
        )
        offsets = tile_offset_indexing(t, info.linear_output_tile_offset_indexing)
        root_offsets = tile_offset_indexing(root, info.linear_output_tile_offset_indexing)
        for pid in range(min(PROGRAMS, prod(info.num_output_tiles_per_dim))):
            off = offsets.evaluate([pid])
            start = root_offsets.evaluate([pid])
            budget = READS
            for rel in itertools.product(*(range(n) for n in root_sizes)):
                out = [s + r for s, r in zip(start, rel, strict=True)]
                if any(o >= n for o, n in zip(out, dims, strict=True)):
                    continue
                for point in _points(t.indexing_map, out, budget):
                    assert _in_tile(point, off, strides, sizes), (name, t.hlo.name, pid, out, point, off)
                    checked += 1
                    budget -= 1
                if budget <= 0:
                    break
    assert checked or not any(t.hlo.opcode == "parameter" for t in instrs)


def test_an_emitter_predicate_narrows_the_valid_tilings() -> None:
    m = parse_module(
        "HloModule m\nf {\n p = f32[8,4] parameter(0)\n ROOT n = f32[8,4] negate(p)\n}\n"
        "ENTRY e {\n p = f32[8,4] parameter(0)\n ROOT f = f32[8,4] fusion(p), kind=kLoop, calls=f\n}"
    )
    half = SymbolicTileAnalysis.analyze_computation(m.computation("f"), lambda flat: flat[0] == 4)
    assert not isinstance(half, FusionDecision)
    assert half.get_valid_tilings() == [(4, 1), (4, 2), (4, 4)]
    root = half.get_real_root()
    assert not half.parameters_satisfy_constraints(Tiling({root: (8, 4)}))
