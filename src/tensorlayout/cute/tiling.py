"""CuTe's divides and products (logical, zipped, tiled, flat, blocked, raked), tile_to_shape and
the tensor-level local_tile / local_partition, with C++ semantics.

>>> str(logical_divide(Layout.parse("(4,2,3):(2,1,8)"), "4:2"))
'((2,2),(2,3)):((4,1),(2,8))'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.coalescing import layout_of_lists
from tensorlayout.cute.compose import Tiler, _compose_plain, _layout_arg, _readable, _require_extents, _tiler
from tensorlayout.cute.coords import idx2crd
from tensorlayout.cute.int_tuple import IntTuple
from tensorlayout.cute.inverses import _complement, _complement_modes
from tensorlayout.cute.layout import (
    Layout,
    _as_modes,
    _concat,
    _mk,
    cosize,
    make_layout,
    make_ordered_layout,
)
from tensorlayout.errors import AlgebraError, LayoutError

__all__ = [
    "blocked_product", "flat_divide", "flat_product", "local_partition", "local_tile", "logical_divide",
    "logical_product", "raked_product", "tile_to_shape", "tiled_divide", "tiled_product", "zipped_divide",
    "zipped_product",
]


# ---------------------------------------------------------------- divides


def _divide_by_mode(a: Layout, t: Any, op: Any) -> Layout:
    if isinstance(t, tuple):
        modes = _as_modes(a)
        if len(t) > len(modes):
            raise AlgebraError(f"tiler of rank {len(t)} is longer than {a} (rank {len(modes)})")
        return _concat(_divide_by_mode(m, t[i], op) if i < len(t) else m for i, m in enumerate(modes))
    if t is it._:
        return a
    return op(a, t)


def _divide_layout(a: Layout, b: Layout) -> Layout:
    c = _complement(b, it.product(a._shape))
    return _compose_plain(a, _mk((b._shape, c._shape), (b._stride, c._stride)))


def logical_divide(a: Layout, tiler: Tiler) -> Layout:
    """``A ∘ (B, complement(B, size A))``: (the tile, the layout of tiles); tuple tilers work by mode.

    >>> str(logical_divide(Layout.parse("(6,8):(8,1)"), (3, 4)))
    '((3,2),(4,2)):((8,24),(1,4))'
    """
    a = a if isinstance(a, Layout) else Layout.parse(a)
    if type(tiler) is Layout:
        return _readable(_divide_layout(a, tiler), "logical_divide")
    return _readable(_divide_by_mode(a, _tiler(tiler), _divide_layout), "logical_divide")


def _zip2(layout: Layout, t: Any) -> tuple[Layout, Layout]:
    """Split a by-mode result into (the tiles, the rests), C++'s ``zip2_by``.

    A layout or ``_`` entry of the guide takes a rank-2 mode apart; a tuple entry recurses.
    """
    modes = _as_modes(layout)
    if not isinstance(t, tuple):
        if len(modes) != 2 or not isinstance(layout.shape, tuple):
            raise AlgebraError(f"zip2_by: the mode {layout} under a '_' tiler entry must have rank 2 "
                               "(C++ rejects it at compile time)")
        return modes[0], modes[1]
    if len(t) > len(modes):
        raise AlgebraError(f"zip2_by: tiler of rank {len(t)} is longer than {layout}")
    firsts: list[Layout] = []
    rests: list[Layout] = []
    for m, ti in zip(modes, t):
        f, r = _zip2(m, ti)
        firsts.append(f)
        rests.append(r)
    return _concat(firsts), _concat(rests + list(modes[len(t):]))


def _unpack(layout: Layout) -> list[Layout]:
    """The modes C++'s ``result(_, repeat<R>(_))`` lifts: a rank-1 mode (an int or a 1-tuple) stays whole."""
    if isinstance(layout.shape, tuple) and len(layout.shape) != 1:
        return list(layout.modes())
    return [layout]


