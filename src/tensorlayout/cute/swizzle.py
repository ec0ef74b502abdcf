"""CuTe's ``Swizzle<B,M,S>`` (XOR of bit fields) and composed layouts ``outer ∘ (offset + inner)``,
read and printed in CuTe's own text: ``Sw<3,3,3> o _0 o (_8,_64):(_64,_1)``.

>>> sw = Swizzle(1, 2, 1)
>>> [sw(i) for i in range(8, 16)], str(sw), str(make_swizzle(0b1000, 0b0100))
([12, 13, 14, 15, 8, 9, 10, 11], 'Sw<1,2,1>', 'Sw<1,2,1>')
>>> c = parse_layout("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
>>> str(c), c(1, 0), c.offsets()[:4].tolist()
('Sw<3,3,3> o _0 o (_8,_64):(_64,_1)', 72, [0, 72, 144, 216])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from tensorlayout._cursor import Cursor, parsed_as
from tensorlayout.core.intmath import fits_int64, show_int, wrap_int64
from tensorlayout.core.layout import XorSwizzle
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.basis import CoordLayout, CountingTensor, read_coord_layout, read_counting_tensor
from tensorlayout.cute.int_tuple import IntTuple, format_int_tuple
from tensorlayout.cute.layout import Layout
from tensorlayout.errors import AlgebraError, LayoutError, ParseError

__all__ = ["ComposedLayout", "SmemPtrFlag", "Swizzle", "make_swizzle", "parse_layout"]


@dataclass(frozen=True, slots=True)
class Swizzle:
    """``f(x) = x ^ ((x & yyy) >> S)``: B mask bits, M base bits kept, shift S (negative: left)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        for v in (self.bits, self.base, self.shift):
            if not isinstance(v, int) or isinstance(v, bool):
                raise AlgebraError(f"Swizzle<B,M,S> takes ints, got {it.describe(v)}")
        if self.bits < 0 or self.base < 0:
            raise AlgebraError(f"Swizzle<{self.bits},{self.base},{self.shift}> needs B >= 0 and M >= 0")
        if abs(self.shift) < self.bits:
            raise AlgebraError(f"Swizzle<{self.bits},{self.base},{self.shift}> needs |S| >= B so the "
                               "source and target bit fields do not overlap")

    @property
    def yyy_mask(self) -> int:
        return XorSwizzle(self.bits, self.base, self.shift).yyy_mask

    @property
    def zzz_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, x: Any) -> Any:
        if not isinstance(x, (int, np.integer, np.ndarray)) or isinstance(x, bool) or (
                isinstance(x, np.ndarray) and x.dtype.kind not in "iu"):
            raise LayoutError(f"a swizzle maps integer offsets, got {it.describe(x)}")
        post = XorSwizzle(self.bits, self.base, self.shift)  # the core's post-op
        return post.apply(x) if isinstance(x, np.ndarray) else post(int(x))

    def size(self) -> int:
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        return self.size()

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def _ctz(x: int) -> int:
    return (x & -x).bit_length() - 1


def make_swizzle(yyy_mask: int, zzz_mask: int) -> Swizzle:
    """Recover ``Swizzle<B,M,S>`` from its two bit masks (equal popcount, contiguous bits)."""
    if not (it.is_int(yyy_mask) and it.is_int(zzz_mask)):
        raise AlgebraError(f"make_swizzle needs two int masks, got {it.describe(yyy_mask)} and "
                           f"{it.describe(zzz_mask)}")
    if yyy_mask <= 0 or zzz_mask <= 0:
        raise AlgebraError("make_swizzle needs two non-zero masks")
    b = bin(yyy_mask).count("1")
    for m in (yyy_mask, zzz_mask):
        if bin(m).count("1") != b or (m >> _ctz(m)) != (1 << b) - 1:
            raise AlgebraError(f"make_swizzle needs two contiguous masks with equal popcounts, got "
                               f"{bin(yyy_mask)} and {bin(zzz_mask)}")
    return Swizzle(b, _ctz(zzz_mask), _ctz(yyy_mask) - _ctz(zzz_mask))


