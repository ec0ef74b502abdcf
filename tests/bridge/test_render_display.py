"""Jupyter display: every drawable kind shows as its SVG picture in IPython (in process and in
a real kernel); what cannot be drawn keeps its text form."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tensorlayout.cute import ComposedLayout, Layout, Swizzle, tla
from tensorlayout.gpu import TVLayout, copy_atom, make_tiled_copy_a, make_tiled_mma, mma_atom
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.render import repr_svg, to_svg
from tensorlayout.render.display import SVG_MIME, register
from tensorlayout.triton import BlockedLayout, LinearLayout, SwizzledSharedLayout
from tensorlayout.xla import parse_shape

_MMA = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
KINDS = {
    "xla": parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}"),
    "cute": Layout.parse("((4,2),(4,3)):((4,16),(1,32))"),
    "swizzle": ComposedLayout(Swizzle(3, 3, 3), 0, Layout.parse("(8,64):(64,1)")),
    "tla": tla.make_format("zN", 8, 12, "f16"),
    "triton-distributed": BlockedLayout([1, 2], [4, 8], [1, 1], [1, 0]).to_linear_layout([4, 16]),
    "triton-shared": SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear_layout([8, 8]),
    "tv": _MMA.tv_c(),
    "mma-atom": _MMA,
    "tiled-mma": make_tiled_mma(_MMA, (2, 1, 1)),
    "tiled-copy": make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, make_tiled_mma(_MMA)),
    "relayout-target": PhysicalTarget.from_xla("f32[6,10]{1,0:T(2,4)}"),  # registered by name
}


@pytest.fixture(scope="module")
def shell():  # type: ignore[no-untyped-def]
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    sh = interactive.InteractiveShell.instance()
    assert register(sh) is True
    return sh


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_displays_as_svg(shell, kind: str) -> None:  # type: ignore[no-untyped-def]
    obj = KINDS[kind]
    data, _meta = shell.display_formatter.format(obj)
    assert data[SVG_MIME] == to_svg(obj)
    assert ET.fromstring(data[SVG_MIME]).findall(".//{http://www.w3.org/2000/svg}g[@class='cell']")
    assert data["text/plain"]  # the text form stays alongside


def test_undrawable_objects_keep_their_text(shell) -> None:  # type: ignore[no-untyped-def]
    for obj in (parse_shape("(f32[2], f32[3])"), TVLayout.parse("(512,256):(1,512)", (512, 256)),
                LinearLayout.from_bases([("dim0", [[1]])], ["register"])):
        assert repr_svg(obj) is None
        data, _meta = shell.display_formatter.format(obj)
        assert SVG_MIME not in data and data["text/plain"]


def test_pictures_of_triton_layouts_name_their_owners() -> None:
    ll = KINDS["triton-distributed"]
    assert isinstance(ll, LinearLayout)
    cells = ET.fromstring(to_svg(ll)).findall(".//{http://www.w3.org/2000/svg}g[@class='cell']")
    text_view = re.split(r"[,\n]", ll.get_distributed_view().replace("[", "").replace("]", "").strip())
    firsts = [cell.strip().split("|")[0].strip() for cell in text_view]
    drawn = [f"T{g.get('data-thread')}:{g.get('data-value')}" for g in cells]
    assert drawn == firsts  # Triton's own first holder of each element, in C order
    shared = KINDS["triton-shared"]
    assert isinstance(shared, LinearLayout)
    root = ET.fromstring(to_svg(shared))
    for g in root.findall(".//{http://www.w3.org/2000/svg}g[@class='cell']"):
        i, j = map(int, g.get("data-index", "").split(","))
        assert shared.apply({"offset": int(g.get("data-offset", "")), "block": 0}) == {"dim0": i, "dim1": j}


def test_a_real_kernel_shows_layouts_inline() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import tensorlayout.render\n"
                                          "from tensorlayout.cute import Layout\n"
                                          "Layout.parse('(4,8):(8,1)')"),
                nbformat.v4.new_code_cell("from tensorlayout.gpu import mma_atom\n"
                                          "mma_atom('SM80_16x8x8_F16F16F16F16_TN')")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    for cell in nb.cells:
        (out,) = cell.outputs
        assert out.output_type == "execute_result" and SVG_MIME in out.data
