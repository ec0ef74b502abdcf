"""The TV / bank pictures: well-formed SVG whose cells say what the layouts say."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tensorlayout.cute import ComposedLayout, Layout, Swizzle
from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu import (
    copy_atom,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_mma,
    mma_atom,
    universal_copy,
)
from tensorlayout.gpu.banks import bank_conflicts
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.render import to_html, to_svg
from tensorlayout.render._tv import shared_banks_svg, tiled_copy_svg, tiled_mma_svg, tv_svg
from tensorlayout.triton import BlockedLayout
from tests.bridge.test_render_browser import Chromium, _browser_path

NS = "{http://www.w3.org/2000/svg}"


def _cells(svg: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{NS}g") if g.get("class") == "cell"]


def test_tiled_mma_cells_name_their_owner() -> None:
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    cells = _cells(tiled_mma_svg(tm))
    m, n, k = tm.tile_size()
    assert len(cells) == m * k + n * k + m * n
    c_cells = cells[m * k + n * k:]
    c = tm.tv_c()
    for g in c_cells:
        mm, nn = int(g.get("data-m", "")), int(g.get("data-n", ""))
        t, v = int(g.get("data-thread", "")), int(g.get("data-value", ""))
        assert c.coord(t, v) == (mm, nn)
        texts = [x.text for x in g.iter(f"{NS}text")]
        assert texts == [f"T{t}", f"V{v}"]


@pytest.mark.parametrize("thr", [(1, 2, 2), (2, 2, 2), (3, 4, 4), (1, 4, 2), (1, 1, 3)])
def test_tiled_mma_with_threads_along_k_draws_its_tiles(thr: tuple[int, int, int]) -> None:
    """Threads along K place C past M x N (CuTe's layout does); the panels stay M x K, N x K
    and M x N, each cell held by the thread CuTe's picture names (the first in its loop)."""
    tm = make_tiled_mma(mma_atom("SM80_16x8x8_F32TF32TF32F32_TN"), thr)
    m, n, k = tm.tile_size()
    cells = _cells(tiled_mma_svg(tm))
    assert len(cells) == m * k + n * k + m * n
    c = tm.tv_c()
    first: dict[tuple[int, int], int] = {}
    for tt in range(c.num_threads):
        for vv in range(c.num_values):
            first.setdefault(c.coord(tt, vv), tt)
    for g in cells[m * k + n * k:]:
        mm, nn, t = int(g.get("data-m", "")), int(g.get("data-n", "")), int(g.get("data-thread", ""))
        assert t == first[(mm, nn)]


def test_tiled_copy_panels() -> None:
    tc = make_tiled_copy(universal_copy(32), 16, Layout((32, 4), (1, 32)), Layout((2, 2), (1, 2)))
    cells = _cells(tiled_copy_svg(tc))
    assert len(cells) == 2 * 64 * 8


def test_ldmatrix_copy_picture() -> None:
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"))
    tc = make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, tm)
    cells = _cells(tiled_copy_svg(tc))
    assert len(cells) == 2 * 16 * 16
    src = tc.tv_s()
    for g in cells[:256]:
        t, v = int(g.get("data-thread", "")), int(g.get("data-value", ""))
        assert src.coord(t, v) == (int(g.get("data-m", "")), int(g.get("data-n", "")))


