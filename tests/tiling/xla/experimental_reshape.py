"""Hand-written equivalents of XLA's reshape tests of ``codegen/tiling/experimental``.

These tests are parameterized (``INSTANTIATE_TEST_SUITE_P``) or build their module with
``HloComputation::Builder``; the vectors carry the parameter lists, which the checks here walk
case by case. ``verify_tile_equivalence`` is XLA's ``VerifyTileEquivalence``: for every tile id
of the grid, the linear indices the input tile reads equal those the propagated tile reads.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest

from tensorlayout.core.intmath import ceil_div, row_major_strides
from tensorlayout.hlo import parse_module
from tensorlayout.indexing import Expr, const, var
from tensorlayout.indexing.exprparse import parse_symbolic_expr_and_advance
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.reshape import get_minimal_reshapes
from tensorlayout.tiling.experimental.tile import DimTile, Tile
from tensorlayout.tiling.experimental.tile_propagation import propagate_tile_to_output
from tensorlayout.tiling.experimental.tiling_space import TilingSpace
from tensorlayout.xla.shape import Shape

#: absl's ``StatusCodeToString`` prefixes of ``Status::ToString``.
STATUS_NAMES = {
    "kUnimplemented": "UNIMPLEMENTED",
    "kInvalidArgument": "INVALID_ARGUMENT",
    "kFailedPrecondition": "FAILED_PRECONDITION",
    "kInternal": "INTERNAL",
}


def _cases(vector: dict[str, Any]) -> list[list[Any]]:
    return [c for c in vector["params"][0]["generator_value"]["args"][0] if c is not None]


def _labelled(case: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": case[0]["text"]}
    for item in case[1:]:
        value = item["value"]
        if isinstance(value, dict):
            value = value["text"]
        elif isinstance(value, list):
            value = [v["text"] if isinstance(v, dict) else v for v in value]
        out[item["label"]] = value
    return out


def _reshape_module(shape: list[int], to_shape: list[int]) -> Any:
    """The builder's module: ``p0`` and ``reshape(p0)`` (entry root), as HLO text."""
    dims = ",".join(map(str, shape))
    to_dims = ",".join(map(str, to_shape))
    return parse_module(
        f"HloModule m\nENTRY entry {{\n p0 = f32[{dims}] parameter(0)\n"
        f" ROOT reshape = f32[{to_dims}] reshape(p0)\n}}"
    )


def _accessed(tile: Tile, tids: tuple[int, ...], shape: list[int]) -> list[int]:
    """``EvaluateAccessedIndexesForTile``: linear indices of the unmasked tile elements."""
    values = list(tids)
    fields = [
        [e.evaluate(values) for e in (d.offset, d.size, d.stride, d.upper_bound)] for d in tile.dim_tiles
    ]
    strides = row_major_strides(shape)
    out = []
    for local in itertools.product(*(range(size) for _, size, _, _ in fields)):
        index = [off + k * st for (off, _, st, _), k in zip(fields, local)]
        if any(i >= ub for i, (_, _, _, ub) in zip(index, fields)):
            continue
        assert all(0 <= i < n for i, n in zip(index, shape)), f"tile reads {index} outside {shape}"
        out.append(sum(i * s for i, s in zip(index, strides)))
    return out


def verify_tile_equivalence(
    space: TilingSpace, a: Tile, shape_a: list[int], b: Tile, shape_b: list[int]
) -> None:
    """Both tiles read the same linear indices, in the same order, for every tile id."""
    if space.is_symbolic:
        return
    grid = [ceil_div(d.dimension_size, d.tile_size or 1) for d in space.dimensions]
    a, b = space.simplify_tile(a), space.simplify_tile(b)
    for tids in itertools.product(*(range(n) for n in grid)):
        assert _accessed(a, tids, shape_a) == _accessed(b, tids, shape_b), (tids, str(a), str(b))


