"""Thread-value pictures as SVG: TiledMMA A/B/C panels, TiledCopy source/destination, and a
shared-memory tile with its banks and conflicts.

The MMA picture is laid out as CuTe's ``print_latex``/``print_svg`` draw it: C (M x N) at the
bottom right, A (M x K) to its left, B above it drawn K x N. Each cell is a group
``<g class="cell">`` with ``data-m``/``data-n`` and ``data-thread``/``data-value`` attributes,
a rect coloured by thread (CuTe's 8-colour cycle) and the labels ``T#`` and ``V#``.

>>> from tensorlayout.gpu import make_tiled_mma, mma_atom
>>> pic = tiled_mma_svg(make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN")))
>>> pic.count('class="cell"'), pic.count(">T0<")
(512, 16)
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from tensorlayout.core.banks import BANKS, WORD_BITS
from tensorlayout.cute import ComposedLayout, Layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atoms import CopyAtom, MMAAtom
from tensorlayout.gpu.banks import (
    BankReport,
    Phase,
    bank_conflicts,
    check_element_bits,
    shared_core,
)
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA, make_tiled_mma
from tensorlayout.gpu.tmem import tmem_owners
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.render._cells import (
    CELL,
    GAP,
    TITLE,
    document,
    index_labels,
    owner_cells,
    owner_panel,
    thread_cell,
    warp_lines,
)
from tensorlayout.render._draw import hsl
from tensorlayout.render._extent import Window, check_window, window_text

__all__ = ["CELL", "MAX_DRAWN_PAIRS", "TITLE", "cute_owners", "document", "first_holders", "owner_cells",
           "shared_banks_svg", "tiled_copy_svg", "tiled_mma_svg", "tv_svg"]

MAX_PANEL_CELLS = 1 << 16
#: (thread, value) pairs a TV picture lists to find each element's first holder (about 1 s each
#: 2^22 on one core; a TiledMMA of an SS wgmma with 48 atoms has 2.5e7 and took 30 s to draw)
MAX_DRAWN_PAIRS = 1 << 22


def _count(r: range) -> int:
    """``len(r)``, also past 2**63 (where ``len`` raises OverflowError).

    >>> _count(range(2**64)), _count(range(5, 0, -2))
    (18446744073709551616, 3)
    """
    step = r.step
    return max(0, (r.stop - r.start + step - (1 if step > 0 else -1)) // step)


def _windowed(tile: tuple[int, ...], window: Sequence[range] | None) -> Window:
    """The drawn part of a tile (all of it by default), checked against the size limit."""
    win = check_window(window, tile) if window is not None else tuple(range(n) for n in tile)
    if any(_count(r) * _count(s) > MAX_PANEL_CELLS for r, s in combinations(win, 2)):  # MxN, MxK, NxK
        raise LayoutError(f"a {'x'.join(str(_count(r)) for r in win)} picture is too large to draw (at "
                          f"most {MAX_PANEL_CELLS} cells a panel): pass a window (--window) of part of it")
    return win


def _window_note(tile: tuple[int, ...], win: Window) -> str:
    """`` window [0:16,0:8]`` for a part of ``tile``, else nothing."""
    return "" if all(len(r) == n for r, n in zip(win, tile)) else f" window {window_text(win)}"


def first_holders(tv: TVLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CuTe's pictures' holder of each element (``print_latex``/``print_svg`` loop over threads,
    then values, and keep the first to reach an element): ``(index, thread, value)`` arrays
    over the held elements, in that loop's order (``index`` = ``m + M·n``).

    >>> from tensorlayout.gpu.tv import TVLayout
    >>> [a.tolist() for a in first_holders(TVLayout.parse("(2,2):(0,1)", (2, 1)))]
    [[0, 1], [0, 0], [0, 1]]
    """
    pairs = tv.num_threads * tv.num_values
    if pairs > MAX_DRAWN_PAIRS:
        raise LayoutError(f"{tv.layout} has {tv.num_threads} threads x {tv.num_values} values = {pairs} "
                          f"(thread, value) pairs, too many to draw (at most {MAX_DRAWN_PAIRS})")
    flat = tv.table().reshape(-1)  # thread-major: position = t * V + v
    index, first = np.unique(flat, return_index=True)
    order = np.argsort(first)
    values = tv.num_values
    return index[order], first[order] // values, first[order] % values


