"""`render --mma/--copy --warps --tile`, `render --banks --access` and `show --banks`: the
pictures and reports name what CuTe's objects and the bank model say, and bad input exits 2."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.cli._banks import access_of
from tensorlayout.cute import parse_layout
from tensorlayout.gpu import make_tiled_copy_a, make_tiled_mma, mma_atom
from tensorlayout.gpu.atoms import copy_atom
from tensorlayout.gpu.banks import bank_conflicts

NS = "{http://www.w3.org/2000/svg}"
ATOM = "SM80_16x8x16_F16F16F16F16_TN"


def _cells(svg: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{NS}g") if g.get("class") == "cell"]


def _render(tmp_path: Path, *argv: str, suffix: str = ".svg") -> str:
    out = tmp_path / f"pic{suffix}"
    assert main(["render", *argv, "-o", str(out)]) == 0
    return out.read_text()


def test_mma_warps_and_tile_draw_cutes_tiled_mma(tmp_path: Path) -> None:
    svg = _render(tmp_path, "--mma", ATOM, "--warps", "2,2,1", "--tile", "32,32,16")
    tm = make_tiled_mma(mma_atom(ATOM), (2, 2, 1), (32, 32, 16))
    m, n, k = tm.tile_size()
    assert (m, n, k) == (32, 32, 16)
    cells = _cells(svg)
    assert len(cells) == m * k + n * k + m * n
    c = tm.tv_c()
    for g in cells[m * k + n * k:]:
        t, v = int(g.get("data-thread", "")), int(g.get("data-value", ""))
        assert c.coord(t, v) == (int(g.get("data-m", "")), int(g.get("data-n", "")))
        assert int(g.get("data-warp", "")) == t // 32
    assert {g.get("data-warp") for g in cells} == {"0", "1", "2", "3"}
    assert svg.count('class="warp"') > 0 and "warps 2x2x1 tile 32x32x16" in svg


def test_copy_warps_tile_the_copy_as_the_mmas_a_operand(tmp_path: Path) -> None:
    svg = _render(tmp_path, "--copy", "SM75_U32x4_LDSM_N", "--warps", "2,2")
    tc = make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, make_tiled_mma(mma_atom(ATOM), (2, 2, 1)))
    m, k = tc.tv_s().tile
    cells = _cells(svg)
    assert len(cells) == 2 * m * k
    src = tc.tv_s()
    for g in cells[:m * k]:
        t, v = int(g.get("data-thread", "")), int(g.get("data-value", ""))
        assert src.coord(t, v) == (int(g.get("data-m", "")), int(g.get("data-n", "")))


@pytest.mark.parametrize("argv, kind", [
    (("--mma", ATOM, "--warps", "0,1,1"), "UsageError"),
    (("--mma", ATOM, "--warps", "2,x"), "UsageError"),
    (("--mma", ATOM, "--tile", "1,2,3,4"), "UsageError"),
    (("(8,8):(8,1)", "--warps", "2,2,1"), "UsageError"),
    (("(8,8):(8,1)", "--access", "column"), "UsageError"),
    (("(16,64):(64,1)", "--banks", "16", "--access", "nonsense"), "UsageError"),
    (("(16,64):(64,1)", "--banks", "16", "--access", "SM100_TMEM_LOAD_32dp32b8x"), "UnsupportedError"),
    (("--copy", "SM100_TMEM_LOAD_32dp32b8x", "--warps", "2,2"), "UsageError"),
])
def test_bad_gpu_arguments_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                argv: tuple[str, ...], kind: str) -> None:
    assert main(["render", *argv, "-o", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tensorlayout: {kind}: ")


def _brute_wavefronts(smem: str, bits: int, lanes: list[tuple[int, int, int]]) -> list[int]:
    """Per phase of 8 lanes, each lane reading ``count`` elements from ``(m, n)`` on: the most
    distinct 32-bit words one bank serves (from the definition: bank = word mod 32)."""
    lay = parse_layout(smem)
    out = []
    for start in range(0, 32, 8):
        banks: dict[int, set[int]] = {}
        for m, n, count in lanes[start:start + 8]:
            for j in range(count):
                word = lay(m, n + j) * bits // 32
                banks.setdefault(word % 32, set()).add(word)
        out.append(max(len(w) for w in banks.values()))
    return out


def _swizzled(rng: random.Random) -> str:
    b, m = rng.choice([(0, 3), (1, 3), (2, 3), (3, 3), (2, 4), (3, 4)])
    rows = rng.choice([16, 32])
    return f"Sw<{b},{m},3> o _0 o ({rows},64):(64,1)" if b else f"({rows},64):(64,1)"


@pytest.mark.parametrize("seed", range(8))
def test_show_banks_ldmatrix_matches_the_definition(capsys: pytest.CaptureFixture[str], seed: int) -> None:
    """ldmatrix .x4 as the A operand: lane t gives row t % 16, columns 8 * (t // 16) + 0..7."""
    smem = _swizzled(random.Random(seed))
    assert main(["show", smem, "--banks", "16", "--access", "ldmatrix-x4"]) == 0
    out = capsys.readouterr().out
    waves = _brute_wavefronts(smem, 16, [(t % 16, 8 * (t // 16), 8) for t in range(32)])
    for k, w in enumerate(waves):
        assert f"phase {k} (lanes {8 * k}-{8 * k + 7}): {w} wavefront" in out, (smem, out)
    assert f"{sum(waves)} wavefronts for 4 phases" in out


@pytest.mark.parametrize("access", ["row", "column"])
def test_show_banks_row_and_column_match_the_definition(capsys: pytest.CaptureFixture[str],
                                                         access: str) -> None:
    for seed in range(6):
        smem = _swizzled(random.Random(100 + seed))
        assert main(["show", smem, "--banks", "16", "--access", access]) == 0
        out = capsys.readouterr().out
        rows = int(smem.split("(")[-2].split(",")[0])
        lanes = ([(t // 8, 8 * (t % 8), 8) for t in range(32)] if access == "row" else
                 [(t % rows, 8 * (t // rows), 8) for t in range(32)])
        waves = _brute_wavefronts(smem, 16, lanes)
        assert f"{sum(waves)} wavefronts for 4 phases" in out, (smem, access, out)


def test_show_banks_json_is_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "(16,64):(64,1)", "--banks", "16", "--access", "SM75_U32x4_LDSM_N", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    tv, _ = access_of((16, 64), 16, "SM75_U32x4_LDSM_N")
    report = bank_conflicts("(16,64):(64,1)", 16, tv)
    assert (facts["wavefronts"], facts["conflicts"], facts["max_way"]) == \
        (report.wavefronts, report.conflicts, report.max_way) == (32, 28, 8)
    assert [p["lanes"] for p in facts["phases"]] == [list(range(s, s + 8)) for s in (0, 8, 16, 24)]


@pytest.mark.parametrize("argv", [("f32[4]", "--banks", "16"), ("(4,4,4):(16,4,1)", "--banks", "16"),
                                  ("(16,64):(64,1)", "--banks", "16", "--index", "1,1"),
                                  ("(16,64):(64,1)", "--banks", "12")])
def test_show_banks_bad_input_exits_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    assert main(["show", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tensorlayout: ")


def test_bank_pictures_number_every_phase_and_lane_and_title_the_access(tmp_path: Path) -> None:
    row = _render(tmp_path, "(8,64):(64,1)", "--banks", "16")
    col = _render(tmp_path, "(8,64):(64,1)", "--banks", "16", "--access", "column")
    title = [ET.fromstring(s).find(f"{NS}title") for s in (row, col)]
    assert title[0] is not None and title[1] is not None and title[0].text != title[1].text
    assert "along rows" in str(title[0].text) and "down columns" in str(title[1].text)
    tv, _ = access_of((8, 64), 16, "column")
    marked = [g for g in _cells(col) if g.get("data-lane") is not None]
    assert len(marked) == 32 * 8 and {g.get("data-phase") for g in marked} == {"0", "1", "2", "3"}
    for g in marked:
        lane, phase = int(g.get("data-lane", "")), int(g.get("data-phase", ""))
        assert phase == lane // 8
        assert (int(g.get("data-m", "")), int(g.get("data-n", ""))) in {tv.coord(lane, v) for v in range(8)}
    assert "phase 3 (lanes 24-31)" in col and "each cell: its offset" in col


def test_every_gpu_picture_has_an_html_page(tmp_path: Path) -> None:
    for argv in (("--mma", ATOM, "--warps", "2,1"), ("--copy", "SM75_U32x4_LDSM_N"),
                 ("--copy", "SM100_TMEM_LOAD_32dp32b8x"), ("(16,64):(64,1)", "--banks", "16"),
                 ("--mma", ATOM, "--thread", "3"),
                 ("tensor<16x16xf16, #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], "
                  "warpsPerCTA = [2, 1], order = [1, 0]}>>",)):
        page = _render(tmp_path, *argv, suffix=".html")
        assert page.startswith("<!DOCTYPE html>") and 'id="info"' in page and 'class="cell"' in page, argv
