"""Pictures that fit real sizes: cuts on tile boundaries, a strip that wraps with the tiles,
thick tile borders, windows of every picture kind."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorlayout.cli import main
from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.gpu import make_tiled_copy_a, make_tiled_mma, mma_atom
from tensorlayout.gpu.atoms import copy_atom
from tensorlayout.gpu.banks import vector_access
from tensorlayout.render import (
    MAX_CELLS,
    MAX_SIDE,
    shared_banks_svg,
    tiled_copy_svg,
    tiled_mma_svg,
    to_html,
    to_svg,
)
from tensorlayout.render._draw import strip_wrap
from tensorlayout.render._extent import extent
from tensorlayout.xla import linear_indices, parse_shape

NS = {"s": "http://www.w3.org/2000/svg"}


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _cells(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//s:g[@class='cell']", NS)


def _index(g: ET.Element) -> tuple[int, ...]:
    return tuple(int(i) for i in g.get("data-index", "").split(",") if i)


def _segments(root: ET.Element, cls: str) -> list[tuple[str, float, float, float]]:
    """The thick border's segments: ('V', x, y0, y1) or ('H', y, x0, x1)."""
    path = root.find(f".//s:path[@class='{cls}']", NS)
    assert path is not None
    out = []
    for x, y, kind, end in re.findall(r"M([\d.]+) ([\d.]+)([VH])([\d.]+)", path.get("d", "")):
        a, b, c = float(x), float(y), float(end)
        out.append(("V", a, b, c) if kind == "V" else ("H", b, a, c))
    return out


def test_bf16_16x256_draws_two_whole_8x128_tiles() -> None:
    root = _root(to_svg("bf16[16,256]{1,0:T(8,128)(2,1)}"))
    assert (root.get("data-rows"), root.get("data-cols")) == ("16", "128")
    notes = " | ".join(t.text or "" for t in root.findall(".//s:text[@class='note']", NS))
    assert "showing the first 16x128 of 16x256 cells (whole 8x128 tiles)" in notes
    cells = _cells(root)
    assert {int(g.get("data-tile")) for g in cells} == {0, 2}  # tiles (0,0) and (1,0), whole
    assert all(sum(1 for g in cells if g.get("data-tile") == t) == 1024 for t in ("0", "2"))
    # the strip wraps at 128 slots: each strip row is one row of one tile
    slots = [r for r in root.findall(".//s:rect", NS) if "slot" in r.get("class", "")]
    ys = {}
    for r in slots:
        ys.setdefault(float(r.get("y")), set()).add(int(r.get("data-offset")) // 128)
    assert all(len(v) == 1 for v in ys.values()) and len(ys) == 16


def test_tile_borders_lie_on_tile_boundaries() -> None:
    root = _root(to_svg("f32[6,10]{1,0:T(2,4)}"))
    cells = {_index(g): g for g in _cells(root)}
    x0 = float(cells[(0, 0)].find("s:rect", NS).get("x"))
    y0 = float(cells[(0, 0)].find("s:rect", NS).get("y"))
    size = float(cells[(0, 0)].find("s:rect", NS).get("width"))
    segs = _segments(root, "tile-border")
    vertical = {round((x - x0) / size) for kind, x, _a, _b in segs if kind == "V"}
    horizontal = {round((y - y0) / size) for kind, y, _a, _b in segs if kind == "H"}
    assert vertical == {0, 4, 8, 10} and horizontal == {0, 2, 4, 6}
    # a layout without tiles has only its outline
    segs = _segments(_root(to_svg("(4,8):(8,1)")), "tile-border")
    assert len(segs) == 4


def test_strip_borders_fall_between_tiles() -> None:
    root = _root(to_svg("f32[3,5]{1,0:T(2,2)}"))
    slots = sorted((r for r in root.findall(".//s:rect", NS) if "slot" in r.get("class", "")),
                   key=lambda r: int(r.get("data-offset")))
    x0, size = float(slots[0].get("x")), float(slots[0].get("width"))
    segs = _segments(root, "strip-border")
    vertical = sorted(round((x - x0) / size) for kind, x, _a, _b in segs if kind == "V")
    assert vertical == [0, 4, 8, 12, 16, 20, 24]  # 24 slots in one strip row, a tile every 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=3),
       st.lists(st.sampled_from([1, 2, 8, 16, 128, 200]), min_size=1, max_size=3))
def test_cuts_fall_on_tile_boundaries(dims: list[int], tile: list[int]) -> None:
    rank = len(dims)
    tile = (tile + [1] * rank)[:rank]
    e = extent(tuple(dims), tuple(tile))
    cols = len(e.cols)
    assert cols == dims[-1] or cols % tile[-1] == 0 or (e.cut_tile and cols == MAX_CELLS)
    assert cols <= max(MAX_CELLS, min(tile[-1], MAX_SIDE))
    if rank >= 2:
        pos = e.rows % dims[-2]
        assert pos == 0 or pos % tile[-2] == 0 or (e.cut_tile and e.rows == MAX_CELLS)


