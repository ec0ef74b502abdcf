"""CuTe's ``Layout``: a pair of congruent IntTuples, shape and stride, read as a function; its
construction, queries and ``get``. The other mode accessors are in :mod:`tensorlayout.cute.modes`,
``coalesce`` and ``filter`` in :mod:`tensorlayout.cute.coalescing`.

>>> L = Layout.parse("((4,2),(4,3)):((4,16),(1,32))")
>>> str(L), size(L), cosize(L), L(1, 5), L(37)
('((4,2),(4,3)):((4,16),(1,32))', 96, 96, 37, 52)
>>> str(make_layout((2, 1, 2)))
'(2,1,2):(1,0,2)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorlayout._cursor import Cursor
from tensorlayout.core.intmath import INT64_MAX
from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import coords
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute import int_tuple_ops as ops
from tensorlayout.cute.int_tuple import IntTuple, format_int_tuple
from tensorlayout.errors import LayoutError, ParseError

__all__ = [
    "Layout", "as_layout", "compact_col_major", "compact_row_major", "cosize", "depth", "get",
    "make_layout", "make_layout_like", "make_ordered_layout", "rank", "read_layout", "size",
]


#: The most offsets :meth:`Layout.offsets` lists (2 GiB of int64).
MAX_ENUMERATED = 1 << 28


def _check_int_tuple(t: Any, what: str) -> None:
    if not it._valid(t):
        raise it.not_int_tuple(what, t)


_LEAF: frozenset[type[Any]] = frozenset((int, it.Int))


def _well_formed(shape: Any, stride: Any, level: int) -> bool:
    """Ints or nested tuples of ints, congruent, no negative extent, ``shape`` at nesting
    ``level`` going at most ``MAX_DEPTH`` levels deep (the rule of ``it._valid``): one pass over both.

    Loops index the stride instead of calling ``zip`` (a builtin call costs more than the loop
    here); this runs on every user-built layout.
    """
    if type(shape) is not tuple:
        return shape.__class__ in _LEAF and stride.__class__ in _LEAF and shape >= 0
    if type(stride) is not tuple or len(shape) != len(stride) or level >= it.MAX_DEPTH:
        return False
    i = 0
    for s in shape:
        d = stride[i]
        i += 1
        if (type(s) is int and s >= 0 and type(d) is int) or _well_formed(s, d, level + 1):
            continue
        return False
    return True


def _well_formed_py(shape: Any, stride: Any) -> bool:
    """:func:`_well_formed` from the top level: the check when ``_dot.c`` was not built."""
    return _well_formed(shape, stride, 0)


_make_well_formed: Callable[[type[int]], Callable[[Any, Any], bool]] | None
try:
    from tensorlayout.cute._dot import make_well_formed as _make_well_formed
except ImportError:  # built without a C compiler: the Python check runs
    _make_well_formed = None

#: The check of a user-built layout: ``_dot.c``'s ``well_formed`` (the contract of
#: :func:`_well_formed` at level 0, about 40 ns for a small layout) when it was built.
_check: Callable[[Any, Any], bool] = (_well_formed_py if _make_well_formed is None
                                      else _make_well_formed(it.Int))


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
        if not _check(shape, stride):
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
        out = coords._fast_dot(crd, self._shape, self._stride)
        if out is not None:
            return out
        if not it._valid_crd(crd):
            raise LayoutError(f"a coordinate must be ints, tuples or int arrays, got {it.describe(crd)}")
        return coords.checked_crd2idx(crd, self._shape, self._stride)

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
        if n == 0:  # no offsets (a zero extent beside a huge stride reaches nothing)
            return np.zeros(0, dtype=np.int64)
        terms = [(s - 1) * d for s, d in self.flat_modes() if s > 0]
        high, low = sum(t for t in terms if t > 0), sum(t for t in terms if t < 0)
        reach = high if high > INT64_MAX else low
        if high > INT64_MAX or low < -INT64_MAX - 1:
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
        return coords.crd2idx(self.get_hier_coord(idx), self._shape)


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
    return f"about {'-' if n < 0 else ''}2^{n.bit_length()}" if _too_long(n) else str(n)


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
    """LayoutLeft strides: exclusive prefix product, size-1 modes get stride 0 (as C++).

    >>> compact_col_major((2, (1, 3))), compact_row_major((2, (1, 3)))
    ((1, (0, 2)), (3, (0, 1)))
    """
    _check_compact("compact_col_major", shape, current)
    return _col_major(shape, current)


def compact_row_major(shape: IntTuple, current: int = 1) -> IntTuple:
    """LayoutRight strides: the product taken right to left, size-1 modes get stride 0."""
    _check_compact("compact_row_major", shape, current)
    return _row_major(shape, current)


def _check_compact(what: str, shape: Any, current: Any) -> None:
    _check_int_tuple(shape, what)
    if not it.is_int(current):
        raise LayoutError(f"{what}: the starting stride must be an int, got {it.describe(current)}")


def _col_major(shape: IntTuple, current: int) -> IntTuple:
    """:func:`compact_col_major` of a checked shape."""
    if isinstance(shape, tuple):
        out = []
        for s in shape:
            out.append(_col_major(s, current))
            current *= it.product(s)
        return tuple(out)
    return 0 if shape == 1 else current


def _row_major(shape: IntTuple, current: int) -> IntTuple:
    """:func:`compact_row_major` of a checked shape."""
    if isinstance(shape, tuple):
        out = []
        for s in reversed(shape):
            out.append(_row_major(s, current))
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
        return _mk(shape, _col_major(shape, 1))
    if isinstance(stride, str) and stride == "LayoutRight":
        return _mk(shape, _row_major(shape, 1))
    if isinstance(stride, str):
        raise LayoutError(f"expected a stride, 'LayoutLeft' or 'LayoutRight', got {it.describe(stride)}")
    return Layout(shape, stride)


def make_ordered_layout(shape: IntTuple, order: IntTuple) -> Layout:
    """Compact strides in increasing ``order``: each order leaf's modes start at the product of
    the modes of lesser order, so equal orders share a start (C++'s ``compact_order``).

    >>> str(make_ordered_layout((4, 3, 5), (2, 0, 1))), str(make_ordered_layout((2, 3), (0, 0)))
    ('(4,3,5):(15,1,3)', '(2,3):(1,1)')
    """
    _check_int_tuple(shape, "make_ordered_layout")
    _check_int_tuple(order, "make_ordered_layout")
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
        raise LayoutError(f"an order must be ints and tuples, got {it.describe(order)}")


def _ordered_strides(shape: Any, order: Any, starts: Iterator[int]) -> Any:
    """The strides of :func:`make_ordered_layout`, each order leaf's sub-shape column-major."""
    if isinstance(order, tuple):
        return tuple(_ordered_strides(s, o, starts) for s, o in zip(shape, order))
    return _col_major(shape, next(starts))


def make_layout_like(layout: Layout) -> Layout:
    """Compact strides in the order of ``layout``'s strides; stride-0 modes stay 0.

    >>> str(make_layout_like(Layout.parse("(2,3,4,5):(0,42,1,0)")))
    '(2,3,4,5):(0,4,1,0)'
    """
    layout = layout if type(layout) is Layout else as_layout(layout)
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
        raise it.not_int_tuple("size", x)
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


def _both(layout: Any, what: str, f: Callable[[IntTuple], IntTuple]) -> Any:
    """C++'s IntTuple-or-Layout overloads in one place: ``f`` of an IntTuple, or the layout
    ``f(shape):f(stride)`` (C++'s ``make_layout(f(shape), f(stride))``)."""
    if isinstance(layout, Layout):
        return _mk(f(layout._shape), f(layout._stride))
    if not it._valid(layout):
        raise LayoutError(f"{what}: expected a Layout or an IntTuple (an int or a tuple of ints "
                          f"nested at most {it.MAX_DEPTH} levels), got {it.describe(layout)}")
    return f(layout)


def get(layout: Layout | IntTuple, *path: int | Sequence[int]) -> Any:
    """The mode at a path: ``get(L, 1, 0)`` is CuTe's ``layout<1,0>(L)`` (``get<1,0>`` of an IntTuple).

    >>> str(get(Layout.parse("(2,(3,4)):(1,(2,6))"), 1, 0)), get((2, (3, 4)), 1)
    ('3:2', (3, 4))
    """
    idx: list[Any] = []
    for p in path:
        idx.extend(p if isinstance(p, (tuple, list)) else (p,))
    return _both(layout, "get", lambda t: ops.tuple_get(t, *idx))


def _as_modes(layout: Layout) -> tuple[Layout, ...]:
    return layout.modes() if isinstance(layout.shape, tuple) else (layout,)


def _concat(modes: Iterable[Layout]) -> Layout:
    ms = modes if type(modes) is tuple or type(modes) is list else list(modes)
    return _mk(tuple([m._shape for m in ms]), tuple([m._stride for m in ms]))


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
