"""TikZ output, in the form CuTe's ``print_latex`` prints: a standalone LaTeX document whose
``tikzpicture`` puts element ``(m, n)`` at ``(m, n)`` with ``x`` pointing down and ``y``
right, one ``\\node`` per element, a ``grid`` and the row and column numbers.

* a CuTe layout of rank <= 2 (swizzled ones too) prints as ``print_latex(layout)`` does: each
  node its offset, filled by CuTe's ``TikzColor_BWx8`` of the offset;
* any other layout (XLA shapes, TLA formats, Triton shared layouts, rank > 2) the same way over
  the drawn part of its picture (whole tiles, or a window), filled by tile, with thick lines
  between tiles;
* a TV layout, an MMA atom or TiledMMA, a TiledCopy and a Triton distributed layout print as
  ``print_latex_tv`` / ``print_latex(TiledMMA)`` / ``print_latex(TiledCopy)`` do: each node
  ``\\shortstack{T# \\\\ V#}``, filled by CuTe's ``TikzColor_TV`` of the thread, the first
  holder in (thread, value) order; MMA panels C at the origin, A left of it, B above it.

The ``%`` comment lines name the layouts drawn (our TV layouts: CuTe's comments print the
composed coordinate tensors instead).

>>> tex = to_tikz("(2,2):(1,2)")
>>> print("\\n".join(tex.splitlines()[:1] + tex.splitlines()[6:12]))
% Layout: (2,2):(1,2)
\\node[fill=black!00] at (0,0) {0};
\\node[fill=black!20] at (0,1) {2};
\\node[fill=black!40] at (1,0) {1};
\\node[fill=black!60] at (1,1) {3};
\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (2,2);
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorlayout.convert import parse_target
from tensorlayout.cute import ComposedLayout, Layout, append
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atoms import MMAAtom
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA, make_tiled_mma
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.lowering import notation_of
from tensorlayout.render._draw import Picture, border_segments, cell_tiles, picture
from tensorlayout.render._extent import Window, check_window
from tensorlayout.render._source import Source, source_of
from tensorlayout.render._triton import distributed_owners, is_distributed, shared_source
from tensorlayout.render._tv import MAX_PANEL_CELLS, first_holders
from tensorlayout.triton import LinearLayout

__all__ = ["BW_COLORS", "TV_COLORS", "to_tikz"]

HEADER = ("\\documentclass[convert]{standalone}\n\\usepackage{tikz}\n\n\\begin{document}\n"
          "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},"
          "every node/.style={minimum size=1cm, outer sep=0pt}]\n\n")
FOOTER = "\\end{tikzpicture}\n\\end{document}\n"
#: CuTe's ``TikzColor_BWx8`` (by offset, or here by tile)
BW_COLORS = ("black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70")
#: CuTe's ``TikzColor_TV`` (by thread)
TV_COLORS = tuple(f"{{rgb,255:red,{r};green,{g};blue,{b}}}" for r, g, b in (
    (175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
    (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210)))


def _grid(m0: int, n0: int, m1: int, n1: int) -> str:
    return f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] ({m0},{n0}) grid ({m1},{n1});\n\n"


def _label(m: int, n: int, text: object) -> str:
    return f"\\node at ({m},{n}) {{\\Large{{\\texttt{{{text}}}}}}};\n"


def _tv_node(m: int, n: int, t: int, v: int, value: str = "V") -> str:
    return (f"\\node[fill={TV_COLORS[t % len(TV_COLORS)]}] at ({m},{n}) "
            f"{{\\shortstack{{T{t} \\\\ {value}{v}}}}};\n")


def _axes(ms: Sequence[object], ns: Sequence[object], m_at: int, n_at: int, m0: int = 0, n0: int = 0
          ) -> list[str]:
    """Row numbers in column ``n_at`` and column numbers in row ``m_at`` (CuTe's labels)."""
    return ([_label(m0 + i, n_at, m) for i, m in enumerate(ms)]
            + [_label(m_at, n0 + j, n) for j, n in enumerate(ns)])


# ---------------------------------------------------------------- layouts


def _cute_tikz(layout: Layout | ComposedLayout, window: Sequence[range] | None, title: str) -> str:
    """``print_latex(layout)`` of a CuTe layout of rank <= 2 (or a window of it)."""
    shown = append(layout, Layout.parse("_1:_0"), 2) if isinstance(layout, Layout) else layout
    src = source_of(layout)
    pic = picture(src, window=window)
    column = len(src.shape) == 1  # rank 1 prints as an (N,1) column
    lines = [f"% Layout: {title or shown}\n", HEADER]
    for c in pic.cells:
        m, n = (c.col, 0) if column else (c.row, c.col)
        lines.append(f"\\node[fill={BW_COLORS[c.offset % 8]}] at ({m},{n}) {{{c.offset}}};\n")
    rows, cols = (pic.cols, 1) if column else (pic.rows, pic.cols)
    lines.append(_grid(0, 0, rows, cols))
    firsts = range(pic.col_start, pic.col_start + pic.cols)
    ms: Sequence[object] = firsts if column else _row_numbers(pic)
    lines += _axes(ms, range(1) if column else firsts, -1, -1)
    return "".join([*lines, FOOTER])


def _row_numbers(pic: Picture) -> list[str]:
    return [label or "0" for label in pic.row_labels]


def _layout_tikz(src: Source, window: Sequence[range] | None, title: str) -> str:
    """Any other layout over the drawn part of its picture, filled by tile, tiles outlined."""
    pic = picture(src, window=window)
    by_tile = pic.split is not None
    lines = [f"% Layout: {title or pic.title}\n", *(f"% {n}\n" for n in pic.notes), HEADER]
    for c in pic.cells:
        fill = BW_COLORS[(c.tile if by_tile else c.offset) % 8]
        lines.append(f"\\node[fill={fill}] at ({c.row},{c.col}) {{{c.offset}}};\n")
    lines.append(_grid(0, 0, pic.rows, pic.cols))
    if pic.cells and by_tile:
        for kind, k, a, b in border_segments(cell_tiles(pic)):
            ends = f"({a},{k}) -- ({b},{k})" if kind == "V" else f"({k},{a}) -- ({k},{b})"
            lines.append(f"\\draw[color=black,line width=2pt,shift={{(-0.5,-0.5)}}] {ends};\n")
        lines.append("\n")
    lines += _axes(_row_numbers(pic), range(pic.col_start, pic.col_start + pic.cols), -1, -1)
    return "".join([*lines, FOOTER])


# ---------------------------------------------------------------- thread-value layouts


def _window(tile: tuple[int, ...], window: Sequence[range] | None) -> Window:
    win = check_window(window, tile) if window is not None else tuple(range(n) for n in tile)
    if int(np.prod([len(r) for r in win])) > MAX_PANEL_CELLS * 8:
        raise LayoutError(f"a {'x'.join(str(len(r)) for r in win)} picture is too large for TikZ: "
                          "pass a window (--window) of part of it")
    return win


def _tv_nodes(tv: TVLayout, ms: range, ns: range, place: tuple[int, int], transpose: bool = False,
              clip: bool = True) -> list[str]:
    """One node per element of rows ``ms`` x columns ``ns``, its first holder in CuTe's loop
    order (thread outer, value inner), at ``place`` + its position (``transpose``: (n, m));
    ``clip=False`` keeps the elements past them too, as CuTe draws a TiledMMA whose threads
    along K place C past its M x N grid."""
    m_ext = tv.tile[0]
    out = []
    for idx, t, v in zip(*first_holders(tv)):
        m, n = int(idx) % m_ext, int(idx) // m_ext
        if not clip or (m in ms and n in ns):
            r, c = (n - ns.start, m - ms.start) if transpose else (m - ms.start, n - ns.start)
            out.append(_tv_node(place[0] + r, place[1] + c, int(t), int(v)))
    return out


def _tv_tikz(tv: TVLayout, window: Sequence[range] | None) -> str:
    """``print_latex_tv(layout_tv, tile)``."""
    ms, ns = _window(tv.tile, window)
    return "".join([f"% Layout TV: {tv.layout}\n", HEADER, *_tv_nodes(tv, ms, ns, (0, 0)),
                    _grid(0, 0, len(ms), len(ns)), *_axes(ms, ns, -1, -1), FOOTER])


def _mma_tikz(mma: TiledMMA | MMAAtom, window: Sequence[range] | None) -> str:
    """``print_latex(TiledMMA)``: C at the origin, A at columns -K-1.., B at rows -K-1.."""
    tm = make_tiled_mma(mma) if isinstance(mma, MMAAtom) else mma
    a, b, c = tm.tv_a(), tm.tv_b(), tm.tv_c()
    ms, ns, ks = _window(tm.tile_size(), window)
    m, n, k = len(ms), len(ns), len(ks)
    clip = window is not None  # CuTe draws every holder, past the grids too
    lines = [f"% LayoutC: {c.layout}\n", f"% LayoutA: {a.layout}\n", f"% LayoutB: {b.layout}\n", HEADER,
             *_tv_nodes(c, ms, ns, (0, 0), clip=clip), _grid(0, 0, m, n),
             *_tv_nodes(a, ms, ks, (0, -k - 1), clip=clip), _grid(0, -k - 1, m, -1),
             *_axes(ms, ks, -1, -k - 2, 0, -k - 1),
             *_tv_nodes(b, ns, ks, (-k - 1, 0), transpose=True, clip=clip), _grid(-k - 1, 0, -1, n),
             *[_label(-k - 2, j, x) for j, x in enumerate(ns)],
             *[_label(-k - 1 + i, -1, x) for i, x in enumerate(ks)], FOOTER]
    return "".join(lines)


def _copy_tikz(tc: TiledCopy, window: Sequence[range] | None) -> str:
    """``print_latex(TiledCopy)``: source at the origin, destination N + 3 columns right."""
    s, d = tc.tv_s(), tc.tv_d()
    ms, ns = _window(s.tile, window)
    n = len(ns)
    right = n + 3
    lines = [f"% Layout S TV: {s.layout}\n", f"% Layout D TV: {d.layout}\n", HEADER,
             *_tv_nodes(s, ms, ns, (0, 0)), _grid(0, 0, len(ms), n), *_axes(ms, ns, -1, -1),
             *_tv_nodes(d, ms, ns, (0, right)), _grid(0, right, len(ms), n + right),
             *[_label(i, n + right, x) for i, x in enumerate(ms)],
             *[_label(-1, right + j, x) for j, x in enumerate(ns)], FOOTER]
    return "".join(lines)


def _distributed_tikz(ll: LinearLayout, window: Sequence[range] | None) -> str:
    """A Triton distributed layout as ``print_latex_tv`` would draw it (``R#``: register)."""
    thr, val = distributed_owners(ll)
    ms, ns = _window(thr.shape, window)
    nodes = [_tv_node(i, j, int(thr[m, n]), int(val[m, n]), "R") for i, m in enumerate(ms)
             for j, n in enumerate(ns) if thr[m, n] >= 0]
    return "".join([f"% LinearLayout: {' '.join(str(ll).split())}\n", HEADER, *nodes,
                    _grid(0, 0, len(ms), len(ns)), *_axes(ms, ns, -1, -1), FOOTER])


def _triton_tikz(ll: LinearLayout, window: Sequence[range] | None, title: str) -> str:
    """A distributed layout by its holders, a shared one by its offsets."""
    if is_distributed(ll):
        return _distributed_tikz(ll, window)
    return _layout_tikz(shared_source(ll), window, title)


def _cute_or_layout_tikz(lay: Any, window: Sequence[range] | None, title: str) -> str:
    """A CuTe layout of rank <= 2 as ``print_latex`` prints it, any other as a layout."""
    src = source_of(lay)
    if isinstance(lay, (Layout, ComposedLayout)) and len(src.shape) <= 2:
        return _cute_tikz(lay, window, title)
    return _layout_tikz(src, window, title)


#: Per notation (:func:`tensorlayout.lowering.notation_of`), how it prints; any other value
#: prints over its picture's source.
_NOTATION_TIKZ: dict[str | None, Callable[[Any, Sequence[range] | None, str], str]] = {
    "triton": _triton_tikz, "cute": _cute_or_layout_tikz}


def to_tikz(obj: object, *, window: Sequence[range] | None = None, title: str = "") -> str:
    """A standalone LaTeX/TikZ document of ``obj`` (see the module doc); ``window`` as for
    :func:`~tensorlayout.render.to_svg`; ``title`` names a layout in its comment line."""
    if isinstance(obj, str):
        obj = parse_target(obj)
    if isinstance(obj, (TiledMMA, MMAAtom)):
        return _mma_tikz(obj, window)
    if isinstance(obj, TiledCopy):
        return _copy_tikz(obj, window)
    if isinstance(obj, TVLayout):
        return _tv_tikz(obj, window)
    draw = _NOTATION_TIKZ.get(notation_of(obj))
    if draw is not None:
        return draw(obj, window, title)
    return _layout_tikz(source_of(obj), window, title)
