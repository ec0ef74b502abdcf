"""What ``tensorlayout show`` prints for an XLA shape: the seed's Figure 1 in a terminal.

>>> from tensorlayout.xla.shape import parse_shape
>>> print(format_show(parse_shape("f32[3,5]{1,0:T(2,2)}")))  # doctest: +ELLIPSIS
f32[3,5]{1,0:T(2,2)}
  element type   f32 (32 bits)
  memory space   S(0) HBM (default device memory)
  tiled shape    [2,3,2,2] (pad -> reshape -> transpose of the physical dims)
  bytes          60 logical (ByteSizeOf), 96 allocated (ArraySize), overhead 1.60x
<BLANKLINE>
offset of each element (rows = dim 0, columns = dim 1):
      0   1   2   3   4
  0   0   1   4   5   8
  1   2   3   6   7  10
  2  12  13  16  17  20
<BLANKLINE>
memory order (offset: logical index; '.' = padding slot):
  0:(0,0) 1:(0,1) 2:(1,0) 3:(1,1) 4:(0,2) 5:(0,3) 6:(1,2) 7:(1,3)
  8:(0,4) 9:. 10:(1,4) 11:. 12:(2,0) 13:(2,1) 14:. 15:.
  16:(2,2) 17:(2,3) 18:. 19:. 20:(2,4) 21:. 22:. 23:.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorlayout.core.intmath import nested_lists, prod, row_major_coords
from tensorlayout.errors import LayoutError
from tensorlayout.xla.advice import layout_warnings
from tensorlayout.xla.layout import memory_space_name
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape
from tensorlayout.xla.sizes import array_size, byte_size, padding_overhead
from tensorlayout.xla.tiling import allocated_elements, linear_indices, tiled_shape

__all__ = ["describe", "format_show", "format_summary"]

#: Grids and memory strips are printed in full up to this many slots.
MAX_SHOWN = 4096


def describe(shape: Shape, *, with_offsets: bool = True) -> dict[str, Any]:
    """The facts ``show --json`` prints: dims, layout, tiling, sizes, offsets, memory order (the
    last two only ``with_offsets``)."""
    facts: dict[str, Any] = {"shape": str(shape), "kind": shape.kind}
    if not shape.is_array:
        facts["byte_size"] = byte_size(shape)
        if shape.is_tuple:
            facts["elements"] = [describe(s, with_offsets=with_offsets) for s in shape.tuple_shapes]
        return facts
    layout = shape.layout
    assert layout is not None
    facts.update(
        element_type=shape.element_type.name,
        bit_width=shape.bit_width,
        dimensions=list(shape.dimensions),
        minor_to_major=list(layout.minor_to_major),
        tiles=[list(t.dims) for t in layout.tiles],
        memory_space=layout.memory_space,
        memory_space_name=memory_space_name(layout.memory_space),
    )
    if any(d == UNBOUNDED_SIZE for d in shape.dimensions):  # '?' has no size
        facts.update(byte_size=None, array_size=None, padding_overhead=None)
        return facts
    facts.update(byte_size=byte_size(shape), array_size=array_size(shape),
                 padding_overhead=padding_overhead(shape))
    if shape.is_dynamic:
        return facts
    facts["tiled_shape"] = list(tiled_shape(shape))
    slots = allocated_elements(shape)
    facts["allocated_elements"] = slots
    if not with_offsets:
        return facts
    # the lists count too: an empty s32[3,2147483648,0] nests 6e9 of them, bf16[2**62,0,2] 2**62
    dims = list(shape.dimensions)
    lists = prod(dims[:dims.index(0)] if 0 in dims else dims[:-1])
    if slots <= MAX_SHOWN and lists <= MAX_SHOWN:
        offsets = linear_indices(shape)
        facts["offsets"] = nested_lists(offsets.tolist(), shape.dimensions)
        order: list[list[int] | None] = [None] * slots
        for k, off in enumerate(offsets.tolist()):  # (any rank: np.ndindex stops at 32 dims)
            order[off] = list(row_major_coords(k, shape.dimensions))
        facts["memory_order"] = order
    return facts


def format_show(shape: Shape) -> str:
    """Human-readable description (see the module docstring for an example)."""
    facts = describe(shape)
    lines = [str(shape)]
    if not shape.is_array:
        lines.append(f"  kind           {shape.kind}")
        lines.append(f"  bytes          {facts['byte_size']} (ByteSizeOf)")
        for sub in shape.tuple_shapes:
            lines += ["", *format_show(sub).splitlines()]
        return "\n".join(lines)
    lines += _summary(shape, facts)
    if "offsets" not in facts:
        if "allocated_elements" in facts:
            lines.append(f"  ({facts['allocated_elements']} slots: too many to draw; "
                         f"at most {MAX_SHOWN})")
        return "\n".join(lines)
    if 0 in shape.dimensions:  # no table of 2**32 empty columns
        return "\n".join([*lines, "", "(no elements: a dimension has size 0)"])
    lines += ["", *_grid(linear_indices(shape), shape.dimensions)]
    lines += ["", "memory order (offset: logical index; '.' = padding slot):"]
    cells = [f"{k}:" + ("." if idx is None else "(" + ",".join(map(str, idx)) + ")")
             for k, idx in enumerate(facts["memory_order"])]
    for start in range(0, len(cells), 8):
        lines.append("  " + " ".join(cells[start:start + 8]))
    return "\n".join(lines)


def format_summary(shape: Shape) -> str:
    """The lines :func:`format_show` prints above its grid for an array shape (its text, element
    type, memory space, tiled shape, bytes and warnings), without listing any offset.

    >>> from tensorlayout.xla.shape import parse_shape
    >>> print(format_summary(parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}")))
    bf16[16,256]{1,0:T(8,128)(2,1)}
      element type   bf16 (16 bits)
      memory space   S(0) HBM (default device memory)
      tiled shape    [2,2,4,128,2,1] (pad -> reshape -> transpose of the physical dims)
      bytes          8192 logical (ByteSizeOf), 8192 allocated (ArraySize), overhead 1.00x
    """
    if not shape.is_array:
        raise LayoutError(f"expected an array shape, but got {shape}")
    return "\n".join([str(shape), *_summary(shape, describe(shape, with_offsets=False))])


def _summary(shape: Shape, facts: dict[str, Any]) -> list[str]:
    """An array's summary lines from its facts."""
    space = facts["memory_space"]
    lines = [
        f"  element type   {facts['element_type']} ({facts['bit_width']} bits)",
        f"  memory space   S({space}) {facts['memory_space_name']}",
    ]
    if "tiled_shape" in facts:
        tiled = ",".join(map(str, facts["tiled_shape"]))
        lines.append(f"  tiled shape    [{tiled}] (pad -> reshape -> transpose of the physical dims)")
    if facts["byte_size"] is None:
        lines.append("  bytes          unknown: an unbounded dynamic dimension '?' has no size")
    else:
        lines.append(f"  bytes          {facts['byte_size']} logical (ByteSizeOf), "
                     f"{facts['array_size']} allocated (ArraySize), "
                     f"overhead {facts['padding_overhead']:.2f}x")
    return lines + [f"  warning        {w}" for w in layout_warnings(shape)]


def _grid(offsets: np.ndarray, dims: Sequence[int]) -> list[str]:
    """The row-major ``offsets`` of ``dims`` as tables (any rank: one table per leading index)."""
    rank = len(dims)
    if rank == 0:
        return [f"offset of the scalar: {int(offsets[0])}"]
    if rank == 1:
        header = "offset of each element (one row, columns = dim 0):"
        return [header, *_table(offsets.reshape(1, -1), show_rows=False)]
    lines = [f"offset of each element (rows = dim {rank - 2}, columns = dim {rank - 1}):"]
    tables = offsets.reshape(-1, dims[-2], dims[-1])
    for k, lead in enumerate(itertools.product(*(range(n) for n in dims[:-2]))):
        if lead:
            lines.append(f"[{','.join(map(str, lead))},:,:]")
        lines += _table(tables[k], show_rows=True)
    return lines


def _table(grid: np.ndarray, show_rows: bool) -> list[str]:
    width = max(len(str(int(grid.max()))) if grid.size else 1, len(str(grid.shape[1] - 1))) + 1
    row_w = len(str(grid.shape[0] - 1)) + 2
    head = " " * row_w + "".join(f"{c:>{width}}" for c in range(grid.shape[1]))
    rows = []
    for r in range(grid.shape[0]):
        label = f"  {r:<{row_w - 2}}" if show_rows else " " * row_w
        rows.append(label + "".join(f"{int(v):>{width}}" for v in grid[r]))
    return [head, *rows]
