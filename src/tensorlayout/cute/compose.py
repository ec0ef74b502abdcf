"""CuTe's composition with C++ semantics, and the checks every algebra operation shares.

Where C++ rejects an input with a static assertion, we raise :class:`AlgebraError` naming the
condition and the modes involved (pycute asserts, the DSL may return a wrong layout).

>>> str(composition(Layout.parse("(6,2):(8,2)"), Layout.parse("(4,3):(3,1)")))
'((2,2),3):((24,2),8)'
"""

from __future__ import annotations

from typing import Any, Union

from tensorlayout.cute import int_tuple as it
from tensorlayout.cute._checks import Prefixes, carries, div, dividing_prefix, holds, mul
from tensorlayout.cute.coalescing import coalesce_lists, layout_of_lists
from tensorlayout.cute.int_tuple import Int
from tensorlayout.cute.layout import (
    Layout,
    _as_modes,
    _concat,
    _count,
    _mk,
    as_layout,
    make_layout,
)
from tensorlayout.cute.swizzle import ComposedLayout, Swizzle
from tensorlayout.errors import AlgebraError

__all__ = ["clear_caches", "composition"]

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
        raise _too_long(op)


def _too_long(op: str) -> AlgebraError:
    """The refusal of a result holding an integer past what CuTe text reads back."""
    return AlgebraError(f"{op}: the result holds an integer of more than {it.MAX_DIGITS} digits, "
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
            elif y < 0 and -y > big:  # no negation of a positive long int
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


def _tiler(b: Any, level: int = 0) -> Any:
    """Normalise a tiler: Layout / tuple of tilers / ``_``; text and ints become layouts
    (tuples nested at most ``MAX_DEPTH`` levels, the rule of IntTuples)."""
    if isinstance(b, Layout) or b is it._ or b is None:
        return it._ if b is None else b
    if isinstance(b, str):
        return it._ if b.strip() == "_" else Layout.parse(b)
    if it.is_int(b):
        if b < 1:
            raise AlgebraError(f"a tiler extent must be positive, got {_count(b)}")
        return _mk(b, 0 if b == 1 else 1)  # make_layout(Int<1>) is 1:0 in C++
    if isinstance(b, (tuple, list)):
        if not b:
            raise AlgebraError("a tiler tuple needs at least one entry (an empty one leaves an empty mode)")
        if level >= it.MAX_DEPTH:
            raise AlgebraError(f"a tiler nests at most {it.MAX_DEPTH} levels of tuples")
        return tuple([_tiler(x, level + 1) for x in b])
    raise AlgebraError(f"expected a layout, an int, '_' or a tuple of them as a tiler, got {it.describe(b)}")


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


def _compose_mode(lhs: Layout, cs: list[int], cd: list[int], s: int, d: int, live: list[tuple[int, int, int]],
                  exact: list[bool], pre: Prefixes | None) -> tuple[Any, Any]:
    """``lhs ∘ s:d`` by C++'s fold over the coalesced ``lhs`` (``cs:cd``), as (shape, stride);
    clears ``exact[0]`` when a step wraps unevenly; a mode that moves (``s > 1``) over several
    modes of ``lhs`` goes to ``live`` as ``(s, d, the modes its stride skips)`` for the carry check.
    ``pre`` is None for a short ``lhs`` (see :func:`_short`): the skipped modes are then found one
    by one instead of by :func:`dividing_prefix`.

    Each step is C++'s ``(next_shape, next_stride)`` after its static "Stride Divisibility
    Condition" (``rest_stride % cs == 0 or rest_stride < cs``). A step wraps unevenly when
    ``rest_stride`` does not divide the extent and the remaining elements reach past it: C++
    then returns a layout that is not ``lhs ∘ s:d``.
    """
    if d == 0:
        return s, 0
    if s == 0:
        raise _zero_extent()
    m = len(cs) - 1
    if m == 0:
        return s, mul(d, cd[0])
    shapes: list[int] = []
    strides: list[int] = []
    rest_shape = s
    k, rest_stride = _skipped(cs, d, m, pre)
    if s > 1:
        live.append((s, d, k))
    while k < m:
        if rest_shape > _MANY:  # the steps that supply few of many elements, in batches
            k, rest_shape, rest_stride = _take_batched(lhs, cs, cd, k, rest_shape, rest_stride, shapes,
                                                       strides, exact)
            if k == m:
                break
        if rest_shape == 1 and (rest_stride == 1 or rest_stride == -1):
            break  # every later step keeps this state: nothing is appended
        c = cs[k]
        ars = rest_stride if rest_stride > 0 else -rest_stride
        if ars % c == 0:  # a multiple of the extent: this mode is skipped over
            rest_stride //= c
        elif ars > c:
            raise AlgebraError(
                f"composition: stride divisibility fails: stride {_count(rest_stride)} neither is a "
                f"multiple of nor is smaller than extent {_count(c)} of mode {k} of coalesced {lhs}")
        else:  # ars < c: the mode supplies ceil(c / ars) elements, then the stride steps by one
            if rest_shape != 1:
                new_shape = -(-c // ars)  # _supplied's rule, its call only where it refuses
                if new_shape >= rest_shape:
                    new_shape = rest_shape
                elif rest_shape % new_shape:
                    _supplied(lhs, k, c, ars, rest_shape)
                if c % ars and rest_shape > new_shape:
                    exact[0] = False
                shapes.append(new_shape)
                strides.append(mul(rest_stride, cd[k]))
                rest_shape //= new_shape
            rest_stride = 1 if rest_stride > 0 else -1
        k += 1
    return _mode_result(shapes, strides, rest_shape, mul(rest_stride, cd[m]))


def _skipped(cs: list[int], d: int, m: int, pre: Prefixes | None) -> tuple[int, int]:
    """How many leading modes of ``cs`` (of the first ``m``) stride ``d`` skips over, and the
    stride left: one by one for a short ``lhs`` (``pre`` None), else by :func:`dividing_prefix`.

    >>> _skipped([2, 3, 4], 12, 2, None)
    (2, 2)
    """
    if pre is None:  # a few word-sized extents: each a short division
        k = 0
        while k < m and d % cs[k] == 0:
            d //= cs[k]
            k += 1
        return k, d
    k = dividing_prefix(pre, d if d > 0 else -d, m)  # the modes skipped over, at once
    return k, div(d, pre, k)


def _supplied(lhs: Layout, k: int, c: int, ars: int, rest_shape: int) -> int:
    """How many of the ``rest_shape`` remaining elements mode ``k`` (extent ``c``, stepped by
    ``ars < c``) supplies: ``ceil(c / ars)`` at most; C++'s static check that it divides the rest."""
    new_shape = min(-(-c // ars), rest_shape)
    if rest_shape % new_shape:
        raise AlgebraError(
            f"composition: shape divisibility fails: {_count(rest_shape)} elements remain but mode "
            f"{k} of coalesced {lhs} supplies {_count(new_shape)}, which does not divide it")
    return new_shape


_MANY = 1 << 128  # past this many elements left, _compose_mode's steps run in batches
_WORD = 1 << 62


def _take_batched(lhs: Layout, cs: list[int], cd: list[int], k: int, rest_shape: int, rest_stride: int,
                  shapes: list[int], strides: list[int], exact: list[bool]) -> tuple[int, int, int]:
    """:func:`_compose_mode`'s steps from mode ``k`` while each supplies a word-sized number of
    elements and at least 2^63 times that many remain: then no step takes all that remain, and
    their divisibility is one long division per word of supplied extents (not one per step).
    Returns ``(k, rest_shape, rest_stride)`` where the step-by-step walk takes over."""
    m = len(cs) - 1
    batch: list[int] = []  # the modes whose pieces are not divided out of rest_shape yet
    acc = 1  # the product of those pieces
    room = rest_shape.bit_length() - 64
    while k < m:
        c = cs[k]
        ars = rest_stride if rest_stride > 0 else -rest_stride
        if ars % c == 0:
            rest_stride //= c
        else:
            new = -(-c // ars)
            if ars > c or (acc * new).bit_length() > room:
                break  # a refusal or a step that needs the exact remainder: step by step
            if c % ars:
                exact[0] = False
            shapes.append(new)
            strides.append(mul(rest_stride, cd[k]))
            batch.append(k)
            acc *= new
            rest_stride = 1 if rest_stride > 0 else -1
            if acc >= _WORD:
                rest_shape = _divide_out(lhs, rest_shape, acc, batch, shapes)
                acc = 1
                room = rest_shape.bit_length() - 64
        k += 1
    return k, _divide_out(lhs, rest_shape, acc, batch, shapes), rest_stride


def _divide_out(lhs: Layout, rest_shape: int, acc: int, batch: list[int], shapes: list[int]) -> int:
    """``rest_shape // acc``, ``acc`` the product of the last ``len(batch)`` pieces (supplied by
    the modes ``batch``, which it clears); where it does not divide, the step that fails raises."""
    q, r = divmod(rest_shape, acc) if acc != 1 else (rest_shape, 0)
    if r:
        for k, new in zip(batch, shapes[len(shapes) - len(batch):]):
            rest_shape //= _supplied(lhs, k, new, 1, rest_shape)
    batch.clear()
    return q


def _mode_result(shapes: list[int], strides: list[Any], rest_shape: int, last: Any) -> tuple[Any, Any]:
    """The composed mode: the pieces taken, then the rest over the last mode (stride ``last``)."""
    if not shapes:
        return rest_shape, last
    if rest_shape != 1:
        shapes.append(rest_shape)
        strides.append(last)
    if len(shapes) == 1:
        return shapes[0], strides[0]
    return tuple(shapes), tuple(strides)


def _compose_layout(lhs: Layout, cs: list[int], cd: list[int], rshape: Any, rstride: Any,
                    live: list[tuple[int, int, int]], exact: list[bool], pre: Prefixes | None,
                    limit: int) -> tuple[Any, Any]:
    """``lhs ∘ rshape:rstride`` mode by mode, as plain (shape, stride), filling ``live`` (see
    :func:`_compose_mode`); refuses at once a mode's stride of more than ``limit`` bits (the
    public call's result could not be read back: no need to build the rest)."""
    if type(rshape) is not tuple:
        return _compose_mode(lhs, cs, cd, rshape, rstride, live, exact, pre)
    shapes = []
    strides = []
    i = 0
    for s in rshape:
        d = rstride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            ps, pd = _compose_layout(lhs, cs, cd, s, d, live, exact, pre, limit)
        else:
            ps, pd = _compose_mode(lhs, cs, cd, s, d, live, exact, pre)
            if type(pd) is int and pd.bit_length() > limit:
                raise _too_long("composition")
        shapes.append(ps)
        strides.append(pd)
    return tuple(shapes), tuple(strides)


def _scale_modes(d0: int, rshape: Any, rstride: Any, limit: int, top: bool = True) -> tuple[Any, Any]:
    """``lhs ∘ rshape:rstride`` for an ``lhs`` that coalesces to one mode ``c:d0``: the rule of
    :func:`_compose_layout` with :func:`_compose_mode` at ``m == 0`` inlined (each leaf ``s:d``
    gives ``s:0`` when ``d == 0``, else ``s:d·d0``, refusing ``s == 0``; strides past ``limit``
    bits refused below the top level), in the same order, so the same answer or error."""
    if type(rshape) is not tuple:
        if rstride == 0:
            return rshape, 0
        if rshape == 0:
            raise _zero_extent()
        d = mul(rstride, d0)
        if not top and type(d) is int and d.bit_length() > limit:
            raise _too_long("composition")
        return rshape, d
    shapes = []
    strides = []
    i = 0
    for s in rshape:
        d = rstride[i]
        i += 1  # noqa: SIM113 - enumerate() costs more than the loop
        if type(s) is tuple:
            s, d = _scale_modes(d0, s, d, limit, False)
        elif d != 0:  # a leaf, inline: the rule above
            if s == 0:
                raise _zero_extent()
            d = mul(d, d0)
            if type(d) is int and d.bit_length() > limit:
                raise _too_long("composition")
        shapes.append(s)
        strides.append(d)
    return tuple(shapes), tuple(strides)


def _zero_extent() -> AlgebraError:
    """The refusal of a right-hand mode with a zero extent (and a non-zero stride)."""
    return AlgebraError("composition: the right-hand layout has a zero extent; CuTe's layout algebra "
                        "needs extents >= 1")


_SHORT = 8  # at most this many coalesced extents, each word-sized: no Prefixes for the walk


def _short(cs: list[int]) -> bool:
    """Whether the walk over the coalesced extents ``cs`` skips modes one by one (at most
    ``_SHORT`` steps of a short division each: no slower than :func:`dividing_prefix`'s set-up).

    >>> _short([4, 6, 5]), _short([2] * 9), _short([3, 1 << 70])
    (True, False, False)
    """
    return len(cs) <= _SHORT and max(cs) < _WORD


def _compose_plain(a: Layout, b: Layout, flat: tuple[list[int], list[int]] | None = None,
                   limit: int = -1) -> Layout:
    """``a ∘ b`` for a layout ``b``: C++'s answer, or AlgebraError where that answer is wrong.

    ``flat`` is :func:`_coalesce_x` of ``a`` when the caller has it already; ``limit`` (when not
    negative) the most bits a result's stride may have (see :func:`_compose_layout`)."""
    cs, cd = _coalesce_x(a) if flat is None else flat
    if len(cs) == 1:  # one mode: no step, no uneven wrap, no carry (carries() needs two extents)
        return _mk(*_scale_modes(cd[0], b._shape, b._stride, limit if limit >= 0 else 1 << 62))
    exact = [True]
    live: list[tuple[int, int, int]] = []
    pre = None if _short(cs) else Prefixes(cs)  # the products of the leading extents
    shape, stride = _compose_layout(a, cs, cd, b._shape, b._stride, live, exact, pre,
                                    limit if limit >= 0 else 1 << 62)
    out = _mk(shape, stride)
    if not exact[0]:
        if holds(a, b, out):
            return out
        raise AlgebraError(
            f"composition: a stride of {b} does not divide an extent of coalesced {a} and the "
            "elements wrap past it, so the steps wrap unevenly; C++ returns a wrong layout here")
    if len(live) > 1 and carries(Prefixes(cs) if pre is None else pre, cs, live) and not holds(a, b, out):
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
        return _readable(_compose_plain(a, b, limit=it.MAX_BITS), "composition")
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


def _flat_result(shapes: list[int], strides: list[int], bound: int, op: str | None) -> Layout:
    """The flat layout ``shapes:strides`` (already coalesced); for a public entry ``op``, the
    readable check of :func:`_readable`, skipped when ``bound`` (no less than any of its ints) is
    small."""
    out = layout_of_lists(shapes, strides)
    if op is not None and not _NEG_SMALL < bound < _SMALL:
        _check_readable(out._shape, out._stride, op)
    return out



def _layout_arg(x: Any) -> Layout:
    return x if type(x) is Layout else as_layout(x)

