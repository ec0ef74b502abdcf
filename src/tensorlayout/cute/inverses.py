"""CuTe's complement, right and left inverses, nullspace and max common layout (C++ semantics).

>>> str(complement(Layout.parse("4:2"), 24)), str(right_inverse(Layout.parse("(2,4,6):(4,1,8)")))
('(2,3):(1,8)', '(4,2,6):(2,1,8)')
"""

from __future__ import annotations

import operator
from collections import deque
from itertools import accumulate, islice, pairwise

import numpy as np

from tensorlayout.core.intmath import col_major_strides
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute._checks import _WORD, Prefixes, mul, nested, quasi_holds
from tensorlayout.cute.coalescing import coalesce, coalesce_lists, layout_of_lists
from tensorlayout.cute.compose import _flat_result, _layout_arg, _readable, _require_extents, composition
from tensorlayout.cute.int_tuple import IntTuple
from tensorlayout.cute.layout import (
    Layout,
    _count,
    _mk,
    as_layout,
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
            raise AlgebraError(f"complement: {a} is not injective: stride {_count(d)} of mode "
                               f"{_count(s)}:{_count(d)} falls inside the span {_count(cur)} of the "
                               "smaller-stride modes")
        if strict and d % cur:
            raise AlgebraError(f"complement: stride {_count(d)} of mode {_count(s)}:{_count(d)} is not a "
                               f"multiple of {_count(cur)}, the span of the smaller-stride modes of {a}, "
                               "so no complement exists")
        if d // cur != 1:  # modes never merge: each span (d // cur)·cur <= d stops short of d·s
            shapes.append(d // cur)
            strides.append(cur)
        cur = d * s
    last = -(-m // cur)
    if last != 1:
        shapes.append(last)
        strides.append(cur)
    return shapes, strides, abs(m) + cur  # every int is within |m| + cur


Modes = tuple[list[int], list[int], list[int], list[int]]


def _by_stride(layout: Layout, op: str) -> Modes:
    """The coalesced modes of ``layout`` (refusing a zero extent) as extents ``cs`` and strides
    ``cd``, their positions in C++'s order of the strides (:func:`stride_order`), and the
    prefix products of ``cs`` (their compact column-major strides, then the size: a left inverse
    takes every one)."""
    cs, cd = coalesce_lists(layout._shape, layout._stride)
    if 0 in cs:  # coalescing keeps a zero extent (it drops only 1s)
        _require_extents(layout, op)
    return cs, cd, stride_order(cd), list(accumulate(cs, mul, initial=1))


def stride_order(cd: list[int]) -> list[int]:
    """The positions of the strides ``cd`` in C++'s sorted order: any sort's when they are
    distinct, else :func:`exchange_order`'s. Big strides cost their comparisons only (no hashing).

    >>> stride_order([4, 1, 8]), stride_order([2, 1, 2])
    ([1, 0, 2], [1, 0, 2])
    """
    if len(cd) <= _SMALL_SORT:
        return _exchange_sort(cd)
    order = sorted(range(len(cd)), key=cd.__getitem__)
    ranked = [cd[k] for k in order]
    if any(map(operator.eq, ranked, islice(ranked, 1, None))):
        return exchange_order(cd)
    return order


def exchange_order(keys: list[int]) -> list[int]:
    """The positions of ``keys`` in the order C++'s ``SortByKey`` (an ``exchange_sort``, not
    stable) leaves them: equal keys need not stay left to right.

    In O(n log^2 n), the log factors in numpy: the sort extracts the keys in increasing order,
    each group of equal keys in the order it has once every smaller key is out
    (:func:`_group_order`, given how many smaller keys precede each position).

    >>> exchange_order([1, 2, 1]), exchange_order([1, 1, 1, 0])
    ([0, 2, 1], [3, 1, 2, 0])
    """
    n = len(keys)
    if n <= _SMALL_SORT:
        return _exchange_sort(keys)
    ranked = sorted(range(n), key=keys.__getitem__)  # stable: equal keys by position
    rank = [0] * n  # the position's group: how many distinct keys are smaller
    starts = [0]  # where each group of equal keys starts in ranked
    prev = keys[ranked[0]]
    for i, k in enumerate(ranked):
        if keys[k] != prev:
            starts.append(i)
            prev = keys[k]
        rank[k] = len(starts) - 1
    if len(starts) == n:  # distinct keys: any sort's order
        return ranked
    starts.append(n)
    below = _smaller_before(rank)
    out: list[int] = []
    for start, end in pairwise(starts):
        at = ranked[start:end]
        out.extend(_group_order(at, below, start) if end - start > 1 else at)
    return out


def _exchange_sort(keys: list[int]) -> list[int]:
    """:func:`exchange_order` as C++ writes it, in O(n^2): the fastest for a few keys."""
    order = list(range(len(keys)))
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            if keys[order[j]] < keys[order[i]]:
                order[i], order[j] = order[j], order[i]
    return order


#: Up to this many keys the exchange sort runs as written (fastest there).
_SMALL_SORT = 16


def _group_order(at: list[int], below: list[int], total: int) -> list[int]:
    """The order in which C++'s exchange sort extracts the equal keys at positions ``at``
    (ascending): ``below[p]`` smaller keys precede position ``p``, ``total`` in all.

    Read on the keys no larger than these (larger ones never change it), each exchange step
    either drops a leading smaller key or, when an equal key leads, moves that first equal key
    onto the first smaller key's place: so a run of equal keys rotates by one per smaller key
    met after it, and joins the next run once those are used up.
    """
    run: deque[int] = deque()
    before = below[at[0]]
    last = len(at) - 1
    for j, k in enumerate(at):
        run.append(k)
        after = below[at[j + 1]] if j < last else total
        if after > before:
            run.rotate(-((after - before) % len(run)))
        before = after
    return list(run)


def _smaller_before(rank: list[int]) -> list[int]:
    """For each position ``p``, how many positions ``q < p`` have ``rank[q] < rank[p]``: a
    bottom-up merge sort whose every level counts, for all blocks at once, the smaller values in
    the left sibling of each right-hand element (one ``searchsorted``).

    >>> _smaller_before([2, 0, 1, 2, 0])
    [0, 0, 1, 2, 0]
    """
    vals = np.asarray(rank, dtype=np.int64)
    n = len(vals)
    pos = np.arange(n)
    where = pos.copy()  # the original position of each value as the blocks get sorted
    counts = np.zeros(n, dtype=np.int64)
    width = int(vals.max()) + 1  # block j's keys lie in [j * width, (j + 1) * width)
    half = 1
    while half < n:
        pair = pos // (2 * half)
        right = pos % (2 * half) >= half
        key = pair * width + vals  # left blocks sorted, so their keys ascend across pairs
        found = np.searchsorted(key[~right], key[right])
        counts[where[right]] += found - pair[right] * half
        order = np.argsort(key, kind="stable")
        vals = vals[order]
        where = where[order]
        half *= 2
    return [int(c) for c in counts.tolist()]


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
    if len(cd) <= _SMALL_SORT:
        shapes, strides, bound = _spans_small(cs, cd)  # bound: the size
    else:  # the compact strides of the modes taken only (a walk that stops early builds no more)
        shapes, strides = _spans_in_order(cs, cd, stride_order(cd), Prefixes(cs))
        bound = max(max(strides), max(shapes)) if shapes else 1
    # distinct extents, their strides already coalesced: two result modes k, k+1 join only
    # where the input's modes k, k+1 did
    return _flat_result(shapes, strides, bound, "right_inverse")


def _spans_in_order(cs: list[int], cd: list[int], order: list[int], pre: Prefixes | list[int]
                    ) -> tuple[list[int], list[int]]:
    """right_inverse's modes: walking the positions ``order`` (C++'s order of the strides ``cd``),
    each mode whose stride is the span so far joins (sorted: past the span, none can; a negative
    stride never joins). Big strides cost a comparison each (the walk stops at the first gap)."""
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for k in order:
        d = cd[k]
        if d == cur:
            shapes.append(cs[k])
            strides.append(pre[k])
            cur *= cs[k]
        elif d > cur:
            break
    return shapes, strides


def _spans_small(cs: list[int], cd: list[int]) -> tuple[list[int], list[int], int]:
    """:func:`_spans_in_order` for a few modes, and the size: distinct strides are looked up by
    the span so far (no sort: the only mode that can join next is the one whose stride is the
    span, and it comes later in the sorted order than every mode taken, each extent being at
    least 2 after coalescing); repeated ones walk C++'s exchange order."""
    pre = [1]  # compact column-major strides, then the size
    at: dict[int, int] = {}  # stride -> position (plain loops: a comprehension or accumulate cost 2x here)
    p = 1
    for k, d in enumerate(cd):
        at[d] = k
        p *= cs[k]
        pre.append(p)
    if len(at) != len(cd):
        return (*_spans_in_order(cs, cd, _exchange_sort(cd), pre), p)
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for _ in cs:
        j = at.get(cur)
        if j is None:
            break
        shapes.append(cs[j])
        strides.append(pre[j])
        cur *= cs[j]
    return shapes, strides, p


def _quasi_inverse(modes: Modes, layout: Layout) -> Layout:
    """C++'s left_inverse fold over the coalesced modes of ``layout`` (:func:`_by_stride`)."""
    cs, cd, order, pre = modes
    order = [k for k in order if cd[k]]
    if not order:  # all strides 0: C++ keeps the shape of the last mode, stride 0
        return layout_of_lists(*coalesce_lists([cs[-1]], [0]))
    shapes: list[int] = []
    strides: list[int] = [0]
    covered = 1
    shift = 0  # covered is 1 << shift while it is a power of two, else -1
    for k in order:
        d = cd[k]
        if shift > 62 and d.bit_count() == 1:  # two long powers of two, d >= covered: a shift
            q = d >> shift
            shift = d.bit_length() - 1
        else:
            q, r = divmod(d, covered)
            if r:
                raise AlgebraError(f"left_inverse: stride {_count(d)} of {layout} is not a multiple of "
                                   f"{_count(covered)}, the span below it (C++'s left inverse divisibility "
                                   "condition)")
            shift = d.bit_length() - 1 if d > _WORD and d.bit_count() == 1 else -1
        shapes.append(q)
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
        modes = ([1], [0], [0], [1, 1])
    cs, cd = modes[0], modes[1]
    if min(cd) < 0:  # C++ sorts signed strides: the first is its first extent, negative
        raise AlgebraError(f"left_inverse: {layout} has a negative stride, where C++'s quasi-inverse "
                           "has a negative extent (not a layout)")
    inv = _quasi_inverse(modes, layout)
    if nested(cs, cd, modes[2]) or quasi_holds(layout, inv):
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

