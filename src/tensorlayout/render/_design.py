"""The picture of a synthesised shared-memory layout: one panel per access, the part of the tile its
first instruction covers, each cell its byte address and bank, coloured by the phase that moves it
(cells outside the instruction grey); a phase that conflicts is outlined red.

>>> from tensorlayout.design import design_smem
>>> d = design_smem((16, 64), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
>>> pic = design_svg(d)
>>> pic.count('class="panel"'), pic.count('data-phase="0"') > 0, 'stroke="#d00000"' in pic
(2, True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from tensorlayout.core.banks import BANKS
from tensorlayout.design._proof import AccessProof
from tensorlayout.design.smem import SmemAnswer, SmemDesign
from tensorlayout.errors import LayoutError
from tensorlayout.render._draw import hsl
from tensorlayout.render._extent import check_window
from tensorlayout.render._tv import CELL, TITLE, document

__all__ = ["design_svg"]

#: The most rows and columns a panel draws of the instruction's bounding box.
MAX_PANEL_SIDE = 64
_GREY = "#eeeeee"
_RED = "#d00000"


def _box(proof: AccessProof, window: Sequence[range] | None) -> tuple[range, range]:
    """The rows and columns of the tile instruction 0 touches (capped at :data:`MAX_PANEL_SIDE`), or
    the ``window``."""
    if window is not None:
        rows, cols = window
        if len(rows) * len(cols) > MAX_PANEL_SIDE * MAX_PANEL_SIDE:
            raise LayoutError(f"a {len(rows)}x{len(cols)} window is too large to draw (at most "
                              f"{MAX_PANEL_SIDE * MAX_PANEL_SIDE} cells a panel)")
        return rows, cols
    ms = [c[2] for c in proof.cells]
    ks = [c[3] for c in proof.cells]
    return (range(min(ms), min(max(ms) + 1, min(ms) + MAX_PANEL_SIDE)),
            range(min(ks), min(max(ks) + 1, min(ks) + MAX_PANEL_SIDE)))


def _panel(answer: SmemAnswer, proof: AccessProof, top: int,
           window: Sequence[range] | None) -> tuple[list[str], int, int]:
    """One access's panel at ``top``: its SVG elements, width and height."""
    table = answer.candidate.byte_offsets()
    ms, ks = _box(proof, None if window is None else check_window(window, table.shape))
    moved = {(c[2], c[3]): (c[0], c[1]) for c in proof.cells}
    bad = {proof.conflict.phase} if proof.conflict is not None and proof.conflict.instruction == 0 else set()
    phases = max(len(proof.banks), 1)
    head = (f"{proof.role} {proof.access}: {proof.vector_bytes}-byte vectors, {proof.lanes_per_phase} lanes "
            f"a phase; instruction 0: {phases} phases, colour = phase")
    out = [f'<g class="panel" data-access="{escape(proof.access)}">',
           f'<text x="{CELL}" y="{top + 18}" text-anchor="start" font-size="12">{escape(head)}</text>']
    for i, m in enumerate(ms):
        for j, k in enumerate(ks):
            addr = int(table[m, k])
            bank = addr // 4 % BANKS
            x, y = CELL + j * CELL, top + TITLE + i * CELL
            phase, thread = moved.get((m, k), (-1, -1))
            fill = hsl(phase * 360 / phases, 0.65, 0.8) if phase >= 0 else _GREY
            edge = f'stroke="{_RED}" stroke-width="3"' if phase in bad else 'stroke="#000" stroke-width="0.5"'
            label = f"p{phase} T{thread}" if phase >= 0 else ""
            out.append(f'<g class="cell" data-m="{m}" data-k="{k}" data-byte="{addr}" data-bank="{bank}" '
                       f'data-phase="{phase}"><rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" '
                       f'fill="{fill}" {edge}/><text x="{x + CELL / 2}" y="{y + 11}">{addr}</text>'
                       f'<text x="{x + CELL / 2}" y="{y + 21}">b{bank}</text>'
                       f'<text x="{x + CELL / 2}" y="{y + 31}" font-size="8">{label}</text></g>')
    out.append("</g>")
    return out, (len(ks) + 2) * CELL, TITLE + (len(ms) + 1) * CELL


def design_svg(design: SmemDesign | SmemAnswer, title: str = "",
               window: Sequence[range] | None = None) -> str:
    """The chosen layout of ``design`` (or one candidate ``answer``) with each access's first
    instruction coloured by phase (module docstring); ``window`` (two ranges) draws that part of
    the tile in every panel instead."""
    answer = design.best if isinstance(design, SmemDesign) else design
    if not isinstance(answer, SmemAnswer):
        raise LayoutError(f"design_svg draws a SmemDesign or a SmemAnswer, got {type(design).__name__}")
    body: list[str] = []
    top, width = TITLE, 0
    for proof in answer.proofs:
        if not proof.cells:
            body.append(f'<text x="{CELL}" y="{top + 18}" text-anchor="start">{escape(proof.access)}: '
                        f"{escape(proof.failure)}</text>")
            top += TITLE
            continue
        elems, w, h = _panel(answer, proof, top, window)
        body += elems
        top, width = top + h, max(width, w)
    title = title or f"{answer.candidate.name}: {answer.candidate.cute_text()}"
    return document(max(width, 9 * len(title)), top, title, body)
