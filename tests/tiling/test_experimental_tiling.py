"""The experimental tiler against the HLO indexing analysis, by brute force.

For an op, random tile sizes and every tile id of the parallel grid, the elements an operand
tile covers (its tiles over all sequential tile ids together, masked at the upper bounds and
inside the operand) must be exactly the elements the output tile's elements read through the
op's output-to-input indexing maps (``tensorlayout.hlo.analysis``, exact on XLA's tests).
"""

from __future__ import annotations

import itertools
import random

import pytest

from tensorlayout.core.intmath import ceil_div
from tensorlayout.hlo import HloInstruction, parse_module
from tensorlayout.hlo.analysis import output_to_input_indexing
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.tile import Tile
from tensorlayout.tiling.experimental.tile_propagation import (
    propagate_tile_to_input,
    propagate_tile_to_output,
)
from tensorlayout.tiling.experimental.tiling_space import PARALLEL, TilingSpace
from tensorlayout.tiling.experimental.tiling_space_utils import get_flat_tilings_for_input_space

ADD = "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"

#: ``(name, entry body)``: small ops the propagation rules cover.
OPS = [
    (
        "elementwise",
        " p0 = f32[6,5] parameter(0)\n p1 = f32[6,5] parameter(1)\n ROOT r = f32[6,5] add(p0, p1)",
    ),
    ("broadcast", " p0 = f32[6,4] parameter(0)\n ROOT r = f32[6,3,4] broadcast(p0), dimensions={0,2}"),
    ("transpose", " p0 = f32[3,5,4] parameter(0)\n ROOT r = f32[4,3,5] transpose(p0), dimensions={2,0,1}"),
    ("slice", " p0 = f32[9,12] parameter(0)\n ROOT r = f32[3,4] slice(p0), slice={[1:9:3], [2:10:2]}"),
    (
        "pad",
        " p0 = f32[4,5] parameter(0)\n c = f32[] constant(0)\n ROOT r = f32[7,9] pad(p0, c), padding=1_2x3_1",
    ),
    (
        "concatenate",
        " p0 = f32[3,4] parameter(0)\n p1 = f32[3,8] parameter(1)\n"
        " ROOT r = f32[3,12] concatenate(p0, p1), dimensions={1}",
    ),
    (
        "reduce",
        " p0 = f32[4,6,5] parameter(0)\n c = f32[] constant(0)\n"
        " ROOT r = f32[4,5] reduce(p0, c), dimensions={1}, to_apply=add",
    ),
    (
        "dot",
        " p0 = f32[2,4,6] parameter(0)\n p1 = f32[2,6,3] parameter(1)\n ROOT r = f32[2,4,3] dot(p0, p1),"
        " lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
    ),
    ("collapse", " p0 = f32[3,4] parameter(0)\n ROOT r = f32[12] reshape(p0)"),
    ("expand", " p0 = f32[12] parameter(0)\n ROOT r = f32[3,4] reshape(p0)"),
    ("bitcast", " p0 = f32[4,6]{1,0} parameter(0)\n ROOT r = f32[6,4]{0,1} bitcast(p0)"),
]


def _elements(tile: Tile, tids: list[int], shape: tuple[int, ...]) -> set[tuple[int, ...]]:
    """The in-bounds, unmasked elements of ``tile`` at tile ids ``tids``."""
    fields = [[e.evaluate(tids) for e in (d.offset, d.size, d.stride, d.upper_bound)] for d in tile.dim_tiles]
    out = set()
    for local in itertools.product(*(range(size) for _, size, _, _ in fields)):
        index = tuple(off + k * st for (off, _, st, _), k in zip(fields, local))
        if all(0 <= i < min(ub, n) for i, (_, _, _, ub), n in zip(index, fields, shape)):
            out.add(index)
    return out