def test_strip_wrap_follows_the_tile() -> None:
    assert strip_wrap(128, 1024, (8, 128)) == 128  # a tile row per strip row
    assert strip_wrap(5, 4, (2, 2)) % 4 == 0
    assert 1024 % strip_wrap(8, 1024, (32, 32)) == 0
    assert 48 % strip_wrap(3, 48, (6, 8)) == 0 or strip_wrap(3, 48, (6, 8)) % 48 == 0


def test_window_draws_exactly_its_cells_and_their_slots() -> None:
    text = "bf16[16,256]{1,0:T(8,128)(2,1)}"
    root = _root(to_svg(text, window=(range(4, 8), range(120, 136))))
    offsets = linear_indices(parse_shape(text)).reshape(16, 256)
    cells = _cells(root)
    assert [_index(g) for g in cells] == [(r, c) for r in range(4, 8) for c in range(120, 136)]
    assert all(int(g.get("data-offset")) == offsets[_index(g)] for g in cells)
    axis = [int(t.text) for t in root.findall(".//s:text[@class='axis']", NS)][:16]
    assert axis == list(range(120, 136))
    slots = [int(r.get("data-offset")) for r in root.findall(".//s:rect", NS) if "slot" in r.get("class", "")]
    assert slots[0] == 0 and slots == list(range(slots[0], slots[0] + len(slots)))
    root = _root(to_svg(text, window=(range(8, 16), range(128, 256))))
    slots = [int(r.get("data-offset")) for r in root.findall(".//s:rect", NS) if "slot" in r.get("class", "")]
    assert slots[0] == 3072  # the window's tile (1,1) starts the strip
    page = to_html(text, window=(range(0, 2), range(0, 3)))
    assert page.count('class="cell"') == 6


@pytest.mark.parametrize("window", [(range(0, 2),), (range(0, 17), range(0, 4)), (range(3, 3), range(0, 1))])
def test_bad_windows_are_typed_errors(window: tuple[range, ...]) -> None:
    with pytest.raises(LayoutError,
        match=r"a window of 1 ranges for a|window part range\(0, 17\) of|window part range\(3, 3\) of"):
        to_svg("f32[16,8]", window=window)


def test_windows_of_tv_pictures() -> None:
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    svg = tiled_mma_svg(tm, window=(range(16, 24), range(0, 8), range(0, 4)))
    cells = _cells(_root(svg))
    assert len(cells) == 8 * 4 + 8 * 4 + 8 * 8 and "window [16:24,0:8,0:4]" in svg
    c = tm.tv_c()
    for g in cells[-64:]:
        m, n = int(g.get("data-m")), int(g.get("data-n"))
        assert 16 <= m < 24 and n < 8
        assert c.coord(int(g.get("data-thread")), int(g.get("data-value"))) == (m, n)
    f16 = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"))
    tc = make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, f16)
    assert len(_cells(_root(tiled_copy_svg(tc, window=(range(0, 4), range(8, 16)))))) == 2 * 32
    smem = "(8,64):(64,1)"
    rows = vector_access((8, 64), 16, 128, "row")
    svg = shared_banks_svg(smem, 16, rows, window=(range(0, 2), range(0, 8)))
    assert len(_cells(_root(svg))) == 16 and "excess" in svg
    with pytest.raises(TensorLayoutError,
        match=r"a window of 2 ranges for a layout of rank 3 \(dims \[32, 16,"):
        tiled_mma_svg(tm, window=(range(0, 8), range(0, 8)))


def test_cli_render_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.svg"
    assert main(["render", "bf16[16,256]{1,0:T(8,128)(2,1)}", "--window", "0:8,128:256", "-o", str(out)]) == 0
    root = _root(out.read_text())
    assert {_index(g)[1] for g in _cells(root)} == set(range(128, 256))
    for args in (["--mma", "SM80_16x8x8_F16F16F16F16_TN", "--window", "0:4,0:8,0:8"],
                 ["--copy", "SM75_U32x4_LDSM_N", "--window", "0:4,0:4"],
                 ["(8,64):(64,1)", "--banks", "16", "--window", "0:8,0:16"]):
        assert main(["render", *args, "-o", str(out)]) == 0
        assert 0 < len(_cells(_root(out.read_text()))) <= 128
    assert main(["render", "f32[4,4]", "--window", "0:9", "-o", str(out)]) == 2
    assert "UsageError" in capsys.readouterr().err
    assert main(["render", "(f32[2], f32[3])", "--window", "0:1", "-o", str(out)]) == 2


def test_a_window_far_into_memory_says_where_its_strip_is() -> None:
    near = _root(to_svg("bf16[4096,8192]{1,0:T(8,128)(2,1)}", window=(range(200, 208), range(4000, 4128))))
    slots = [int(r.get("data-offset")) for r in near.findall(".//s:rect", NS) if "slot" in r.get("class", "")]
    offsets = {int(g.get("data-offset")) for g in _cells(near)}
    assert slots[0] <= min(offsets) < slots[0] + len(slots)  # the strip holds the window's first tile
    far = to_svg("bf16[4096,8192]{1,0:T(8,128)(2,1)}", window=(range(2000, 2008), range(4000, 4128)))
    assert "is past the 4194304 slots a strip reads back" in far
