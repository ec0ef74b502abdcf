"""Footprint pictures of the experimental tiler (tensorlayout.render.tile_footprint)."""

from __future__ import annotations

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.render.tile_footprint import tile_footprint_svg, tile_footprints

DOT = """HloModule m
f {
  p0 = f32[16,24] parameter(0)
  p1 = f32[24,10] parameter(1)
  ROOT d = f32[16,10] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  p0 = f32[16,24] parameter(0)
  p1 = f32[24,10] parameter(1)
  ROOT fusion = f32[16,10] fusion(p0, p1), kind=kLoop, calls=f
}"""


def test_dot_tile_reads_a_row_block_and_a_column_block_at_the_first_contraction_step() -> None:
    lhs, rhs, out = tile_footprints(parse_module(DOT).entry.root, [4, 8, 8], [1, 1, 0])
    assert set(lhs.read) == {(r, c) for r in range(4, 8) for c in range(8)}
    assert set(rhs.read) == {(r, c) for r in range(8) for c in range(8, 10)}
    assert set(out.read) == {(r, c) for r in range(4, 8) for c in range(8, 10)}
    assert len(out.overhang) == 4 * 6 and all(c >= 10 for _, c in out.overhang)  # past the 10 columns


def test_strides_leave_gaps_and_the_svg_draws_every_cell_once() -> None:
    module = parse_module(
        "HloModule m\nENTRY e {\n p0 = f32[8,16] parameter(0)\n"
        " ROOT s = f32[4,4] slice(p0), slice={[0:8:2], [1:16:4]}\n}"
    )
    operand, _ = tile_footprints(module.entry.root, [2, 2], [1, 1])
    assert sorted(operand.read) == [(4, 9), (4, 13), (6, 9), (6, 13)]
    svg = tile_footprint_svg(module.entry.root, [2, 2], [1, 1])
    assert svg.count('class="read"') == 8 and 'data-index="6,13"' in svg


def test_a_fusion_without_arrays_is_an_error() -> None:
    module = parse_module("HloModule m\nENTRY e {\n ROOT c = f32[] constant(1)\n}")
    with pytest.raises(TensorLayoutError, match="no tiled array"):
        tile_footprint_svg(module.entry.root, [])
