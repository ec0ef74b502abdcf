"""Tile-size search over a fusion's symbolic tiling: XLA's candidates, ranked.

The candidates are XLA's (``GetValidTilings``: per tiling parameter ``1, 2, 4, ... < N`` and
``N``, kept when the constraints hold). Each is measured from the symbolic tiles alone:

* ``bytes_per_tile``: bytes of every fusion parameter tile one program reads (a dot's operand
  tiles once per step of its contracting loop);
* ``bytes_per_output_element``: that divided by the elements of the output tile (reuse);
* ``padding_waste``: the share of the output tile grid that lies outside the output.

Ranked by padding waste, then bytes per output element, then larger tiles first. The naive
choice (per parameter the largest power of two not above ``min(N, 64)``) is checked against
the constraints, so a report can say what XLA's constraints forbid there.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module('''HloModule m
... f {
...   p0 = f32[1,8,6,4,8] parameter(0)
...   ROOT b = f32[48,32] bitcast(p0)
... }
... ENTRY e {
...   p0 = f32[1,8,6,4,8] parameter(0)
...   ROOT fusion = f32[48,32] fusion(p0), kind=kLoop, calls=f
... }''')
>>> a = SymbolicTileAnalysis.analyze_computation(m.computation("f"))
>>> naive = naive_tiling(a)
>>> naive, a.get_tiling_specification().constraints.is_satisfied_by(naive)
((32, 32), False)
>>> best = rank_tilings(a)[0]
>>> best.tiling, best.padding_waste, best.bytes_per_tile
((48, 32), 0.0, 6144)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from tensorlayout.tiling.symbolic_tile import evaluate_tile_sizes
from tensorlayout.tiling.symbolic_tile_analysis import SymbolicTileAnalysis, input_space, iter_flat_tilings
from tensorlayout.tiling.symbolic_tiled_hlo import SymbolicTiledHloInstruction
from tensorlayout.tiling.tiling_specification import FlatTiling, Tiling, TilingSpecification

__all__ = ["RankedTiling", "naive_tiling", "nearest_valid", "rank_tilings"]

#: The naive tile: the largest power of two not above min(extent, NAIVE_CAP) per parameter.
NAIVE_CAP = 64


@dataclass(frozen=True, slots=True)
class RankedTiling:
    """One valid tiling and what it costs per program (see the module docstring)."""

    tiling: FlatTiling
    bytes_per_tile: int
    bytes_per_output_element: float
    padding_waste: float
    num_tiles: int

    def as_dict(self) -> dict[str, object]:
        return {
            "tiling": list(self.tiling),
            "bytes_per_tile": self.bytes_per_tile,
            "bytes_per_output_element": self.bytes_per_output_element,
            "padding_waste": self.padding_waste,
            "num_tiles": self.num_tiles,
        }


def naive_tiling(analysis: SymbolicTileAnalysis) -> FlatTiling:
    """Per parameter the largest power of two not above ``min(extent, NAIVE_CAP)`` (1 for empty)."""
    out = []
    for n in input_space(analysis.get_tiling_specification()):
        t = 1
        while t * 2 <= min(n, NAIVE_CAP):
            t *= 2
        out.append(t)
    return tuple(out)


def _trip_count(dot: SymbolicTiledHloInstruction, spec: TilingSpecification, flat: FlatTiling) -> int:
    """Steps of a dot's contracting loop: ``ceil(K / t_K)`` over its contracting parameters."""
    extents = input_space(spec)
    count = len(dot.hlo.attribute("lhs_contracting_dims", ()))
    ids = [spec.parameter_index(dot.hlo, i) for i in range(count)]
    return prod(-(-extents[i] // flat[i]) for i in ids)


def _bytes_read(
    instrs: Sequence[SymbolicTiledHloInstruction], spec: TilingSpecification, flat: FlatTiling, repeat: int
) -> int:
    """Bytes of the parameter tiles read, each region's tiles times its loop's trip count."""
    total = 0
    for t in instrs:
        if t.hlo.opcode == "parameter" and t.symbolic_tile is not None:
            sizes = evaluate_tile_sizes(t.symbolic_tile, flat)
            total += repeat * -(-prod(sizes) * t.hlo.shape.bit_width // 8)
        for region in t.regions:
            trips = _trip_count(t, spec, flat) if t.hlo.opcode in ("dot", "scaled-dot") else 1
            total += _bytes_read(region, spec, flat, repeat * trips)
    return total


def measure(analysis: SymbolicTileAnalysis, flat: FlatTiling) -> RankedTiling:
    """The costs of one flat tiling (it need not be valid)."""
    root = analysis.get_symbolic_tiled_hlo_computation()[-1]
    assert root.symbolic_tile is not None
    sizes = evaluate_tile_sizes(root.symbolic_tile, flat)
    dims = root.hlo.shape.dimensions
    tiles = prod(-(-n // max(t, 1)) for n, t in zip(dims, sizes, strict=True))
    covered = tiles * prod(sizes)
    waste = 1 - prod(dims) / covered if covered else 0.0
    read = _bytes_read(
        analysis.get_symbolic_tiled_hlo_computation(), analysis.get_tiling_specification(), flat, 1
    )
    return RankedTiling(flat, read, read / max(prod(sizes), 1), round(waste, 6), tiles)


def rank_tilings(analysis: SymbolicTileAnalysis, limit: int = 100_000) -> list[RankedTiling]:
    """XLA's valid tilings (at most ``limit`` candidates examined), best first."""
    spec = analysis.get_tiling_specification()
    out = []
    for flat in itertools.islice(iter_flat_tilings(input_space(spec)), limit):
        if analysis.parameters_satisfy_constraints(Tiling.unflatten(flat, spec)):
            out.append(measure(analysis, flat))
    return sorted(out, key=lambda r: (r.padding_waste, r.bytes_per_output_element, -prod(r.tiling)))


def nearest_valid(naive: FlatTiling, ranked: Sequence[RankedTiling]) -> RankedTiling | None:
    """The valid tiling closest to ``naive`` (fewest doublings or halvings away; best rank on ties)."""

    def distance(r: RankedTiling) -> float:
        return sum(abs(math.log2(t) - math.log2(n)) for t, n in zip(r.tiling, naive, strict=True) if t and n)

    return min(ranked, key=distance, default=None)
