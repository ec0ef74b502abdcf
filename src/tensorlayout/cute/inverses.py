"""CuTe's complement, right and left inverses, nullspace and max common layout (C++ semantics).

>>> str(complement(Layout.parse("4:2"), 24)), str(right_inverse(Layout.parse("(2,4,6):(4,1,8)")))
('(2,3):(1,8)', '(4,2,6):(2,1,8)')
"""

from __future__ import annotations

import numpy as np

from tensorlayout.core.intmath import col_major_strides
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute._checks import nested, quasi_holds
from tensorlayout.cute.compose import _flat_result, _layout_arg, _readable, _require_extents, composition
from tensorlayout.cute.int_tuple import IntTuple
from tensorlayout.cute.layout import (
    Layout,
    _mk,
    as_layout,
    coalesce,
    coalesce_lists,
    layout_of_lists,
    leaf_span,
    make_layout,
)
from tensorlayout.errors import AlgebraError, LayoutError

__all__ = [
    "complement", "exchange_order", "left_inverse", "max_common_layout", "max_common_vector", "nullspace",
    "right_inverse",
]


# ---------------------------------------------------------------- complement and inverses


def complement(a: Layout, cotarget: IntTuple | None = None, *, strict: bool = False) -> Layout:
    """The ordered layout of what ``a`` leaves out of ``[0, cotarget)``.

    Default cotarget: ``cosize(filter(a))`` (C++). Raises when ``a`` is not injective (overlapping
    strides), as C++'s static assertion does. When a stride is not a multiple of the span below it
    (``(4,10):(1,10)``), no exact complement exists; C++ still returns one (``2:4``) and so do we
    for parity, unless ``strict=True``, which raises instead.

    >>> str(complement(Layout.parse("(2,2):(1,6)"), 24))
    '(3,2):(2,12)'
    """
    a = a if type(a) is Layout else as_layout(a)
    shapes, strides, bound = _complement_modes(a, cotarget, strict)
    return _flat_result(shapes, strides, bound, "complement")


def _complement(a: Layout, cotarget: IntTuple | None) -> Layout:
    """:func:`complement` of a layout, without the result check (the algebra's inner calls)."""
    shapes, strides, _ = _complement_modes(a, cotarget, False)
    return layout_of_lists(shapes, strides)


