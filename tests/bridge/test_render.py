"""Pictures: SVG structure of the seed's figures, HTML page, CLI ``render``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from tensorlayout.cli import main
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.render import MAX_CELLS, target_from_text, to_html, to_svg
from tensorlayout.xla import linear_indices, parse_shape

NS = {"s": "http://www.w3.org/2000/svg"}


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _cells(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//s:g[@class='cell']", NS)


def _slots(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.findall(".//s:rect", NS) if "slot" in r.get("class", "").split()]


def test_seed_figure_1() -> None:
    root = _parse(to_svg("f32[3,5]{1,0:T(2,2)}"))
    cells = _cells(root)
    assert len(cells) == 15
    offsets = [int(c.get("data-offset")) for c in cells]
    assert offsets == [0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20]
    shown = [c.find("s:text", NS).text for c in cells]
    assert shown == [str(o) for o in offsets]
    by_index = {c.get("data-index"): c for c in cells}
    assert by_index["2,3"].get("data-tile") == "4" and by_index["2,3"].get("data-intile") == "1"
    slots = _slots(root)
    pads = [s for s in slots if "pad" in s.get("class").split()]
    assert len(slots) == 24 and len(pads) == 9
    assert {s.get("fill") for s in pads} == {"#ffffff"}
    assert sorted(int(s.get("data-offset")) for s in pads) == [9, 11, 14, 15, 18, 19, 21, 22, 23]
    # one color per tile, the same in the grid and the strip
    fills = {c.get("data-tile"): c.find("s:rect", NS).get("fill") for c in cells}
    assert len(set(fills.values())) == 6
    strip = {int(s.get("data-offset")): s.get("fill") for s in slots}
    for c in cells:
        assert strip[int(c.get("data-offset"))] == fills[c.get("data-tile")]


def test_seed_figure_2() -> None:
    root = _parse(to_svg("f32[4,8]{1,0:T(2,4)(2,1)}"))
    cells = _cells(root)
    assert len(cells) == 32
    grid = np.array([int(c.get("data-offset")) for c in cells]).reshape(4, 8)
    assert grid[:2].tolist() == [[0, 2, 4, 6, 8, 10, 12, 14], [1, 3, 5, 7, 9, 11, 13, 15]]
    assert grid[2:, :4].tolist() == [[16, 18, 20, 22], [17, 19, 21, 23]]
    assert len({c.get("data-tile") for c in cells}) == 4
    subtiles = root.findall(".//s:rect[@class='subtile']", NS)
    assert len(subtiles) == 16  # every red 2x1 box
    assert len(_slots(root)) == 32 and not [s for s in _slots(root) if "pad" in s.get("class")]


@pytest.mark.parametrize("text", [
    "bf16[16,256]{1,0:T(8,128)(2,1)}", "s8[3,5,7]{0,2,1:T(2,4)}", "f32[300]{0:T(256)}",
    "f32[10,6]{0,1:T(4,2)}"])
def test_offsets_shown_match_linear_indices(text: str) -> None:
    shape = parse_shape(text)
    root = _parse(to_svg(text))
    cells = _cells(root)
    want = linear_indices(shape).reshape(-1, *(shape.dimensions[-2:] if shape.rank > 1
                                                 else (1, shape.dimensions[0])))[0]
    rows, cols = min(want.shape[0], MAX_CELLS), min(want.shape[1], MAX_CELLS)
    assert len(cells) == rows * cols
    assert [int(c.get("data-offset")) for c in cells] == want[:rows, :cols].reshape(-1).tolist()


def test_huge_grids_are_capped_with_a_caption() -> None:
    svg = to_svg("bf16[4096,8192]{1,0:T(8,128)(2,1)}")
    root = _parse(svg)
    assert len(_cells(root)) == MAX_CELLS * MAX_CELLS
    notes = " ".join(t.text for t in root.findall(".//s:text[@class='note']", NS))
    assert "64x64 of 4096x8192" in notes and "memory strip shows the first" in notes


def test_rank3_shows_the_last_two_dims() -> None:
    root = _parse(to_svg("f32[2,3,4]{2,1,0:T(2,2)}"))
    cells = _cells(root)
    assert len(cells) == 12 and cells[-1].get("data-index") == "0,2,3"
    notes = [t.text for t in root.findall(".//s:text[@class='note']", NS)]
    assert any("index (0, :, :)" in n for n in notes)


def test_explicit_tile_ids_and_offsets_target() -> None:
    t = PhysicalTarget.from_offsets((2, 2), [0, 2, 1, 3], tile_ids=[0, 1, 0, 1], name="col-major 2x2")
    root = _parse(to_svg(t))
    cells = _cells(root)
    assert [c.get("data-tile") for c in cells] == ["0", "1", "0", "1"]
    assert [c.get("data-intile") for c in cells] == ["0", "0", "1", "1"]
    assert root.find("s:title", NS).text == "col-major 2x2"
    with pytest.raises(LayoutError):
        to_svg(t, tile_ids=np.zeros(3))


def test_html_page_embeds_svg_and_script() -> None:
    page = to_html("f32[3,5]{1,0:T(2,2)}")
    assert page.count('class="cell"') == 15
    assert 'id="info"' in page and "mouseenter" in page and "<svg" in page


def test_target_from_text_takes_xla_cute_and_tla() -> None:
    assert target_from_text(" f32[3,5]{1,0:T(2,2)} ").logical_shape == (3, 5)
    zn = target_from_text("((4,2),(4,3)):((4,16),(1,32))")
    assert zn.logical_shape == (8, 12) and zn.offsets.reshape(8, 12)[1, 5] == 37
    tla = target_from_text("", tla="zN", rows=8, cols=12, dtype="f16")
    assert tla.logical_shape == (8, 12) and tla.physical_elements == 256
    with pytest.raises(UnsupportedError, match="two coordinates"):
        target_from_text("(4,8):(0,1)")


def test_seed_zn_table_svg() -> None:
    root = _parse(to_svg("((4,2),(4,3)):((4,16),(1,32))"))
    offsets = sorted(int(c.get("data-offset")) for c in _cells(root))
    assert offsets == list(range(96))


def test_cli_render_svg_and_html(tmp_path: Path) -> None:
    svg, html = tmp_path / "f.svg", tmp_path / "f.html"
    assert main(["render", "f32[3,5]{1,0:T(2,2)}", "-o", str(svg)]) == 0
    assert len(_cells(_parse(svg.read_text()))) == 15
    assert main(["render", "f32[4,8]{1,0:T(2,4)(2,1)}", "--output", str(html)]) == 0
    assert html.read_text().startswith("<!DOCTYPE html>")


def test_cli_render_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "(4,8):(0,1)", "-o", str(tmp_path / "x.svg")]) == 2
    assert "UnsupportedError" in capsys.readouterr().err
    assert main(["render", "(4,8", "-o", str(tmp_path / "x.svg")]) == 2
    assert "ParseError" in capsys.readouterr().err
    assert main(["render", "f32[3,5]", "-o", str(tmp_path / "x.png")]) == 2
    assert ".svg or .html" in capsys.readouterr().err
    assert main(["render", "f32[3,5", "-o", str(tmp_path / "x.svg")]) == 2
    assert "ParseError" in capsys.readouterr().err
