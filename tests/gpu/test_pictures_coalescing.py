"""The coalescing picture: each cell's lane, value and sector checked against the layouts by brute
force; the caption is the report `show --coalescing` prints."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tensorlayout.cute import Layout
from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu.coalescing import coalescing
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.render import coalescing_svg
from tensorlayout.triton import parse_layout as parse_triton

NS = "{http://www.w3.org/2000/svg}"
BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")


def _parts(svg: str) -> tuple[list[dict[str, int]], str]:
    root = ET.fromstring(svg)
    cells = [{k.removeprefix("data-"): int(v) for k, v in g.attrib.items() if k.startswith("data-")}
             for g in root.iter(f"{NS}g") if g.get("class") == "cell"]
    caption = next(t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == "caption")
    return cells, caption


def _check(cells: list[dict[str, int]], glay: Layout, where: dict[tuple[int, int], tuple[int, int]],
           bits: int) -> None:
    """``where``: (lane, value) -> (m, n) of the request, from the layout itself."""
    held = {mn: lv for lv, mn in sorted(where.items(), reverse=True)}  # lowest (lane, value) wins
    first = min(glay(*mn) for mn in held) * bits // 8 // 32
    for c in cells:
        mn = (c["m"], c["n"])
        assert c["offset"] == glay(*mn)
        lane, value = held.get(mn, (-1, -1))
        assert (c["lane"], c["value"]) == (lane, value)
        assert c["sector"] == (c["offset"] * bits // 8 // 32 - first if lane >= 0 else -1)
    assert sum(c["lane"] >= 0 for c in cells) == len(held)


@pytest.mark.parametrize(("tv", "tile", "gshape", "gstride", "bits"), [
    ("(32,8):(8,1)", (8, 32), (8, 32), (32, 1), 16),
    ("(32,8):(8,1)", (8, 32), (8, 32), (1, 8), 16),
    ("((2,16),4):((64,1),16)", (16, 8), (16, 8), (8, 1), 32),
    ("(32,4):(1,32)", (32, 4), (32, 4), (4, 1), 8),
])
def test_tv_request(tv: str, tile: tuple[int, int], gshape: tuple[int, int], gstride: tuple[int, int],
                    bits: int) -> None:
    access, glay = TVLayout.parse(tv, tile), Layout(gshape, gstride)
    report = coalescing(access, glay, bits)
    cells, caption = _parts(coalescing_svg(access, glay, bits))
    assert caption == str(report)
    where = {(t, v): access.coord(t, v) for t in range(min(32, access.num_threads))
             for v in range(report.vector)}
    _check(cells, glay, where, bits)


def test_triton_request_second_request() -> None:
    ll = parse_triton(BLOCKED, (32, 64))
    glay = Layout((32, 64), (64, 1))
    report = coalescing(ll, None, 16)
    cells, caption = _parts(coalescing_svg(ll, None, 16, request=1))
    assert caption == str(report) and report.requests == 2
    where = {}
    for lane in range(32):
        for v in range(report.vector, 2 * report.vector):
            out = ll.apply({"register": v, "lane": lane, "warp": 0, "block": 0})
            where[(lane, v)] = (out["dim0"], out["dim1"])
    _check(cells, glay, where, 16)


def test_errors() -> None:
    access = TVLayout.parse("(32,8):(8,1)", (8, 32))
    with pytest.raises(TensorLayoutError, match="request 8 is outside"):
        coalescing_svg(access, Layout((8, 32), (32, 1)), 16, request=8)
    with pytest.raises(TensorLayoutError, match="element_bits is 8, 16, 32 or 64"):
        coalescing_svg(access, Layout((8, 32), (32, 1)), 12)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tensorlayout", *argv], capture_output=True, text=True,
                          check=False)


def test_cli_caption_is_show_output(tmp_path: object) -> None:
    out = f"{tmp_path}/c.svg"
    flags = ("--coalescing", "--global", "(8,32):(32,1)", "--dtype", "f16")
    ok = _cli("render", "(32,8):(8,1)", *flags, "-o", out)
    assert ok.returncode == 0, ok.stderr
    shown = _cli("show", "(32,8):(8,1)", *flags)
    with open(out) as f:
        assert _parts(f.read())[1] == shown.stdout.strip()
    tri = _cli("render", BLOCKED, "--shape", "32,64", "--coalescing", "--dtype", "f16", "-o", out)
    assert tri.returncode == 0, tri.stderr
    bad = _cli("render", "(32,8):(8,1)", "--coalescing", "-o", out)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "UsageError: --coalescing reads" in bad.stderr
