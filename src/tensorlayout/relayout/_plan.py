"""Copy plans: a target's valid range split into boxes of digit values.

A target with digits maps logical coordinates to offsets by a mixed radix per dim. The valid
range ``[0, n)`` of each dim splits into a few boxes of digit values (full tiles, then the
partial tile row, …); for each product of boxes the logical side is a slice of the array
split into digit axes and the physical side a strided view of the buffer. Padding slots form
boxes too, so they are filled without touching the data slots.

>>> from tensorlayout.relayout._target import PhysicalTarget
>>> plan = copy_plan(PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}"))
>>> len(plan.data), plan.tail
(4, (24, 24))
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING

from tensorlayout.core.intmath import prod, row_major_strides
from tensorlayout.core.layout import Digit

if TYPE_CHECKING:  # the target holds its plan (a cached property), so it imports this module
    from tensorlayout.relayout._target import PhysicalTarget

__all__ = ["Box", "Plan", "build_plan", "copy_plan", "has_fast_path", "has_views", "range_boxes"]


@dataclass(frozen=True, slots=True)
class Box:
    """One box of a copy: per extended dim an x range; axes (dim, extent, block, pstride)."""

    ranges: tuple[tuple[int, int], ...]
    axes: tuple[tuple[int, int, int, int], ...]
    offset: int


def range_boxes(lo: int, hi: int, sizes: list[int]) -> list[list[tuple[int, int]]]:
    """``[lo, hi)`` of a mixed-radix number (digit sizes major first) as boxes of digit ranges.

    >>> range_boxes(0, 5, [3, 2])
    [[(0, 2), (0, 2)], [(2, 3), (0, 1)]]
    """
    if lo >= hi:
        return []
    if len(sizes) == 1:
        return [[(lo, hi)]]
    block = prod(sizes[1:])
    a, ra = divmod(lo, block)
    b, rb = divmod(hi, block)
    full = [(0, s) for s in sizes[1:]]
    if a == b:
        return [[(a, a + 1), *bx] for bx in range_boxes(ra, rb, sizes[1:])]
    out: list[list[tuple[int, int]]] = []
    if ra:
        out += [[(a, a + 1), *bx] for bx in range_boxes(ra, block, sizes[1:])]
        a += 1
    if a < b:
        out.append([(a, b), *full])
    if rb:
        out += [[(b, b + 1), *bx] for bx in range_boxes(0, rb, sizes[1:])]
    return out


def _dim_boxes(dim: int, digits: tuple[Digit, ...], lo: int, hi: int) -> list[Box]:
    sizes = [d.extent for d in digits]
    blocks = row_major_strides(sizes)
    out = []
    for box in range_boxes(lo, hi, sizes):
        x0 = sum(a * b for (a, _), b in zip(box, blocks, strict=True))
        x1 = x0 + sum((e - a - 1) * b for (a, e), b in zip(box, blocks, strict=True)) + 1
        axes = tuple((dim, e - a, b, d.stride) for (a, e), b, d in zip(box, blocks, digits, strict=True)
                     if e - a > 1)
        off = sum(a * d.stride for (a, _), d in zip(box, digits, strict=True))
        out.append(Box(((x0, x1),), axes, off))
    return out


def _combine(parts: list[list[Box]]) -> list[Box]:
    out = []
    for combo in product(*parts):
        ranges = tuple(r for b in combo for r in b.ranges)
        axes = tuple(a for b in combo for a in b.axes)
        out.append(Box(ranges, axes, sum(b.offset for b in combo)))
    return out


@dataclass(frozen=True, slots=True)
class Plan:
    data: tuple[Box, ...]
    padding: tuple[Box, ...]
    tail: tuple[int, int]  # padding slots after the digit box: [start, end)
    fill_all: bool  # the digit box is not a dense cover: fill the whole buffer first


def copy_plan(target: PhysicalTarget) -> Plan:
    """The target's copy plan (computed once per target: :attr:`PhysicalTarget.plan`)."""
    return target.plan


def build_plan(target: PhysicalTarget) -> Plan:
    """Boxes of the data and of the padding of a strided target (its digits are not None)."""
    assert target.digits is not None
    all_digits = (*target.leading_digits, *target.digits)
    dims = (1,) * len(target.leading_digits) + target.logical_shape
    full = [prod(d.extent for d in ds) for ds in all_digits]
    valid = [_dim_boxes(k, ds, 0, n) for k, (ds, n) in enumerate(zip(all_digits, dims, strict=True))]
    data = _combine(valid)
    assert target.layout is not None  # (a target with digits has its core layout)
    dense = target.layout.is_dense()
    padding: list[Box] = []
    if dense:
        for k, (ds, n, f) in enumerate(zip(all_digits, dims, full, strict=True)):
            gap = _dim_boxes(k, ds, n, f)
            if gap:
                rest = [_dim_boxes(j, all_digits[j], 0, full[j]) for j in range(k + 1, len(dims))]
                padding += _combine([*valid[:k], gap, *rest])
    return Plan(tuple(data), tuple(padding), (prod(full) if dense else 0, target.physical_elements),
                not dense)


#: numpy's most dims of an array: a target whose tile prepends more (with the logical dims)
#: has no strided view and copies by a gather with offsets.
MAX_VIEW_DIMS = 64


def has_views(target: PhysicalTarget) -> bool:
    """The target's dims (with those a tile prepends) fit a numpy view."""
    return len(target.leading_digits) + len(target.logical_shape) <= MAX_VIEW_DIMS


def has_fast_path(target: PhysicalTarget) -> bool:
    """True when the target copies through strided views (else a gather with offsets)."""
    return target.fast_path
