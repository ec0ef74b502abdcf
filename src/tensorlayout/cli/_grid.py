"""The text `show` prints: a window of the offset grid cut to the screen width, and the
memory order with long runs of padding folded.

XLA shapes print as XLA-style tables (as :func:`tensorlayout.xla.show.format_show` does), CuTe
and TLA layouts as CuTe's `print_layout` boxes; slices of rank > 2 are stacked, and only the
cells shown are computed, so any size works.

>>> from tensorlayout.cli._target import target_from
>>> print("\\n".join(grid_lines(target_from("(8,16):(1,8)"), (range(2, 4), range(5, 16)), 30)))
        5     6     7     8
    +-----+-----+-----+-----+
 2  |  42 |  50 |  58 |  66 |
    +-----+-----+-----+-----+
 3  |  43 |  51 |  59 |  67 |
    +-----+-----+-----+-----+
(columns 9:16 cut at --max-width 30; --window picks them)
>>> print("\\n".join(memory_order_lines(target_from("pred[]{:T(512)}"), 80)))
memory order (offset: logical index; '.' = padding slot):
  0:() 1..511:.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from tensorlayout.cli._target import Target
from tensorlayout.cli._window import Window
from tensorlayout.core.intmath import prod, row_major_coords, show_int
from tensorlayout.core.layout import c_order_indices
from tensorlayout.errors import LayoutError

__all__ = ["MAX_ORDER_LINES", "MAX_ORDER_SLOTS", "MAX_SHOWN", "PADDING_RUN", "grid_lines",
           "memory_order_lines", "window_offsets"]

#: The memory order lists at most this many slots, in at most this many lines.
MAX_ORDER_SLOTS = 4096
MAX_ORDER_LINES = 16
#: A window prints (or lists in JSON) at most this many offsets: 2^20 take about a second, a
#: ``--window :`` over 28 million elements ran for minutes
MAX_SHOWN = 1 << 20
#: Runs of at least this many padding slots print as one `a..b:.` cell.
PADDING_RUN = 8


def window_offsets(target: Target, window: Window) -> np.ndarray:
    """The offsets of every index in `window` in C order: an array of the window's shape, or
    flat when the window has more dims than a numpy array holds."""
    sizes = tuple(max(0, r.stop - r.start) for r in window)  # not len(): it stops at 2**63
    count = prod(sizes)
    if count > MAX_SHOWN:
        raise LayoutError(f"the window holds {show_int(count)} elements; show prints at most "
                          f"{MAX_SHOWN} (--window picks a smaller part)")
    out = target.core.offsets_at(window_indices(window)) if count else np.zeros(0, dtype=np.int64)
    return out.reshape(sizes) if len(sizes) <= MAX_ARRAY_DIMS else out


#: numpy's most dims of an array.
MAX_ARRAY_DIMS = 64


def window_indices(window: Window) -> np.ndarray:
    """Every index of `window` in C order, as rows of an int64 array (one column per dim); the
    work is the window's, whatever its rank.

    >>> window_indices((range(1, 3), range(2))).tolist()
    [[1, 0], [1, 1], [2, 0], [2, 1]]
    """
    sizes = tuple(max(0, r.stop - r.start) for r in window)
    return c_order_indices(sizes) + np.array([r.start for r in window], dtype=np.int64)


def _text_width(values: np.ndarray) -> int:
    return max((len(str(int(v))) for v in (values.min(), values.max())), default=1) if values.size else 1


def _plain(values: np.ndarray, rows: range | None, cols: range, width: int) -> list[str]:
    """XLA style: a header of column indices, one line per row (no row labels for a vector)."""
    row_w = len(str(rows[-1] if rows is not None else 0)) + 2
    lines = [" " * row_w + "".join(f"{c:>{width}}" for c in cols)]
    for k, row in enumerate(values):
        label = f"  {rows[k]:<{row_w - 2}}" if rows is not None else " " * row_w
        lines.append(label + "".join(f"{int(v):>{width}}" for v in row))
    return lines


def _boxed(values: np.ndarray, rows: range, cols: range, width: int) -> list[str]:
    """CuTe's `print_layout`: `+---+` boxes, row labels on the left."""
    label = len(str(max(rows[-1], 0))) + 1
    pad = " " * (label + 2)
    sep = pad + "+" + "+".join("-" * width for _ in cols) + "+"
    lines = [(pad + "".join(f" {j:>{width - 1}} " for j in cols)).rstrip(), sep]
    for k, row in enumerate(values):
        lines.append(f"{rows[k]:>{label}}  |" + "|".join(f"{int(v):>{width - 1}} " for v in row) + "|")
        lines.append(sep)
    return lines


