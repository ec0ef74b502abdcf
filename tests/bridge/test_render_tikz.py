"""TikZ output: equal to CuTe's own ``print_latex`` (differential, C++ built host-only), well
formed for every drawable kind, compiled with pdflatex where it exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.gpu import copy_atom, make_tiled_copy_a, make_tiled_mma, mma_atom
from tensorlayout.render import to_svg, to_tikz

from ..gpu.test_cute_cxx import run_cute_program
from .test_render_display import KINDS

CPP = Path(__file__).with_name("cute_print_latex.cpp")
F16 = "SM80_16x8x16_F16F16F16F16_TN"
#: the objects cute_print_latex.cpp prints, by its names
OURS = {
    "dynamic": lambda: to_tikz("(4,2):(2,1)"),
    "static": lambda: to_tikz("(_8,_4):(_1,_8)"),
    "rank1": lambda: to_tikz("8:2"),
    "nested": lambda: to_tikz("((2,2),(2,4)):((1,4),(2,8))"),
    "swizzle": lambda: to_tikz("Sw<2,0,2> o _0 o (_4,_4):(_4,_1)"),
    "mma_atom": lambda: to_tikz(mma_atom("SM80_16x8x8_F16F16F16F16_TN")),
    "wgmma_ss": lambda: to_tikz(mma_atom("SM90_64x8x16_F16F16F16_SS")),
    "tiled_mma": lambda: to_tikz(make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 1, 1))),
    "tiled_mma_nk": lambda: to_tikz(make_tiled_mma(mma_atom("SM80_16x8x8_F32TF32TF32F32_TN"), (1, 2, 2))),
    "tiled_mma_mnk": lambda: to_tikz(make_tiled_mma(mma_atom("SM80_16x8x8_F32TF32TF32F32_TN"), (3, 2, 2))),
    "tiled_copy": lambda: to_tikz(make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16,
                                                    make_tiled_mma(mma_atom(F16)))),
}
#: CuTe's comment lines for TV objects print coordinate tensors (ArithTuple ...); ours the TV layouts
TV = {"mma_atom", "wgmma_ss", "tiled_mma", "tiled_mma_nk", "tiled_mma_mnk", "tiled_copy"}


def _body(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith("%"))


@pytest.fixture(scope="module")
def cute_docs() -> dict[str, str]:
    out = run_cute_program(CPP)
    return dict(part.split("\n", 1) for part in out.split("@@@ ")[1:])


@pytest.mark.parametrize("name", list(OURS))
def test_equal_to_cute_print_latex(cute_docs: dict[str, str], name: str) -> None:
    ours, theirs = OURS[name](), cute_docs[name]
    if name in TV:
        ours, theirs = _body(ours), _body(theirs)
    assert ours == theirs


def _check_document(tex: str) -> None:
    assert tex.startswith("%") and "\\documentclass[convert]{standalone}" in tex
    assert tex.endswith("\\end{tikzpicture}\n\\end{document}\n")
    assert tex.count("\\begin{") == tex.count("\\end{") == 2
    for line in tex.splitlines():
        assert line.count("{") == line.count("}"), line


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_is_a_document_with_one_node_per_drawn_cell(kind: str) -> None:
    obj = KINDS[kind]
    tex = to_tikz(obj)
    _check_document(tex)
    filled = len(re.findall(r"\\node\[fill=", tex))
    cells = to_svg(obj).count('class="cell"')
    held = cells - to_svg(obj).count('data-thread="-1"')
    assert filled == held


def test_tiles_are_outlined_and_windows_apply() -> None:
    tex = to_tikz("f32[3,5]{1,0:T(2,2)}")
    thick = re.findall(r"\\draw\[color=black,line width=2pt,shift=\{\(-0.5,-0.5\)\}\] \((\d+),(\d+)\) -- "
                       r"\((\d+),(\d+)\);", tex)
    columns = {int(b) for a, b, c, d in thick if b == d}
    rows = {int(a) for a, b, c, d in thick if a == c}
    assert columns == {0, 2, 4, 5} and rows == {0, 2, 3}
    tex = to_tikz("bf16[16,256]{1,0:T(8,128)(2,1)}", window=(range(8, 10), range(130, 132)))
    assert tex.count("\\node[fill=") == 4 and "\\node at (0,-1) {\\Large{\\texttt{8}}};" in tex
    assert "\\node at (-1,1) {\\Large{\\texttt{131}}};" in tex
    tex = to_tikz(make_tiled_mma(mma_atom(F16)), window=(range(0, 4), range(0, 2), range(0, 2)))
    assert tex.count("\\node[fill=") == 4 * 2 + 4 * 2 + 2 * 2


def test_cli_render_tikz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "l.tex"
    assert main(["render", "(4,2):(2,1)", "-o", str(out)]) == 0
    assert out.read_text() == to_tikz("(4,2):(2,1)")
    assert main(["render", "--mma", "SM80_16x8x8_F16F16F16F16_TN", "--format", "tikz", "-o", "-"]) == 0
    assert "\\shortstack{T0 \\\\ V0}" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("kind", ["cute", "xla", "tiled-mma", "triton-distributed"])
def test_pdflatex_compiles_it(tmp_path: Path, kind: str) -> None:
    (tmp_path / "fig.tex").write_text(to_tikz(KINDS[kind]))
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "fig.tex"], cwd=tmp_path,
                   check=True, capture_output=True, timeout=300)
    assert (tmp_path / "fig.pdf").stat().st_size > 1000


def test_svg_and_tikz_show_the_same_holder_as_cute() -> None:
    """An element several threads hold shows the holder CuTe's pictures show: the first in
    (thread, value) order, in the SVG as in the TikZ."""
    atom = mma_atom("SM90_64x8x16_F16F16F16_SS")  # A, B in shared memory: every thread holds all
    svg_cells = re.findall(r'data-m="(\d+)" data-n="(\d+)" data-thread="(-?\d+)" data-value="(-?\d+)"',
                           to_svg(atom))
    a_cells = svg_cells[:64 * 16]
    assert {t for _m, _n, t, _v in a_cells} == {"0"}
    tv_a = atom.tv_a()
    table = tv_a.table()
    for m, k, _t, v in a_cells[::37]:
        assert int(table[0, int(v)]) == int(m) + 64 * int(k)
    nodes = re.findall(r"\\shortstack\{T(\d+) \\\\ V(\d+)\}", to_tikz(atom))
    assert len(nodes) == 64 * 8 + 64 * 16 + 8 * 16  # C, then A, then B, one node each
    assert {t for t, _v in nodes[64 * 8:]} == {"0"} and len({t for t, _v in nodes[:64 * 8]}) == 128
