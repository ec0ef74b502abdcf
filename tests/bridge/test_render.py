"""Pictures: SVG structure of the seed's figures, brute force against the offset functions,
ranks 0 to 4, huge and broadcast layouts, the HTML page and the CLI ``render``."""

from __future__ import annotations

import contextlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tensorlayout.cli import main
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import LayoutError, TensorLayoutError, UnsupportedError
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.render import MAX_CELLS, MAX_SIDE, MAX_SLOTS, target_from_text, to_html, to_svg
from tensorlayout.xla import Shape, linear_index, linear_indices, multi_index, parse_shape

from .strategies import cute_layouts, cute_offsets, xla_shapes

NS = {"s": "http://www.w3.org/2000/svg"}
WHITE = "#ffffff"


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _cells(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//s:g[@class='cell']", NS)


def _slots(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.findall(".//s:rect", NS) if "slot" in r.get("class", "").split()]


def _notes(root: ET.Element) -> str:
    return " | ".join(t.text or "" for t in root.findall(".//s:text[@class='note']", NS))


def _fill(cell: ET.Element) -> str:
    rect = cell.find("s:rect", NS)
    assert rect is not None
    return rect.get("fill", "")


def _check_against(root: ET.Element, offsets: np.ndarray, dims: tuple[int, ...], slots: int) -> None:
    """Every drawn cell shows the offset of its index; the strip holds exactly the drawn slots
    that some element maps to, each labelled with an element stored there, in its tile's color."""
    grid = offsets.reshape(dims) if dims else offsets.reshape(())
    cells = _cells(root)
    rows, cols = int(root.get("data-rows")), int(root.get("data-cols"))
    all_rows, all_cols = (int(np.prod(dims[:-1])) if len(dims) >= 2 else 1), (dims[-1] if dims else 1)
    # everything up to MAX_CELLS a side; past that a cut (on a tile boundary: test_extent.py)
    assert rows == all_rows or MAX_CELLS // 2 <= rows <= MAX_SIDE
    assert cols == all_cols or 1 <= cols <= MAX_SIDE
    assert rows <= max(all_rows, 0) and cols <= all_cols
    assert len(cells) == (rows * cols if offsets.size else 0)
    drawn = [tuple(int(i) for i in c.get("data-index", "").split(",") if i != "") for c in cells]
    if len(dims) >= 2 and offsets.size:
        lead = np.array(np.unravel_index(np.arange(rows), dims[:-1]), dtype=np.int64).T
        assert drawn == [(*map(int, lead[r]), c) for r in range(rows) for c in range(cols)]
    fill_of_tile = {}
    for c in cells:
        index = tuple(int(i) for i in c.get("data-index", "").split(",") if i != "")
        assert int(c.get("data-offset")) == grid[index] == int(c.find("s:text", NS).text)
        assert fill_of_tile.setdefault(c.get("data-tile"), _fill(c)) == _fill(c)  # one color per tile
    strip = _slots(root)
    n = int(root.get("data-slots"))
    assert n == slots if slots <= MAX_SLOTS else 0 < n <= MAX_SLOTS
    assert [int(s.get("data-offset")) for s in strip] == list(range(n))
    held = np.zeros(n, dtype=bool)
    held[offsets[offsets < n]] = True
    for s in strip:
        k = int(s.get("data-offset"))
        if not held[k]:
            assert "pad" in s.get("class").split() and s.get("fill") == WHITE
            continue
        index = tuple(int(i) for i in s.get("data-index").split(",") if i != "")
        assert grid[index] == k and s.get("fill") != WHITE
    by_offset = {int(s.get("data-offset")): s.get("fill") for s in strip}
    injective = len(np.unique(offsets)) == offsets.size
    for c in cells:  # a cell and its slot share the color
        if injective and int(c.get("data-offset")) < n:
            assert by_offset[int(c.get("data-offset"))] == _fill(c)


# ---------------------------------------------------------------- the seed's figures


def test_seed_figure_1() -> None:
    root = _parse(to_svg("f32[3,5]{1,0:T(2,2)}"))
    cells = _cells(root)
    offsets = [int(c.get("data-offset")) for c in cells]
    assert offsets == [0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20]
    assert [c.find("s:text", NS).text for c in cells] == [str(o) for o in offsets]
    # the seed's worked example: element (2,3) has tile index (1,1) and in-tile index (0,1)
    c23 = {c.get("data-index"): c for c in cells}["2,3"]
    assert (c23.get("data-tilecoord"), c23.get("data-intilecoord")) == ("1,1", "0,1")
    assert (c23.get("data-tile"), c23.get("data-intile")) == ("4", "1")
    # six tiles, one color each, the same in the grid and the strip; 9 white padding slots
    fills = {c.get("data-tile"): _fill(c) for c in cells}
    assert len(set(fills.values())) == 6 and WHITE not in fills.values()
    slots = _slots(root)
    pads = [int(s.get("data-offset")) for s in slots if "pad" in s.get("class").split()]
    assert len(slots) == 24 and pads == [9, 11, 14, 15, 18, 19, 21, 22, 23]
    _check_against(root, linear_indices(parse_shape("f32[3,5]{1,0:T(2,2)}")), (3, 5), 24)
    assert root.get("data-padding") == "9" and "24 slots, 9 padding" in ET.tostring(root, "unicode")


def test_seed_figure_2() -> None:
    root = _parse(to_svg("f32[4,8]{1,0:T(2,4)(2,1)}"))
    cells = _cells(root)
    grid = np.array([int(c.get("data-offset")) for c in cells]).reshape(4, 8)
    assert grid.tolist() == [[0, 2, 4, 6, 8, 10, 12, 14], [1, 3, 5, 7, 9, 11, 13, 15],
                             [16, 18, 20, 22, 24, 26, 28, 30], [17, 19, 21, 23, 25, 27, 29, 31]]
    # four 2x4 tiles ("each color is a 2x4 tile")
    tiles = np.array([int(c.get("data-tile")) for c in cells]).reshape(4, 8)
    assert tiles.tolist() == [[0] * 4 + [1] * 4] * 2 + [[2] * 4 + [3] * 4] * 2
    assert len({_fill(c) for c in cells}) == 4
    # every red box is one 2x1 sub-tile: one column wide, two rows high, on rows 0-1 or 2-3
    boxes = root.findall(".//s:rect[@class='subtile']", NS)
    assert len(boxes) == 16
    first = cells[0].find("s:rect", NS)
    x0, y0, size = float(first.get("x")), float(first.get("y")), float(first.get("width"))
    spots = sorted((round((float(b.get("y")) - y0) / size), round((float(b.get("x")) - x0) / size),
                    round(float(b.get("height")) / size), round(float(b.get("width")) / size))
                   for b in boxes)
    assert spots == sorted((r, c, 2, 1) for r in (0, 2) for c in range(8))
    assert not [s for s in _slots(root) if "pad" in s.get("class")]
    _check_against(root, linear_indices(parse_shape("f32[4,8]{1,0:T(2,4)(2,1)}")), (4, 8), 32)


def test_seed_zn_table() -> None:
    """Seed 004's zN example: ((4,2),(4,3)):((4,16),(1,32)), 4x4 fractals."""
    root = _parse(to_svg("((4,2),(4,3)):((4,16),(1,32))"))
    cells = _cells(root)
    grid = np.array([int(c.get("data-offset")) for c in cells]).reshape(8, 12)
    assert grid[0].tolist() == [0, 1, 2, 3, 32, 33, 34, 35, 64, 65, 66, 67]
    assert grid[7].tolist() == [28, 29, 30, 31, 60, 61, 62, 63, 92, 93, 94, 95]
    assert grid[1, 5] == 37  # crd2offset((1,5)) in the seed
    tiles = {c.get("data-tile") for c in cells}
    assert tiles == {str(t) for t in range(6)}  # six fractals, numbered in memory order
    c15 = {c.get("data-index"): c for c in cells}["1,5"]
    got = (c15.get("data-tilecoord"), c15.get("data-intilecoord"), c15.get("data-tile"))
    assert got == ("0,1", "1,1", "2")
    _check_against(root, cute_offsets(Layout.parse("((4,2),(4,3)):((4,16),(1,32))"), (8, 12)), (8, 12), 96)


def test_tla_zn_format_pads_to_whole_fractals() -> None:
    t = tla.make_format("zN", 20, 40, "f16")
    root = _parse(to_svg(t))
    assert len(_cells(root)) == 20 * 40
    assert root.get("data-slots") == str(min(t.layout.cosize(), MAX_SLOTS))
    _check_against(root, cute_offsets(t.layout, (20, 40)), (20, 40), t.layout.cosize())


# ---------------------------------------------------------------- brute force


@given(xla_shapes(max_rank=4, combine=True, max_dim=12))
def test_any_xla_shape_draws_its_offsets(shape: Shape) -> None:
    try:
        offsets = linear_indices(shape)
    except TensorLayoutError:
        assume(False)
        return
    slots = PhysicalTarget.from_xla(shape).physical_elements
    _check_against(_parse(to_svg(shape)), offsets, shape.dimensions, slots)


@given(cute_layouts())
def test_any_cute_layout_draws_its_offsets(layout: Layout) -> None:
    sizes = tuple(int(m.size()) for m in layout.modes())
    _check_against(_parse(to_svg(layout)), cute_offsets(layout, sizes), sizes, layout.cosize())


@given(cute_layouts(max_size=None))
def test_cute_layouts_of_any_size_draw_their_corner(layout: Layout) -> None:
    root = _parse(to_svg(layout))
    for c in _cells(root)[::5]:
        index = tuple(int(i) for i in c.get("data-index").split(","))
        assert int(c.get("data-offset")) == layout(index if len(index) > 1 else index[0])
    for s in _slots(root)[::5]:
        if s.get("data-index") is not None:
            index = tuple(int(i) for i in s.get("data-index").split(","))
            assert layout(index if len(index) > 1 else index[0]) == int(s.get("data-offset"))


@settings(max_examples=40)
@given(st.sampled_from(tla.FORMATS), st.integers(1, 40), st.integers(1, 80),
       st.sampled_from(["f16", "f32", "s8", "s4"]))
def test_any_tla_format_draws_its_offsets(tag: str, rows: int, cols: int, dtype: str) -> None:
    t = tla.make_format(tag, rows, cols, dtype)
    _check_against(_parse(to_svg(t)), cute_offsets(t.layout, t.origin_shape), t.origin_shape,
                   t.layout.cosize())


# ---------------------------------------------------------------- ranks, sizes, odd layouts


def test_rank_0_and_rank_1() -> None:
    root = _parse(to_svg("f32[]"))
    assert [c.get("data-index") for c in _cells(root)] == [""] and len(_slots(root)) == 1
    root = _parse(to_svg("f32[300]{0:T(256)}"))
    cells = _cells(root)
    # one whole 256-element tile, not the first 64 elements of it
    assert len(cells) == 256 and {c.get("data-index").count(",") for c in cells} == {0}
    assert "showing the first 1x256 of 1x300 cells (whole 256 tiles)" in _notes(root)
    cells = _cells(_parse(to_svg("f32[300]{0}")))
    assert len(cells) == MAX_CELLS
    assert sum("pad" in s.get("class") for s in _slots(root)) == 512 - 300


def test_rank_3_stacks_slices() -> None:
    root = _parse(to_svg("f32[2,3,4]{2,1,0:T(2,2)}"))
    cells = _cells(root)
    assert len(cells) == 24 and cells[-1].get("data-index") == "1,2,3"
    assert len(root.findall(".//s:line[@class='slice']", NS)) == 1
    assert "rows: dims 0..1" in _notes(root)
    labels = [t.text for t in root.findall(".//s:text[@class='axis']", NS)]
    assert "1,2" in labels and "0,0" in labels
    _check_against(root, linear_indices(parse_shape("f32[2,3,4]{2,1,0:T(2,2)}")), (2, 3, 4), 32)


def test_rank_4_with_tiles_over_three_dims() -> None:
    text = "bf16[2,3,5,6]{3,1,2,0:T(2,4,2)(2,1)}"
    root = _parse(to_svg(text))
    shape = parse_shape(text)
    assert len(root.findall(".//s:line[@class='slice']", NS)) == 2 * 3 - 1
    _check_against(root, linear_indices(shape), shape.dimensions,
                   PhysicalTarget.from_xla(shape).physical_elements)


@pytest.mark.parametrize("text", [
    "bf16[4096,8192]{1,0:T(8,128)(2,1)}", "f32[1000000,1000000]{1,0}",
    "bf16[65536,65536,16]{2,1,0:T(8,128)(2,1)}", "f32[200,70,80,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
    "(1000000,(1000,1000)):(1000000000,(1,1000))",
])
def test_huge_layouts_draw_a_capped_corner(text: str) -> None:
    root = _parse(to_svg(text))
    notes = _notes(root)
    assert "showing the first" in notes and "memory strip shows the first" in notes
    assert MAX_SLOTS - 64 < len(_slots(root)) <= MAX_SLOTS
    cells = _cells(root)
    assert 0 < len(cells) <= MAX_SIDE * MAX_SIDE
    strip = {int(s.get("data-offset")): s.get("data-index") for s in _slots(root)}
    shape = parse_shape(text) if "[" in text else None
    for c in cells:  # a drawn cell stored in a drawn slot is that slot's element
        off = int(c.get("data-offset"))
        if off < MAX_SLOTS:
            assert strip[off] == c.get("data-index")
        if shape is not None and int(c.get("data-index").split(",")[-1]) % 7 == 0:
            assert off == linear_index(shape, tuple(int(i) for i in c.get("data-index").split(",")))
    for off, index in list(strip.items())[::37]:  # and every slot holds what it claims
        if shape is not None and index is not None:
            assert linear_index(shape, tuple(int(i) for i in index.split(","))) == off
        elif shape is not None:
            with pytest.raises(LayoutError, match="padding"):
                multi_index(shape, off)


def test_huge_offsets_are_a_typed_error() -> None:
    with pytest.raises(UnsupportedError, match="2\\^62"):
        to_svg("(1000000000000,1000000000000):(1,1000000000000)")


def test_broadcast_and_non_injective_layouts_draw() -> None:
    root = _parse(to_svg("(4,8):(0,1)"))
    assert len(_cells(root)) == 32 and len(_slots(root)) == 8
    assert "stride-0 (broadcast)" in _notes(root)
    _check_against(root, cute_offsets(Layout.parse("(4,8):(0,1)"), (4, 8)), (4, 8), 8)
    root = _parse(to_svg("(2,2):(1,1)"))
    assert "not injective" in _notes(root)
    with pytest.raises(UnsupportedError, match="negative stride"):
        to_svg("(4,8):(-1,4)")


def test_hierarchical_cute_layout_tiles() -> None:
    """Tiles that are not contiguous in memory are numbered by their coordinates."""
    root = _parse(to_svg("((2,2),(2,2)):((1,4),(8,2))"))
    cells = {c.get("data-index"): c for c in _cells(root)}
    assert cells["0,0"].get("data-tile") == cells["1,1"].get("data-tile") == "0"
    assert cells["2,0"].get("data-tilecoord") == "1,0" and cells["2,0"].get("data-tile") == "2"
    assert cells["1,1"].get("data-intile") == "3"


def test_zero_elements() -> None:
    root = _parse(to_svg("f32[0,5]{1,0:T(2,2)}"))
    assert not _cells(root) and "no elements" in _notes(root)
    assert not _cells(_parse(to_svg(tla.make_format("zN", 0, 5))))


def test_explicit_tile_ids_and_offsets_target() -> None:
    t = PhysicalTarget.from_offsets((2, 2), [0, 2, 1, 3], tile_ids=[0, 1, 0, 1], name="col-major 2x2")
    root = _parse(to_svg(t))
    cells = _cells(root)
    assert [c.get("data-tile") for c in cells] == ["0", "1", "0", "1"]
    assert [c.get("data-intile") for c in cells] == ["0", "0", "1", "1"]
    assert root.find("s:title", NS).text == "col-major 2x2"
    with pytest.raises(LayoutError, match=r"expected 4 tile ids, but got 3"):
        to_svg(t, tile_ids=np.zeros(3))
    root = _parse(to_svg("f32[2,2]{1,0}", tile_ids=np.array([5, 5, 6, 6])))
    assert [c.get("data-tile") for c in _cells(root)] == ["5", "5", "6", "6"]


# ---------------------------------------------------------------- HTML, text, CLI


def test_html_page_embeds_svg_script_and_facts() -> None:
    page = to_html("f32[3,5]{1,0:T(2,2)}")
    assert page.count('class="cell"') == 15 and page.count('class="slot pad"') == 9
    assert 'id="info"' in page and "mouseenter" in page and "<svg" in page
    facts = json.loads(re.search(r'<script type="application/json" id="facts">(.*?)</script>', page).group(1))
    assert facts == {"title": "f32[3,5]{1,0:T(2,2)}", "rows": 3, "cols": 5, "slots": 24, "padding": 9,
                     "notes": ["tiles 2x2, thick borders"]}


def test_target_from_text_takes_xla_cute_and_tla() -> None:
    assert str(target_from_text(" f32[3,5]{1,0:T(2,2)} ")) == "f32[3,5]{1,0:T(2,2)}"
    assert str(target_from_text("((4,2),(4,3)):((4,16),(1,32))")) == "((4,2),(4,3)):((4,16),(1,32))"
    zn = target_from_text("", tla="zN", rows=8, cols=12, dtype="f16")
    assert zn.origin_shape == (8, 12) and zn.layout.cosize() == 256
    with pytest.raises(UnsupportedError, match="rows and cols"):
        target_from_text("", tla="zN", rows=8)


def test_cli_render_svg_html_and_tla(tmp_path: Path) -> None:
    svg, html, zn = tmp_path / "f.svg", tmp_path / "f.html", tmp_path / "zn.svg"
    assert main(["render", "f32[3,5]{1,0:T(2,2)}", "-o", str(svg)]) == 0
    assert len(_cells(_parse(svg.read_text()))) == 15
    assert main(["render", "f32[4,8]{1,0:T(2,4)(2,1)}", "--output", str(html)]) == 0
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert main(["render", "--tla", "zN", "--rows", "8", "--cols", "12", "-o", str(zn)]) == 0
    root = _parse(zn.read_text())
    assert len(_cells(root)) == 96 and root.get("data-padding") == "160"


@pytest.mark.parametrize("args, kind", [
    (["(4,8):(-1,4)"], "UnsupportedError"), (["(4,8"], "ParseError"), (["f32[3,5"], "ParseError"),
    (["f32[3,5]", "--gif"], None), (["(f32[3], f32[2])"], "UnsupportedError"),
    (["token[]"], "UnsupportedError"), (["f32[?,3]"], "LayoutError"),
    (["", "--tla", "zQ", "--rows", "3", "--cols", "4"], "LayoutError"),
    (["", "--tla", "zN", "--rows", "3"], "UnsupportedError"), ([""], "UnsupportedError"),
])
def test_cli_render_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                           kind: str | None) -> None:
    out = tmp_path / ("x.gif" if "--gif" in args else "x.svg")
    argv = ["render", *[a for a in args if a != "--gif"], "-o", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith(f"tensorlayout: {kind or 'UnsupportedError'}: ")
    assert "Traceback" not in err and not out.exists()
    if kind is None:
        assert ".svg .html .htm .tex .png .pdf" in first


ALPHABET = "()[]{},:*_0123456789fsTES<=?@ "


@given(st.text(alphabet=ALPHABET, max_size=24))
def test_random_text_raises_only_library_errors(text: str) -> None:
    with contextlib.suppress(TensorLayoutError):
        to_svg(text)
