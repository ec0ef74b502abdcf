"""How a one-pass relayout (``_direct``) moves its boxes: in which loop order
(``source_order``, ``onepass_tasks``), how far it runs ragged rows into padding
(``onepass_how``), and how it fills again the padding it ran over (``Refill``).

Most of the slots to refill are a few bytes of every sub-tile group: a (4,1) quad of which
1 of 4 rows is data leaves 3 bytes to refill in every 4. Filled as a strided view, that is a
loop of 3 bytes per group (u8[55641,33]{0,1:T(8,128)(4,1)} to itself: 210 us for its 55k
groups against 53 us for the copy of the whole 2 MiB buffer). Instead each group is one word
of 2, 4 or 8 bytes, refilled by a mask: ``word = word & keep | fill`` over the words, whose
other bytes (the group's data) stay as the copy wrote them (17 to 33 us).

>>> import numpy as np
>>> buf = np.arange(16, dtype=np.uint8)
>>> r = Refill.of([(1, (4, 3), (4, 1))], 1)  # bytes 1-3 of every 4 (one row of a quad)
>>> r(buf, 0)
>>> buf.tolist()
[0, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0, 12, 0, 0, 0]
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.relayout._direct import direct_pairs, over_extents
from tensorlayout.relayout._kernel_path import Task, pair_tasks
from tensorlayout.relayout._padding import Box
from tensorlayout.relayout._tails import remembered_pad_item
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.relayout._views import Pair

__all__ = ["Masked", "Refill", "masked", "masked_pass", "onepass_how", "onepass_tasks", "source_order",
           "unit_axes", "write_streams"]

#: a box as the kernel's ``masked_copy`` takes it: offset, shape, strides, outer axes, word, keep, fill
KernelBox = tuple[int, tuple[int, ...], tuple[int, ...], int, int, int, int]
#: The word sizes a group is refilled in, smallest first (a (2,1) pair of bytes, a (4,1) quad
#: or a (2,1) pair of 2-byte items, 8 bytes).
WORDS: dict[int, np.dtype] = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


@dataclass(frozen=True, slots=True)
class Masked:
    """Bytes ``[at, at + run)`` of each word of ``word`` bytes of a box of words (byte offset
    ``offset`` of its first word, ``shape``, byte ``strides``)."""

    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    word: int
    at: int
    run: int

    def words(self, buf: np.ndarray) -> np.ndarray:
        """The box's words in ``buf`` (1-D, contiguous) as a view."""
        return np.ndarray(self.shape, WORDS[self.word], buf, self.offset, self.strides)

    def masks(self, one: bytes) -> tuple[np.generic, np.generic]:
        """(keep, fill): the word masks keeping the other bytes and writing the pad item
        ``one``'s bytes (as they fall in the buffer) at the box's."""
        keep = bytes(0 if self.at <= k < self.at + self.run else 0xFF for k in range(self.word))
        fill = bytes(one[k % len(one)] if self.at <= k < self.at + self.run else 0 for k in range(self.word))
        dtype = WORDS[self.word]
        return np.frombuffer(keep, dtype)[0], np.frombuffer(fill, dtype)[0]


def masked(box: Box, item: int, nbytes: int) -> Masked | None:
    """``box`` (in fill order, of ``item``-byte items, in a buffer of ``nbytes``) as the same
    bytes of each of a box of words, when it writes fewer bytes than a word, at the same
    place in each, and the words lie in the buffer; else None.

    >>> masked((17411, (45, 4352), (34816, 4)), 1, 1566720)  # byte 3 of every quad: whole words
    Masked(offset=17408, shape=(45, 4352), strides=(34816, 4), word=4, at=3, run=1)
    >>> masked((0, (8, 512), (1024, 1)), 1, 8192) is None  # whole runs: a plain fill
    True
    """
    off, shape, strides = box
    contiguous = bool(shape) and strides[-1] == item
    run = shape[-1] * item if contiguous else item
    outer = [(n, s) for n, s in zip(shape[:-1] if contiguous else shape,
                                    strides[:-1] if contiguous else strides, strict=True) if n > 1]
    if not outer or any(s <= 0 for _, s in outer):
        return None
    fits = []
    for word in WORDS:
        at = off % word
        end = off - at + sum((n - 1) * s for n, s in outer) + word
        if run < word and at + run <= word and at % item == 0 and end <= nbytes \
                and all(s % word == 0 for _, s in outer):
            shape_, strides_ = tuple(n for n, _ in outer), tuple(s for _, s in outer)
            fits.append(Masked(off - at, shape_, strides_, word, at, run))
    # (words one after another first: numpy's vector loops take those, 4x faster than strided)
    return min(fits, key=lambda m: (m.strides[-1] != m.word, m.word), default=None)


