"""``tensorlayout tiles``: XLA's symbolic tiling of every fusion of real modules and dumps."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.hlo import parse_module
from tensorlayout.tiling import FusionDecision, SymbolicTileAnalysis, Tiling
from tensorlayout.tiling.search import measure, naive_tiling, rank_tilings
from tests.conftest import DATA

PAD_FUSION = """HloModule m
pad {
  p0 = bf16[63] parameter(0)
  c0 = bf16[] constant(0)
  ROOT pad = bf16[64] pad(p0, c0), padding=0_1
}
ENTRY main {
  p0 = bf16[63] parameter(0)
  ROOT fusion = bf16[64] fusion(p0), kind=kLoop, calls=pad
}
"""

BITCAST_FUSION = """HloModule m
f {
  p0 = f32[1,8,6,4,8] parameter(0)
  ROOT b = f32[48,32] bitcast(p0)
}
ENTRY e {
  p0 = f32[1,8,6,4,8] parameter(0)
  ROOT fusion = f32[48,32] fusion(p0), kind=kLoop, calls=f
}
"""


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "m.hlo"
    path.write_text(text)
    return str(path)


def test_every_fusion_of_a_module_gets_tiles_or_a_reason() -> None:
    code, out, _ = _run("tiles", str(DATA / "hlo" / "softmax.opt.hlo"))
    assert code == 0
    assert "broadcast_divide_fusion (kLoop, fused_computation.3): f32[8,16]{1,0}" in out
    assert "divide.1 = divide: offsets (0, 0) sizes (d0, d1) strides (1, 1)" in out
    assert out.rstrip().endswith("4 of 4 fusions can be tiled")


def test_a_dump_directory_is_read_module_by_module() -> None:
    code, out, err = _run("tiles", str(DATA / "dumps" / "jit_f_cpu"))
    assert code == 0 and "skipped" in err
    assert "### module_0006 jit_f (cpu_after_optimizations)" in out
    assert "dot_general.0 = dot: offsets (0, 0) sizes (d1, d2) strides (1, 1)" in out


def test_cannot_tile_prints_xla_reason(tmp_path: Path) -> None:
    code, out, _ = _run("tiles", _file(tmp_path, PAD_FUSION))
    assert code == 0
    reason = "Bailing out on %pad = bf16[64]{0} pad(bf16[63]{0} %p0, bf16[] %c0), padding=0_1"
    assert f"cannot tile: {reason}" in out


def test_tile_sizes_give_the_tiled_computation(tmp_path: Path) -> None:
    code, out, _ = _run("tiles", _file(tmp_path, BITCAST_FUSION), "--tile", "6,8")
    assert code == 0
    assert "tiled with (6, 8): 32 programs (tiles per parameter (8, 4))" in out
    assert (
        "tile_offsets_indexing: (pid_0) -> (0, pid_0 / 4, 0, pid_0 mod 4, 0), domain: pid_0 in [0, 31]" in out
    )
    assert "tile_sizes: (1, 1, 6, 1, 8)" in out
    code, out, _ = _run("tiles", _file(tmp_path, BITCAST_FUSION), "--tile", "16,8")
    assert "tile sizes (16, 8): Tiling does not satisfy constraints." in out


def test_search_says_the_naive_choice_breaks_the_constraints(tmp_path: Path) -> None:
    code, out, _ = _run("tiles", _file(tmp_path, BITCAST_FUSION), "--search", "--json")
    assert code == 0
    search = json.loads(out)["fusions"][0]["search"]
    assert search["naive"] == [32, 32] and not search["naive_satisfies_constraints"]
    assert search["ranked"][0]["tiling"] == [48, 32] and search["nearest_valid"] == [48, 32]
    code, out, _ = _run("tiles", _file(tmp_path, BITCAST_FUSION), "--search")
    assert "naive power-of-two tiling (32, 32) VIOLATES the constraints (nearest allowed: (48, 32))" in out


def test_bad_tile_sizes_are_a_usage_error(tmp_path: Path) -> None:
    code, _, err = _run("tiles", _file(tmp_path, BITCAST_FUSION), "--tile", "4,x")
    assert code == 2 and "UsageError" in err


def test_ranking_measures_bytes_and_padding() -> None:
    m = parse_module(BITCAST_FUSION)
    a = SymbolicTileAnalysis.analyze_computation(m.computation("f"))
    assert not isinstance(a, FusionDecision)
    ranked = rank_tilings(a)
    spec = a.get_tiling_specification()
    assert all(spec.constraints.is_satisfied_by(r.tiling) for r in ranked)
    assert len(ranked) == len(a.get_valid_tilings())
    r = measure(a, (2, 32))
    assert (r.bytes_per_tile, r.num_tiles, r.padding_waste) == (2 * 32 * 4, 24, 0.0)
    assert naive_tiling(a) == (32, 32)


def test_ranking_counts_a_dot_loop_once_per_step() -> None:
    m = parse_module(
        (DATA / "dumps" / "jit_f_cpu" / "module_0006.jit_f.cpu_after_optimizations.txt").read_text()
    )
    a = SymbolicTileAnalysis.analyze_computation(m.find_instruction("ynn_fusion").fused_computation)
    assert not isinstance(a, FusionDecision)
    k, mm, n = (4, 8, 4)  # K tile 4 of 16: 4 steps, each reading an 8x4 and a 4x4 f32 tile
    assert measure(a, (k, mm, n)).bytes_per_tile == 4 * (8 * 4 + 4 * 4) * 4
    tiled = a.compute_tiled_computation(Tiling.unflatten((k, mm, n), a.get_tiling_specification()))
    assert tiled.num_output_tiles == 1


@pytest.mark.parametrize("path", sorted((DATA / "hlo").glob("*.opt.hlo"))[:6], ids=lambda p: p.name)
def test_json_records_every_fusion(path: Path) -> None:
    code, out, _ = _run("tiles", str(path), "--json")
    assert code == 0
    body = json.loads(out)
    assert body["summary"]["fusions"] == len(body["fusions"])
    for rec in body["fusions"]:
        assert rec["tileable"] == ("reason" not in rec)


NESTED_FUSION = """HloModule m
nest {
  p0 = f32[16,32] parameter(0)
  ROOT n = f32[16,32] negate(p0)
}
f {
  p0 = f32[16,32] parameter(0)
  p1 = f32[32,8] parameter(1)
  lhs = f32[16,32] fusion(p0), kind=kCustom, calls=nest
  ROOT d = f32[16,8] dot(lhs, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  p0 = f32[16,32] parameter(0)
  p1 = f32[32,8] parameter(1)
  ROOT fusion = f32[16,8] fusion(p0, p1), kind=kCustom, calls=f
}
"""


def test_a_nested_fusion_is_analysed_from_its_users_tile(tmp_path: Path) -> None:
    m = parse_module(NESTED_FUSION)
    a = SymbolicTileAnalysis.analyze_computation(m.computation("f"))
    assert isinstance(a, SymbolicTileAnalysis)
    lhs = a.get_symbolic_tiled_hlo_computation()[0]
    assert lhs.hlo.name == "lhs" and lhs.fusion_analysis is not None
    assert [t.hlo.name for t in lhs.fusion_analysis.instructions] == ["p0", "n"]
    assert str(lhs.fusion_analysis.instructions[-1].indexing_map) == (
        "(d0, d1, d2) -> (d1, d0), domain: d0 in [0, 31], d1 in [0, 15], d2 in [0, 7]"
    )
    tiled = a.compute_tiled_computation(Tiling.unflatten((8, 4, 8), a.get_tiling_specification()))
    nest = tiled.instructions[0].called_computation
    assert nest is not None and [t.tile_sizes for t in nest.instructions] == [(4, 8), (4, 8)]
    code, out, _ = _run("tiles", _file(tmp_path, NESTED_FUSION))
    assert code == 0
    assert "    lhs nested computation:\n      p0 = parameter: offsets (0, 0) sizes (d1, d0)" in out