def _complement_modes(a: Layout, cotarget: IntTuple | None, strict: bool) -> tuple[list[int], list[int], int]:
    """The modes of :func:`complement`, coalesced, as (extents, strides, a bound on every int)."""
    live: list[tuple[int, int]] = []  # (stride, extent) of the modes that move
    span = leaf_span(a._shape, a._stride, live)
    if span < 0:
        _require_extents(a, "complement")
    if cotarget is not None and type(cotarget) is not int and not it._valid(cotarget):
        raise LayoutError(f"complement: the cotarget must be an int or a shape, got {it.describe(cotarget)}")
    m = 1 + span if cotarget is None else cotarget if type(cotarget) is int else it.product(cotarget)
    if not live:
        make_layout(m)  # the same complaint about a negative extent
        return ([m], [1], m) if m != 1 else ([], [], 1)
    live.sort()
    if live[0][0] < 0:
        raise AlgebraError(f"complement: {a} has a negative stride; complement needs positive strides")
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for d, s in live:
        if d < cur:
            raise AlgebraError(f"complement: {a} is not injective: stride {d} of mode {s}:{d} falls "
                               f"inside the span {cur} of the smaller-stride modes")
        if strict and d % cur:
            raise AlgebraError(f"complement: stride {d} of mode {s}:{d} is not a multiple of {cur}, the "
                               f"span of the smaller-stride modes of {a}, so no complement exists")
        if d // cur != 1:  # modes never merge: each span (d // cur)·cur <= d stops short of d·s
            shapes.append(d // cur)
            strides.append(cur)
        cur = d * s
    last = -(-m // cur)
    if last != 1:
        shapes.append(last)
        strides.append(cur)
    return shapes, strides, abs(m) + cur  # every int is within |m| + cur


Modes = tuple[list[int], list[int], list[tuple[int, int]], list[int]]


def _by_stride(layout: Layout, op: str) -> Modes:
    """The coalesced modes of ``layout`` (refusing a zero extent) as extents ``cs`` and strides
    ``cd``, their ``(stride, position)`` pairs in C++'s order of the strides
    (:func:`exchange_order`), and the exclusive prefix products of ``cs`` (their compact
    column-major strides)."""
    cs, cd = coalesce_lists(layout._shape, layout._stride)
    if 0 in cs:  # coalescing keeps a zero extent (it drops only 1s)
        _require_extents(layout, op)
    keys = []
    pre = []
    p = 1
    k = 0
    for d in cd:
        keys.append((d, k))
        pre.append(p)
        p *= cs[k]
        k += 1
    if len(set(cd)) == k:
        keys.sort()  # distinct strides: every sort gives C++'s order
    else:
        keys = [(cd[j], j) for j in exchange_order(cd)]
    return cs, cd, keys, pre


def exchange_order(keys: list[int]) -> list[int]:
    """The positions of ``keys`` in the order C++'s ``SortByKey`` (an ``exchange_sort``, not
    stable) leaves them: equal keys need not stay left to right.

    >>> exchange_order([1, 2, 1]), exchange_order([1, 1, 1, 0])
    ([0, 2, 1], [3, 1, 2, 0])
    """
    n = len(keys)
    if n > _SMALL_SORT:
        return _exchange_order_numpy(keys)
    order = list(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            if keys[order[j]] < keys[order[i]]:
                order[i], order[j] = order[j], order[i]
    return order


#: Up to this many keys the exchange sort runs as written; past it, step by step in numpy.
_SMALL_SORT = 48


def _exchange_order_numpy(keys: list[int]) -> list[int]:
    """:func:`exchange_order` with each step's swaps at once: step ``i`` swaps position ``i``
    with every later key below all keys seen since ``i`` (the strict running minima), which
    rotates those positions by one; keys enter as their ranks (any int compares in int64)."""
    rank = {k: r for r, k in enumerate(sorted(set(keys)))}
    ranks = np.array([rank[k] for k in keys], dtype=np.int64)
    order = np.arange(len(keys), dtype=np.int64)
    for i in range(len(keys) - 1):
        seg = ranks[order[i:]]
        low = np.minimum.accumulate(seg)
        records = np.flatnonzero(low[1:] < low[:-1]) + 1
        if records.size:
            at = np.concatenate(([i], records + i))
            order[at] = np.roll(order[at], 1)
    return order.tolist()


def right_inverse(layout: Layout) -> Layout:
    """C++'s ``R`` with ``L(R(i)) = i`` for ``i < size(R)``: from stride 1, each mode whose
    stride is the span so far, in C++'s (unstable) stride order; negative strides never join.

    >>> str(right_inverse(Layout.parse("(2,4,6):(4,1,8)")))
    '(4,2,6):(2,1,8)'
    """
    layout = _layout_arg(layout)
    cs, cd = coalesce_lists(layout._shape, layout._stride)
    if 0 in cs:  # coalescing keeps a zero extent (it drops only 1s)
        _require_extents(layout, "right_inverse")
    pre = [1]  # compact column-major strides, then the size
    at: dict[int, int] = {}  # stride -> position (plain loops: a comprehension or accumulate cost 2x here)
    p = 1
    for k, d in enumerate(cd):
        at[d] = k
        p *= cs[k]
        pre.append(p)
    if len(at) == len(cd):
        shapes, strides = _spans_by_lookup(cs, pre, at)
    else:
        shapes, strides = _spans_in_order(cs, pre, [(cd[j], j) for j in exchange_order(cd)])
    # bounds every int: distinct extents, their strides already coalesced: two result modes
    # k, k+1 join only where the input's modes k, k+1 did
    return _flat_result(shapes, strides, pre[-1], "right_inverse")


def _spans_in_order(cs: list[int], pre: list[int], keys: list[tuple[int, int]]
                    ) -> tuple[list[int], list[int]]:
    """right_inverse's modes: walking the (stride, position) ``keys`` in C++'s order, each mode
    whose stride is the span so far joins (sorted: past the span, none can)."""
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for d, k in keys:  # C++ sorts the signed strides: a negative one never extends
        if d == cur:
            shapes.append(cs[k])
            strides.append(pre[k])
            cur *= cs[k]
        elif d > cur:
            break
    return shapes, strides


def _spans_by_lookup(cs: list[int], pre: list[int], at: dict[int, int]) -> tuple[list[int], list[int]]:
    """:func:`_spans_in_order` for distinct strides (``at``: stride -> position), without the
    sort: the only mode that can join next is the one whose stride is the span so far, and it
    comes later in the sorted order than every mode taken (each extent is at least 2 after
    coalescing; a lone extent-1 mode joins once, the loop taking each mode at most once)."""
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for _ in cs:
        k = at.get(cur)
        if k is None:
            break
        shapes.append(cs[k])
        strides.append(pre[k])
        cur *= cs[k]
    return shapes, strides


def _quasi_inverse(modes: Modes, layout: Layout) -> Layout:
    """C++'s left_inverse fold over the coalesced modes of ``layout`` (:func:`_by_stride`)."""
    cs, cd, keys, pre = modes
    order = [k for d, k in keys if d]
    if not order:  # all strides 0: C++ keeps the shape of the last mode, stride 0
        return layout_of_lists(*coalesce_lists([cs[-1]], [0]))
    shapes: list[int] = []
    strides: list[int] = [0]
    covered = 1
    for k in order:
        d = cd[k]
        if d % covered:
            raise AlgebraError(f"left_inverse: stride {d} of {layout} is not a multiple of {covered}, the "
                               "span below it (C++'s left inverse divisibility condition)")
        shapes.append(d // covered)
        strides.append(pre[k])
        covered = d
    shapes.append(cs[order[-1]])
    return layout_of_lists(*coalesce_lists(shapes, strides))


def left_inverse(layout: Layout) -> Layout:
    """C++'s quasi-inverse ``R``: ``L(R(L(i))) = L(i)``, so ``R(L(i)) = i`` when ``L`` is injective.

    Off the image of ``L`` it follows C++ (stride-0 fill). Raises :class:`AlgebraError` where C++
    static-asserts (a stride not a multiple of the one below) and where C++'s answer breaks the
    post-condition.

    >>> str(left_inverse(Layout.parse("4:2"))), str(left_inverse(Layout.parse("(4,2):(1,16)")))
    ('(2,4):(0,1)', '(16,2):(1,4)')
    >>> str(left_inverse(Layout.parse("(4,10):(6,6)")))
    '(6,10):(0,4)'
    """
    layout = _layout_arg(layout)
    modes = _by_stride(layout, "left_inverse")
    if not modes[0]:
        modes = ([1], [0], [(0, 0)], [1])
    cs, cd = modes[0], modes[1]
    if min(cd) < 0:  # C++ sorts signed strides: the first is its first extent, negative
        raise AlgebraError(f"left_inverse: {layout} has a negative stride, where C++'s quasi-inverse "
                           "has a negative extent (not a layout)")
    inv = _quasi_inverse(modes, layout)
    if nested(cs, cd) or quasi_holds(layout, inv):
        return _readable(inv, "left_inverse")
    raise AlgebraError(f"left_inverse: C++'s quasi-inverse {inv} of {layout} breaks L(R(L(i))) = L(i), "
                       "so no left inverse is given")


def nullspace(layout: Layout) -> Layout:
    """The stride-0 modes, with the compact strides of their positions.

    >>> str(nullspace(Layout.parse("((2,2),4):((1,0),2)")))
    '2:2'
    """
    layout = _layout_arg(layout)
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    pre = col_major_strides(fs)
    keep = [k for k in range(len(fs)) if fd[k] == 0]
    if not keep:
        return _mk(1, 0)
    if len(keep) == 1:
        return _mk(fs[keep[0]], pre[keep[0]])
    return _mk(tuple(fs[k] for k in keep), tuple(pre[k] for k in keep))


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The largest layout ``R`` with ``a ∘ R`` and ``b ∘ R`` both contiguous."""
    a, b = _layout_arg(a), _layout_arg(b)
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    first = common if not isinstance(common.shape, tuple) else common[0]
    if first.stride == 1:
        return composition(inv_b, first)
    return _mk(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """How many elements ``a`` and ``b`` both keep contiguous from index 0.

    >>> max_common_vector(Layout.parse("(8,4):(1,8)"), Layout.parse("(8,4):(1,8)"))
    32
    """
    a, b = _layout_arg(a), _layout_arg(b)
    common = coalesce(composition(a, right_inverse(b)))
    first = common if not isinstance(common.shape, tuple) else common[0]
    return first.size() if first.stride == 1 else 1

