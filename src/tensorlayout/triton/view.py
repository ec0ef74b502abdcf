"""Plain-text pictures of a linear layout, as Triton's ``triton-tensor-layout`` prints them.

``get_distributed_view`` labels every tensor element with the threads and registers that hold
it (``T<thread>:<register>``, ``B<block>:`` when there are several CTAs, ``|`` between copies),
or, in the hardware view, lists per warp and register the element each lane holds.
``get_shared_view`` shows shared-memory offsets. The text matches Triton 3.9's
``getDistributedLayoutStr`` / ``getSharedLayoutStr`` character for character.

>>> from tensorlayout.triton import LinearLayout
>>> ll = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [0, 2]]), ("warp", []),
...                               ("block", [])], ["dim0", "dim1"])
>>> print(get_distributed_view(ll), end="")
[[T0:0, T0:1, T2:0, T2:1]
[ T1:0, T1:1, T3:0, T3:1]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tensorlayout.errors import LayoutError, UnsupportedError

if TYPE_CHECKING:
    from tensorlayout.triton.linear_layout import LinearLayout


@runtime_checkable
class _Drawable(Protocol):
    """What a picture reads of a layout (this module cannot import LinearLayout at run time)."""

    def has_in_dim(self, name: str) -> bool: ...
    def apply(self, ins: Any) -> dict[str, int]: ...
    def get_out_dim_sizes(self) -> list[int]: ...

__all__ = ["MAX_DRAWN", "get_distributed_view", "get_shared_view"]

#: The most (input points, tensor elements) a picture enumerates.
MAX_DRAWN = 1 << 20


def _pad(value: int, limit: int) -> int:
    """Triton's ``numCharacterPadding``: spaces that right-align ``value`` to ``limit``'s digits."""
    return len(str(limit)) - len(str(value))


def _padded(value: int, limit: int) -> str:
    return " " * _pad(value, limit) + str(value)


def _require(ll: LinearLayout, names: list[str], what: str) -> None:
    if not isinstance(ll, _Drawable):
        raise LayoutError(f"{what} needs a LinearLayout, got {type(ll).__name__}")
    missing = [n for n in names if not ll.has_in_dim(n)]
    if missing:
        raise LayoutError(f"{what} needs the in dims {names}; this layout lacks {missing}")
    if ll.num_out_dims == 0:
        raise LayoutError(f"{what} needs at least one out dim")
    if max(ll.get_total_in_dim_size(), ll.get_total_out_dim_size()) > MAX_DRAWN:
        raise UnsupportedError(f"{what}: the layout is too large to draw (over {MAX_DRAWN} points)")


def _row_major(coords: list[int], shape: list[int]) -> int:
    index = 0
    for c, s in zip(coords, shape):
        index = index * s + c
    return index


def _tensor_text(cells: list[str], shape: list[int], sep: str) -> str:
    """Cells in row-major order, one innermost row per line, with Triton's brackets."""
    rank, out, new_line = len(shape), [], True
    for i, cell in enumerate(cells):
        opened = _boundaries(i, shape)
        out.append("[" * opened)
        if new_line:
            out.append(" " * (rank - opened))
            new_line = False
        out.append(cell)
        closed = _boundaries(i + 1, shape)
        out.append("]" * closed)
        if (i + 1) % shape[-1] == 0:
            out.append("\n")
            new_line = True
        else:
            out.append(sep)
    return "".join(out)


def _boundaries(index: int, shape: list[int]) -> int:
    """How many trailing dims of the row-major ``index`` are 0 (where brackets open or close)."""
    count = 0
    for size in reversed(shape):
        if index % size:
            break
        count += 1
        index //= size
    return count


def get_distributed_view(ll: LinearLayout, use_hw_point_of_view: bool = False) -> str:
    """Triton's distributed-layout picture (``LinearLayout.get_distributed_view``).

    >>> from tensorlayout.triton import BlockedLayout
    >>> ll = BlockedLayout([1, 2], [2, 2], [1, 1], [1, 0]).to_linear_layout([2, 4])
    >>> print(get_distributed_view(ll, True), end="")
    Warp0:
    (0,0), (0,2), (1,0), (1,2)
    (0,1), (0,3), (1,1), (1,3)
    """
    _require(ll, ["register", "lane", "warp", "block"], "a distributed view")
    shape = ll.get_out_dim_sizes()
    lanes, warps = ll.get_in_dim_size("lane"), ll.get_in_dim_size("warp")
    blocks, regs = ll.get_in_dim_size("block"), ll.get_in_dim_size("register")
    holders: list[list[str]] = [[] for _ in range(ll.get_total_out_dim_size())]  # labels of each cell
    owned: list[str] = []
    for block in range(blocks):
        for warp in range(warps):
            for lane in range(lanes):
                thread = lane + warp * lanes
                for reg in range(regs):
                    point = {"block": block, "warp": warp, "lane": lane, "register": reg}
                    out = list(ll.apply(point).values())
                    pad = _pad(block, blocks) + _pad(thread, warps * lanes) + _pad(reg, regs)
                    label = (f"B{block}:" if blocks > 1 else "") + f"T{thread}:{reg}"
                    holders[_row_major(out, shape)].append(" " * pad + label)
                    owned.append("(" + ",".join(_padded(o, s) for o, s in zip(out, shape)) + ")")
    if not use_hw_point_of_view:
        return _tensor_text(["|".join(labels) for labels in holders], shape, ", ")
    lines = []
    for block in range(blocks):
        if blocks > 1:
            lines.append(f"Block{block}:\n")
        for warp in range(warps):
            lines.append(f"Warp{warp}:\n")
            base = (block * warps + warp) * lanes * regs
            for reg in range(regs):
                lines.append(", ".join(owned[base + lane * regs + reg] for lane in range(lanes)) + "\n")
    return "".join(lines)


def get_shared_view(ll: LinearLayout, use_hw_point_of_view: bool = False) -> str:
    """Triton's shared-layout picture (``LinearLayout.get_shared_view``).

    Quirk kept from Triton: the tensor view is laid out by *offset*, each cell giving the
    ``(dim0:dim1:...)`` element stored at that offset.

    >>> from tensorlayout.triton import SwizzledSharedLayout
    >>> ll = SwizzledSharedLayout(1, 1, 2, [1, 0]).to_linear_layout([2, 2])
    >>> print(get_shared_view(ll), end="")
    [[(0:0),(0:1)]
    [ (1:1),(1:0)]]
    """
    _require(ll, ["offset", "block"], "a shared view")
    shape = ll.get_out_dim_sizes()
    total, blocks = ll.get_total_out_dim_size(), ll.get_in_dim_size("block")
    per_block = total // blocks
    cells, lines = [], []
    for block in range(blocks):
        if use_hw_point_of_view:
            lines.append(f"Block: {block}:\n")
        for offset in range(per_block):
            out = list(ll.apply({"block": block, "offset": offset}).values())
            cells.append("(" + ":".join(_padded(o, s) for o, s in zip(out, shape)) + ")")
            where = "(" + ",".join(_padded(o, s) for o, s in zip(out, shape)) + ")"
            lines.append(f"Offset: {offset} -> {where}\n")
    if use_hw_point_of_view:
        return "".join(lines)
    cells += [""] * (total - len(cells))
    return _tensor_text(cells, shape, ",")
