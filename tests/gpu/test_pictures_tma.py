"""The TMA-box picture: each cell's box and shared offset checked by brute force (pycute for the
shared index, the byte-address swizzle written out bit by bit)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pycute
import pytest

from tensorlayout.cute import Layout, parse_layout
from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu.tma import make_tma_copy
from tensorlayout.render import tma_boxes_svg

NS = "{http://www.w3.org/2000/svg}"
SW128_2x2 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_2),(_64,_2)):((_64,_512),(_1,_1024))"

CASES = [  # (global, element, smem text, pycute shape, pycute stride, swizzle bits)
    ((64, 256), (256, 1), "f16", SW128_2x2, ((8, 2), (64, 2)), ((64, 512), (1, 1024)), 3),
    ((32, 64), (64, 1), "f32", "(_16,_32):(_32,_1)", (16, 32), (32, 1), 0),
    ((16, 128), (128, 1), "f16", "Sw<2,4,3> o _0 o ((_8,_2),(_32,_2)):((_32,_256),(_1,_512))",
     ((8, 2), (32, 2)), ((32, 256), (1, 512)), 2),
]


def _byte_swizzle(byte: int, bits: int) -> int:
    """CUtensorMapSwizzle 32B/64B/128B: bits [4, 4+bits) ^= bits [7, 7+bits)."""
    return byte ^ (((byte >> 7) & ((1 << bits) - 1)) << 4)


def _cells(svg: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{NS}g") if g.get("class") == "cell"]


@pytest.mark.parametrize(("gshape", "gstride", "elem", "smem", "pshape", "pstride", "swz"), CASES)
def test_cells_are_the_boxes_and_offsets(gshape: tuple[int, int], gstride: tuple[int, int], elem: str,
                                         smem: str, pshape: object, pstride: object, swz: int) -> None:
    glay = Layout(gshape, gstride)
    tma = make_tma_copy(glay, elem, parse_layout(smem))
    svg = tma_boxes_svg((glay, elem, parse_layout(smem)))
    ref = pycute.Layout(pshape, pstride)
    rows, cols = pycute.size(ref[0]), pycute.size(ref[1])
    volume = rows * cols // tma.boxes
    nbytes = tma.element_bits // 8
    boxes: dict[int, list[tuple[int, int]]] = {}
    for g in _cells(svg):
        m, n, k, off = (int(g.get(a, "")) for a in ("data-m", "data-n", "data-box", "data-offset"))
        if m >= rows or n >= cols:
            assert (k, off) == (-1, -1)
            continue
        index = ref(m, n)
        assert k == index // volume
        assert off == _byte_swizzle(index * nbytes, swz) // nbytes
        texts = [t.text for t in g.iter(f"{NS}text") if t.get("class") is None]
        assert texts == ([str(off)] if k == 0 else [])
        numbered = [t.text for t in g.iter(f"{NS}text") if t.get("class") == "box-number"]
        assert numbered == ([f"#{k}"] if index % volume == 0 else [])
        boxes.setdefault(k, []).append((m, n))
    assert sorted(boxes) == list(range(tma.boxes))
    for cells in boxes.values():  # each box a box_dim rectangle (dim 0: columns, dim 1: rows)
        ms, ns = {m for m, _ in cells}, {n for _, n in cells}
        assert len(cells) == len(ms) * len(ns) == volume
        assert (max(ns) - min(ns) + 1, max(ms) - min(ms) + 1) == tuple(tma.box_dim[:2])


def test_window_and_errors() -> None:
    glay, smem = Layout((64, 256), (256, 1)), parse_layout(SW128_2x2)
    assert len(_cells(tma_boxes_svg((glay, "f16", smem), window=(range(0, 4), range(60, 70))))) == 40
    with pytest.raises(TensorLayoutError, match="not major"):
        tma_boxes_svg((Layout((64, 256), (1, 64)), "f16", parse_layout("(_64,_64):(_64,_1)")))
    with pytest.raises(TensorLayoutError, match="2-D global tensor"):
        tma_boxes_svg((Layout((64, 256, 4), (256, 1, 16384)), "f16", parse_layout("(_64,_64):(_64,_1)")))
    with pytest.raises(TensorLayoutError, match="does not keep its layouts"):
        tma_boxes_svg(make_tma_copy(glay, "f16", smem))  # type: ignore[arg-type]


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tensorlayout", "render", *argv], capture_output=True,
                          text=True, check=False)


def test_cli(tmp_path: object) -> None:
    out = f"{tmp_path}/tma.svg"
    ok = _cli("(64,256):(256,1)", "--dtype", "f16", "--tma", SW128_2x2, "-o", out)
    assert ok.returncode == 0, ok.stderr
    with open(out) as f:
        assert len(_cells(f.read())) == 64 * 128
    bad = _cli("(64,256):(1,64)", "--tma", "(_64,_64):(_64,_1)", "-o", out)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "LayoutError: the TMA box" in bad.stderr
    html = _cli("(64,256):(256,1)", "--tma", SW128_2x2, "-o", f"{tmp_path}/x.html")
    with open(f"{tmp_path}/x.html") as f:
        assert html.returncode == 0 and 'id="info"' in f.read()  # the hover page
    tikz = _cli("(64,256):(256,1)", "--tma", SW128_2x2, "-o", f"{tmp_path}/x.tex")
    assert tikz.returncode == 2 and "UnsupportedError" in tikz.stderr