def _cell_width(target: Target, values: np.ndarray, cols: range) -> int:
    if target.notation == "xla":
        return max(_text_width(values), len(str(cols[-1]))) + 1
    return max(_text_width(values) + 2, len(str(cols[-1])) + 1)


def _columns_that_fit(target: Target, rows: range | None, cols: range, width: int, max_width: int) -> int:
    if max_width <= 0:
        return len(cols)
    if target.notation == "xla":
        used, per = len(str(rows[-1] if rows is not None else 0)) + 2, width
    else:
        used, per = len(str(max(rows[-1] if rows is not None else 0, 0))) + 4, width + 1
    return max(1, min(len(cols), (max_width - used) // per))


def _matrix(target: Target, window: Window) -> tuple[Window, range | None, range]:
    """The window as (leading ranges, rows, columns): an XLA vector is one row without row
    labels, a CuTe vector one column (as `print_layout` draws it)."""
    if len(window) >= 2:
        return window[:-2], window[-2], window[-1]
    if target.notation == "xla":
        return (), None, window[0]
    return (), window[0], range(1)


def _slice_values(target: Target, lead: Window, rows: range | None, cols: range) -> np.ndarray:
    if target.notation != "xla" and len(target.dims) == 1:
        assert rows is not None
        return window_offsets(target, (rows,)).reshape(1, -1, 1)
    middle = () if rows is None else (rows,)
    values = window_offsets(target, (*lead, *middle, cols))
    return values.reshape(-1, len(rows) if rows is not None else 1, len(cols))


def grid_lines(target: Target, window: Window, max_width: int) -> list[str]:
    """The offsets of `window` as tables, columns cut to `max_width` (0: no limit)."""
    if not target.dims:
        return [f"offset of the scalar: {int(window_offsets(target, ()))}"]
    if 0 in target.dims:
        return ["(no elements: a dimension has size 0)"]
    lead, rows, cols = _matrix(target, window)
    cap = cols if max_width <= 0 else cols[: max(1, max_width // 2)]
    values = _slice_values(target, lead, rows, cap)
    width = _cell_width(target, values, cap)
    shown = cap[: _columns_that_fit(target, rows, cap, width, max_width)]
    values = values[:, :, : len(shown)]
    lines: list[str] = []
    for k, at in enumerate(itertools.product(*lead)):
        if at:
            lines.append("[" + ",".join(map(str, at)) + ",:,:]")
        if target.notation == "xla" or rows is None:
            lines += _plain(values[k], rows, shown, width)
        else:
            lines += _boxed(values[k], rows, shown, width)
    if shown.stop < cols.stop:  # not len(): a window may hold more than 2**63 columns
        lines.append(f"(columns {shown.stop}:{cols.stop} cut at --max-width {max_width}; "
                     "--window picks them)")
    return lines


def _order_cells(owners: np.ndarray, dims: Sequence[int]) -> list[str]:
    cells, k = [], 0
    while k < len(owners):
        if owners[k] < 0:
            end = k
            while end + 1 < len(owners) and owners[end + 1] < 0:
                end += 1
            run = end - k + 1
            cells += [f"{k}..{end}:."] if run >= PADDING_RUN else [f"{j}:." for j in range(k, end + 1)]
            k = end + 1
            continue
        index = row_major_coords(int(owners[k]), dims)
        cells.append(f"{k}:(" + ",".join(str(int(i)) for i in index) + ")")
        k += 1
    return cells


def _packed(cells: list[str], max_width: int) -> list[list[str]]:
    """Cells eight to a line, fewer when a line would pass `max_width`."""
    rows: list[list[str]] = []
    for cell in cells:
        if not rows or len(rows[-1]) == 8 or (
                max_width > 0 and len("  " + " ".join([*rows[-1], cell])) > max_width):
            rows.append([cell])
        else:
            rows[-1].append(cell)
    return rows


def memory_order_lines(target: Target, max_width: int) -> list[str]:
    """The first slots in memory order (at most `MAX_ORDER_LINES` lines)."""
    n = min(target.slots, MAX_ORDER_SLOTS)
    rows = _packed(_order_cells(target.owners(n), target.dims), max_width)
    lines = ["memory order (offset: logical index; '.' = padding slot):"]
    lines += ["  " + " ".join(row) for row in rows[:MAX_ORDER_LINES]]
    if len(rows) > MAX_ORDER_LINES or n < target.slots:
        first = rows[MAX_ORDER_LINES][0].split(":")[0].split("..")[0] if len(rows) > MAX_ORDER_LINES \
            else str(n)
        lines.append(f"  (slots {first}:{target.slots} not listed: --offset K says what lives at slot K)")
    return lines
