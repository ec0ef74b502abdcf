"""CuTe's mode accessors beyond ``get``: ``select``, ``take``, ``group``, ``flatten``,
``unflatten``, ``append``, ``prepend``, ``zip``, ``slice`` and ``dice``, each of a Layout or an
IntTuple, as in C++.

>>> str(take(Layout.parse("(2,3,4):(1,2,6)"), 1, 3)), flatten(((1, 2), 3))
('(3,4):(2,6)', (1, 2, 3))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tensorlayout.cute import int_tuple as it
from tensorlayout.cute import int_tuple_ops as ops
from tensorlayout.cute.int_tuple import IntTuple, _
from tensorlayout.cute.layout import Layout, _both, _mk
from tensorlayout.errors import LayoutError

__all__ = [
    "append", "dice", "flatten", "group", "group_modes", "prepend", "select", "slice",
    "slice_and_offset", "take", "unflatten", "zip_layouts",
]


def select(layout: Layout | IntTuple, modes: Iterable[int]) -> Any:
    """The modes ``modes`` (repeats allowed), CuTe's ``select<I...>``.

    >>> str(select(Layout.parse("(2,3,4):(1,2,6)"), [2, 0])), select((2, 3, 4), [1])
    ('(4,2):(6,1)', (3,))
    """
    ms = list(modes) if isinstance(modes, Iterable) and not isinstance(modes, (str, bytes)) else modes
    return _both(layout, "select", lambda t: ops.tuple_select(t, ms))


def take(layout: Layout | IntTuple, begin: int, end: int) -> Any:
    """Modes ``[begin, end)`` (CuTe's ``take<B,E>``; ``end == -1``: to the end of an IntTuple).
    Of a Layout, C++ wants a non-empty range within the rank.

    >>> str(take(Layout.parse("(2,3,4):(1,2,6)"), 1, 3)), take((2, 3, 4), 0, -1)
    ('(3,4):(2,6)', (2, 3, 4))
    """
    if isinstance(layout, Layout) and not (it.is_int(begin) and it.is_int(end) and
                                           0 <= begin < end <= layout.rank()):
        raise LayoutError(f"take: [{it.describe(begin)},{it.describe(end)}) is not a non-empty "
                          f"range of the modes of {layout}")
    return _both(layout, "take", lambda t: ops.tuple_take(t, begin, end))


def group(layout: Layout | IntTuple, begin: int, end: int) -> Any:
    """Wrap modes ``[begin, end)`` into one mode (CuTe's ``group<B,E>``; ``B == E`` adds none).

    >>> str(group(Layout.parse("(2,3,4):(1,2,6)"), 1, 3)), group((2, 3, 4), 0, 2)
    ('(2,(3,4)):(1,(2,6))', ((2, 3), 4))
    """
    return _both(layout, "group", lambda t: ops.tuple_group(t, begin, end))


group_modes = group


def flatten(layout: Layout | IntTuple) -> Any:
    """Depth at most 1: the leaves as a flat tuple; an int (an int layout) stays as it is.

    >>> str(flatten(Layout.parse("(2,(3,4)):(1,(2,6))"))), flatten(((1, 2), 3)), flatten(5)
    ('(2,3,4):(1,2,6)', (1, 2, 3), 5)
    """
    return _both(layout, "flatten", ops.tuple_flatten)


def unflatten(layout: Layout | IntTuple, profile: IntTuple) -> Any:
    """The modes nested like ``profile``, one per leaf (CuTe's ``unflatten``; C++ wants them flat).

    >>> str(unflatten(Layout.parse("(2,3,4):(1,2,6)"), (0, (0, 0)))), unflatten((2, 3), ((0, 0),))
    ('(2,(3,4)):(1,(2,6))', ((2, 3),))
    """
    if not it._valid(profile):
        raise it.not_int_tuple("unflatten", profile)
    return _both(layout, "unflatten", lambda t: ops.tuple_unflatten(t, profile))


def _extend(layout: Any, extra: Any, n: Any, what: str,
            f: Callable[[IntTuple, IntTuple, Any], IntTuple]) -> Any:
    """append/prepend: a Layout takes a Layout (default ``1:0``), an IntTuple an IntTuple."""
    if isinstance(layout, Layout):
        x = _mk(1, 0) if extra is None else extra
        if not isinstance(x, Layout):
            raise LayoutError(f"{what}: a Layout takes a Layout mode, got {it.describe(extra)}")
        return _mk(f(layout._shape, x._shape, n), f(layout._stride, x._stride, n))
    if extra is None or not it._valid(extra):
        raise LayoutError(f"{what}: an IntTuple takes an IntTuple mode, got {it.describe(extra)}")
    return _both(layout, what, lambda t: f(t, extra, n))


def append(layout: Layout | IntTuple, extra: Any = None, n: int | None = None) -> Any:
    """Append a mode (of a Layout, default ``1:0``); with ``n``, pad up to rank ``n``.

    >>> str(append(Layout(4, 1), n=3)), append((2, 3), 4)
    ('(4,1,1):(1,0,0)', (2, 3, 4))
    """
    return _extend(layout, extra, n, "append", ops.tuple_append)


def prepend(layout: Layout | IntTuple, extra: Any = None, n: int | None = None) -> Any:
    """Prepend a mode (of a Layout, default ``1:0``); with ``n``, pad up to rank ``n``.

    >>> str(prepend(Layout(4, 1))), prepend((2, 3), 4, 3)
    ('(1,4):(0,1)', (4, 2, 3))
    """
    return _extend(layout, extra, n, "prepend", ops.tuple_prepend)


def zip_layouts(a: Layout | IntTuple, b: Layout | IntTuple) -> Any:
    """Mode ``i`` of the result is ``(a_i, b_i)``; a rank-1 int ``a`` gives ``((a, b))`` (CuTe's ``zip``).

    >>> str(zip_layouts(Layout.parse("(2,3):(1,2)"), Layout.parse("(4,5):(6,24)"))), zip_layouts(5, (3, 4))
    ('((2,4),(3,5)):((1,6),(2,24))', ((5, (3, 4)),))
    """
    if isinstance(a, Layout) and isinstance(b, Layout):
        return _mk(ops.tuple_zip(a._shape, b._shape), ops.tuple_zip(a._stride, b._stride))
    if isinstance(a, Layout) or isinstance(b, Layout) or not (it._valid(a) and it._valid(b)):
        raise LayoutError(f"zip: expected two Layouts or two IntTuples, got {it.describe(a)} "
                              f"and {it.describe(b)}")
    return ops.tuple_zip(a, b)


def slice(crd: Any, layout: Layout | IntTuple) -> Any:
    """Keep the modes where ``crd`` has ``_``: ``slice((0,_,1), (2,3,4):(1,2,6))`` = ``(3):(2)``;
    ``slice(_, L)`` is ``L`` (CuTe's ``slice``).

    >>> str(slice((0, _, 1), Layout.parse("(2,3,4):(1,2,6)"))), slice((_, 0), ((2, 3), 4))
    ('(3):(2)', ((2, 3),))
    """
    return _both(layout, "slice", lambda t: ops.tuple_slice(crd, t))


def dice(crd: Any, layout: Layout | IntTuple) -> Any:
    """Keep the modes where ``crd`` has an integer; ``dice(int, L)`` is ``L`` (CuTe's ``dice``).

    >>> str(dice((0, _, 1), Layout.parse("(2,3,4):(1,2,6)"))), dice((_, 0), ((2, 3), 4))
    ('(2,4):(1,6)', (4,))
    """
    return _both(layout, "dice", lambda t: ops.tuple_slice(crd, t, False))


def _zero_wild(crd: Any) -> Any:
    if isinstance(crd, tuple):
        return tuple(_zero_wild(c) for c in crd)
    return 0 if crd is _ or crd is None else crd


def slice_and_offset(crd: Any, layout: Layout) -> tuple[Layout, int]:
    """The slice and the offset of ``crd`` with every ``_`` set to 0.

    >>> L = Layout.parse("(2,3,4):(1,2,6)")
    >>> s, off = slice_and_offset((1, _, 2), L)
    >>> str(s), off
    ('(3):(2)', 13)
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"slice_and_offset: expected a Layout, got {it.describe(layout)}")
    return slice(crd, layout), layout(_zero_wild(crd))
