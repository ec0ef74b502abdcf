"""The padding of a copy plan as boxes of bytes (offset, shape, strides), in the order to fill them:
axes by falling stride, the runs that continue each other merged (``fill_order``), and near runs
widened to one (``dense_box``) where the fill comes before the data.

>>> fill_order((0, (2, 8, 4), (4, 64, 1)))
(0, (8, 8), (64, 1))
"""

from __future__ import annotations

from tensorlayout.relayout._plan import Plan

__all__ = ["DENSE_FILL_GAP", "Box", "dense_box", "fill_order", "padding_boxes"]

Box = tuple[int, tuple[int, ...], tuple[int, ...]]  # byte offset, shape, byte strides
DENSE_FILL_GAP = 8  # padding slots at most this many items apart are filled as one run (dense_box)


def fill_order(box: Box) -> Box:
    """``box`` with its axes in the order to fill it, by falling stride, and those that run on
    into the next merged (``(72, 2)`` items of strides ``(4, 2)`` bytes: 144 of 2 bytes).

    >>> fill_order((0, (2, 8, 4), (4, 64, 1)))
    (0, (8, 8), (64, 1))
    """
    off, shape, strides = box
    axes = sorted(((n, s) for n, s in zip(shape, strides, strict=True) if n != 1), key=lambda a: -abs(a[1]))
    merged: list[tuple[int, int]] = []
    for n, s in reversed(axes):  # innermost first
        if merged and s == merged[-1][0] * merged[-1][1]:
            merged[-1] = (merged[-1][0] * n, merged[-1][1])
        else:
            merged.append((n, s))
    merged.reverse()
    return off, tuple(n for n, _ in merged), tuple(s for _, s in merged)


def dense_box(box: Box, item: int) -> Box:
    """``box`` in fill order (``fill_order``), its finest runs widened to one where they are at
    most ``DENSE_FILL_GAP`` items apart: from the first run's start to the last run's end. The
    fills come before any data is copied, so writing the data slots between too costs nothing
    wrong, and one run is far faster than many short ones (a ragged (4,1) sub-tile's missing
    rows of bytes: runs of 1 to 3 bytes, 4 bytes apart).

    >>> dense_box((0, (5, 4096), (16384, 4)), 1)
    (0, (81917,), (1,))
    >>> dense_box((1, (105, 3, 3, 128), (41472, 1, 512, 4)), 1)
    (1, (105, 1535), (41472, 1))
    """
    off, shape, strides = fill_order(box)
    if not shape or strides[-1] <= 0:
        return off, shape, strides
    run, k = (shape[-1], len(shape) - 2) if strides[-1] == item else (1, len(shape) - 1)
    if k < 0 or not run * item < strides[k] <= DENSE_FILL_GAP * item or strides[k] % item:
        return off, shape, strides
    wide = (shape[k] - 1) * strides[k] // item + run
    return off, (*shape[:k], wide), (*strides[:k], item)


def padding_boxes(plan: Plan, item: int, dense: bool = True) -> list[Box]:
    """The padding slots of ``plan`` (not ``fill_all``) as boxes of a buffer of ``item``-byte
    elements (their finest axis widened where dense: see ``dense_box``; else in fill order)."""
    order = dense_box if dense else lambda box, _: fill_order(box)
    boxes = [order((box.offset * item, tuple(a[1] for a in box.axes), tuple(a[3] * item for a in box.axes)),
                   item) for box in plan.padding]
    if plan.tail[0] < plan.tail[1]:
        boxes.append((plan.tail[0] * item, (plan.tail[1] - plan.tail[0],), (item,)))
    return boxes
