"""A ``convert_layout`` as three panels: the source layout (each element's thread and register),
the scratch buffer Triton synthesises (each element's offset and bank; with several rounds, the
round too) and the destination layout. At most ``MAX_SIDE`` rows and columns are drawn (the
top-left corner, noted in the title).

>>> from tensorlayout.design import triton_convert_layout
>>> from tensorlayout.triton import BlockedLayout
>>> c = triton_convert_layout(BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]),
...                           BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1]), [32, 32], "f16")
>>> conversion_svg(c).count('class="cell"')
3072
"""

from __future__ import annotations

import numpy as np

from tensorlayout.design.conversion import TritonConversion
from tensorlayout.render._triton import distributed_owners
from tensorlayout.render._tv import CELL, GAP, TITLE, _bank_cells, document, owner_cells
from tensorlayout.triton import _gf2

__all__ = ["MAX_SIDE", "conversion_svg", "scratch_offsets"]

#: Rows and columns drawn at most per panel.
MAX_SIDE = 32


def scratch_offsets(c: TritonConversion) -> tuple[np.ndarray, np.ndarray]:
    """``(offset[rows, cols], round[rows, cols])`` of each element in the scratch buffer (the
    tensor as rows x its last dim); zeros off the shared path."""
    sizes = [n for _, n in c.src.out_dims]
    rows, cols = int(np.prod(sizes[:-1], dtype=np.int64)) if len(sizes) > 1 else 1, sizes[-1]
    offsets = np.zeros((rows, cols), dtype=np.int64)
    rounds = np.zeros((rows, cols), dtype=np.int64)
    if c.shared is None:
        return offsets, rounds
    ll = c.shared.layout.flatten_outs()
    columns = [b for name in ll.get_in_dim_names() for b in ll.flattened_bases(name)]
    pivots, _ = _gf2.echelon(columns)
    low = len(columns) - ll.get_in_dim_size_log2("reps")
    for flat in range(ll.get_total_out_dim_size()):
        coords = np.unravel_index(flat, sizes, order="F")
        at = np.ravel_multi_index(coords, sizes)
        combo = _gf2.solve(pivots, flat) or 0
        offsets.flat[at] = combo & ((1 << low) - 1)
        rounds.flat[at] = combo >> low
    return offsets, rounds


def conversion_svg(c: TritonConversion, title: str = "") -> str:
    """Source -> shared -> destination as one SVG: owners coloured by thread on both sides,
    the scratch buffer coloured by bank (32 banks of 4 bytes)."""
    src = distributed_owners(c.src)
    dst = distributed_owners(c.dst)
    rows, cols = src[0].shape
    ms, ns = range(min(rows, MAX_SIDE)), range(min(cols, MAX_SIDE))
    width = len(ns) * CELL
    offsets, rounds = scratch_offsets(c)
    body = [f'<text x="{CELL + width / 2}" y="{TITLE + CELL - 8}">source</text>']
    body += owner_cells(src, CELL, TITLE + CELL, ms, ns, value="R")
    x1 = CELL + width + GAP
    body.append(f'<text x="{x1 + width / 2}" y="{TITLE + CELL - 8}">'
                f'{"shared scratch (offset, bank)" if c.shared else "no shared memory"}</text>')
    if c.shared is not None:
        body.append(f'<g transform="translate({x1 - CELL},0)">')
        body += _bank_cells(offsets, max(c.bitwidth, 8), {}, ms, ns)
        body.append("</g>")
        if c.shared.rounds > 1:
            body += [f'<text x="{x1 + (n + 0.5) * CELL}" y="{TITLE + CELL * (m + 2) - 2}" font-size="7">'
                     f'r{rounds[m, n]}</text>' for m in ms for n in ns]
    x2 = x1 + width + GAP
    body.append(f'<text x="{x2 + width / 2}" y="{TITLE + CELL - 8}">destination</text>')
    body += owner_cells(dst, x2, TITLE + CELL, ms, ns, value="R")
    whole = (len(ms), len(ns)) == (rows, cols)
    clipped = "" if whole else f" (top-left {len(ms)}x{len(ns)} of {rows}x{cols})"
    head = title or f"convert_layout through {c.path}: {c.scratch_bytes} bytes of scratch{clipped}"
    return document(x2 + width + CELL, TITLE + (len(ms) + 2) * CELL, head, body)