def cute_owners(tv: TVLayout, tile: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(thread[M, N], value[M, N])`` of :func:`first_holders` over ``tile`` (default the TV
    layout's own), -1 where nobody holds it; holders past ``tile`` are left out (a TiledMMA's
    threads along K place C past its M x N tile).

    >>> from tensorlayout.gpu.tv import TVLayout
    >>> [a.tolist() for a in cute_owners(TVLayout.parse("(2,2):(1,2)", (2, 2)), (2, 1))]
    [[[0], [1]], [[0], [0]]]
    """
    m_ext, n_ext = tile or tv.tile
    thr = np.full(m_ext * n_ext, -1, dtype=np.int64)
    val = np.full(m_ext * n_ext, -1, dtype=np.int64)
    index, t, v = first_holders(tv)
    inside = index < m_ext * n_ext
    thr[index[inside]], val[index[inside]] = t[inside], v[inside]
    return thr.reshape(n_ext, m_ext).T, val.reshape(n_ext, m_ext).T


def _panel(tv: TVLayout, x0: int, y0: int, ms: range, ns: range, transpose: bool = False,
           tile: tuple[int, int] | None = None) -> list[str]:
    """One panel for rows ``ms`` and columns ``ns`` of ``tile`` (default ``tv``'s): the holder of
    each element as CuTe's pictures show it, index labels and warp outlines; ``transpose`` draws
    (n, m) as (row, col)."""
    return owner_panel(cute_owners(tv, tile), x0, y0, ms, ns, transpose)


def tv_svg(tv: TVLayout, title: str = "", window: Sequence[range] | None = None) -> str:
    """One TV layout over its ``M x N`` tile (or the ``window`` of it: two ranges), each cell
    ``T#``/``V#`` coloured by thread.

    >>> from tensorlayout.gpu import mma_atom
    >>> tv_svg(mma_atom("SM80_16x8x8_F16F16F16F16_TN").tv_c()).count('class="cell"')
    128
    """
    if not isinstance(tv, TVLayout):
        raise LayoutError(f"tv_svg draws a TVLayout, got {type(tv).__name__}")
    ms, ns = _windowed(tv.tile, window)
    body = _panel(tv, CELL, TITLE + CELL, ms, ns)
    head = (title or tv.name or str(tv)) + _window_note(tv.tile, (ms, ns))
    return document((len(ns) + 2) * CELL, (len(ms) + 2) * CELL + TITLE, head, body, _warp_legend(tv))


def tmem_svg(atom: CopyAtom, title: str = "", window: Sequence[range] | None = None) -> str:
    """Tensor memory as 128 lanes x the columns a TMEM copy atom touches, run by 4 warps (each
    in its sub-partition): each cell ``T#`` (thread of the warpgroup) over ``R#`` (its 32-bit
    register), coloured by warp; cells no warp reaches are white.

    >>> from tensorlayout.gpu.tmem import tmem_copy_atom
    >>> tmem_svg(tmem_copy_atom("SM100_TMEM_LOAD_32dp32b8x")).count('class="cell"')
    1024
    """
    if not isinstance(atom, CopyAtom) or atom.val_id is None:
        raise LayoutError(f"tmem_svg draws a tensor-memory copy atom, got {getattr(atom, 'name', atom)!r}")
    thread, reg = tmem_owners(atom)
    ms, ns = _windowed(thread.shape, window)
    body = []
    for m in ms:
        for n in ns:
            t, r = int(thread[m, n]), int(reg[m, n])
            data = (f'data-index="{m},{n}" data-lane="{m}" data-column="{n}" '
                    f'data-thread="{t}" data-warp="{t // 32 if t >= 0 else -1}" data-register="{r}"')
            body.append(thread_cell(CELL + (n - ns.start) * CELL, TITLE + CELL + (m - ms.start) * CELL,
                                    t, t // 32, f"R{r}", data))
    body += [*index_labels(CELL, TITLE + CELL, ms, ns), *warp_lines(thread, CELL, TITLE + CELL, ms, ns)]
    head = (title or f"{atom.name}: TMEM lanes x columns, by warp") + _window_note(thread.shape, (ms, ns))
    return document((len(ns) + 2) * CELL, (len(ms) + 2) * CELL + TITLE, head, body)


def tiled_mma_svg(mma: TiledMMA | MMAAtom, title: str = "", window: Sequence[range] | None = None) -> str:
    """A TiledMMA (or one atom) as CuTe draws it: A left, B on top (K x N), C bottom right;
    ``window`` (three ranges over M, N, K) draws part of each panel."""
    if not isinstance(mma, (MMAAtom, TiledMMA)):
        raise LayoutError(f"tiled_mma_svg draws a TiledMMA or an MMAAtom, got {type(mma).__name__}")
    tm = make_tiled_mma(mma) if isinstance(mma, MMAAtom) else mma
    a, b, c = tm.tv_a(), tm.tv_b(), tm.tv_c()
    tile = tm.tile_size()
    ms, ns, ks = _windowed(tile, window)
    m, n, k = len(ms), len(ns), len(ks)
    left, top = CELL + k * CELL + GAP // 2, TITLE + CELL + k * CELL + GAP // 2
    body = [*_panel(a, CELL, top, ms, ks, tile=(tile[0], tile[2])),
            *_panel(b, left, TITLE + CELL, ns, ks, transpose=True, tile=(tile[1], tile[2])),
            *_panel(c, left, top, ms, ns, tile=(tile[0], tile[1])),
            f'<text x="{CELL + k * CELL / 2}" y="{top - 18}">A ({tile[0]}x{tile[2]}, M x K)</text>',
            f'<text x="{left - 24}" y="{TITLE + CELL + k * CELL / 2}" text-anchor="end">'
            f'B ({tile[1]}x{tile[2]}, drawn K x N)</text>',
            f'<text x="{left + n * CELL / 2}" y="{top + m * CELL + 16}">'
            f'C ({tile[0]}x{tile[1]}, M x N)</text>']
    width, height = left + (n + 1) * CELL, top + (m + 1) * CELL
    head = title or f"TiledMMA {tm.atom.name} tile {'x'.join(map(str, tile))}"
    return document(width, height, head + _window_note(tile, (ms, ns, ks)), body, _warp_legend(tm.tv_c()))


def _warp_legend(tv: TVLayout) -> tuple[str, ...]:
    """The legend line of a picture outlining warps."""
    warps = -(-tv.num_threads // 32)
    return (f"cells: T# thread, V# value, coloured by thread; thick lines: the {warps} warp"
            f"{'s' if warps != 1 else ''} (32 threads each); numbers along the edges: row and column",)


def tiled_copy_svg(tc: TiledCopy, title: str = "", window: Sequence[range] | None = None) -> str:
    """A TiledCopy's source (left) and destination (right) TV layouts over its tile (or the
    ``window`` of it: two ranges)."""
    if not isinstance(tc, TiledCopy):
        raise LayoutError(f"tiled_copy_svg draws a TiledCopy, got {type(tc).__name__}")
    s, d = tc.tv_s(), tc.tv_d()
    ms, ns = _windowed(s.tile, window)
    n = len(ns)
    right = CELL + n * CELL + GAP
    body = [*_panel(s, CELL, TITLE + CELL, ms, ns), *_panel(d, right, TITLE + CELL, ms, ns),
            f'<text x="{CELL + n * CELL / 2}" y="{TITLE + CELL - 16}">source</text>',
            f'<text x="{right + n * CELL / 2}" y="{TITLE + CELL - 16}">destination</text>']
    head = title or f"TiledCopy {tc.atom.name} tile {s.tile[0]}x{s.tile[1]}"
    return document(right + (n + 1) * CELL, (len(ms) + 2) * CELL + TITLE,
                     head + _window_note(s.tile, (ms, ns)), body, _warp_legend(s))


#: outline colours of the phases of an access, cycled (a conflicting lane's cells are red)
PHASE_COLOURS = ("#0050d0", "#008a3e", "#8a4bd0", "#c07000")
CONFLICT = "#d00000"


def _bank_cells(offsets: np.ndarray, bits: int, marked: dict[tuple[int, int], tuple[int, int, bool]],
                ms: range, ns: range) -> list[str]:
    """Each cell its offset and bank (filled by bank); an accessed one also its phase and lane,
    outlined in its phase's colour (red where its lane collides)."""
    out = []
    for m in ms:
        for n in ns:
            off = int(offsets[m, n])
            bank = (off * bits // WORD_BITS) % BANKS
            x, y = CELL + (n - ns.start) * CELL, TITLE + CELL + (m - ms.start) * CELL
            mark = marked.get((m, n))
            facts, edge, third = "", 'stroke="#000" stroke-width="0.5"', ""
            if mark is not None:
                phase, lane, hit = mark
                colour = CONFLICT if hit else PHASE_COLOURS[phase % len(PHASE_COLOURS)]
                facts = f' data-phase="{phase}" data-lane="{lane}" data-conflict="{str(hit).lower()}"'
                edge = f'stroke="{colour}" stroke-width="{3 if hit else 2}"'
                third = f'<text x="{x + CELL / 2}" y="{y + 31}" font-size="8">p{phase} L{lane}</text>'
            out.append(f'<g class="cell" data-index="{m},{n}" data-m="{m}" data-n="{n}" data-offset="{off}" '
                       f'data-bank="{bank}"{facts}><rect x="{x + 1}" y="{y + 1}" width="{CELL - 2}" '
                       f'height="{CELL - 2}" fill="{hsl(bank * 360 // BANKS, 0.6, 0.82)}" {edge}/>'
                       f'<text x="{x + CELL / 2}" y="{y + 11}">{off}</text>'
                       f'<text x="{x + CELL / 2}" y="{y + 21}">b{bank}</text>{third}</g>')
    return out


def _phase_marks(report: BankReport, access: TVLayout) -> dict[tuple[int, int], tuple[int, int, bool]]:
    """Every accessed cell's ``(phase, lane, colliding)``: the lanes of each phase of the warp."""
    marks = {}
    for k, phase in enumerate(report.phases):
        colliding = {lane for _b, _w, lanes in phase.collisions for lane in lanes}
        for t in phase.lanes:
            for v in range(access.num_values):
                marks[access.coord(t, v)] = (k, t % 32, t in colliding)
    return marks


def _bank_legend(report: BankReport | None, access_name: str) -> list[str]:
    lines = ["each cell: its offset, its bank b# (fill colour: the bank); accessed cells: phase p#, lane L#"]
    if report is None:
        return lines
    lines += [f"access: {access_name}; {report.vector_bytes}-byte vectors, {report.lanes_per_phase} lanes "
              "a phase; outline colour: the phase; red: a lane in a bank that serves several words",
              *(_phase_line(k, p) for k, p in enumerate(report.phases))]
    return lines


def _phase_line(k: int, phase: Phase) -> str:
    """``phase 1 (lanes 8-15): 2 wavefronts, banks 0,1 conflict``."""
    waves = f"{phase.wavefronts} wavefront{'s' if phase.wavefronts != 1 else ''}"
    banks = ",".join(str(b) for b, _w, _l in phase.collisions)
    return f"phase {k} (lanes {phase.lanes[0]}-{phase.lanes[-1]}): {waves}" + (
        f", banks {banks} conflict" if banks else "")


def shared_banks_svg(smem: Layout | ComposedLayout | str, element_bits: int,
                     access: TVLayout | None = None, title: str = "",
                     window: Sequence[range] | None = None, access_name: str = "") -> str:
    """A shared tile (or the ``window`` of it: two ranges) with row and column indices: each
    cell its offset and bank (colour by bank). With an ``access`` (named ``access_name`` in the
    title and legend), every phase of warp 0 is drawn: each accessed cell its phase and lane,
    outlined in its phase's colour (red: its lane collides); the legend lists each phase's
    wavefronts.

    >>> from tensorlayout.gpu.tv import TVLayout
    >>> pic = shared_banks_svg("(8,8):(8,1)", 32, TVLayout.parse("(8,4):(1,8)", (8, 8)), access_name="rows")
    >>> "rows: 2 wavefronts for 1 phase, 1 excess" in pic, pic.count('stroke="#d00000"')
    (True, 32)
    """
    check_element_bits(element_bits)
    core = shared_core(smem)
    m, n = core.shape
    ms, ns = _windowed((m, n), window)
    offsets = core.offsets().reshape(m, n)
    marks: dict[tuple[int, int], tuple[int, int, bool]] = {}
    head = title or f"{core.name} ({element_bits}-bit elements)"
    report = None
    if access is not None:
        report = bank_conflicts(core, element_bits, access)
        marks = _phase_marks(report, access)
        head += f", {access_name or 'the access'}: {report.summary()}"
    head += _window_note((m, n), (ms, ns))
    body = [*_bank_cells(offsets, element_bits, marks, ms, ns), *index_labels(CELL, TITLE + CELL, ms, ns)]
    return document((len(ns) + 2) * CELL, (len(ms) + 2) * CELL + TITLE, head, body,
                    _bank_legend(report, access_name or "the access"))
