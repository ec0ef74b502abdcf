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

from tensorlayout._lazy import lazy_modules
from tensorlayout.cli._facts import lookup_index, lookup_offset
from tensorlayout.cli._io import UsageError
from tensorlayout.cli._target import Target
from tensorlayout.errors import LayoutError, UnsupportedError

__all__ = ["MAX_SEARCHED", "elements_at", "lookups", "offset_of", "parse_index"]

#: XLA's per-call index math, loaded for an XLA shape only
_lazy = lazy_modules({"xla_index": "tensorlayout.xla.index_math"})

#: Layouts whose digits do not decide an offset uniquely are searched up to this size.
MAX_SEARCHED = 1 << 22

Index = tuple[int, ...]


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
    if target.notation == "xla":
        return int(_lazy("xla_index").linear_index(target.layout, index))
    return target.core.offset(index)


def _check_slot(target: Target, offset: int) -> None:
    if not 0 <= offset < target.slots:
        raise LayoutError(f"offset {offset} is outside the {target.slots} slots of {target.text}")


def elements_at(target: Target, offset: int) -> tuple[Index, ...]:
    """The logical indices stored at `offset` (none: a padding slot; several: a broadcast)."""
    lay = target.layout
    _check_slot(target, offset)
    if target.notation == "xla":
        try:
            return (tuple(int(i) for i in _lazy("xla_index").multi_index(lay, offset)),)
        except LayoutError:  # multi_index's answer for a padding slot
            return ()
    core = target.core
    if core.elements > MAX_SEARCHED and not core.decides_indices():
        raise UnsupportedError(f"{target.text} has {core.elements} elements and digits that do not "
                               f"decide an offset uniquely; searched only up to {MAX_SEARCHED}")
    return core.indices_at(offset)


def lookups(target: Target, indices: Sequence[str] | None, offsets: Sequence[int] | None
            ) -> tuple[list[str], list[dict[str, object]]]:
    """The lines `show --index I --offset K` prints and their `--json` records, in that order.

    >>> from tensorlayout.cli._target import target_from
    >>> lookups(target_from("f32[3,5]{1,0:T(2,2)}"), ["2,3"], [9])[0]
    ['index (2,3): offset 17', 'offset 9: padding']
    """
    if not target.has_grid:
        raise UsageError(f"{target.text} is not one static array: --index and --offset need one")
    lines, records = [], []
    for text in indices or ():
        index = parse_index(text, target.dims)
        offset = offset_of(target, index)
        lines.append(f"index ({','.join(map(str, index))}): offset {offset}")
        records.append(lookup_index(index, offset))
    for offset in offsets or ():
        found = elements_at(target, offset)
        where = " ".join("index (" + ",".join(map(str, i)) + ")" for i in found) or "padding"
        lines.append(f"offset {offset}: {where}")
        records.append(lookup_offset(offset, found))
    return lines, records
