"""`show --index I` and `show --offset K`: where one element lives, and what lives at one slot.

>>> from tensorlayout.cli._target import target_from
>>> t = target_from("f32[3,5]{1,0:T(2,2)}")
>>> offset_of(t, (2, 3)), elements_at(t, 17), elements_at(t, 9)
(17, ((2, 3),), ())
>>> elements_at(target_from("((4,2),(4,3)):((4,16),(1,32))"), 37)
((1, 5),)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tensorlayout.cli._io import UsageError
from tensorlayout.cli._target import Target
from tensorlayout.cute import Layout
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.xla import Shape, linear_index, multi_index

__all__ = ["MAX_SEARCHED", "cute_offsets", "elements_at", "offset_of", "parse_index"]

#: Layouts whose digits do not decide an offset uniquely are searched up to this size.
MAX_SEARCHED = 1 << 22

Index = tuple[int, ...]
# One digit of a CuTe layout: (extent, stride, top-level mode, multiplier within the mode).
Digit = tuple[int, int, int, int]


def parse_index(text: str, dims: Sequence[int]) -> Index:
    """`"2,3"` (or `"(2,3)"`; `""` for a scalar) as an index checked against `dims`."""
    body = text.strip().removeprefix("(").removesuffix(")").strip()
    try:
        index = tuple(int(p) for p in body.split(",")) if body else ()
    except ValueError:
        raise UsageError(f"expected an index of {len(dims)} comma-separated integers, "
                         f"but got {text!r}") from None
    if len(index) != len(dims):
        raise UsageError(f"expected an index of {len(dims)} integers for shape "
                         f"[{','.join(map(str, dims))}], but got {text!r}")
    for d, (i, n) in enumerate(zip(index, dims, strict=True)):
        if not 0 <= i < n:
            raise LayoutError(f"index {text.strip()} is out of bounds: dimension {d} has size {n}")
    return index


def offset_of(target: Target, index: Index) -> int:
    """The physical offset of logical `index` (checked by :func:`parse_index`)."""
    lay = target.layout
    if isinstance(lay, Shape):
        return int(linear_index(lay, index))
    cute = lay.layout if isinstance(lay, TlaLayout) else lay
    return int(cute(*index)) if index else int(cute(0))


def _check_slot(target: Target, offset: int) -> None:
    if not 0 <= offset < target.slots:
        raise LayoutError(f"offset {offset} is outside the {target.slots} slots of {target.text}")


def elements_at(target: Target, offset: int) -> tuple[Index, ...]:
    """The logical indices stored at `offset` (none: a padding slot; several: a broadcast)."""
    lay = target.layout
    _check_slot(target, offset)
    if isinstance(lay, Shape):
        try:
            return (tuple(int(i) for i in multi_index(lay, offset)),)
        except LayoutError:  # multi_index's answer for a padding slot
            return ()
    cute = lay.layout if isinstance(lay, TlaLayout) else lay
    found = _cute_elements_at(cute, offset)
    return tuple(i for i in found if all(c < n for c, n in zip(i, target.dims, strict=True)))


def _digits(layout: Layout) -> list[Digit]:
    out = []
    for k, mode in enumerate(layout.modes()):
        mult = 1
        for extent, stride in mode.flat_modes():
            if extent != 1:
                out.append((int(extent), int(stride), k, mult))
            mult *= int(extent)
    return out


def cute_offsets(layout: Layout, idx: np.ndarray) -> np.ndarray:
    """`layout(*i)` for each row `i` of `idx` (top-level coordinates, in bounds), digit by
    digit: any stride, negative or zero, and any size.

    >>> cute_offsets(Layout.parse("((4,2),(4,3)):((4,16),(1,32))"), np.array([[1, 5], [7, 11]])).tolist()
    [37, 95]
    """
    out = np.zeros(len(idx), dtype=np.int64)
    for extent, stride, mode, mult in _digits(layout):
        out += (idx[:, mode] // mult % extent) * stride
    return out


def _decisive(digits: list[Digit]) -> bool:
    """True when every stride is positive and exceeds the reach of all smaller ones (a
    mixed radix): then each offset has at most one digit string, found greedily."""
    reach = 0
    for extent, stride, _, _ in sorted(digits, key=lambda d: d[1]):
        if stride <= reach:
            return False
        reach += (extent - 1) * stride
    return True


def _cute_elements_at(layout: Layout, offset: int) -> tuple[Index, ...]:
    digits = _digits(layout)
    rank = len(layout.modes())
    if _decisive(digits):
        coords, rest = [0] * rank, offset
        for extent, stride, mode, mult in sorted(digits, key=lambda d: -d[1]):
            digit = min(extent - 1, rest // stride)
            rest -= digit * stride
            coords[mode] += digit * mult
        return (tuple(coords),) if rest == 0 else ()
    if layout.size() > MAX_SEARCHED:
        raise UnsupportedError(f"{layout} has {layout.size()} elements and digits that do not "
                               f"decide an offset uniquely; searched only up to {MAX_SEARCHED}")
    hits = np.flatnonzero(layout.offsets() == offset)
    sizes = tuple(int(m.size()) for m in layout.modes())
    return tuple(zip(*(c.tolist() for c in np.unravel_index(hits, sizes, order="F")), strict=True))
