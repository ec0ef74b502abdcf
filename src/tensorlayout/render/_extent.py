"""Which part of a layout a picture draws: a window of its logical index space, cut so that
the cuts fall on tile boundaries.

The grid is the array viewed as 2-D (rows: all dims but the last, flattened in C order;
columns: the last dim). Past :data:`MAX_CELLS` rows or columns the picture keeps the largest
count that ends on a tile boundary, or, when one tile is larger than that, one whole tile (up
to :data:`MAX_SIDE`), so a picture never shows part of a tile when a whole one fits.

>>> e = extent((16, 256), (8, 128))          # bf16[16,256] with 8x128 TPU tiles
>>> e.rows, e.cols, e.cut_tile
(16, range(0, 128), False)
>>> extent((16, 256), (8, 128), (range(0, 8), range(100, 116))).cols
range(100, 116)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.errors import LayoutError

__all__ = ["MAX_CELLS", "MAX_SIDE", "Extent", "Window", "check_window", "extent", "window_text"]

MAX_CELLS = 64  # rows and columns of the grid drawn at most, unless whole tiles need more
MAX_SIDE = 256  # rows and columns drawn at most to show one whole tile

#: One half-open ``range`` (step 1) per logical dim.
Window = tuple[range, ...]


@dataclass(frozen=True)
class Extent:
    """The drawn part: ``lead`` the window of all dims but the last, ``rows`` how many of its
    C-order rows are drawn, ``cols`` the drawn range of the last dim; ``cut_tile`` says a cut
    falls inside a tile (a tile larger than :data:`MAX_SIDE`)."""

    lead: tuple[range, ...]
    rows: int
    cols: range
    rows_all: int
    cols_all: int
    cut_tile: bool = False

    def lead_index(self) -> np.ndarray:
        """The leading index of every drawn row, ``(rows, rank - 1)`` int64: C-order digits of
        the row number, unravelled here because at most :data:`MAX_SIDE` rows are drawn while
        the window's own size may be past what numpy can index (an empty ``(2^24, 2^43, 0)``).

        >>> Extent((range(0, 2), range(5, 8)), 4, range(1), 6, 1).lead_index().tolist()
        [[0, 5], [0, 6], [0, 7], [1, 5]]
        """
        out = np.zeros((self.rows, len(self.lead)), dtype=np.int64)
        for row in range(self.rows):
            rest = row
            for d in range(len(self.lead) - 1, -1, -1):
                rest, digit = divmod(rest, len(self.lead[d]))
                out[row, d] = self.lead[d].start + digit
        return out


def window_text(window: Sequence[range]) -> str:
    """``[0:8,100:116]``, as ``--window`` takes it.

    >>> window_text((range(0, 8), range(100, 116)))
    '[0:8,100:116]'
    """
    return "[" + ",".join(f"{r.start}:{r.stop}" for r in window) + "]"


def check_window(window: Sequence[range], shape: Sequence[int]) -> Window:
    """``window`` as a :data:`Window` of ``shape``: one non-empty step-1 range per dim, inside it.

    >>> check_window([range(2, 3)], (4, 8))
    Traceback (most recent call last):
    tensorlayout.errors.LayoutError: a window of 1 ranges for a layout of rank 2 (dims [4, 8])
    """
    if len(window) != len(shape):
        raise LayoutError(f"a window of {len(window)} ranges for a layout of rank {len(shape)} "
                          f"(dims {list(shape)})")
    for d, (r, n) in enumerate(zip(window, shape)):
        if not isinstance(r, range) or r.step != 1 or not 0 <= r.start < r.stop <= n:
            raise LayoutError(f"window part {r!r} of dim {d} is not a non-empty range inside 0:{n}")
    return tuple(window)


def _cut(length: int, clean: Callable[[int], bool]) -> tuple[int, bool]:
    """How many of ``length`` rows/columns to draw, and whether that cuts a tile: all of them
    up to MAX_CELLS; else the most up to MAX_CELLS ending cleanly, else the fewest up to
    MAX_SIDE ending cleanly, else MAX_CELLS."""
    if length <= MAX_CELLS:
        return length, False
    below = next((c for c in range(MAX_CELLS, 0, -1) if clean(c)), None)
    if below is not None:
        return below, False
    above = next((c for c in range(MAX_CELLS + 1, min(length, MAX_SIDE) + 1) if clean(c)), None)
    return (above, False) if above is not None else (MAX_CELLS, True)


def extent(shape: tuple[int, ...], split: tuple[int, ...] | None,
           window: Sequence[range] | None = None) -> Extent:
    """The part of ``shape`` drawn: ``window`` (default: all of it), capped on tile boundaries
    (``split``: the tile extent per dim, None without tiles)."""
    win = check_window(window, shape) if window is not None else tuple(range(n) for n in shape)
    if not shape:
        return Extent((), 1, range(1), 1, 1)
    if 0 in shape:
        return Extent(win[:-1], 0, range(0), 0, 0)
    tiles = split or (1,) * len(shape)
    last = win[-1]
    cols, cut_c = _cut(len(last), lambda c: (last.start + c) % tiles[-1] == 0 or last.start + c == shape[-1])
    lead = win[:-1]
    rows_all = prod(len(r) for r in lead)
    if not lead:
        return Extent((), 1, range(last.start, last.start + cols), 1, len(last), cut_c)
    inner = lead[-1]

    def clean_row(r: int) -> bool:
        pos = r % len(inner)
        return pos == 0 or (inner.start + pos) % tiles[-2] == 0 or inner.start + pos == shape[-2]

    rows, cut_r = _cut(rows_all, clean_row)
    return Extent(lead, rows, range(last.start, last.start + cols), rows_all, len(last), cut_c or cut_r)