def _create_tile(space: TilingSpace, case: dict[str, Any]) -> Tile:
    """``CreateTile``: offsets and bounds parsed over ``tid_i`` / ``ts_i`` (sizes when given)."""
    n = len(case["offsets"])
    sizes: list[Expr] = [
        const(s) if i < len(case["tile_sizes"]) else var(n + i)
        for i, s in enumerate(case["tile_sizes"] + [0] * (n - len(case["tile_sizes"])))
    ]

    def parse(text: str) -> Expr:
        placeholder = re.sub(
            r"\b(tid|ts)_(\d+)\b",
            lambda m: f"d{m.group(2)}" if m.group(1) == "tid" else f"s{m.group(2)}",
            text,
        )
        expr = parse_symbolic_expr_and_advance(placeholder, n)[0]
        return expr.replace({var(n + i): sizes[i] for i in range(n)})

    dims = tuple(
        DimTile(parse(o), sizes[i], const(st), parse(ub))
        for i, (o, st, ub) in enumerate(zip(case["offsets"], case["strides"], case["upper_bounds"]))
    )
    return Tile(space.num_dimensions, space.num_rt_vars, dims)


def check_propagate_reshape(vector: dict[str, Any]) -> None:
    """``ReshapeExamplesTilePropagationTest.PropagateReshape`` over every case."""
    for case in map(_labelled, _cases(vector)):
        module = _reshape_module(case["shape"], case["to_shape"])
        p0, reshape = module.entry.instructions[0], module.entry.root
        space = TilingSpace.create(p0)
        if case["tile_sizes"]:
            space = space.assign_tile_sizes(case["tile_sizes"])
        tile = _create_tile(space, case)
        if case["expected_error"]:
            with pytest.raises(TilingStatusError, match=re.escape(case["expected_error"])) as info:
                propagate_tile_to_output(space, reshape, tile, 0)
            assert case["expected_error"] in str(info.value), (case["name"], str(info.value))
            continue
        (out,) = propagate_tile_to_output(space, reshape, tile, 0)
        verify_tile_equivalence(space, tile, case["shape"], out, case["to_shape"])


def check_minimal_reshapes(vector: dict[str, Any]) -> None:
    """``ReshapeAnalysisTest.AnalyzesMinimalReshapes`` over every case."""
    for name, dims, to_dims, expected in _cases(vector):
        got = get_minimal_reshapes(Shape.array("f32", dims), Shape.array("f32", to_dims))
        want = [(tuple(i), tuple(o), c["expr"].split("::")[-1]) for i, o, c in expected]
        assert [(r.input_dim_ids, r.output_dim_ids, r.category) for r in got] == want, name["text"]


def check_unsupported_reshape_error_format(vector: dict[str, Any]) -> None:
    """``ReshapeTilePropagationTest.UnsupportedReshapeErrorFormat``: f32[12] -> f32[3,4], tile size
    5 over the parameter, the root tile propagated through the reshape; XLA's status text."""
    module = _reshape_module([12], [3, 4])
    space = TilingSpace.create(module.entry.instructions[0]).assign_tile_sizes([5])
    tile = space.tiled_roots[0]
    with pytest.raises(TilingStatusError, match=r"\S") as info:  # compared below, spaces aside
        propagate_tile_to_output(space, module.entry.root, tile, 0)
    status = f"{STATUS_NAMES[info.value.code]}: {info.value}"
    (expectation,) = [
        e
        for e in vector["expectations"]
        if isinstance(e["expected"], dict) and e["expected"].get("call") == "MatchString"
    ]
    want = expectation["expected"]["args"][0]["text"]
    assert re.sub(r"\s+", "", status) == re.sub(r"\s+", "", want), status


_PREFIX = "reshape_tile_propagation_test/"
HAND_WRITTEN: dict[str, Callable[[dict[str, Any]], None]] = {
    _PREFIX + "ReshapeExamplesTilePropagationTest.PropagateReshape": check_propagate_reshape,
    "reshape_analysis_test/ReshapeAnalysisTest.AnalyzesMinimalReshapes": check_minimal_reshapes,
    _PREFIX
    + "ReshapeTilePropagationTest.UnsupportedReshapeErrorFormat": check_unsupported_reshape_error_format,
}
