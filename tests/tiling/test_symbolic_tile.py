"""SymbolicTile against its definition: over every tile size the constraints allow, the indices a
tile of the output reads through the indexing map are exactly ``offset + stride * [0, size)``."""

from __future__ import annotations

import itertools

import pytest

from tensorlayout.errors import IndexingError, UnsupportedError
from tensorlayout.hlo import output_to_input_indexing, parse_module
from tensorlayout.tiling import (
    SymbolicTile,
    SymbolicTileAnalysis,
    Tiling,
    evaluate_tile_offsets,
    evaluate_tile_sizes,
    evaluate_tile_strides,
)
from tests.tiling.xla import symbolic

MODULES = {
    "transpose": "p = f32[6,4] parameter(0)\n ROOT r = f32[4,6] transpose(p), dimensions={1,0}",
    "slice": "p = f32[20,9] parameter(0)\n ROOT r = f32[5,3] slice(p), slice={[2:17:3], [0:9:3]}",
    "collapse": "p = f32[3,4,2] parameter(0)\n ROOT r = f32[24] reshape(p)",
    "split": "p = f32[12,2] parameter(0)\n ROOT r = f32[3,4,2] reshape(p)",
    "reverse": "p = f32[5,4] parameter(0)\n ROOT r = f32[5,4] reverse(p), dimensions={0}",
}


def _root(body: str):  # type: ignore[no-untyped-def]
    return parse_module(f"HloModule m\nENTRY e {{\n {body}\n}}").entry.root


@pytest.mark.parametrize("name", sorted(MODULES))
def test_tile_is_the_footprint(name: str) -> None:
    root = _root(MODULES[name])
    m = output_to_input_indexing(root).maps(0)[0]
    tile = SymbolicTile.from_indexing_map(m)
    assert tile is not None
    dims = root.shape.dimensions
    checked = 0
    for sizes in itertools.product(*(range(1, n + 1) for n in dims)):
        if not tile.constraints.is_satisfied_by(list(sizes)):
            continue
        footprint = {m.evaluate(list(x)) for x in itertools.product(*(range(s) for s in sizes))}
        off = evaluate_tile_offsets(tile, sizes)
        size = evaluate_tile_sizes(tile, sizes)
        stride = evaluate_tile_strides(tile, sizes)
        tile_set = {tuple(o + st * i for o, st, i in zip(off, stride, idx, strict=True))
                    for idx in itertools.product(*(range(s) for s in size))}
        assert footprint == tile_set, (sizes, off, size, stride)
        checked += 1
    assert checked > 0


def test_the_replay_fails_on_a_wrong_expectation() -> None:
    vector = {
        "steps": [], "strings": [],
        "expectations": [{"macro": "EXPECT_THAT", "subject": 'GetConstraint("v0", 0, 5)',
                          "expected": {"call": "MatchConstraintExpressionString",
                                       "args": [{"text": "v0 in [0, 4]"}]}}],
    }
    with pytest.raises(AssertionError, match="want"):
        symbolic.run(vector)
    vector["expectations"][0]["expected"] = {"call": "NoSuchMatcher", "args": []}
    with pytest.raises(AssertionError, match="NoSuchMatcher"):
        symbolic.run(vector)


def test_bad_input_is_a_typed_error() -> None:
    root = _root(MODULES["transpose"])
    tile = SymbolicTile.from_indexing_map(output_to_input_indexing(root).maps(0)[0])
    assert tile is not None
    with pytest.raises(IndexingError, match="expected 2 tile sizes, got 3"):
        evaluate_tile_sizes(tile, [1, 2, 3])
    m = parse_module(
        "HloModule m\nf {\n p = f32[6,4] parameter(0)\n ROOT r = f32[24] reshape(p)\n}\n"
        "ENTRY e {\n p = f32[6,4] parameter(0)\n ROOT f = f32[24] fusion(p), kind=kLoop, calls=f\n}"
    )
    a = SymbolicTileAnalysis.analyze_computation(m.computation("f"))
    assert isinstance(a, SymbolicTileAnalysis)
    with pytest.raises(UnsupportedError, match="Tiling does not satisfy constraints"):
        a.compute_tiled_computation(Tiling({a.get_real_root(): (3,)}))
    with pytest.raises(UnsupportedError, match="Expected 1 tile sizes for instruction r, got 2"):
        a.compute_tiled_computation(Tiling({a.get_real_root(): (4, 4)}))