@dataclass(frozen=True, slots=True)
class SmemPtrFlag:
    """The offset of CuTe's GMMA shared-memory atoms, printed ``smem_ptr[16b](unset)``.

    A pointer flag, not a number: as an offset it adds 0.
    """

    bits: int

    def __str__(self) -> str:
        return f"smem_ptr[{self.bits}b](unset)"


Offset = Union[IntTuple, SmemPtrFlag]  # noqa: UP007 - a runtime alias


def _offset_value(offset: Offset) -> int:
    if isinstance(offset, SmemPtrFlag):
        return 0
    if isinstance(offset, tuple):
        raise LayoutError(f"a tuple offset {format_int_tuple(offset)} has no 1-D value here")
    return int(offset)


@dataclass(frozen=True, slots=True)
class ComposedLayout:
    """``outer(offset + inner(c))``, typically a Swizzle over a plain layout (CuTe's ``A o off o B``).

    >>> ComposedLayout(Swizzle(1, 2, 1), 0, Layout(16, 1))(9)
    13
    """

    outer: Swizzle | Layout
    offset: Offset
    inner: Layout | ComposedLayout

    def __call__(self, *coord: Any) -> Any:
        return self.outer(_offset_value(self.offset) + self.inner(*coord))

    def size(self) -> int:
        return self.inner.size()

    @property
    def shape(self) -> Any:
        return self.inner.shape

    def offsets(self) -> np.ndarray:
        """``self(i)`` for every 1-D index ``i`` (colexicographic), as an int64 array: exact, and a
        LayoutError where an offset leaves int64 (as :meth:`Layout.offsets`)."""
        try:
            inner = self.inner.offsets().reshape(-1)
        except LayoutError:  # the inner offsets leave int64: the outer may bring them back
            n = self.size()
            if n > EXACT_ELEMENTS:
                raise
            return _walk(self, range(n), str(self))
        return _outer_offsets(self.outer, inner, _offset_value(self.offset))

    def __str__(self) -> str:
        return f"{self.outer} o {format_offset(self.offset)} o {self.inner}"

    @staticmethod
    def parse(text: str) -> ComposedLayout:
        """Read CuTe's ``A o offset o B`` text (``A`` a ``Sw<B,M,S>`` or a layout)."""
        return parsed_as(parse_layout(text), ComposedLayout, text, "a composed layout 'A o offset o B'")


#: A composed layout whose inner offsets leave int64 is listed element by element up to this size.
EXACT_ELEMENTS = 1 << 22


def _outer_offsets(outer: Swizzle | Layout, inner: np.ndarray, offset: int) -> np.ndarray:
    """``outer(offset + x)`` for each ``x`` of ``inner``: in int64 where no value can leave it,
    otherwise on Python ints and checked."""
    if not inner.size:
        return inner.astype(np.int64)
    reach = max(abs(int(inner.min()) + offset), abs(int(inner.max()) + offset))
    if isinstance(outer, Swizzle) and reach < 1 << 62 and outer.base + abs(outer.shift) + outer.bits < 63:
        return outer(inner + np.int64(wrap_int64(offset)))  # wraps on the way, exact at the end
    # a layout outside: its 1-D index past its size follows CuTe's crd2idx, exactly on ints;
    # the first value past int64 stops the walk
    f = XorSwizzle(outer.bits, outer.base, outer.shift) if isinstance(outer, Swizzle) else outer
    return _walk(lambda x: f(offset + x), inner.tolist(), f"{outer} o {format_offset(offset)}")


def _walk(f: Any, xs: Any, what: str) -> np.ndarray:
    """``[f(x) for x in xs]`` on Python ints as int64, a LayoutError at the first value past it."""
    out = np.empty(len(xs), dtype=np.int64)
    for k, x in enumerate(xs):
        v = f(x)
        if not fits_int64(v):
            raise LayoutError(f"{what}: an offset reaches {show_int(v)}, past int64")
        out[k] = v
    return out


