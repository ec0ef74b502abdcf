"""What one thread owns of a TiledMMA's A/B/C or a TiledCopy's source/destination, as a 2-D grid.

The thread's partition of an identity tensor over the operand's tile (CuTe's
``thr_mma.partition_C(make_identity_tensor(shape))`` and its kin,
:func:`~tensorlayout.gpu.partition.get_slice`) names the coordinate of each of its values;
those cells are filled in the thread's colour and labelled ``V#`` (the value's index in the
partition, CuTe's 1-D index of the fragment). Every cell is a group ``<g class="cell">`` with
``data-m``/``data-n`` and ``data-value`` (-1: another thread's). B is drawn N x K, as CuTe's
``partition_B`` indexes it.

>>> from tensorlayout.gpu import make_tiled_mma, mma_atom
>>> pic = partition_svg(make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN")), 3, "c")
>>> pic.count('class="cell"'), pic.count('data-value="-1"'), '>V3<' in pic
(128, 124, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from tensorlayout.cute import CountingTensor, Int, make_identity_tensor
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atoms import MMAAtom
from tensorlayout.gpu.partition import get_slice
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA, make_tiled_mma
from tensorlayout.render._cells import PALETTE
from tensorlayout.render._tv import CELL, TITLE, _window_note, _windowed, document

__all__ = ["OPERANDS", "partition_svg", "thread_coords"]

#: operand letter -> (the tiled kind it belongs to, the tile dims (indices into the MMA's M,N,K))
OPERANDS = {"a": (TiledMMA, (0, 2)), "b": (TiledMMA, (1, 2)), "c": (TiledMMA, (0, 1)),
            "s": (TiledCopy, (0, 1)), "d": (TiledCopy, (0, 1))}


def _tile(tiled: TiledMMA | TiledCopy, operand: str) -> tuple[int, int]:
    if isinstance(tiled, TiledCopy):
        return tiled.tv_s().tile
    size = tiled.tile_size()
    i, j = OPERANDS[operand][1]
    return int(size[i]), int(size[j])


def thread_coords(tiled: TiledMMA | TiledCopy | MMAAtom, thread: int, operand: str
                  ) -> tuple[tuple[int, int], CountingTensor, list[tuple[int, int]]]:
    """The operand's tile, the thread's partition of its identity tensor, and the coordinate of each
    of the thread's values in order.

    >>> from tensorlayout.gpu import mma_atom
    >>> tile, part, coords = thread_coords(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), 3, "c")
    >>> tile, coords
    ((16, 8), [(0, 6), (0, 7), (8, 6), (8, 7)])
    """
    tm = make_tiled_mma(tiled) if isinstance(tiled, MMAAtom) else tiled
    kind = OPERANDS.get(operand, (None, ()))[0]
    if kind is None or not isinstance(tm, kind):
        known = [k for k, (t, _d) in OPERANDS.items() if isinstance(tm, t)]
        raise LayoutError(f"a {type(tm).__name__} has operands {', '.join(known) or 'none'}, not {operand!r}")
    tile = _tile(tm, operand)
    thr = get_slice(tm, thread)
    ident = make_identity_tensor((Int(tile[0]), Int(tile[1])))
    part = getattr(thr, f"partition_{operand}")(ident)  # ThrMMA.partition_a/b/c, ThrCopy.partition_s/d
    if not isinstance(part, CountingTensor):
        raise LayoutError(f"the partition of an identity tensor is a counting tensor, got {part}")
    return tile, part, [(int(c[0]), int(c[1])) for c in part.coords()]


def partition_svg(tiled: TiledMMA | TiledCopy | MMAAtom, thread: int, operand: str = "c", title: str = "",
                  window: Sequence[range] | None = None) -> str:
    """The picture of the module doc; ``window`` (two ranges over the operand's tile) draws part of it."""
    tile, part, coords = thread_coords(tiled, thread, operand)
    value: dict[tuple[int, int], int] = {}
    for v, mn in enumerate(coords):
        value.setdefault(mn, v)
    ms, ns = _windowed(tile, window)
    fill = PALETTE[thread % len(PALETTE)]
    body = []
    for r, m in enumerate(ms):
        for c, n in enumerate(ns):
            v = value.get((m, n), -1)
            x, y = CELL + c * CELL, TITLE + CELL + r * CELL
            text = f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 4}">V{v}</text>' if v >= 0 else ""
            body.append(f'<g class="cell" data-m="{m}" data-n="{n}" data-value="{v}"><rect x="{x}" y="{y}" '
                        f'width="{CELL}" height="{CELL}" fill="{fill if v >= 0 else "#ffffff"}" '
                        f'stroke="#888" stroke-width="0.5"/>{text}</g>')
    height = (len(ms) + 2) * CELL + TITLE
    body.append(f'<text class="caption" x="{CELL}" y="{height - CELL / 3}" text-anchor="start" '
                f'font-size="12">{escape(str(part))}</text>')
    name = tiled.name if isinstance(tiled, MMAAtom) else tiled.atom.name
    head = title or (f"thread {thread}: partition_{operand.upper()} of {name} over {tile[0]}x{tile[1]}"
                     f" ({len(coords)} values)")
    head += _window_note(tile, (ms, ns))
    return document(max((len(ns) + 2) * CELL, 8 * len(head), 7 * len(str(part)) + 2 * CELL), height, head,
                    body)