def _read(maps: list, outputs: set[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """Every operand element the output elements read through the indexing maps."""
    out = set()
    for oi in maps:
        m = oi.map
        ranges = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.range_vars]
        for point in outputs:
            for symbols in itertools.product(*ranges):
                if m.contains(list(point), list(symbols)):
                    out.add(m.evaluate(list(point), list(symbols)))
    return out


def _check(space: TilingSpace, root, tiles: list[Tile]) -> None:
    grid = [range(ceil_div(d.dimension_size, d.tile_size or 1)) for d in space.dimensions]
    parallel = [k for k, d in enumerate(space.dimensions) if d.type == PARALLEL]
    indexing = output_to_input_indexing(root)
    for tids in itertools.product(*(grid[k] for k in parallel)):
        points = []
        for all_ids in itertools.product(*grid):
            if [all_ids[k] for k in parallel] == list(tids):
                points.append(list(all_ids))
        outputs = _elements(space.tiled_roots[0], points[0], tuple(root.shape.dimensions))
        for k, operand in enumerate(root.operands):
            if not operand.shape.rank:
                continue
            shape = tuple(operand.shape.dimensions)
            covered = set().union(*(_elements(tiles[k], p, shape) for p in points))
            assert covered == _read(list(indexing.indexing_maps[k]), outputs), (root.opcode, k, tids)


def _root_space(body: str, computations: str = "") -> tuple[HloInstruction, TilingSpace]:
    """The root of ``ENTRY e { body }`` (after the ``computations`` it calls) and its tiling space."""
    root = parse_module(f"HloModule m\n{computations}ENTRY e {{\n{body}\n}}").entry.root
    return root, TilingSpace.create(root)


@pytest.mark.parametrize(("name", "body"), OPS, ids=[n for n, _ in OPS])
def test_propagated_tiles_read_what_the_indexing_maps_read(name: str, body: str) -> None:
    root, symbolic = _root_space(body, ADD)
    rng = random.Random(name)
    tilings = get_flat_tilings_for_input_space([d.dimension_size for d in symbolic.dimensions])
    checked = 0
    for sizes in rng.sample(tilings, min(6, len(tilings))):
        space = symbolic.assign_tile_sizes(list(sizes))
        try:
            tiles = propagate_tile_to_input(space, root, space.tiled_roots[0], 0)
        except TilingStatusError as error:
            assert error.code in ("kUnimplemented", "kFailedPrecondition"), error
            continue
        _check(space, root, tiles)
        checked += 1
    assert checked, f"no tiling of {name} could be propagated"


def test_output_propagation_inverts_input_propagation_for_permutations() -> None:
    root, space = _root_space(" p0 = f32[3,5,4] parameter(0)\n"
                              " ROOT r = f32[4,3,5] transpose(p0), dimensions={2,0,1}")
    (operand_tile,) = propagate_tile_to_input(space, root, space.tiled_roots[0], 0)
    assert propagate_tile_to_output(space, root, operand_tile, 0) == [space.tiled_roots[0]]


def test_errors_carry_xla_status_codes() -> None:
    root, space = _root_space(" p0 = f32[4] parameter(0)\n c = f32[] constant(0)\n"
                              " ROOT r = f32[10] pad(p0, c), padding=1_2_1")
    with pytest.raises(TilingStatusError, match="interior padding") as info:
        propagate_tile_to_input(space, root, space.tiled_roots[0], 0)
    assert info.value.code == "kUnimplemented"
    sort, sort_space = _root_space(
        " p0 = f32[4] parameter(0)\n ROOT s = f32[4] sort(p0), dimensions={0}, to_apply=lt",
        "lt {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT c = pred[] compare(a, b), direction=LT\n}\n")
    with pytest.raises(TilingStatusError, match="not implemented for sort"):
        propagate_tile_to_input(sort_space, sort, sort_space.tiled_roots[0], 0)
    with pytest.raises(TilingStatusError, match="already been assigned"):
        space.assign_tile_sizes([2]).assign_tile_sizes([2])
