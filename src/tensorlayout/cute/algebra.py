"""CuTe's layout algebra with C++ semantics: composition, complement, inverses, divides, products.

Where C++ rejects an input with a static assertion, we raise :class:`AlgebraError` naming the
condition and the modes involved (pycute asserts, the DSL may return a wrong layout).

>>> A = Layout.parse("(6,2):(8,2)")
>>> str(composition(A, Layout.parse("(4,3):(3,1)")))
'((2,2),3):((24,2),8)'
>>> str(complement(Layout.parse("4:2"), 24)), str(logical_divide(Layout.parse("(4,2,3):(2,1,8)"), "4:2"))
('(2,3):(1,8)', '((2,2),(2,3)):((4,1),(2,8))')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

from tensorlayout.core.intmath import col_major_strides
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute._checks import carries, holds, nested, quasi_holds
from tensorlayout.cute.int_tuple import Int, IntTuple
from tensorlayout.cute.layout import (
    Layout,
    _as_modes,
    _concat,
    _mk,
    as_layout,
    coalesce,
    coalesce_lists,
    cosize,
    layout_of_lists,
    leaf_span,
    make_layout,
    make_ordered_layout,
)
from tensorlayout.cute.swizzle import ComposedLayout, Swizzle
from tensorlayout.errors import AlgebraError, LayoutError

__all__ = [
    "blocked_product", "clear_caches", "complement", "composition", "flat_divide", "flat_product",
    "left_inverse", "local_partition", "local_tile", "logical_divide", "logical_product",
    "max_common_layout", "max_common_vector", "nullspace", "raked_product",
    "right_inverse", "tile_to_shape", "tiled_divide", "tiled_product", "zipped_divide",
    "zipped_product",
]

#: A tiler: a Layout, an int ``n`` (``n:1``), or a tuple of tilers / ``_`` / None, one per mode.
Tiler = Union[Layout, int, str, tuple[Any, ...], list[Any], None]  # noqa: UP007


_SMALL = 1 << 62  # ints below this in magnitude print in far fewer than MAX_DIGITS digits
_NEG_SMALL = -_SMALL
_SHALLOW = it.MAX_DEPTH - 10  # nesting the quick test below passes without counting exactly


def _readable(out: Any, op: str) -> Any:
    """Refuse a result whose text form would not read back: nested deeper than
    :data:`~int_tuple.MAX_DEPTH` (a divide adds a level, so a 100-deep tiler gives 101) or
    holding an integer past :data:`~int_tuple.MAX_DIGITS` digits (a complement's cotarget can).
    Only the public entry points check, once, on their result (the inner results are its parts).

    >>> _readable(Layout(2, 1), "coalesce")
    Layout(2:1)
    """
    if type(out) is Layout and not _small_shallow(out._shape, out._stride, 0):
        _check_readable(out._shape, out._stride, op)
    return out


def _small_shallow(shape: Any, stride: Any, depth: int) -> bool:
    """A quick sufficient test for :func:`_readable`: every int below 2**62 in magnitude and the
    nesting well under the limit (a lean walk of the congruent pair, the second level inline; the
    exact check runs only when this fails)."""
    if type(shape) is not tuple:
        return _NEG_SMALL < shape < _SMALL and _NEG_SMALL < stride < _SMALL
    if depth > _SHALLOW:
        return False
    i = 0
    for s in shape:
        d = stride[i]
        i += 1
        if type(s) is not tuple:
            if not (_NEG_SMALL < s < _SMALL and _NEG_SMALL < d < _SMALL):
                return False
            continue
        j = 0
        for s2 in s:
            d2 = d[j]
            j += 1  # noqa: SIM113 - as above
            if type(s2) is tuple:
                if not _small_shallow(s2, d2, depth + 2):
                    return False
            elif not (_NEG_SMALL < s2 < _SMALL and _NEG_SMALL < d2 < _SMALL):
                return False
    return True


def _check_readable(shape: Any, stride: Any, op: str) -> None:
    """The depth and integer-size limits of CuTe text, exactly (see :func:`_readable`)."""
    (depth, big_shape), (_, big_stride) = _extremes(shape), _extremes(stride)
    if depth > it.MAX_DEPTH:
        raise AlgebraError(f"{op}: the result nests {depth} levels deep; CuTe text reads back at "
                           f"most {it.MAX_DEPTH}")
    if max(big_shape, big_stride).bit_length() > it.MAX_BITS:
        raise AlgebraError(f"{op}: the result holds an integer of more than {it.MAX_DIGITS} digits, "
                           "past what CuTe text reads back")


def _extremes(x: Any) -> tuple[int, int]:
    """(nesting depth, largest magnitude) of an IntTuple, in one walk (a hot path: kept lean)."""
    if type(x) is not tuple:
        return 0, (abs(x) if type(x) is int else 0)
    deep = big = 0
    for y in x:  # comparisons, not max(): this runs once per algebra call
        if type(y) is int:
            if y > big:
                big = y
            elif -y > big:
                big = -y
        elif type(y) is tuple:
            d, b = _extremes(y)
            if d > deep:
                deep = d
            if b > big:
                big = b
    return deep + 1, big


def clear_caches() -> None:
    """Kept for callers: the algebra keeps no caches (every call computes; see bench_cute.py)."""


def _tiler(b: Any) -> Any:
    """Normalise a tiler: Layout / tuple of tilers / ``_``; text and ints become layouts."""
    if isinstance(b, Layout) or b is it._ or b is None:
        return it._ if b is None else b
    if isinstance(b, str):
        return it._ if b.strip() == "_" else Layout.parse(b)
    if it.is_int(b):
        if b < 1:
            raise AlgebraError(f"a tiler extent must be positive, got {b}")
        return _mk(b, 0 if b == 1 else 1)  # make_layout(Int<1>) is 1:0 in C++
    if isinstance(b, (tuple, list)):
        if not b:
            raise AlgebraError("a tiler tuple needs at least one entry (an empty one leaves an empty mode)")
        return tuple(_tiler(x) for x in b)
    raise AlgebraError(f"expected a layout, an int, '_' or a tuple of them as a tiler, got {b!r}")


# ---------------------------------------------------------------- composition


def _coalesce_x(layout: Layout) -> tuple[list[int], list[int]]:
    """Coalesce keeping the function defined past ``size``, as (extents, strides): a trailing
    ``1:d`` acts as ``2:d``.

    >>> _coalesce_x(Layout((2, 3, 1), (1, 2, 6)))
    ([12], [1])
    """
    shape: Any = layout._shape
    stride: Any = layout._stride
    cs, cd = coalesce_lists(shape, stride)
    if 0 in cs:  # coalescing keeps a zero extent (it drops only 1s)
        _require_extents(layout, "composition")
    while type(shape) is tuple:  # the last leaf
        if not shape:
            shape, stride = 1, 0  # an empty layout acts as 1:0
            break
        shape, stride = shape[-1], stride[-1]
    if shape == 1:  # extended: joins the mode before it when contiguous, as any mode
        if cs and stride == cs[-1] * cd[-1]:
            cs[-1] *= 2
        else:
            cs.append(2)
            cd.append(stride)
    return cs, cd


def _compose_mode(lhs: Layout, cs: list[int], cd: list[int], s: int, d: int,
                  exact: list[bool]) -> tuple[Any, Any]:
    """``lhs ∘ s:d`` by C++'s fold over the coalesced ``lhs`` (``cs:cd``), as (shape, stride);
    clears ``exact[0]`` when a step wraps unevenly.

    Each step is C++'s ``(next_shape, next_stride)`` after its static "Stride Divisibility
    Condition" (``rest_stride % cs == 0 or rest_stride < cs``). A step wraps unevenly when
    ``rest_stride`` does not divide the extent and the remaining elements reach past it: C++
    then returns a layout that is not ``lhs ∘ s:d``.
    """
    if d == 0:
        return s, 0
    if s == 0:
        raise AlgebraError("composition: the right-hand layout has a zero extent; CuTe's layout algebra "
                           "needs extents >= 1")
    m = len(cs) - 1
    if m == 0:
        return s, d * cd[0]
    shapes: list[int] = []
    strides: list[int] = []
    rest_shape, rest_stride = s, d
    k = 0
    while k < m:
        c = cs[k]
        ars = rest_stride if rest_stride > 0 else -rest_stride
        if ars % c == 0:  # a multiple of the extent: this mode is skipped over
            rest_stride //= c
        elif ars > c:
            raise AlgebraError(
                f"composition: stride divisibility fails: stride {rest_stride} neither is a multiple "
                f"of nor is smaller than extent {c} of mode {k} of coalesced {lhs}")
        else:  # ars < c: the mode supplies ceil(c / ars) elements, then the stride steps by one
            if rest_shape != 1:
                new_shape = -(-c // ars)
                if new_shape > rest_shape:
                    new_shape = rest_shape
                if rest_shape % new_shape:
                    raise AlgebraError(
                        f"composition: shape divisibility fails: {rest_shape} elements remain but mode "
                        f"{k} of coalesced {lhs} supplies {new_shape}, which does not divide it")
                if c % ars and rest_shape > new_shape:
                    exact[0] = False
                shapes.append(new_shape)
                strides.append(rest_stride * cd[k])
                rest_shape //= new_shape
            rest_stride = 1 if rest_stride > 0 else -1
        k += 1
    last_d = cd[m]
    if not shapes:
        return rest_shape, rest_stride * last_d
    if rest_shape != 1:
        shapes.append(rest_shape)
        strides.append(rest_stride * last_d)
    if len(shapes) == 1:
        return shapes[0], strides[0]
    return tuple(shapes), tuple(strides)


def _compose_layout(lhs: Layout, cs: list[int], cd: list[int], rshape: Any, rstride: Any,
                    live: list[tuple[int, int]], exact: list[bool]) -> tuple[Any, Any]:
    """``lhs ∘ rshape:rstride`` mode by mode, as plain (shape, stride); the right-hand leaf modes
    with extent > 1 and a nonzero stride are added to ``live`` (for the carry check)."""
    if type(rshape) is not tuple:
        if rshape > 1 and rstride != 0:
            live.append((rshape, rstride))
        return _compose_mode(lhs, cs, cd, rshape, rstride, exact)
    shapes = []
    strides = []
    i = 0
    for s in rshape:
        d = rstride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            ps, pd = _compose_layout(lhs, cs, cd, s, d, live, exact)
        else:
            if s > 1 and d != 0:
                live.append((s, d))
            ps, pd = _compose_mode(lhs, cs, cd, s, d, exact)
        shapes.append(ps)
        strides.append(pd)
    return tuple(shapes), tuple(strides)


def _compose_plain(a: Layout, b: Layout, flat: tuple[list[int], list[int]] | None = None) -> Layout:
    """``a ∘ b`` for a layout ``b``: C++'s answer, or AlgebraError where that answer is wrong.

    ``flat`` is :func:`_coalesce_x` of ``a`` when the caller has it already."""
    cs, cd = _coalesce_x(a) if flat is None else flat
    exact = [True]
    live: list[tuple[int, int]] = []
    shape, stride = _compose_layout(a, cs, cd, b._shape, b._stride, live, exact)
    out = _mk(shape, stride)
    if not exact[0]:
        if holds(a, b, out):
            return out
        raise AlgebraError(
            f"composition: a stride of {b} does not divide an extent of coalesced {a} and the "
            "elements wrap past it, so the steps wrap unevenly; C++ returns a wrong layout here")
    if carries(cs, live) and not holds(a, b, out):
        raise AlgebraError(
            f"composition: the modes of {b} carry between digits of {a}, so A∘B is not a layout "
            "built mode by mode; C++ returns a wrong layout here")
    return out


def composition(a: Layout, b: Tiler) -> Layout:
    """``R = A ∘ B`` with ``R(i) = A(B(i))``; ``B`` may be a layout or a tiler (tuple, by mode).

    A tuple tiler shorter than ``A``'s rank drops ``A``'s remaining modes, as C++ does. Raises
    :class:`AlgebraError` where C++ static-asserts and where C++'s answer is not ``A ∘ B``.
    A :class:`Swizzle` ``A`` gives CuTe's composed layout ``A o _0 o B``.

    >>> str(composition(Layout.parse("(12,(4,8)):(59,(13,1))"), (3, 8)))
    '(3,(4,2)):(59,(13,1))'
    >>> str(composition(Layout.parse("(3,2):(2,1)"), Layout.parse("2:2")))
    '2:4'
    """
    if type(a) is Layout and type(b) is Layout:  # the common case, first
        return _readable(_compose_plain(a, b), "composition")
    return _readable(_composition(a, b), "composition")


def _composition(a: Any, b: Tiler) -> Any:
    """:func:`composition` without the result check (the algebra's inner calls)."""
    if type(a) is Layout and type(b) is Layout:
        return _compose_plain(a, b)
    if isinstance(a, Swizzle):
        return ComposedLayout(a, Int(0), as_layout(b))
    a = a if isinstance(a, Layout) else Layout.parse(a) if isinstance(a, str) else make_layout(a)
    t = _tiler(b)
    if isinstance(t, tuple):
        modes = _as_modes(a)
        if len(t) > len(modes):
            raise AlgebraError(f"composition: tiler of rank {len(t)} is longer than {a} (rank {len(modes)})")
        return _concat(m if ti is it._ else _composition(m, ti) for m, ti in zip(modes, t))
    if t is it._:
        return a
    return _compose_plain(a, t)


def _require_extents(layout: Layout, op: str) -> None:
    """CuTe's algebra divides by extents: a zero extent has no answer there."""
    if 0 in it.flatten(layout.shape):
        raise AlgebraError(f"{op}: {layout} has a zero extent; CuTe's layout algebra needs extents >= 1")


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
        raise LayoutError(f"complement: the cotarget must be an int or a shape, got {cotarget!r}"[:200])
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


def _flat_result(shapes: list[int], strides: list[int], bound: int, op: str | None) -> Layout:
    """The flat layout ``shapes:strides`` (already coalesced); for a public entry ``op``, the
    readable check of :func:`_readable`, skipped when ``bound`` (no less than any of its ints) is
    small."""
    out = layout_of_lists(shapes, strides)
    if op is not None and not _NEG_SMALL < bound < _SMALL:
        _check_readable(out._shape, out._stride, op)
    return out


def _by_stride(cs: list[int], cd: list[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """For the flat modes ``cs:cd``: ``(|stride|, position)`` sorted (ties left to right: a stable
    order), and the exclusive prefix products of ``cs`` (their compact column-major strides)."""
    keys = []
    pre = []
    p = 1
    k = 0
    for d in cd:
        keys.append((d if d >= 0 else -d, k))
        pre.append(p)
        p *= cs[k]
        k += 1  # noqa: SIM113 - enumerate() costs more than the loop
    keys.sort()
    return keys, pre


def right_inverse(layout: Layout) -> Layout:
    """``R`` with ``L(R(i)) = i`` for ``i < size(R)`` (the largest such, as C++).

    >>> str(right_inverse(Layout.parse("(2,4,6):(4,1,8)")))
    '(4,2,6):(2,1,8)'
    """
    layout = _layout_arg(layout)
    cs, cd = coalesce_lists(layout._shape, layout._stride)
    if 0 in cs:  # coalescing keeps a zero extent (it drops only 1s)
        _require_extents(layout, "right_inverse")
    keys, pre = _by_stride(cs, cd)
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for ad, k in keys:
        if ad != cur:
            if ad > cur:
                break
            continue
        s = cs[k]
        shapes.append(s)
        strides.append(pre[k] if cd[k] > 0 else -pre[k])
        cur = s * ad
    size = pre[-1] * cs[-1] if cs else 1  # bounds every int: distinct extents, their strides
    # already coalesced: two result modes k, k+1 join only where the input's modes k, k+1 did
    return _flat_result(shapes, strides, size, "right_inverse")


def _quasi_inverse(cs: list[int], cd: list[int], layout: Layout) -> Layout:
    """C++'s left_inverse fold over the coalesced modes ``cs:cd``, sorted by stride (stable)."""
    keys, pre = _by_stride(cs, cd)
    order = [k for ad, k in keys if ad]
    if not order:  # all strides 0: C++ keeps the shape of the last mode, stride 0
        return layout_of_lists(*coalesce_lists([cs[-1]], [0]))
    shapes: list[int] = []
    strides: list[int] = [0]
    covered = 1
    for k in order:
        d = cd[k] if cd[k] > 0 else -cd[k]
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
    cs, cd = coalesce_lists(layout._shape, layout._stride)
    if 0 in cs:  # coalescing keeps a zero extent (it drops only 1s)
        _require_extents(layout, "left_inverse")
    if not cs:
        cs, cd = [1], [0]
    inv = _quasi_inverse(cs, cd, layout)
    if nested(cs, cd) or quasi_holds(layout, inv):
        return _readable(inv, "left_inverse")
    raise AlgebraError(f"left_inverse: C++'s quasi-inverse {inv} of {layout} breaks L(R(L(i))) = L(i), "
                       "so no left inverse is given")


# ---------------------------------------------------------------- divides


def _divide_by_mode(a: Layout, t: Any, op: Any) -> Layout:
    if isinstance(t, tuple):
        modes = _as_modes(a)
        if len(t) > len(modes):
            raise AlgebraError(f"tiler of rank {len(t)} is longer than {a} (rank {len(modes)})")
        return _concat(_divide_by_mode(m, t[i], op) if i < len(t) else m for i, m in enumerate(modes))
    if t is it._:
        return a
    return op(a, t)


def _divide_layout(a: Layout, b: Layout) -> Layout:
    c = _complement(b, it.product(a._shape))
    return _compose_plain(a, _mk((b._shape, c._shape), (b._stride, c._stride)))


def logical_divide(a: Layout, tiler: Tiler) -> Layout:
    """``A ∘ (B, complement(B, size A))``: (the tile, the layout of tiles); tuple tilers work by mode.

    >>> str(logical_divide(Layout.parse("(6,8):(8,1)"), (3, 4)))
    '((3,2),(4,2)):((8,24),(1,4))'
    """
    a = a if isinstance(a, Layout) else Layout.parse(a)
    if type(tiler) is Layout:
        return _readable(_divide_layout(a, tiler), "logical_divide")
    return _readable(_divide_by_mode(a, _tiler(tiler), _divide_layout), "logical_divide")


def _zip2(layout: Layout, t: Any) -> tuple[Layout, Layout]:
    """Split a by-mode result into (the tiles, the rests), C++'s ``zip2_by``.

    A layout or ``_`` entry of the guide takes a rank-2 mode apart; a tuple entry recurses.
    """
    modes = _as_modes(layout)
    if not isinstance(t, tuple):
        if len(modes) != 2 or not isinstance(layout.shape, tuple):
            raise AlgebraError(f"zip2_by: the mode {layout} under a '_' tiler entry must have rank 2 "
                               "(C++ rejects it at compile time)")
        return modes[0], modes[1]
    if len(t) > len(modes):
        raise AlgebraError(f"zip2_by: tiler of rank {len(t)} is longer than {layout}")
    firsts: list[Layout] = []
    rests: list[Layout] = []
    for m, ti in zip(modes, t):
        f, r = _zip2(m, ti)
        firsts.append(f)
        rests.append(r)
    return _concat(firsts), _concat(rests + list(modes[len(t):]))


def _unpack(layout: Layout) -> list[Layout]:
    """The modes C++'s ``result(_, repeat<R>(_))`` lifts: a rank-1 mode (an int or a 1-tuple) stays whole."""
    if isinstance(layout.shape, tuple) and len(layout.shape) != 1:
        return list(layout.modes())
    return [layout]


def _zipped(logical: Any, a: Layout, tiler: Tiler) -> Layout:
    """``((T…),(R…,L…))`` from a by-mode logical divide or product."""
    t = _tiler(tiler)
    if isinstance(t, Layout):
        return logical(a, t)
    tiles, rests = _zip2(logical(a, t), t)
    return _concat([tiles, rests])


def _tiled(z: Layout) -> Layout:
    """``((T…),R…,L…)``: mode 1 of a zipped result unpacked."""
    return _concat([z[0], *_unpack(z[1])])


def _flat(z: Layout) -> Layout:
    """``(T…,R…,L…)``: both modes of a zipped result unpacked."""
    return _concat([*_unpack(z[0]), *_unpack(z[1])])


def zipped_divide(a: Layout, tiler: Tiler) -> Layout:
    """``((TM,TN),(RM,RN,L…))``."""
    return _zipped(logical_divide, a, tiler)


def tiled_divide(a: Layout, tiler: Tiler) -> Layout:
    """``((TM,TN),RM,RN,L…)``."""
    return _tiled(zipped_divide(a, tiler))


def flat_divide(a: Layout, tiler: Tiler) -> Layout:
    """``(TM,TN,RM,RN,L…)``."""
    return _flat(zipped_divide(a, tiler))


# ---------------------------------------------------------------- products


def _tiles(a: Layout, b: Layout) -> Layout:
    """Mode 1 of ``logical_product(a, b)``: ``complement(a, size(a)·cosize(b)) ∘ b``."""
    shapes, strides, _ = _complement_modes(a, it.product(a._shape) * cosize(b), False)
    comp = layout_of_lists(shapes, strides)
    if not shapes:  # 1:0, whose composition extends it to 2:0 (see _coalesce_x)
        return _compose_plain(comp, b)
    if 0 in shapes:
        _require_extents(comp, "composition")
    return _compose_plain(comp, b, (shapes, strides))  # coalesced already: its own _coalesce_x


def _product_layout(a: Layout, b: Layout) -> Layout:
    c = _tiles(a, b)
    return _mk((a._shape, c._shape), (a._stride, c._stride))


def logical_product(a: Layout, tiler: Tiler) -> Layout:
    """``(A, complement(A, size A · cosize B) ∘ B)``; tuple tilers work by mode.

    >>> str(logical_product(Layout.parse("(2,2):(4,1)"), 6))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    return _readable(_logical_product(a, tiler), "logical_product")


def _logical_product(a: Layout, tiler: Tiler) -> Layout:
    """:func:`logical_product` without the result check."""
    a = a if isinstance(a, Layout) else Layout.parse(a)
    if type(tiler) is Layout:
        return _product_layout(a, tiler)
    return _divide_by_mode(a, _tiler(tiler), _product_layout)


def zipped_product(a: Layout, tiler: Tiler) -> Layout:
    """``((M,N),(TM,TN,L…))``."""
    return _zipped(logical_product, a, tiler)


def tiled_product(a: Layout, tiler: Tiler) -> Layout:
    """``((M,N),TM,TN,L…)``."""
    return _tiled(zipped_product(a, tiler))


def flat_product(a: Layout, tiler: Tiler) -> Layout:
    """``(M,N,TM,TN,L…)``."""
    return _flat(zipped_product(a, tiler))


def _rank(shape: Any) -> int:
    return len(shape) if type(shape) is tuple else 1


def _pad_rank(layout: Layout, r: int) -> Layout:
    """C++'s ``append<r>``: pad with ``1:0`` modes up to rank ``r`` (a layout of rank r stays as is)."""
    shape: Any = layout._shape
    stride: Any = layout._stride
    pad = r - _rank(shape)
    if pad <= 0:
        return layout
    if type(shape) is not tuple:
        shape, stride = (shape,), (stride,)
    return _mk(shape + (1,) * pad, stride + (0,) * pad)


def _zip_pair(x: Layout, y: Layout) -> Layout:
    """C++'s ``zip(x, y)``: ``((x0,y0),(x1,y1),…)`` when ``x`` is a tuple, else ``((x,y))``."""
    xs: Any = x._shape
    ys: Any = y._shape
    xd: Any = x._stride
    yd: Any = y._stride
    if type(xs) is not tuple:
        return _mk(((xs, ys),), ((xd, yd),))
    if type(ys) is not tuple or len(ys) != len(xs):
        raise AlgebraError(f"zip: {x} and {y} have mismatched ranks")
    shapes = []
    strides = []
    i = 0
    for s in xs:
        shapes.append((s, ys[i]))
        strides.append((xd[i], yd[i]))
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
    return _mk(tuple(shapes), tuple(strides))


def blocked_product(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` is ``(A_i, tile_i)``: ``b`` arranges copies of the block ``a``.

    >>> str(blocked_product(Layout.parse("(3,4):(4,1)"), Layout.parse("(2,5):(1,2)")))
    '((3,2),(4,5)):((4,12),(1,24))'
    """
    return _readable(_blocked_product(_layout_arg(a), _layout_arg(b)), "blocked_product")


def _padded_product(a: Layout, b: Layout) -> tuple[Layout, Layout]:
    """The two modes of ``logical_product`` of ``a`` and ``b`` padded to equal rank (C++'s
    ``append<r>``): (the block, the tiles)."""
    ra, rb = _rank(a._shape), _rank(b._shape)
    r = ra if ra > rb else rb
    block = _pad_rank(a, r)
    return block, _tiles(block, _pad_rank(b, r))


def _blocked_product(a: Layout, b: Layout) -> Layout:
    """:func:`blocked_product` without the argument and result checks."""
    block, tiles = _padded_product(a, b)
    return _zip_pair(block, tiles)


def raked_product(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` is ``(tile_i, A_i)``: an interleaved (cyclic) arrangement."""
    block, tiles = _padded_product(_layout_arg(a), _layout_arg(b))
    return _readable(_zip_pair(tiles, block), "raked_product")


def tile_to_shape(a: Layout, target: IntTuple, order: IntTuple | str | None = None) -> Layout:
    """Repeat the block ``a`` to fill ``target`` (each extent must be a multiple of the block's).

    >>> str(tile_to_shape(Layout.parse("(2,2):(1,2)"), (8, 8)))
    '((2,4),(2,4)):((1,4),(2,16))'
    """
    a = _layout_arg(a)
    if not it._valid(target):
        raise LayoutError(f"tile_to_shape: the target must be a shape, got {target!r}"[:200])
    trg = target if isinstance(target, tuple) else (target,)
    a = _pad_rank(a, len(trg))
    counts = []
    for i, (m, t) in enumerate(zip(_as_modes(a), trg)):
        n, ts = m.size(), it.product(t)
        if n == 0 or ts % n:
            raise AlgebraError(f"tile_to_shape: mode {i} of the block has size {n}, which does not "
                               f"divide the target extent {ts}")
        counts.append(ts // n)
    shape = tuple(counts)
    if order is None or order == "LayoutLeft":
        tiles = make_layout(shape)
    elif order == "LayoutRight":
        tiles = make_layout(shape, "LayoutRight")
    else:
        tiles = make_ordered_layout(shape, order)  # type: ignore[arg-type]
    return _readable(_blocked_product(a, tiles), "tile_to_shape")


def _layout_arg(x: Any) -> Layout:
    return x if type(x) is Layout else as_layout(x)


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


# ---------------------------------------------------------------- tensor-level partitioning


def local_tile(layout: Layout, tiler: Tiler, coord: Sequence[int] | int) -> tuple[Layout, int]:
    """The tile at ``coord`` of ``zipped_divide(layout, tiler)``: (tile layout, its offset)."""
    z = zipped_divide(layout, tiler)
    return z[0], z[1](coord if isinstance(coord, int) else tuple(coord))


def local_partition(layout: Layout, threads: Layout, index: int) -> tuple[Layout, int]:
    """Thread ``index``'s elements when ``threads`` tiles ``layout``: (its layout, its offset)."""
    z = zipped_divide(layout, threads.shape if isinstance(threads.shape, tuple) else (threads.shape,))
    return z[1], z[0](it.idx2crd(index, threads.shape))