def _zipped(logical: Any, a: Layout, tiler: Tiler) -> Layout:
    """``((T…),(R…,L…))`` from a by-mode logical divide or product."""
    t = _tiler(tiler)
    if isinstance(t, Layout):
        return logical(a, t)
    tiles, rests = _zip2(logical(a, t), t)
    return _concat([tiles, rests])


def _tiled(z: Layout) -> Layout:
    """``((T…),R…,L…)``: mode 1 of a zipped result unpacked."""
    return _concat([z[0], *_unpack(z[1])])


def _flat(z: Layout) -> Layout:
    """``(T…,R…,L…)``: both modes of a zipped result unpacked."""
    return _concat([*_unpack(z[0]), *_unpack(z[1])])


def zipped_divide(a: Layout, tiler: Tiler) -> Layout:
    """``((TM,TN),(RM,RN,L…))``."""
    return _zipped(logical_divide, a, tiler)


def tiled_divide(a: Layout, tiler: Tiler) -> Layout:
    """``((TM,TN),RM,RN,L…)``."""
    return _tiled(zipped_divide(a, tiler))


def flat_divide(a: Layout, tiler: Tiler) -> Layout:
    """``(TM,TN,RM,RN,L…)``."""
    return _flat(zipped_divide(a, tiler))


# ---------------------------------------------------------------- products


def _tiles(a: Layout, b: Layout) -> Layout:
    """Mode 1 of ``logical_product(a, b)``: ``complement(a, size(a)·cosize(b)) ∘ b``."""
    shapes, strides, _ = _complement_modes(a, it.product(a._shape) * cosize(b), False)
    comp = layout_of_lists(shapes, strides)
    if not shapes:  # 1:0, whose composition extends it to 2:0 (see _coalesce_x)
        return _compose_plain(comp, b)
    if 0 in shapes:
        _require_extents(comp, "composition")
    return _compose_plain(comp, b, (shapes, strides))  # coalesced already: its own _coalesce_x


def _product_layout(a: Layout, b: Layout) -> Layout:
    c = _tiles(a, b)
    return _mk((a._shape, c._shape), (a._stride, c._stride))


def logical_product(a: Layout, tiler: Tiler) -> Layout:
    """``(A, complement(A, size A · cosize B) ∘ B)``; tuple tilers work by mode.

    >>> str(logical_product(Layout.parse("(2,2):(4,1)"), 6))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    return _readable(_logical_product(a, tiler), "logical_product")


def _logical_product(a: Layout, tiler: Tiler) -> Layout:
    """:func:`logical_product` without the result check."""
    a = a if isinstance(a, Layout) else Layout.parse(a)
    if type(tiler) is Layout:
        return _product_layout(a, tiler)
    return _divide_by_mode(a, _tiler(tiler), _product_layout)


def zipped_product(a: Layout, tiler: Tiler) -> Layout:
    """``((M,N),(TM,TN,L…))``."""
    return _zipped(logical_product, a, tiler)


def tiled_product(a: Layout, tiler: Tiler) -> Layout:
    """``((M,N),TM,TN,L…)``."""
    return _tiled(zipped_product(a, tiler))


def flat_product(a: Layout, tiler: Tiler) -> Layout:
    """``(M,N,TM,TN,L…)``."""
    return _flat(zipped_product(a, tiler))


def _rank(shape: Any) -> int:
    return len(shape) if type(shape) is tuple else 1


def _pad_rank(layout: Layout, r: int) -> Layout:
    """C++'s ``append<r>``: pad with ``1:0`` modes up to rank ``r`` (a layout of rank r stays as is)."""
    shape: Any = layout._shape
    stride: Any = layout._stride
    pad = r - _rank(shape)
    if pad <= 0:
        return layout
    if type(shape) is not tuple:
        shape, stride = (shape,), (stride,)
    return _mk(shape + (1,) * pad, stride + (0,) * pad)