#: The kernel's masked copy (``_kernel_masked.h``) writes a box of padding in units of at most this
#: many bytes from their first (the steps of its outer axes), each as the copy reaches it, in L1.
UNIT_BYTES = 4096
MASKED_MAX_BOXES = 32  # boxes a masked copy takes (as _kernel_masked.h)
MASKED_MAX_OUTER = 8  # ... and outer axes of each
#: ... and the copy between its units is cut into few pieces, or long ones: one piece between every
#: two units 4 KiB apart measured slower than a copy whole then the refill (f16[1001,1016]{1,0:T(2,128)(2,1)}
#: to itself, 32 bytes of padding in every 4 KiB: 63-69 us against 45-52 us; u8[55641,33]{0,1:T(8,128)(4,1)},
#: its units side by side in the last tile row, 12 pieces: 60 us against 75 us).
MASKED_FEW_PIECES = 64
MASKED_PIECE_BYTES = 16384


def copy_pieces(boxes: list[KernelBox]) -> int:
    """How many pieces the masked copy of ``boxes`` copies between its units (the ranges before,
    between and after them that no unit covers; a last one counted as if the buffer ran on).

    >>> copy_pieces([(100, (3, 4), (1000, 1), 1, 1, 0, 0), (104, (3, 4), (1000, 1), 1, 1, 0, 0)])
    4
    """
    spans = []
    for off, shape, strides, outer, word, _, _ in boxes:
        starts = np.full(1, off, np.int64)
        for n, st in zip(shape[:outer], strides[:outer], strict=True):
            starts = (starts[:, None] + np.arange(n, dtype=np.int64) * st).reshape(-1)
        extent = sum((n - 1) * st for n, st in zip(shape[outer:], strides[outer:], strict=True)) + word
        spans.append(np.stack([starts, starts + extent], axis=1))
    if not spans:
        return 1
    units = np.concatenate(spans)
    units = units[np.argsort(units[:, 0], kind="stable")]
    reached = np.maximum.accumulate(units[:, 1])
    return int((units[0, 0] > 0) + np.count_nonzero(units[1:, 0] > reached[:-1])) + 1


def unit_axes(shape: tuple[int, ...], strides: tuple[int, ...], word: int) -> int:
    """How many outer axes of a box (``shape``, byte ``strides`` falling; words of ``word`` bytes)
    step over its units: the fewest that leave the inner ones spanning at most ``UNIT_BYTES``
    (the last axis always inner).

    >>> unit_axes((434, 512), (1024, 1), 1), unit_axes((5, 2, 156), (445440, 512, 1), 1)
    (1, 1)
    >>> unit_axes((3, 4), (16, 4), 4)
    0
    """
    for outer in range(len(shape)):
        if sum((n - 1) * s for n, s in zip(shape[outer:], strides[outer:], strict=True)) + word <= UNIT_BYTES:
            return outer
    return len(shape) - 1