def test_bank_picture_reports_conflicts() -> None:
    smem = ComposedLayout(Swizzle(3, 3, 3), 0, Layout.parse("(8,64):(64,1)"))
    access = TVLayout.parse("((8,4),8):((1,64),8)", (8, 64))  # lane t: row t%8, 8 halves
    svg = shared_banks_svg(smem, 16, access)
    report = bank_conflicts(smem, 16, access)
    assert report.conflicts == 0 and report.summary() in svg
    cells = _cells(svg)
    assert len(cells) == 512
    for g in cells:
        mm, nn = int(g.get("data-m", "")), int(g.get("data-n", ""))
        assert int(g.get("data-offset", "")) == smem(mm, nn)
        assert int(g.get("data-bank", "")) == (smem(mm, nn) * 16 // 32) % 32
    plain = shared_banks_svg(Layout.parse("(8,64):(64,1)"), 16, access)
    assert "worst 8-way" in plain and plain.count('stroke="#d00000"') == 4 * 64  # every phase


def test_too_large_is_a_typed_error() -> None:
    with pytest.raises(TensorLayoutError,
        match=r"a 512x256 picture is too large to draw \(at most 65536 cells"):
        tv_svg(TVLayout.parse("(512,256):(1,512)", (512, 256)))


def test_svg_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if browser is None:
        pytest.skip("no headless chromium on PATH")
    page = tmp_path / "mma.svg"
    page.write_text(tiled_mma_svg(mma_atom("SM80_16x8x8_F16F16F16F16_TN")))
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=800,1000", page.as_uri()], check=True, capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 1000


def test_every_owner_picture_numbers_its_rows_and_columns() -> None:
    atom = mma_atom("SM80_16x8x8_F16F16F16F16_TN")
    tv = atom.tv_c()
    labels = [t for t in ET.fromstring(tv_svg(tv)).iter(f"{NS}text") if t.get("class") == "index"]
    m, n = tv.tile
    assert sorted(int(t.text or "") for t in labels) == sorted([*range(m), *range(n)])
    tm = make_tiled_mma(atom)
    mm, nn, kk = tm.tile_size()
    mma_labels = tiled_mma_svg(tm).count('class="index"')
    assert mma_labels == (mm + kk) + (kk + nn) + (mm + nn)  # A, B (K x N), C
    banks = shared_banks_svg("(8,64):(64,1)", 16)
    assert banks.count('class="index"') == 8 + 64


def _warp_of_cells(svg: str) -> dict[tuple[int, int], int]:
    return {(int(g.get("data-m", "")), int(g.get("data-n", ""))): int(g.get("data-warp", ""))
            for g in _cells(svg)}


def test_warp_outlines_separate_exactly_the_warps() -> None:
    """A 2x2-warp TiledMMA reads as four warps: a thick line lies between two C cells exactly
    when their warps differ (checked on the C panel, from the lines' coordinates)."""
    tm = make_tiled_mma(mma_atom("SM80_16x8x8_F16F16F16F16_TN"), (2, 2, 1))
    svg = tv_svg(tm.tv_c())
    root = ET.fromstring(svg)
    cells = _cells(svg)
    pos = {(float(r.get("x", "")), float(r.get("y", ""))): (int(g.get("data-m", "")),
                                                            int(g.get("data-n", "")))
           for g in cells for r in g.iter(f"{NS}rect")}
    warp = _warp_of_cells(svg)
    assert set(warp.values()) == {0, 1, 2, 3}
    lines = {(float(e.get("x1", "")), float(e.get("y1", "")), float(e.get("x2", "")), float(e.get("y2", "")))
             for e in root.iter(f"{NS}line") if e.get("class") == "warp"}
    expected = set()
    for (x, y), (m, n) in pos.items():
        right = pos.get((x + 34, y))
        below = pos.get((x, y + 34))
        if right is not None and warp[right] != warp[(m, n)]:
            expected.add((x + 34, y, x + 34, y + 34))
        if below is not None and warp[below] != warp[(m, n)]:
            expected.add((x, y + 34, x + 34, y + 34))
    assert lines == expected and lines
    one = tv_svg(mma_atom("SM80_16x8x8_F16F16F16F16_TN").tv_c())
    assert 'class="warp"' not in one and 'class="warp-border"' in one


@pytest.mark.parametrize("swizzle", [(1, 2, 2), (2, 3, 3), (3, 3, 3), (3, 4, 3), (2, 2, 4)])
def test_plain_swizzles_are_coloured_by_chunk(swizzle: tuple[int, int, int]) -> None:
    b, m, s = swizzle
    svg = to_svg(f"Sw<{b},{m},{s}> o _0 o (8,64):(64,1)")
    cells = _cells(svg)
    assert len(cells) == 8 * 64
    for g in cells:
        assert int(g.get("data-tile", "")) == (int(g.get("data-offset", "")) >> m) & ((1 << b) - 1)
    assert f"that Sw&lt;{b},{m},{s}&gt; permutes" in svg


def test_triton_pictures_cap_like_xla_ones() -> None:
    ll = BlockedLayout([1, 4], [4, 8], [2, 2], [1, 0]).to_linear_layout([256, 256])
    svg = to_svg(ll)
    assert len(_cells(svg)) == 64 * 64 and "window [0:64,0:64] of 256x256" in svg
    assert len(svg) < 2_000_000
    part = to_svg(ll, window=(range(128, 136), range(200, 256)))
    assert len(_cells(part)) == 8 * 56


def test_browser_hover_reads_out_gpu_cells(tmp_path: Path) -> None:
    """Headless Chromium: hovering a TiledMMA cell prints its thread, value and warp, and lights
    every cell of that thread (the DevTools driver of the layout pictures' browser test)."""
    tm = make_tiled_mma(mma_atom("SM80_16x8x8_F16F16F16F16_TN"), (2, 2, 1))
    page_file = tmp_path / "mma.html"
    page_file.write_text(to_html(tm), encoding="utf-8")
    browser = Chromium(_browser_path(), tmp_path / "profile")
    try:
        page = browser.open(page_file.as_uri())
        c = tm.tv_c()
        t, v = 37, 1
        mm, nn = c.coord(t, v)
        selector = f'g.cell[data-index="{mm},{nn}"][data-thread="{t}"]'
        page.hover(selector)
        page.wait_for(f"document.getElementById('info').getAttribute('data-shown') === '{mm},{nn}'")
        assert page.info() == f"index ({mm},{nn})  thread {t}  value {v}  warp 1"
        lit = page.js("document.querySelectorAll('g.cell.lit').length")
        assert lit == page.js(f"document.querySelectorAll('g.cell[data-thread=\"{t}\"]').length") > 1
    finally:
        browser.close()
