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

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Union

from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.int_tuple import IntTuple, ceil_div
from tensorlayout.cute.layout import (
    Layout,
    _as_modes,
    _coalesce_flat,
    _concat,
    _mk,
    as_layout,
    coalesce,
    cosize,
    make_layout,
    make_ordered_layout,
)
from tensorlayout.errors import AlgebraError, LayoutError

__all__ = [
    "blocked_product", "clear_caches", "complement", "composition", "flat_divide", "flat_product",
    "left_inverse", "local_partition", "local_tile", "logical_divide", "logical_product",
    "max_common_layout", "max_common_vector", "nullspace", "raked_product",
    "right_inverse", "tile_to_shape", "tiled_divide", "tiled_product", "zipped_divide",
    "zipped_product",
]

F = TypeVar("F", bound=Callable[..., Any])

#: A tiler: a Layout, an int ``n`` (``n:1``), or a tuple of tilers / ``_`` / None, one per mode.
Tiler = Union[Layout, int, str, tuple[Any, ...], list[Any], None]  # noqa: UP007


_CACHES: list[Any] = []


def _freeze(x: Any) -> Any:
    return tuple(_freeze(v) for v in x) if isinstance(x, (list, tuple)) else x


def _memo(fn: F) -> F:
    """Memoise a pure layout function (layouts are immutable values); lists become tuples."""
    cached = functools.lru_cache(maxsize=1 << 14)(fn)
    _CACHES.append(cached)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        frozen = tuple(_freeze(a) for a in args)
        try:
            hash(frozen)
        except TypeError:
            raise LayoutError(f"{fn.__name__}: arguments must be layouts, layout text, ints or tuples "
                              "of them") from None
        return cached(*frozen, **kwargs)
    return wrapper  # type: ignore[return-value]


def _raw(fn: F) -> F:
    """The un-memoised function behind a public one (inner steps need no cache of their own)."""
    return getattr(fn, "__wrapped__", fn)  # type: ignore[no-any-return]


def clear_caches() -> None:
    """Forget every memoised result (for benchmarks that measure cold calls)."""
    for c in _CACHES:
        c.cache_clear()


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _tiler(b: Any) -> Any:
    """Normalise a tiler: Layout / tuple of tilers / ``_``; text and ints become layouts."""
    if isinstance(b, Layout) or b is it._ or b is None:
        return it._ if b is None else b
    if isinstance(b, str):
        return it._ if b.strip() == "_" else Layout.parse(b)
    if it.is_int(b):
        if b < 0:
            raise AlgebraError(f"a tiler extent must be non-negative, got {b}")
        return _mk(b, 1)
    if isinstance(b, (tuple, list)):
        return tuple(_tiler(x) for x in b)
    raise AlgebraError(f"expected a layout, an int, '_' or a tuple of them as a tiler, got {b!r}")


# ---------------------------------------------------------------- composition


def _coalesce_x(layout: Layout) -> list[tuple[int, int]]:
    """Coalesce keeping the function defined past ``size``: a trailing ``1:d`` acts as ``2:d``."""
    modes = layout.flat_modes()
    last_s, last_d = modes[-1]
    acc: list[list[int]] = [[2 if last_s == 1 else last_s, last_d]]
    for s, d in reversed(modes[:-1]):
        if s == 1:
            continue
        if acc[0][0] == 1:
            acc[0] = [s, d]
        elif acc[0][1] == s * d:
            acc[0] = [s * acc[0][0], d]
        else:
            acc.insert(0, [s, d])
    return [(s, d) for s, d in acc]


def _compose_mode(flat: list[tuple[int, int]], lhs: Layout, s: int, d: int) -> Layout:
    if d == 0:
        return _mk(s, 0)
    shapes: list[int] = []
    strides: list[int] = []
    rest_shape, rest_stride = s, d
    for k, (cs, cd) in enumerate(flat[:-1]):
        ars = abs(rest_stride)
        if not (ars % cs == 0 or ars < cs):
            raise AlgebraError(
                f"composition: stride divisibility fails: stride {rest_stride} neither is a multiple "
                f"of nor is smaller than extent {cs} of mode {k} of coalesced {lhs}")
        next_shape = ceil_div(cs, ars)
        next_stride = ceil_div(ars, cs) * _sign(rest_stride)
        if next_shape != 1 and rest_shape != 1:
            if ars < cs and cs % ars:
                raise AlgebraError(
                    f"composition: stride divisibility fails: stride {rest_stride} does not divide "
                    f"extent {cs} of mode {k} of coalesced {lhs}, so the steps wrap unevenly")
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                raise AlgebraError(
                    f"composition: shape divisibility fails: {rest_shape} elements remain but mode {k} "
                    f"of coalesced {lhs} supplies {new_shape}, which does not divide it")
            shapes.append(new_shape)
            strides.append(rest_stride * cd)
            rest_shape //= new_shape
        rest_stride = next_stride
    last_d = flat[-1][1]
    if not shapes:
        return _mk(rest_shape, rest_stride * last_d)
    if rest_shape != 1:
        shapes.append(rest_shape)
        strides.append(rest_stride * last_d)
    if len(shapes) == 1:
        return _mk(shapes[0], strides[0])
    return _mk(tuple(shapes), tuple(strides))


