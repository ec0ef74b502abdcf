"""CuTe's ``Layout``: a pair of congruent IntTuples, shape and stride, read as a function.

>>> L = Layout.parse("((4,2),(4,3)):((4,16),(1,32))")
>>> str(L), size(L), cosize(L), L(1, 5), L(37)
('((4,2),(4,3)):((4,16),(1,32))', 96, 96, 37, 52)
>>> str(make_layout((2, 1, 2)))
'(2,1,2):(1,0,2)'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorlayout._cursor import Cursor
from tensorlayout.core.intmath import INT64_MAX
from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute import int_tuple_ops as ops
from tensorlayout.cute.int_tuple import IntTuple, format_int_tuple
from tensorlayout.errors import LayoutError, ParseError

__all__ = [
    "Layout", "append", "coalesce", "compact_col_major", "compact_row_major", "cosize", "depth",
    "dice", "filter", "filter_zeros", "flatten", "get", "group", "group_modes", "make_layout",
    "make_layout_like", "make_ordered_layout", "prepend", "rank", "select", "size", "slice",
    "slice_and_offset", "take", "unflatten", "zip_layouts",
]


#: The most offsets :meth:`Layout.offsets` lists (2 GiB of int64).
MAX_ENUMERATED = 1 << 28


def _check_int_tuple(t: Any, what: str) -> None:
    if isinstance(t, tuple):
        for x in t:
            _check_int_tuple(x, what)
    elif not it.is_int(t):
        raise LayoutError(f"{what} must be an int or a nested tuple of ints, got {t!r}"[:300])


_LEAF = frozenset((int, it.Int))


def _well_formed(shape: Any, stride: Any) -> bool:
    """Ints or nested tuples of ints, congruent, no negative extent: one pass over both.

    Loops index the stride instead of calling ``zip`` (a builtin call costs more than the loop
    here); this runs on every user-built layout.
    """
    if type(shape) is not tuple:
        return shape.__class__ in _LEAF and stride.__class__ in _LEAF and shape >= 0
    if type(stride) is not tuple or len(shape) != len(stride):
        return False
    i = 0
    for s in shape:
        d = stride[i]
        i += 1
        if (type(s) is int and s >= 0 and type(d) is int) or _well_formed(s, d):
            continue
        return False
    return True


def _diagnose(shape: Any, stride: Any) -> LayoutError:
    """The precise complaint about a (shape, stride) pair that is not well formed."""
    _check_int_tuple(shape, "a layout shape")
    _check_int_tuple(stride, "a layout stride")
    if not it.congruent(shape, stride):
        return LayoutError(f"shape {format_int_tuple(shape)} and stride "
                           f"{format_int_tuple(stride)} are not congruent")
    return LayoutError(f"shape {format_int_tuple(shape)} has a negative extent")


class Layout:
    """A CuTe layout ``shape:stride``; calling it maps a coordinate to an index.

    An immutable value: built from user tuples it is checked once; the algebra builds its
    results through a private constructor without re-checking.

    >>> Layout((3, (2, 3)), (3, (12, 1)))(20)
    9
    """

    __slots__ = ("_shape", "_stride")

    def __init__(self, shape: IntTuple, stride: IntTuple) -> None:
        if type(shape) is tuple:  # the first two levels inline: no call for a depth-2 layout
            if type(stride) is not tuple or len(shape) != len(stride):
                raise _diagnose(shape, stride)
            i = 0
            for s in shape:
                d = stride[i]
                i += 1
                if type(s) is int:
                    if s >= 0 and type(d) is int:
                        continue
                elif type(s) is tuple and type(d) is tuple and len(s) == len(d):
                    j = 0
                    for s2 in s:
                        d2 = d[j]
                        j += 1
                        if (type(s2) is int and s2 >= 0 and type(d2) is int) or _well_formed(s2, d2):
                            continue
                        raise _diagnose(shape, stride)
                    continue
                if not _well_formed(s, d):
                    raise _diagnose(shape, stride)
        elif not ((type(shape) is int and shape >= 0 and type(stride) is int) or
                  _well_formed(shape, stride)):
            raise _diagnose(shape, stride)
        self._shape = shape
        self._stride = stride

    @property
    def shape(self) -> IntTuple:
        return self._shape

    @property
    def stride(self) -> IntTuple:
        return self._stride

    def __eq__(self, other: object) -> bool:
        if type(other) is not Layout:
            return NotImplemented
        return self._shape == other._shape and self._stride == other._stride

    def __hash__(self) -> int:
        return hash((self._shape, self._stride))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Layout, (self._shape, self._stride))

    # -- text
    @staticmethod
    def parse(text: str) -> Layout:
        """Read ``shape:stride`` (CuTe's print form; ``_N`` static ints allowed)."""
        return it.parse_whole(text, read_layout, "layout text 'shape:stride'")

    def __str__(self) -> str:
        return f"{format_int_tuple(self.shape)}:{format_int_tuple(self.stride)}"

    def __repr__(self) -> str:
        return f"Layout({self})"

    # -- queries
    def __call__(self, *coord: Any) -> Any:
        crd: Any = coord[0] if len(coord) == 1 else coord
        out = it._fast_dot(crd, self._shape, self._stride)
        if out is not None:
            return out
        if not it._valid_crd(crd):
            raise LayoutError(f"a coordinate must be ints, tuples or int arrays, got {crd!r}"[:200])
        return it._crd2idx(crd, self.shape, self.stride)

    def size(self) -> int:
        return it.product(self.shape)

    def cosize(self) -> int:
        return cosize(self)

    def rank(self) -> int:
        return len(self._shape) if type(self._shape) is tuple else 1

    def depth(self) -> int:
        return it.depth(self.shape)

    def __len__(self) -> int:
        return self.rank()

    def __getitem__(self, i: int) -> Layout:
        return get(self, i)

    def modes(self) -> tuple[Layout, ...]:
        """The top-level modes as layouts (a rank-1 int layout gives itself)."""
        if isinstance(self.shape, tuple):
            return tuple(map(_mk, self._shape, self._stride))  # type: ignore[arg-type]
        return (self,)

    def flat_modes(self) -> list[tuple[int, int]]:
        return list(zip(*leaves(self._shape, self._stride)))

    def offsets(self) -> np.ndarray:
        """``L(i)`` for every 1-D index ``i`` in ``[0, size)``, as an int64 array."""
        n = self.size()
        if n > MAX_ENUMERATED:
            raise LayoutError(f"{self} has {_count(n)} elements: listing their offsets needs "
                              f"{_count(8 * n)} bytes (at most {MAX_ENUMERATED} elements, "
                              f"{8 * MAX_ENUMERATED} bytes)")
        reach = sum((s - 1) * abs(d) for s, d in self.flat_modes() if s > 0)
        if reach > INT64_MAX:
            raise LayoutError(f"{self} reaches offset {_count(reach)}, beyond int64: its offsets do "
                              "not fit an int64 array")
        # index i in [0, size) colexicographically: one dim of the core form split into every mode
        return CoreLayout.from_modes((n,), [self.flat_modes()], size=0).offsets()

    def offsets_2d(self) -> np.ndarray:
        """``L(i, j)`` as an array of shape (size of mode 0, size of mode 1) for rank-2 layouts."""
        if self.rank() != 2:
            raise LayoutError(f"expected a rank-2 layout, got rank {self.rank()}: {self}")
        m, n = (it.product(s) for s in self.shape)  # type: ignore[union-attr]
        return self.offsets().reshape(n, m).T

    # -- index to coordinate (C++'s Layout methods; right for compact layouts, as C++ notes)
    def get_hier_coord(self, idx: int) -> IntTuple:
        """The natural coordinate ``c`` with ``self(c) == idx``: ``idx2crd(idx, shape, stride)``.

        >>> Layout((2, 3), (3, 1)).get_hier_coord(4), Layout((2, 3), (3, 1)).get_flat_coord(4)
        ((1, 1), (1, 1))
        """
        return ops.idx2crd_strided(idx, self._shape, self._stride)

    def get_flat_coord(self, idx: int) -> IntTuple:
        """:meth:`get_hier_coord` with each top-level mode as its 1-D coordinate."""
        return ops.flat_coord(self.get_hier_coord(idx), self._shape)

    def get_1d_coord(self, idx: int) -> int:
        """:meth:`get_hier_coord` as one colexicographic index (``3`` for index 4 of ``(2,3):(3,1)``)."""
        return it.crd2idx(self.get_hier_coord(idx), self._shape)


_new = object.__new__


def _mk(shape: IntTuple, stride: IntTuple) -> Layout:
    """Build a Layout from parts already known to be valid (skips the checks of ``__init__``)."""
    obj = _new(Layout)
    obj._shape = shape
    obj._stride = stride
    return obj


def _too_long(n: int) -> bool:
    """More decimal digits than the parser reads (Python refuses to print ints past 4300)."""
    return abs(n).bit_length() > it.MAX_DIGITS * 3.32


def _count(n: int) -> str:
    """``n`` in decimal, or its order of magnitude when too long to print."""
    return f"about 2^{n.bit_length()}" if _too_long(n) else str(n)


def read_layout(cur: Cursor) -> Layout:
    """Read one ``shape:stride`` layout at the cursor (``shape`` alone gets compact strides)."""
    start = cur.pos
    shape = it.read_int_tuple(cur)
    if not cur.accept(":"):
        cur.skip()
        if cur.at_end() or cur.peek(",") or cur.peek(")"):
            layout = make_layout(shape)
            if any(_too_long(d) for d in it.flatten(layout.stride)):
                raise ParseError(cur.text, start, f"a shape whose compact strides have at most "
                                 f"{it.MAX_DIGITS} digits")
            return layout
        raise cur.error("':' between shape and stride")
    stride_at = cur.pos
    stride = it.read_int_tuple(cur)
    if not it.congruent(shape, stride):
        raise ParseError(cur.text, stride_at, f"a stride congruent with the shape "
                         f"{format_int_tuple(shape)}", context=cur.text[start:cur.pos])
    return Layout(shape, stride)


def as_layout(x: Any) -> Layout:
    """Accept a Layout, layout text, or an int ``n`` (the layout ``n:1``)."""
    if isinstance(x, Layout):
        return x
    if isinstance(x, str):
        return Layout.parse(x)
    if it.is_int(x):
        return Layout(x, 1)
    if isinstance(x, tuple):
        return make_layout(x)
    raise LayoutError(f"expected a Layout, layout text or int, got {type(x).__name__}")


# ---------------------------------------------------------------- construction


def compact_col_major(shape: IntTuple, current: int = 1) -> IntTuple:
    """LayoutLeft strides: exclusive prefix product, size-1 modes get stride 0 (as C++)."""
    if isinstance(shape, tuple):
        out = []
        for s in shape:
            out.append(compact_col_major(s, current))
            current *= it.product(s)
        return tuple(out)
    return 0 if shape == 1 else current


def compact_row_major(shape: IntTuple, current: int = 1) -> IntTuple:
    """LayoutRight strides: the product taken right to left, size-1 modes get stride 0."""
    if isinstance(shape, tuple):
        out = []
        for s in reversed(shape):
            out.append(compact_row_major(s, current))
            current *= it.product(s)
        return tuple(reversed(out))
    return 0 if shape == 1 else current


def make_layout(shape: Any, stride: Any = None, *more: Any) -> Layout:
    """``make_layout(shape[, stride])``; with Layout arguments, their concatenation.

    ``stride`` may be ``"LayoutLeft"`` (default) or ``"LayoutRight"``.

    >>> str(make_layout((2, (2, 2)), "LayoutRight")), str(make_layout(Layout(3, 1)))
    ('(2,(2,2)):(4,(2,1))', '(3):(1)')
    """
    if isinstance(shape, Layout):
        layouts = [shape] + ([stride] if stride is not None else []) + list(more)
        for x in layouts:
            if not isinstance(x, Layout):
                raise LayoutError("make_layout of layouts needs only Layout arguments")
        return _mk(tuple(x.shape for x in layouts), tuple(x.stride for x in layouts))
    if more:
        raise LayoutError("make_layout(shape, stride) takes two arguments")
    _check_int_tuple(shape, "a layout shape")
    if any(x < 0 for x in it.flatten(shape)):
        raise LayoutError(f"shape {format_int_tuple(shape)} has a negative extent")
    if stride is None or (isinstance(stride, str) and stride == "LayoutLeft"):
        return _mk(shape, compact_col_major(shape))
    if isinstance(stride, str) and stride == "LayoutRight":
        return _mk(shape, compact_row_major(shape))
    if isinstance(stride, str):
        raise LayoutError(f"expected a stride, 'LayoutLeft' or 'LayoutRight', got {stride!r}")
    return Layout(shape, stride)


def make_ordered_layout(shape: IntTuple, order: IntTuple) -> Layout:
    """Compact strides in increasing ``order``: each order leaf's modes start at the product of
    the modes of lesser order, so equal orders share a start (C++'s ``compact_order``).

    >>> str(make_ordered_layout((4, 3, 5), (2, 0, 1))), str(make_ordered_layout((2, 3), (0, 0)))
    ('(4,3,5):(15,1,3)', '(2,3):(1,1)')
    """
    _check_int_tuple(shape, "shape")
    groups: list[tuple[Any, int]] = []
    _order_groups(shape, order, groups)
    sizes = [(it.product(s), o) for s, o in groups]
    starts = iter([it.product(tuple(n for n, q in sizes if q < o)) for _s, o in groups])
    return _mk(shape, _ordered_strides(shape, order, starts))


def _order_groups(shape: Any, order: Any, out: list[tuple[Any, int]]) -> None:
    """Appends ``(sub-shape, order leaf)`` for each leaf of ``order`` (C++'s ``product_like``)."""
    if isinstance(order, tuple):
        if not isinstance(shape, tuple) or len(shape) != len(order):
            raise LayoutError(f"order {format_int_tuple(order)} does not match shape "
                              f"{format_int_tuple(shape)}")
        for s, o in zip(shape, order):
            _order_groups(s, o, out)
    elif type(order) is int or type(order) is it.Int:
        out.append((shape, int(order)))
    else:
        raise LayoutError(f"an order must be ints and tuples, got {order!r}"[:200])


def _ordered_strides(shape: Any, order: Any, starts: Iterator[int]) -> Any:
    """The strides of :func:`make_ordered_layout`, each order leaf's sub-shape column-major."""
    if isinstance(order, tuple):
        return tuple(_ordered_strides(s, o, starts) for s, o in zip(shape, order))
    return compact_col_major(shape, next(starts))


def make_layout_like(layout: Layout) -> Layout:
    """Compact strides in the order of ``layout``'s strides; stride-0 modes stay 0.

    >>> str(make_layout_like(Layout.parse("(2,3,4,5):(0,42,1,0)")))
    '(2,3,4,5):(0,4,1,0)'
    """
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    strides = [0] * len(fs)
    current = 1
    for k in sorted(range(len(fs)), key=lambda k: (abs(fd[k]), k)):
        if fd[k] != 0 and fs[k] != 1:
            strides[k] = current
            current *= fs[k]
    return _mk(layout.shape, it.unflatten(strides, layout.shape))


# ---------------------------------------------------------------- queries and accessors


def size(x: Layout | IntTuple) -> int:
    if isinstance(x, Layout):
        return x.size()
    if not it._valid(x):
        raise LayoutError(f"size: expected a layout or an IntTuple, got {x!r}"[:200])
    return it.product(x)


def rank(x: Layout | IntTuple) -> int:
    return it.rank(x.shape if isinstance(x, Layout) else x)


def depth(x: Layout | IntTuple) -> int:
    return it.depth(x.shape if isinstance(x, Layout) else x)


def cosize(layout: Layout) -> int:
    """C++'s ``cosize``, ``size(coshape)``: ``1 + Σ (s-1)·|d|`` over the leaves. A 0 extent
    counts ``-|d|``, so an empty layout's cosize can be anything, negative too (as in C++).

    >>> cosize(Layout.parse("(2,3):(3,1)")), cosize(Layout.parse("(0,3):(1,5)")), cosize(Layout(0, 5))
    (6, 10, -4)
    """
    layout = layout if type(layout) is Layout else as_layout(layout)
    span = leaf_span(layout._shape, layout._stride, None)  # the same sum, without a 0 extent
    if span >= 0:
        return 1 + span
    fs, fd = leaves(layout._shape, layout._stride)
    return 1 + sum([(s - 1) * (d if d >= 0 else -d) for s, d in zip(fs, fd)])


def leaf_span(shape: Any, stride: Any, live: list[tuple[int, int]] | None) -> int:
    """``Σ (s-1)·|d|`` over the leaves of a congruent pair, or -1 when an extent is 0, in one
    walk; appends ``(d, s)`` of each leaf that moves (``s != 1``, ``d != 0``) to ``live``.

    >>> moving = []
    >>> leaf_span((2, (1, 3)), (1, (7, -4)), moving), moving
    (9, [(1, 2), (-4, 3)])
    """
    if type(shape) is not tuple:
        shape, stride = (shape,), (stride,)
    total = 0
    i = 0
    for s in shape:
        d = stride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            t = leaf_span(s, d, live)
            if t < 0:
                return -1
            total += t
        elif s == 0:
            return -1
        elif d != 0 and s != 1:
            total += (s - 1) * (d if d > 0 else -d)
            if live is not None:
                live.append((d, s))
    return total


def get(layout: Layout, *path: int | Sequence[int]) -> Layout:
    """The sub-layout at a mode path: ``get(L, 1, 0)`` is CuTe's ``layout<1,0>(L)``."""
    idx: list[int] = []
    for p in path:
        if isinstance(p, int):
            idx.append(p)
        else:
            idx.extend(p)
    shape, stride = layout.shape, layout.stride
    for i in idx:
        if isinstance(shape, tuple):
            if not -len(shape) <= i < len(shape):
                raise LayoutError(f"mode {i} is out of range for {layout} (rank {len(shape)})")
            shape, stride = shape[i], stride[i]  # type: ignore[index]
        elif i not in (0, -1):
            raise LayoutError(f"mode {i} is out of range for {layout} (rank 1)")
    return _mk(shape, stride)


def select(layout: Layout, modes: Iterable[int]) -> Layout:
    ms = [get(layout, m) for m in modes]
    return _mk(tuple(m.shape for m in ms), tuple(m.stride for m in ms))


def take(layout: Layout, begin: int, end: int) -> Layout:
    """Modes ``[begin, end)``."""
    return select(layout, range(begin, end))


def group(layout: Layout, begin: int, end: int) -> Layout:
    """Wrap modes ``[begin, end)`` into one mode."""
    modes = layout.modes()
    if not 0 <= begin <= end <= len(modes):
        raise LayoutError(f"group [{begin},{end}) is out of range for {layout}")
    inner = modes[begin:end]
    mid = _mk(tuple(m.shape for m in inner), tuple(m.stride for m in inner))
    out = modes[:begin] + (mid,) + modes[end:]
    return _mk(tuple(m.shape for m in out), tuple(m.stride for m in out))


group_modes = group


def flatten(layout: Layout) -> Layout:
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    if not isinstance(layout.shape, tuple):
        return layout
    return _mk(fs, fd)


def unflatten(layout: Layout, profile: IntTuple) -> Layout:
    return _mk(it.unflatten(it.flatten(layout.shape), profile),
                  it.unflatten(it.flatten(layout.stride), profile))


def _as_modes(layout: Layout) -> tuple[Layout, ...]:
    return layout.modes() if isinstance(layout.shape, tuple) else (layout,)


def _concat(modes: Iterable[Layout]) -> Layout:
    ms = modes if type(modes) is tuple or type(modes) is list else list(modes)
    return _mk(tuple([m._shape for m in ms]), tuple([m._stride for m in ms]))


def append(layout: Layout, extra: Layout | None = None, n: int | None = None) -> Layout:
    """Append a mode (default ``1:0``); with ``n``, pad up to rank ``n``."""
    extra = _mk(1, 0) if extra is None else extra
    modes = list(_as_modes(layout))
    if n is None:
        return _concat(modes + [extra])
    while len(modes) < n:
        modes.append(extra)
    return _concat(modes) if len(modes) > 1 or isinstance(layout.shape, tuple) else layout


def prepend(layout: Layout, extra: Layout | None = None, n: int | None = None) -> Layout:
    extra = _mk(1, 0) if extra is None else extra
    modes = list(_as_modes(layout))
    if n is None:
        return _concat([extra] + modes)
    while len(modes) < n:
        modes.insert(0, extra)
    return _concat(modes)


def zip_layouts(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` of the result is ``(a_i, b_i)`` (CuTe's ``zip`` of two layouts)."""
    ma, mb = _as_modes(a), _as_modes(b)
    if len(ma) != len(mb):
        raise LayoutError(f"zip needs equal ranks, got {a} and {b}")
    return _concat(_concat((x, y)) for x, y in zip(ma, mb))


def _slice_parts(crd: Any, shape: Any, stride: Any, keep_wild: bool) -> tuple[list[Any], list[Any]]:
    if isinstance(crd, tuple):
        if not isinstance(shape, tuple) or len(crd) != len(shape):
            raise LayoutError(f"slice coordinate {format_int_tuple(crd)} does not match shape "
                              f"{format_int_tuple(shape)}")
        ss: list[Any] = []
        dd: list[Any] = []
        for c, s, d in zip(crd, shape, stride):
            a, b = _slice_parts(c, s, d, keep_wild)
            ss += a
            dd += b
        return ss, dd
    wild = crd is it._ or crd is None
    return ([shape], [stride]) if wild == keep_wild else ([], [])


def slice(crd: Any, layout: Layout) -> Layout:
    """Keep the modes where ``crd`` has ``_``: ``slice((0,_,1), (2,3,4):(1,2,6))`` = ``(3):(2)``."""
    ss, dd = _slice_parts(crd, layout.shape, layout.stride, True)
    return _mk(tuple(ss), tuple(dd))


def dice(crd: Any, layout: Layout) -> Layout:
    """Keep the modes where ``crd`` has an integer."""
    ss, dd = _slice_parts(crd, layout.shape, layout.stride, False)
    return _mk(tuple(ss), tuple(dd))


def _zero_wild(crd: Any) -> Any:
    if isinstance(crd, tuple):
        return tuple(_zero_wild(c) for c in crd)
    return 0 if crd is it._ or crd is None else crd


def slice_and_offset(crd: Any, layout: Layout) -> tuple[Layout, int]:
    """The slice and the offset of ``crd`` with every ``_`` set to 0."""
    return slice(crd, layout), layout(_zero_wild(crd))


# ---------------------------------------------------------------- coalesce and filter


def leaves(shape: IntTuple, stride: IntTuple) -> tuple[list[int], list[int]]:
    """The leaf extents and strides of a congruent (shape, stride), left to right, in one walk.

    >>> leaves((2, (3, 4)), (1, (2, 6)))
    ([2, 3, 4], [1, 2, 6])
    """
    if type(shape) is not tuple:
        return [shape], [stride]  # type: ignore[list-item]
    return _collect(shape, stride, [], [])


def _collect(shape: tuple[Any, ...], stride: Any, fs: list[int],
             fd: list[int]) -> tuple[list[int], list[int]]:
    """Append the leaves of a congruent (shape, stride) pair of tuples to ``fs`` and ``fd``."""
    i = 0
    for s in shape:
        d = stride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            _collect(s, d, fs, fd)
        else:
            fs.append(s)
            fd.append(d)
    return fs, fd


def coalesce_lists(shape: Any, stride: Any) -> tuple[list[int], list[int]]:
    """The leaves of a congruent (shape, stride), nested tuples or flat sequences, merged left to
    right as two lists: size-1 modes dropped, ``d1 == s0*d0`` joined.

    >>> coalesce_lists((2, (1, 3)), (1, (5, 2))), coalesce_lists([4, 2], [2, 1])
    (([6], [1]), ([4, 2], [2, 1]))
    """
    if type(shape) is tuple or type(shape) is list:
        return _merge(shape, stride, [], [])
    return ([shape], [stride]) if shape != 1 else ([], [])


def _merge(shape: Sequence[Any], stride: Sequence[Any], shapes: list[int],
           strides: list[int]) -> tuple[list[int], list[int]]:
    """Merge the leaves of ``shape:stride`` onto the modes ``shapes:strides`` and return those
    (see :func:`coalesce_lists`); the first two levels inline, the stride that joins the last
    mode kept in a local (coalesce's hot path)."""
    nxt: Any = shapes[-1] * strides[-1] if shapes else None  # None joins nothing
    i = 0
    for s in shape:
        d = stride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            j = 0
            for s2 in s:
                d2 = d[j]
                j += 1  # noqa: SIM113 - enumerate() costs more than the loop
                if type(s2) is tuple:
                    _merge(s2, d2, shapes, strides)
                    nxt = shapes[-1] * strides[-1] if shapes else None
                elif s2 != 1:
                    if d2 == nxt:
                        shapes[-1] *= s2
                        nxt *= s2
                    else:
                        shapes.append(s2)
                        strides.append(d2)
                        nxt = s2 * d2
        elif s != 1:
            if d == nxt:
                shapes[-1] *= s
                nxt *= s
            else:
                shapes.append(s)
                strides.append(d)
                nxt = s * d
    return shapes, strides


def layout_of_lists(shapes: list[int], strides: list[int]) -> Layout:
    """A flat layout from parallel lists: ``1:0`` when empty, ``s:d`` for one mode."""
    n = len(shapes)
    if n > 1:  # the common case: _mk's body inline (one call less on every algebra result)
        obj = _new(Layout)
        obj._shape = tuple(shapes)
        obj._stride = tuple(strides)
        return obj
    return _mk(shapes[0], strides[0]) if n else _mk(1, 0)


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Merge modes while keeping the function on ``[0, size)``; by mode with a ``profile``.

    >>> L = Layout.parse("(2,(1,6)):(1,(6,2))")
    >>> str(coalesce(L)), str(coalesce(L, (1, 1)))
    ('12:1', '(2,6):(1,2)')
    """
    layout = layout if type(layout) is Layout else as_layout(layout)
    if profile is None or not isinstance(profile, tuple):  # None or an int: the whole layout
        shape: Any = layout._shape
        if type(shape) is not tuple:
            return _mk(shape, layout._stride) if shape != 1 else _mk(1, 0)
        stride: Any = layout._stride
        shapes, strides = _merge(shape, stride, [], [])
        return layout_of_lists(shapes, strides)
    modes = _as_modes(layout)
    out = [coalesce(m, profile[i]) if i < len(profile) else m for i, m in enumerate(modes)]
    return _concat(out)


def filter_zeros(layout: Layout) -> Layout:
    """Replace the extent of every stride-0 mode by 1."""
    layout = as_layout(layout)
    return _mk(it.zip_leaves(layout.shape, layout.stride, lambda s, d: 1 if d == 0 else s),
                  layout.stride)


def filter(layout: Layout) -> Layout:
    """Drop stride-0 and size-1 modes, then coalesce.

    >>> str(filter(Layout.parse("(2,1,3,4):(0,7,1,0)")))
    '3:1'
    """
    return coalesce(filter_zeros(layout))