@dataclass(frozen=True, slots=True, eq=False)
class Refill:
    """The padding boxes a one-pass copy wrote over: ``plain`` ones filled as views, ``words``
    by masks (``masked``); the masks made once per pad item.

    >>> bool(Refill.of([], 4))
    False
    """

    plain: tuple[Box, ...]
    words: tuple[Masked, ...]
    _masks: dict[bytes, list[tuple[np.generic, np.generic]]] = field(default_factory=dict)
    _boxes: dict[bytes, list[KernelBox] | None] = field(default_factory=dict)

    @staticmethod
    def of(boxes: list[Box], item: int, nbytes: int | None = None) -> Refill:
        """The boxes (byte offset, shape, byte strides; in fill order) of ``item``-byte items
        of a buffer of ``nbytes`` (unbounded: None), each as words where it can be."""
        limit = nbytes if nbytes is not None else 1 << 62
        plain: list[Box] = []
        words: list[Masked] = []
        for box in boxes:
            m = masked(box, item, limit)
            if m is None:
                plain.append(box)
            else:
                words.append(m)
        return Refill(tuple(plain), tuple(words))

    def __bool__(self) -> bool:
        return bool(self.plain or self.words)

    def __call__(self, buf: np.ndarray, pad_value: object) -> None:
        """Write ``pad_value`` into the boxes of the 1-D contiguous ``buf``."""
        for off, shape, strides in self.plain:
            np.ndarray(shape, buf.dtype, buf, off, strides)[...] = pad_value
        if not self.words:
            return
        one = remembered_pad_item(pad_value, buf.dtype)
        masks = self._masks.get(one)
        if masks is None:
            if len(self._masks) >= 16:
                self._masks.clear()
            masks = self._masks[one] = [m.masks(one) for m in self.words]
        for m, (keep, fill) in zip(self.words, masks, strict=True):
            view = m.words(buf)
            np.bitwise_and(view, keep, out=view)
            if fill:
                np.bitwise_or(view, fill, out=view)

    def kernel_boxes(self, pad_value: object, dtype: np.dtype, nbytes: int) -> list[KernelBox] | None:
        """The boxes as the kernel's ``masked_copy`` writes them (each word ``(word & keep) | fill``)
        for ``pad_value`` in ``dtype``: the plain ones as words of one item, kept 0; None when they
        are more than it takes (``MASKED_MAX_BOXES``, ``MASKED_MAX_OUTER``) or cut the copy of a
        buffer of ``nbytes`` in many short pieces (``MASKED_FEW_PIECES``, ``MASKED_PIECE_BYTES``).

        >>> r = Refill.of([(1, (4, 3), (4, 1)), (16, (8,), (1,))], 1)
        >>> [b[3:] for b in r.kernel_boxes(7, np.dtype(np.uint8), 24)]
        [(0, 1, 0, 7), (0, 4, 255, 117901056)]
        """
        one = remembered_pad_item(pad_value, dtype)
        if one not in self._boxes:
            if len(self._boxes) >= 16:
                self._boxes.clear()
            self._boxes[one] = _kernel_boxes(self, one, nbytes)
        return self._boxes[one]


def _kernel_boxes(refill: Refill, one: bytes, nbytes: int) -> list[KernelBox] | None:
    """``Refill.kernel_boxes`` for the pad item ``one`` (its bytes)."""
    fill = int.from_bytes(one, sys.byteorder)
    plain = [(off, shape or (1,), strides or (len(one),)) for off, shape, strides in refill.plain]
    boxes = [(off, shape, strides, unit_axes(shape, strides, len(one)), len(one), 0, fill)
             for off, shape, strides in plain]  # (one item: as an axis of one)
    for m in refill.words:
        keep, ones = m.masks(one)
        boxes.append((m.offset, m.shape, m.strides, unit_axes(m.shape, m.strides, m.word), m.word,
                      int(keep), int(ones)))
    if len(boxes) > MASKED_MAX_BOXES or any(b[3] > MASKED_MAX_OUTER for b in boxes):
        return None
    pieces = copy_pieces(boxes)
    return boxes if pieces <= MASKED_FEW_PIECES or nbytes >= pieces * MASKED_PIECE_BYTES else None