def _zip_pair(x: Layout, y: Layout) -> Layout:
    """C++'s ``zip(x, y)``: ``((x0,y0),(x1,y1),…)`` when ``x`` is a tuple, else ``((x,y))``."""
    xs: Any = x._shape
    ys: Any = y._shape
    xd: Any = x._stride
    yd: Any = y._stride
    if type(xs) is not tuple:
        return _mk(((xs, ys),), ((xd, yd),))
    if type(ys) is not tuple or len(ys) != len(xs):
        raise AlgebraError(f"zip: {x} and {y} have mismatched ranks")
    shapes = []
    strides = []
    i = 0
    for s in xs:
        shapes.append((s, ys[i]))
        strides.append((xd[i], yd[i]))
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
    return _mk(tuple(shapes), tuple(strides))


def blocked_product(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` is ``(A_i, tile_i)``: ``b`` arranges copies of the block ``a``.

    >>> str(blocked_product(Layout.parse("(3,4):(4,1)"), Layout.parse("(2,5):(1,2)")))
    '((3,2),(4,5)):((4,12),(1,24))'
    """
    return _readable(_blocked_product(_layout_arg(a), _layout_arg(b)), "blocked_product")


def _padded_product(a: Layout, b: Layout) -> tuple[Layout, Layout]:
    """The two modes of ``logical_product`` of ``a`` and ``b`` padded to equal rank (C++'s
    ``append<r>``): (the block, the tiles)."""
    ra, rb = _rank(a._shape), _rank(b._shape)
    r = ra if ra > rb else rb
    block = _pad_rank(a, r)
    return block, _tiles(block, _pad_rank(b, r))


def _blocked_product(a: Layout, b: Layout) -> Layout:
    """:func:`blocked_product` without the argument and result checks."""
    block, tiles = _padded_product(a, b)
    return _zip_pair(block, tiles)


def raked_product(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` is ``(tile_i, A_i)``: an interleaved (cyclic) arrangement."""
    block, tiles = _padded_product(_layout_arg(a), _layout_arg(b))
    return _readable(_zip_pair(tiles, block), "raked_product")


def tile_to_shape(a: Layout, target: IntTuple, order: IntTuple | str | None = None) -> Layout:
    """Repeat the block ``a`` to fill ``target`` (each extent must be a multiple of the block's).

    >>> str(tile_to_shape(Layout.parse("(2,2):(1,2)"), (8, 8)))
    '((2,4),(2,4)):((1,4),(2,16))'
    """
    a = _layout_arg(a)
    if not it._valid(target):
        raise LayoutError(f"tile_to_shape: the target must be a shape, got {it.describe(target)}")
    trg = target if isinstance(target, tuple) else (target,)
    a = _pad_rank(a, len(trg))
    counts = []
    for i, (m, t) in enumerate(zip(_as_modes(a), trg)):
        n, ts = m.size(), it.product(t)
        if n == 0 or ts % n:
            raise AlgebraError(f"tile_to_shape: mode {i} of the block has size {n}, which does not "
                               f"divide the target extent {ts}")
        counts.append(ts // n)
    shape = tuple(counts)
    if order is None or (isinstance(order, str) and order == "LayoutLeft"):
        tiles = make_layout(shape)
    elif isinstance(order, str) and order == "LayoutRight":
        tiles = make_layout(shape, "LayoutRight")
    else:
        tiles = make_ordered_layout(shape, order)  # type: ignore[arg-type]
    return _readable(_blocked_product(a, tiles), "tile_to_shape")


# ---------------------------------------------------------------- tensor-level partitioning


def local_tile(layout: Layout, tiler: Tiler, coord: Sequence[int] | int) -> tuple[Layout, int]:
    """The tile at ``coord`` of ``zipped_divide(layout, tiler)``: (tile layout, its offset)."""
    z = zipped_divide(layout, tiler)
    return z[0], z[1](tuple(coord) if isinstance(coord, list) else coord)


def local_partition(layout: Layout, threads: Layout, index: int) -> tuple[Layout, int]:
    """Thread ``index``'s elements when ``threads`` tiles ``layout``: (its layout, its offset)."""
    threads = _layout_arg(threads)
    z = zipped_divide(layout, threads.shape if isinstance(threads.shape, tuple) else (threads.shape,))
    return z[1], z[0](idx2crd(index, threads.shape))