def _compose_layout(lhs: Layout, flat: list[tuple[int, int]], rshape: Any, rstride: Any) -> Layout:
    if isinstance(rshape, tuple):
        parts = [_compose_layout(lhs, flat, s, d) for s, d in zip(rshape, rstride)]
        return _mk(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    return _compose_mode(flat, lhs, rshape, rstride)


@_memo
def composition(a: Layout, b: Tiler) -> Layout:
    """``R = A ∘ B`` with ``R(i) = A(B(i))``; ``B`` may be a layout or a tiler (tuple, by mode).

    A tuple tiler shorter than ``A``'s rank drops ``A``'s remaining modes, as C++ does.

    >>> str(composition(Layout.parse("(12,(4,8)):(59,(13,1))"), (3, 8)))
    '(3,(4,2)):(59,(13,1))'
    """
    a = a if isinstance(a, Layout) else Layout.parse(a) if isinstance(a, str) else make_layout(a)
    t = _tiler(b)
    if isinstance(t, tuple):
        modes = _as_modes(a)
        if len(t) > len(modes):
            raise AlgebraError(f"composition: tiler of rank {len(t)} is longer than {a} (rank {len(modes)})")
        return _concat(m if ti is it._ else composition(m, ti) for m, ti in zip(modes, t))
    if t is it._:
        return a
    flat = _coalesce_x(a)
    _check_no_carry(a, flat, t)
    return _compose_layout(a, flat, t.shape, t.stride)


def _max_digit(s: int, d: int, prefix: int, radix: int) -> int:
    """``max over j < s of (j·d // prefix) mod radix``, in O(1) for the common cases."""
    if (s - 1) * d < prefix:
        return 0
    if d % prefix == 0:
        q = (d // prefix) % radix
        if q == 0:
            return 0
        if (s - 1) * q < radix:
            return (s - 1) * q
        g = math.gcd(q, radix)
        if s >= radix // g:
            return radix - g
    if s > 4096:
        return radix - 1
    return max((j * d // prefix) % radix for j in range(s))


def _check_no_carry(a: Layout, flat: list[tuple[int, int]], b: Layout) -> None:
    """``A ∘ (B0, B1, …)`` is built mode by mode, which is right only if adding the modes' values
    never carries between digits of ``A`` (CuTe assumes it; C++ returns a wrong layout when not).

    Digit ``p`` of the coalesced ``A`` (radix ``a_p``, not the top one) must satisfy
    ``Σ_k max_j digit_p(j·d_k) < a_p`` over ``B``'s modes ``s_k:d_k``.
    """
    modes = [(s, d) for s, d in b.flat_modes() if s > 1 and d != 0]
    if len(modes) < 2 or len(flat) < 2 or any(d < 0 for _, d in modes):
        return
    prefix = 1
    for p, (radix, _) in enumerate(flat[:-1]):
        total = 0
        for s, d in modes:
            total += _max_digit(s, d, prefix, radix)
        if total >= radix:
            raise AlgebraError(
                f"composition: the modes of {b} carry between digits of {a} (their digits in mode {p} "
                f"of the coalesced layout add up past its extent {radix}), so A∘B is not a layout "
                "built mode by mode; C++ returns a wrong layout here")
        prefix *= radix


# ---------------------------------------------------------------- complement and inverses


@_memo
def complement(a: Layout, cotarget: IntTuple | None = None, *, strict: bool = False) -> Layout:
    """The ordered layout of what ``a`` leaves out of ``[0, cotarget)``.

    Default cotarget: ``cosize(filter(a))`` (C++). Raises when ``a`` is not injective (overlapping
    strides), as C++'s static assertion does. When a stride is not a multiple of the span below it
    (``(4,10):(1,10)``), no exact complement exists; C++ still returns one (``2:4``) and so do we
    for parity, unless ``strict=True``, which raises instead.

    >>> str(complement(Layout.parse("(2,2):(1,6)"), 24))
    '(3,2):(2,12)'
    """
    a = _layout_arg(a)
    if cotarget is not None and not it._valid(cotarget):
        raise LayoutError(f"complement: the cotarget must be an int or a shape, got {cotarget!r}"[:200])
    modes = [(s, d) for s, d in zip(it.flatten(a.shape), it.flatten(a.stride)) if d != 0 and s != 1]
    if cotarget is None:
        m = 1 + sum((s - 1) * abs(d) for s, d in modes)
    else:
        m = it.product(cotarget)
    if not modes:
        return coalesce(make_layout(m))
    if any(d < 0 for _, d in modes):
        raise AlgebraError(f"complement: {a} has a negative stride; complement needs positive strides")
    modes.sort(key=lambda sd: (sd[1], sd[0]))
    shapes: list[int] = []
    strides: list[int] = []
    cur = 1
    for s, d in modes:
        if d < cur:
            raise AlgebraError(f"complement: {a} is not injective: stride {d} of mode {s}:{d} falls "
                               f"inside the span {cur} of the smaller-stride modes")
        if strict and d % cur:
            raise AlgebraError(f"complement: stride {d} of mode {s}:{d} is not a multiple of {cur}, the "
                               f"span of the smaller-stride modes of {a}, so no complement exists")
        shapes.append(d // cur)
        strides.append(cur)
        cur = d * s
    shapes.append(ceil_div(m, cur))
    strides.append(cur)
    return _coalesce_flat(list(zip(shapes, strides)))


@_memo
def right_inverse(layout: Layout) -> Layout:
    """``R`` with ``L(R(i)) = i`` for ``i < size(R)`` (the largest such, as C++).

    >>> str(right_inverse(Layout.parse("(2,4,6):(4,1,8)")))
    '(4,2,6):(2,1,8)'
    """
    layout = _layout_arg(layout)
    c = coalesce(layout)
    modes = c.flat_modes()
    pre = it.flatten(it.prefix_product(tuple(s for s, _ in modes)))
    order = sorted(range(len(modes)), key=lambda k: abs(modes[k][1]))
    out: list[tuple[int, int]] = []
    cur = 1
    for k in order:
        s, d = modes[k]
        if abs(d) != cur or s == 1:
            if abs(d) > cur:
                break
            continue
        out.append((s, _sign(d) * pre[k]))
        cur = s * abs(d)
    return _coalesce_flat(out)


@_memo
def left_inverse(layout: Layout) -> Layout:
    """``R`` with ``R(L(i)) = i`` on ``L``'s domain; off the image it follows C++ (stride-0 fill).

    Raises :class:`AlgebraError` when ``L`` is not injective or its strides do not nest.

    >>> str(left_inverse(Layout.parse("4:2"))), str(left_inverse(Layout.parse("(4,2):(1,16)")))
    ('(2,4):(0,1)', '(16,2):(1,4)')
    """
    layout = _layout_arg(layout)
    c = coalesce(layout)
    modes = c.flat_modes()
    pre = it.flatten(it.prefix_product(tuple(s for s, _ in modes)))
    live = sorted((abs(d), s, pre[k]) for k, (s, d) in enumerate(modes) if d != 0 and s != 1)
    if not live:
        return _mk(1, 0)
    shapes = [live[0][0]]
    strides = [0]
    for (d0, s0, p0), (d1, _, _) in itertools.pairwise(live):
        if d1 < d0 * s0 or d1 % d0:
            raise AlgebraError(f"left_inverse: {layout} is not injective with nested strides "
                               f"(stride {d1} after mode {s0}:{d0})")
        shapes.append(d1 // d0)
        strides.append(p0)
    shapes.append(live[-1][1])
    strides.append(live[-1][2])
    return _coalesce_flat(list(zip(shapes, strides)))


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
    n = a.size()
    return _raw(composition)(a, make_layout(b, _raw(complement)(b, n)))


@_memo
def logical_divide(a: Layout, tiler: Tiler) -> Layout:
    """``A ∘ (B, complement(B, size A))``: (the tile, the layout of tiles); tuple tilers work by mode.

    >>> str(logical_divide(Layout.parse("(6,8):(8,1)"), (3, 4)))
    '((3,2),(4,2)):((8,24),(1,4))'
    """
    a = a if isinstance(a, Layout) else Layout.parse(a)
    return _divide_by_mode(a, _tiler(tiler), _divide_layout)


def _zip2(layout: Layout, t: Any) -> tuple[Layout, Layout]:
    """Split a by-mode result into (the tiles, the rests), C++'s ``zip2_by``."""
    if not isinstance(t, tuple):
        return layout[0], layout[1]
    modes = _as_modes(layout)
    firsts: list[Layout] = []
    rests: list[Layout] = []
    for i, m in enumerate(modes):
        if i < len(t) and t[i] is not it._:
            f, r = _zip2(m, t[i])
            firsts.append(f)
            rests.append(r)
        elif i < len(t):
            firsts.append(m)
        else:
            rests.append(m)
    return _concat(firsts), _concat(rests)


def _unpack(layout: Layout) -> list[Layout]:
    return list(_as_modes(layout))


def _zipped(logical: Any, a: Layout, tiler: Tiler) -> Layout:
    """``((T…),(R…,L…))`` from a by-mode logical divide or product."""
    t = _tiler(tiler)
    if not isinstance(t, tuple):
        return logical(a, t)  # type: ignore[no-any-return]
    tiles, rests = _zip2(logical(a, t), t)
    return _concat([tiles, rests])


def _tiled(z: Layout) -> Layout:
    """``((T…),R…,L…)``: mode 1 of a zipped result unpacked."""
    return _concat([z[0], *_unpack(z[1])])


def _flat(z: Layout) -> Layout:
    """``(T…,R…,L…)``: both modes of a zipped result unpacked."""
    return _concat([*_unpack(z[0]), *_unpack(z[1])])


@_memo
def zipped_divide(a: Layout, tiler: Tiler) -> Layout:
    """``((TM,TN),(RM,RN,L…))``."""
    return _zipped(logical_divide, a, tiler)


@_memo
def tiled_divide(a: Layout, tiler: Tiler) -> Layout:
    """``((TM,TN),RM,RN,L…)``."""
    return _tiled(zipped_divide(a, tiler))


@_memo
def flat_divide(a: Layout, tiler: Tiler) -> Layout:
    """``(TM,TN,RM,RN,L…)``."""
    return _flat(zipped_divide(a, tiler))


# ---------------------------------------------------------------- products


def _product_layout(a: Layout, b: Layout) -> Layout:
    rest = _raw(complement)(a, a.size() * cosize(b))
    return make_layout(a, _raw(composition)(rest, b))


@_memo
def logical_product(a: Layout, tiler: Tiler) -> Layout:
    """``(A, complement(A, size A · cosize B) ∘ B)``; tuple tilers work by mode.

    >>> str(logical_product(Layout.parse("(2,2):(4,1)"), 6))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    a = a if isinstance(a, Layout) else Layout.parse(a)
    return _divide_by_mode(a, _tiler(tiler), _product_layout)


@_memo
def zipped_product(a: Layout, tiler: Tiler) -> Layout:
    """``((M,N),(TM,TN,L…))``."""
    return _zipped(logical_product, a, tiler)


@_memo
def tiled_product(a: Layout, tiler: Tiler) -> Layout:
    """``((M,N),TM,TN,L…)``."""
    return _tiled(zipped_product(a, tiler))


@_memo
def flat_product(a: Layout, tiler: Tiler) -> Layout:
    """``(M,N,TM,TN,L…)``."""
    return _flat(zipped_product(a, tiler))


def _pad_rank(layout: Layout, r: int) -> Layout:
    modes = list(_as_modes(layout))
    return _concat(modes + [_mk(1, 0)] * (r - len(modes)))


@_memo
def blocked_product(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` is ``(A_i, tile_i)``: ``b`` arranges copies of the block ``a``.

    >>> str(blocked_product(Layout.parse("(3,4):(4,1)"), Layout.parse("(2,5):(1,2)")))
    '((3,2),(4,5)):((4,12),(1,24))'
    """
    a, b = _layout_arg(a), _layout_arg(b)
    r = max(a.rank(), b.rank())
    a, b = _pad_rank(a, r), _pad_rank(b, r)
    p = logical_product(a, b)
    return _concat(_concat((x, y)) for x, y in zip(_as_modes(p[0]), _as_modes(p[1])))


@_memo
def raked_product(a: Layout, b: Layout) -> Layout:
    """Mode ``i`` is ``(tile_i, A_i)``: an interleaved (cyclic) arrangement."""
    a, b = _layout_arg(a), _layout_arg(b)
    r = max(a.rank(), b.rank())
    a, b = _pad_rank(a, r), _pad_rank(b, r)
    p = logical_product(a, b)
    return _concat(_concat((y, x)) for x, y in zip(_as_modes(p[0]), _as_modes(p[1])))


@_memo
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
    return blocked_product(a, tiles)


def _layout_arg(x: Any) -> Layout:
    return as_layout(x)


def nullspace(layout: Layout) -> Layout:
    """The stride-0 modes, with the compact strides of their positions.

    >>> str(nullspace(Layout.parse("((2,2),4):((1,0),2)")))
    '2:2'
    """
    layout = _layout_arg(layout)
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    pre = it.flatten(it.prefix_product(fs))
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
