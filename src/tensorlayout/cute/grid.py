"""CuTe's ``print_layout``: a rank-2 layout as a ``+---+`` table with row and column headers.

>>> print(format_grid(Layout.parse("(2,3):(3,1)")))
(2,3):(3,1)
      0   1   2
    +---+---+---+
 0  | 0 | 1 | 2 |
    +---+---+---+
 1  | 3 | 4 | 5 |
    +---+---+---+
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorlayout.cute.basis import CoordLayout, CountingTensor, format_value
from tensorlayout.cute.layout import Layout, size
from tensorlayout.cute.swizzle import ComposedLayout
from tensorlayout.errors import LayoutError

__all__ = ["coord_cells", "format_grid", "grid_values", "print_layout"]


def grid_values(layout: Any) -> np.ndarray:
    """``L(i, j)`` for a rank-2 layout (a rank-1 layout is one column) as a 2-D int array."""
    lay = layout.layout if hasattr(layout, "layout") and hasattr(layout, "origin_shape") else layout
    shape_of = lay
    while isinstance(shape_of, ComposedLayout):
        shape_of = shape_of.inner
    if not isinstance(shape_of, Layout):
        raise LayoutError(f"expected a layout, got {type(layout).__name__}")
    if shape_of.rank() == 1:
        return lay.offsets().reshape(-1, 1)
    if shape_of.rank() != 2:
        raise LayoutError(f"a grid needs a rank-2 layout, got rank {shape_of.rank()}: {lay}")
    m, n = (size(s) for s in shape_of.shape)  # type: ignore[union-attr]
    return lay.offsets().reshape(n, m).T


def print_layout(layout: Any) -> None:
    """Print the table of offsets, as CuTe's ``print_layout`` does (the text: :func:`format_grid`).

    >>> print_layout(Layout.parse("2:1"))
    2:1
          0
        +---+
     0  | 0 |
        +---+
     1  | 1 |
        +---+
    """
    print(format_grid(layout))


def format_grid(layout: Any, *, max_cells: int = 4096, title: str | None = None) -> str:
    """The table of offsets (rows = mode 0, columns = mode 1), headed by the layout's text."""
    if isinstance(layout, (CoordLayout, CountingTensor)):
        cells = coord_cells(layout, max_cells=max_cells)
    else:
        values = grid_values(layout)
        if values.size > max_cells:
            raise LayoutError(f"the grid has {values.shape[0]}x{values.shape[1]} cells, more than "
                              f"max_cells={max_cells}")
        cells = [[str(int(v)) for v in row] for row in values]
    return _table(cells, title if title is not None else str(layout))


def coord_cells(layout: CoordLayout | CountingTensor, *, max_cells: int = 4096) -> list[list[str]]:
    """The printed coordinate of every element, rows = mode 0, columns = the other modes (colex).

    >>> coord_cells(CoordLayout.parse("(2,2):(_1@1,_1@0)"))
    [['(0,0)', '(1,0)'], ['(0,1)', '(1,1)']]
    """
    lay = layout.layout if isinstance(layout, CountingTensor) else layout
    n = int(lay.size())
    rows = int(size(lay.shape[0])) if isinstance(lay.shape, tuple) and lay.shape else n
    if n > max_cells:
        raise LayoutError(f"the grid has {n} cells, more than max_cells={max_cells}")
    cols = n // rows if rows else 0
    return [[format_value(layout(i + rows * j)) for j in range(cols)] for i in range(rows)]


def _table(cells: list[list[str]], title: str) -> str:
    """CuTe's ``+---+`` table of ``cells`` with row and column numbers."""
    rows, cols = len(cells), len(cells[0]) if cells else 0
    width = max([len(c) for row in cells for c in row] + [1]) + 2
    label = len(str(max(rows - 1, 0))) + 1
    pad = " " * (label + 2)
    sep = pad + "+" + "+".join("-" * width for _ in range(cols)) + "+"
    lines = [title]
    lines.append((pad + "".join(f" {j:>{width - 1}} " for j in range(cols))).rstrip())
    lines.append(sep)
    for i in range(rows):
        line = "|".join(f"{c:>{width - 1}} " for c in cells[i])
        lines.append(f"{i:>{label}}  |{line}|")
        lines.append(sep)
    return "\n".join(lines)