#: A one-pass copy whose boxes all move runs contiguous on both sides of at least this many
#: bytes loops in the source's order (read once, in order; its runs written to a few places
#: in turn), not the destination's (each run read from another place in turn, which the
#: prefetchers follow worse than stores): measured alternately with a copy, one thread,
#: s64[6835,180]{0,1:T(8,128)} -> {0,1:T(1,128)} 1.67 -> 0.91x, s32[1024,8,256]{2,1,0:T(2,128)}
#: -> {2,1,0:T(128)} 1.83 -> 0.83x, f8e5m2[32,1024,256]{2,0,1:T(4,128)(4,1)} -> {...T(32,128)(4,1)}
#: 1.93 -> 0.78x, f8e5m2[256,262144]{1,0:T(8,128)(4,1)} -> {1,0:T(4,128)(4,1)} 1.44 -> 0.53x ...
SOURCE_ORDER_RUN = 256
#: ... unless the source's order writes more destination streams than this at once (see
#: ``write_streams``): pred[16384,4096]{0,1:T(4,128)(4,1)} -> {0,1:T(8,128)(4,1)}, whose source
#: order writes every other 512 bytes of 2048 tiles and then the rest, 0.63 -> 1.18x (streamed
#: out: the write-combining buffers are few); f16[19571,1123]{0,1:T(2,128)(2,1)} ->
#: {...T(8,128)(2,1)}, 153 streams, 0.74 -> 0.93x; in the cache too, pred[32,4096,32]{1,0,2:
#: T(4,128)(4,1)} -> {...T(8,128)(4,1)}, 32 streams, 1.2-1.4 -> 1.7-2.0x (one exception
#: measured: f64[22973,29]{0,1:T(1,128)} -> {0,1:T(8,128)}, 180 streams of 1 KiB runs, 1.9 -> 1.7x).
MAX_WRITE_STREAMS = 16
SOURCE_ORDER = True  # False: always the destination's order


def write_streams(dv: np.ndarray, sv: np.ndarray) -> int:
    """How many places of the destination the copy of the box (``dv``, ``sv``; its last axis
    the run) writes in turn when it loops in the source's order: the product of the extents of
    the axes inside the one of smallest destination stride, the one that continues the runs.

    >>> a = np.zeros(1 << 16, np.uint8)
    >>> d = np.lib.stride_tricks.as_strided(a, (4, 8, 512), (512, 2048, 1))  # 4 rows of 8 tiles
    >>> s = np.lib.stride_tricks.as_strided(a, (4, 8, 512), (4096, 512, 1))
    >>> write_streams(d, s), write_streams(s, d)
    (8, 4)
    """
    outer = sorted(range(dv.ndim - 1), key=lambda k: -abs(sv.strides[k]))
    if not outer:
        return 1
    nearest = min(range(len(outer)), key=lambda i: (abs(dv.strides[outer[i]]), -i))
    return prod(dv.shape[k] for k in outer[nearest + 1:])


def source_order(pairs: list[Pair]) -> bool:
    """True when the one-pass copy of ``pairs`` (destination view, source view; axes merged)
    loops in the source's order: every box a run contiguous on both sides of at least
    ``SOURCE_ORDER_RUN`` bytes, written to at most ``MAX_WRITE_STREAMS`` places in turn.

    >>> a = np.zeros(4096, np.uint8)
    >>> d = np.lib.stride_tricks.as_strided(a, (8, 512), (512, 1))
    >>> s = np.lib.stride_tricks.as_strided(a, (8, 512), (1024, 1))
    >>> source_order([(d, s)]), source_order([(d[:, :64], s[:, :64])])
    (True, False)
    """
    return SOURCE_ORDER and bool(pairs) and all(
        dv.ndim >= 1 and dv.strides[-1] == sv.strides[-1] == dv.itemsize
        and dv.shape[-1] * dv.itemsize >= SOURCE_ORDER_RUN and write_streams(dv, sv) <= MAX_WRITE_STREAMS
        for dv, sv in pairs)


def onepass_tasks(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray, buf: np.ndarray, pieces: int,
                  how: str) -> list[Task]:
    """The kernel's tasks of the one-pass copy from ``data`` under ``src`` into ``buf`` under
    ``dst`` in ``pieces`` (``how``: see ``_direct.direct_pairs``): in the source's loop order
    where ``source_order`` holds (the kernel's task builder told the source is the buffer it
    reads), else in the destination's.

    >>> s = PhysicalTarget.from_xla("u8[8,1024]{1,0:T(8,128)(4,1)}")
    >>> d = PhysicalTarget.from_xla("u8[8,1024]{1,0:T(4,128)(4,1)}")
    >>> a, b = np.zeros(8192, np.uint8), np.zeros(8192, np.uint8)
    >>> onepass_tasks(s, d, a, b, 1, "data")  # (the source's strides 1024, 512: in order)
    [(0, 0, (8, 2, 512), (512, 4096, 1), (1024, 512, 1), False, 0)]
    """
    pairs = direct_pairs(src, dst, data, buf, how)
    if source_order(pairs):
        return pair_tasks([(sv, dv) for dv, sv in pairs], buf, data, False, pieces)
    return pair_tasks(pairs, data, buf, True, pieces)