def format_offset(offset: Offset) -> str:
    return str(offset) if isinstance(offset, SmemPtrFlag) else format_int_tuple(offset)


# ---------------------------------------------------------------- text
#   composed := A " o " offset " o " B        A := swizzle | layout;  B := layout | composed
#   swizzle  := "Sw<" int "," int "," int ">"  (the CuTe DSL's "S<...>" is read too)
#   offset   := int | tuple | "smem_ptr[" bits "b](unset)"

_SWIZZLE = re.compile(r"(?:Sw|S)<\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*>")
_SMEM = re.compile(r"smem_ptr\[([0-9]+)b\]\(unset\)")
_O = re.compile(r"\s+o\s+")


def _read_outer(cur: Cursor) -> Swizzle | Layout | CoordLayout:
    cur.skip()
    m = cur.match(_SWIZZLE)
    if m is None:
        return read_coord_layout(cur)
    # the length test comes first: int() refuses literals of over 4,300 digits with a ValueError
    if any(len(g.lstrip("-")) > 5 or abs(int(g)) > 1 << 16 for g in m.groups()):
        raise ParseError(cur.text, m.start(), "Sw<B,M,S> with parameters below 65536")
    vals = [int(g) for g in m.groups()]
    try:
        return Swizzle(*vals)
    except AlgebraError as e:
        raise ParseError(cur.text, m.start(), f"a valid swizzle ({e})") from None


def _read_offset(cur: Cursor) -> Offset:
    cur.skip()
    m = cur.match(_SMEM)
    if m is not None:
        if len(m.group(1)) > 6:
            raise ParseError(cur.text, m.start(), "smem_ptr[<bits>b] with at most 6 digits")
        return SmemPtrFlag(int(m.group(1)))
    return it.read_int_tuple(cur)


def _read_o(cur: Cursor) -> bool:
    m = _O.match(cur.text, cur.pos)
    if m is None:
        return False
    cur.pos = m.end()
    return True


def read_any_layout(cur: Cursor, depth: int = 0) -> Layout | ComposedLayout | CoordLayout:
    """One layout, coordinate layout (scaled-basis strides) or composed layout at the cursor."""
    start = cur.pos
    outer = _read_outer(cur)
    if not _read_o(cur):
        if isinstance(outer, Swizzle):
            raise cur.error("' o ' after the swizzle")
        return outer
    if isinstance(outer, CoordLayout):
        raise ParseError(cur.text, start, "a swizzle or an integer-strided layout before ' o '")
    if depth >= it.MAX_DEPTH:
        raise ParseError(cur.text, start, f"at most {it.MAX_DEPTH} nested compositions")
    offset = _read_offset(cur)
    if not _read_o(cur):
        raise cur.error("' o ' after the offset")
    inner_at = cur.pos
    inner = read_any_layout(cur, depth + 1)
    if isinstance(inner, CoordLayout):
        raise ParseError(cur.text, inner_at, "an integer-strided layout after the offset")
    return ComposedLayout(outer, offset, inner)


def _read_cute(cur: Cursor) -> Layout | ComposedLayout | CoordLayout | CountingTensor:
    cur.skip()
    if cur.peek("ArithTuple"):
        return read_counting_tensor(cur, read_any_layout)
    return read_any_layout(cur)


def parse_layout(text: str) -> Layout | ComposedLayout | CoordLayout | CountingTensor:
    """Read CuTe's printed text: a plain ``shape:stride`` layout, a composed ``A o off o B``, a
    layout with scaled-basis strides (``(2,3):(_1@0,_1@1)``) or a counting tensor
    (``ArithTuple(0,6) o ...``).

    >>> str(parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"))
    'Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)'
    """
    return it.parse_whole(text, _read_cute, "CuTe layout text")