def onepass_how(src: PhysicalTarget, dst: PhysicalTarget, data: np.ndarray, buf: np.ndarray, how: str) -> str:
    """Which boxes the one-pass copy moves (``_direct.direct_pairs``'s ``how``): "lanes" where
    running the ragged tile rows of lanes whole (``over_extents``'s ``lanes``: into a streamed
    destination) leaves every box in the source's order (``source_order``), else ``how``.
    Then the copy reads the source once in order instead of a box of full tiles and a box of
    ragged ones each sweeping the destination (one thread, alternately with a copy:
    s8[5000,1800]{1,0:T(8,128)(4,1)} -> {1,0:T(4,128)(4,1)} 2.17 -> 1.07x, s32[1325,5173]{0,1:T(2,128)}
    -> {0,1:T(4,128)} 1.31 -> 0.88x, bf16[3000,1300]{1,0:T(8,128)(2,1)} -> {...T(16,128)(2,1)}
    1.44 -> 1.05x; where the boxes stay in the destination's order it measured slower:
    f64[37,686,3,13]{1,2,3,0:T(2,128)} -> {1,0,3,2:T(2,128)} 2.13 -> 2.48x).

    >>> t = PhysicalTarget.from_xla("s8[50,1800]{1,0:T(8,128)(4,1)}")  # 1 MiB: not streamed
    >>> u = PhysicalTarget.from_xla("s8[50,1800]{1,0:T(4,128)(4,1)}")
    >>> a, b = np.zeros(t.physical_elements, np.int8), np.zeros(u.physical_elements, np.int8)
    >>> onepass_how(t, u, a, b, "data")
    'data'
    """
    if how == "all" or over_extents(src, dst, True) == over_extents(src, dst):
        return how
    pairs = direct_pairs(src, dst, data, buf, "lanes")
    return "lanes" if source_order(pairs) else how


#: A layout onto itself with much padding (``FILL_WHOLE_SHARE`` of it or more) is filled first and
#: its data copied after, except where the data moves in runs shorter than ``SHORT_RUN`` bytes (a
#: ragged (4,1) quad's 3 data bytes of 4) and at most ``MASKED_MAX_SHARE`` of it is padding: then it is
#: copied whole in one masked pass (one thread, alternately with a copy: s8[171,6216,3]{1,2,0:T(4,128)(4,1)}
#: to itself, 26% padding in 1 byte of each quad, 2.94 -> 1.04x). With long runs the fill and the runs
#: measured faster (pred[131,157,105]{1,0,2:T(8,128)(4,1)}, 41% padding, runs of 628 bytes: 1.75 against
#: 2.05x; pred[17,1547,83]{2,1,0:T(8,128)(4,1)}, 35%, 332-byte runs: 1.47 against 1.72x).
SHORT_RUN = 64
MASKED_MAX_SHARE = 0.5


def masked_pass(tasks: list[Task], item: int, padding: float) -> bool:
    """Whether a copy onto the same layout with ``padding`` (a share of the buffer) and the data
    ``tasks`` (of ``item``-byte items) moves better as one masked pass over the whole buffer: its
    data runs, contiguous on both sides, are shorter than ``SHORT_RUN`` and little is padding.

    >>> masked_pass([(0, 0, (100, 3), (4, 1), (4, 1), False, 0)], 1, 0.25)  # 3 bytes of every 4
    True
    >>> masked_pass([(0, 0, (100, 628), (1024, 1), (1024, 1), False, 0)], 1, 0.4)
    False
    """
    runs = [t[2][-1] * item if t[3][-1] == t[4][-1] == item else item for t in tasks if t[2]]
    return padding <= MASKED_MAX_SHARE and max(runs, default=SHORT_RUN) < SHORT_RUN
