"""CuTe's coordinate-valued layouts: scaled-basis strides (``_1@0``, ``E<i>``), ArithmeticTuples and
the counting tensors CuTe prints as ``ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)``.

A stride ``v@i`` is CuTe's ``ScaledBasis<v, i>``: ``v`` in mode ``i`` of a coordinate (``v@j@i``: mode
``i``, sub-mode ``j``, printed innermost first). Evaluating such a layout sums ``c·stride`` over its
leaves as ArithmeticTuples, so it maps an index to a coordinate. Static ints (``_N``, :class:`Int`)
stay static exactly where CuTe's compile-time arithmetic keeps them (``_0`` where no index reaches).

>>> I = parse_coord_layout("(2,3):(_1@0,_1@1)")
>>> str(I), str(I(3)), [str(I(i)) for i in range(3)]
('(2,3):(_1@0,_1@1)', '(1,1)', ['(0,0)', '(1,0)', '(0,1)'])
>>> str(parse_coord_layout("(_2,_4):(_1@1@0,_1@1)")(1))
'((_0,1),0)'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import reduce
from typing import Any, Union

from tensorlayout._cursor import Cursor, parsed_as
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.int_tuple import Int, IntTuple, format_int_tuple
from tensorlayout.cute.layout import Layout, read_layout
from tensorlayout.errors import LayoutError, ParseError

__all__ = [
    "ArithmeticTuple",
    "BasisCodec",
    "CoordLayout",
    "CountingTensor",
    "E",
    "ScaledBasis",
    "basis_add",
    "basis_crd2idx",
    "basis_mul",
    "decode_layout",
    "encode_layout",
    "make_basis_like",
    "make_counting_tensor",
    "make_identity_tensor",
    "parse_coord_layout",
    "read_coord_layout",
    "read_counting_tensor",
]


# ---------------------------------------------------------------- static-aware integers


def _static(x: Any) -> bool:
    return type(x) is Int


def _zero(x: Any) -> bool:
    """CuTe's ``C<0>``: a static zero."""
    return type(x) is Int and x == 0


def _int(value: int, static: bool) -> int:
    return Int(value) if static else int(value)


def _iadd(a: int, b: int) -> int:
    return _int(a + b, _static(a) and _static(b))


def _imul(a: int, b: int) -> int:
    """``a * b``; a static zero on either side gives a static zero (CuTe's ``C<0> * u``)."""
    if _zero(a) or _zero(b):
        return Int(0)
    return _int(a * b, _static(a) and _static(b))


def _idivmod(a: int, b: int) -> tuple[int, int]:
    """CuTe's ``divmod(a, b)``: ``x % C<±1>`` and ``C<0> / x``, ``C<0> % x`` are static zeros."""
    if b == 0:
        raise LayoutError("an index cannot split over a zero extent")
    q, r = abs(a) // abs(b), abs(a) % abs(b)  # C++ truncates toward zero
    q, r = (q if (a >= 0) == (b >= 0) else -q), (r if a >= 0 else -r)
    both = _static(a) and _static(b)
    div = Int(0) if _zero(a) else _int(q, both)
    mod = Int(0) if _zero(a) or (_static(b) and abs(b) == 1) else _int(r, both)
    return div, mod


# ---------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class ScaledBasis:
    """CuTe's ``ScaledBasis<T, modes...>``: ``value`` in the coordinate mode path ``modes``
    (outermost first); printed ``value@inner@...@outer``.

    >>> str(E(0, 1)), str(ScaledBasis(Int(8), (0,))), str(3 * E(1))
    ('_1@1@0', '_8@0', '3@1')
    """

    value: int
    modes: tuple[int, ...]

    def __post_init__(self) -> None:
        if not it.is_int(self.value) or not isinstance(self.modes, tuple) or not self.modes or not all(
                it.is_int(m) and m >= 0 for m in self.modes):
            raise LayoutError(f"a scaled basis is an int value over a non-empty path of mode "
                              f"indices, got {it.describe(self.value)}@{it.describe(self.modes)}")

    def __str__(self) -> str:
        return format_int_tuple(self.value) + "".join(f"@{m}" for m in reversed(self.modes))

    __repr__ = __str__

    def __mul__(self, other: int) -> Any:
        return basis_mul(other, self)

    __rmul__ = __mul__


def E(*modes: int) -> Any:
    """CuTe's ``E<modes...>``: the unit basis ``_1`` at ``modes`` (``E()`` is the static int 1).

    >>> E(), str(E(2))
    (_1, '_1@2')
    """
    if not all(it.is_int(m) and m >= 0 for m in modes):
        raise LayoutError(f"E<...> takes mode indices >= 0, got {it.describe(modes)}")
    return ScaledBasis(Int(1), tuple(modes)) if modes else Int(1)


class ArithmeticTuple(tuple):
    """CuTe's ``ArithmeticTuple``: a coordinate added position by position (the shorter padded
    with ``_0``); equal to the plain tuple of its entries.

    >>> t = ArithmeticTuple((Int(0), 6))
    >>> str(t), t == (0, 6), str(basis_add(t, E(0)))
    ('(_0,6)', True, '(_1,6)')
    """

    __slots__ = ()

    def __new__(cls, items: Any = ()) -> ArithmeticTuple:
        if not isinstance(items, (tuple, list, Iterator)):
            raise LayoutError(f"an ArithmeticTuple holds ints and tuples, got {it.describe(items)}")
        values = tuple(items)
        if not _valid_value(values, 0):
            raise LayoutError(f"an ArithmeticTuple holds ints and tuples nested at most {it.MAX_DEPTH} "
                              f"levels, got {it.describe(values)}")
        return super().__new__(cls, tuple(ArithmeticTuple(x) if type(x) is tuple else x for x in values))

    def __str__(self) -> str:
        return format_value(self)

    __repr__ = __str__


def _valid_value(t: tuple[Any, ...], level: int) -> bool:
    return level < it.MAX_DEPTH and all(
        it.is_int(x) or (isinstance(x, tuple) and _valid_value(x, level + 1)) for x in t)


Value = Union[int, ScaledBasis, ArithmeticTuple]  # noqa: UP007 - a runtime alias


def format_value(v: Any) -> str:
    """CuTe's print of a value: ``_3``, ``3``, ``3@1``, ``(0,(_0,2))``."""
    if isinstance(v, tuple):
        return "(" + ",".join(format_value(x) for x in v) + ")"
    return str(v) if isinstance(v, ScaledBasis) else format_int_tuple(v)


def as_arithmetic_tuple(v: Any) -> Any:
    """``as_arithmetic_tuple``: a basis ``v@..@i`` as the tuple ``(_0,..,_0, <inner>)``."""
    if isinstance(v, ScaledBasis):
        inner: Any = v.value
        for m in reversed(v.modes):
            inner = ArithmeticTuple((*(Int(0),) * m, inner))
        return inner
    return v


def basis_add(a: Any, b: Any) -> Any:
    """CuTe's ``a + b`` on ints, scaled bases and ArithmeticTuples (a static zero adds to a
    coordinate; any other int does not: CuTe refuses to compile that sum).

    >>> str(basis_add(E(0), 5 * E(1, 1)))
    '(_1,(_0,5))'
    """
    a_int, b_int = it.is_int(a), it.is_int(b)
    if a_int and b_int:
        return _iadd(a, b)
    if a_int or b_int:
        num, crd = (a, b) if a_int else (b, a)
        if not _zero(num):
            raise LayoutError(f"CuTe adds no integer but a static _0 to a coordinate: "
                              f"{format_value(a)} + {format_value(b)}")
        return crd
    x, y = as_arithmetic_tuple(a), as_arithmetic_tuple(b)
    n = max(len(x), len(y))
    pad: Callable[[Any], tuple[Any, ...]] = lambda t: (*t, *(Int(0),) * (n - len(t)))  # noqa: E731
    return ArithmeticTuple(basis_add(p, q) for p, q in zip(pad(x), pad(y)))


def basis_mul(c: int, d: Any) -> Any:
    """``c * d`` for an int ``c`` and a stride ``d`` (an int or a scaled basis)."""
    if isinstance(d, ScaledBasis):
        return ScaledBasis(_imul(c, d.value), d.modes)
    return _imul(c, d)


def _sum(terms: list[Any]) -> Any:
    """CuTe's right fold ``(t0 + ... + tn)``."""
    if not terms:
        return Int(0)
    return reduce(lambda acc, t: basis_add(t, acc), reversed(terms[:-1]), terms[-1])


def _product(shape: IntTuple) -> int:
    return reduce(_imul, it.flatten(shape), Int(1))  # type: ignore[arg-type]


def basis_crd2idx(crd: Any, shape: IntTuple, stride: Any) -> Any:
    """CuTe's ``crd2idx(crd, shape, stride)`` with scaled-basis strides, statics kept.

    >>> str(basis_crd2idx(5, (2, 3), (E(0), E(1)))), str(basis_crd2idx((1, 2), (2, 3), (E(1), E(0))))
    ('(1,2)', '(2,1)')
    """
    if isinstance(crd, tuple):
        if not isinstance(shape, tuple) or len(crd) != len(shape) or not crd:
            raise LayoutError(f"coordinate {format_value(crd)} does not match the rank of shape "
                              f"{format_int_tuple(shape)}")
        return _sum([basis_crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride)])
    if not it.is_int(crd):
        raise LayoutError(f"a coordinate is ints or tuples of them, got {it.describe(crd)}")
    if isinstance(shape, tuple):
        return _itt(crd, shape, stride, 0) if shape else Int(0)
    return basis_mul(crd, stride)


def _itt(crd: int, shape: tuple[Any, ...], stride: Any, k: int) -> Any:
    """An int coordinate over modes ``k..`` of a tuple shape (the last mode takes the rest)."""
    if k == len(shape) - 1:
        return basis_crd2idx(crd, shape[k], stride[k])
    if _zero(crd):
        rest = [Int(0)] + [basis_crd2idx(Int(0), s, d) for s, d in zip(shape[k + 1:], stride[k + 1:])]
        return basis_add(basis_crd2idx(Int(0), shape[k], stride[k]),
                         reduce(basis_add, rest))
    div, mod = _idivmod(crd, _product(shape[k]))
    return basis_add(basis_crd2idx(mod, shape[k], stride[k]), _itt(div, shape, stride, k + 1))


# ---------------------------------------------------------------- layouts and tensors


def _leaves(t: Any) -> Iterator[Any]:
    if isinstance(t, tuple):
        for x in t:
            yield from _leaves(x)
    else:
        yield t


def _congruent(shape: Any, stride: Any) -> bool:
    """Same profile (``shape`` a valid IntTuple, so the walk ends by its depth)."""
    if isinstance(shape, tuple):
        return isinstance(stride, tuple) and len(shape) == len(stride) and all(
            _congruent(s, d) for s, d in zip(shape, stride))
    return not isinstance(stride, tuple)


def format_stride(stride: Any) -> str:
    return format_value(stride) if isinstance(stride, tuple) else str(stride) if isinstance(
        stride, ScaledBasis) else format_int_tuple(stride)


@dataclass(frozen=True)
class CoordLayout:
    """A CuTe layout whose strides are scaled bases: it maps an index to a coordinate.

    >>> L = CoordLayout((Int(4), Int(8)), (ScaledBasis(Int(2), (0,)), E(1)))
    >>> str(L), str(L(5)), L.size()
    ('(_4,_8):(_2@0,_1@1)', '(2,1)', 32)
    """

    shape: IntTuple
    stride: Any

    def __post_init__(self) -> None:
        if not it._valid(self.shape):
            raise it.not_int_tuple("CoordLayout", self.shape)
        if not _congruent(self.shape, self.stride):
            raise LayoutError(f"shape {format_int_tuple(self.shape)} and stride "
                              f"{it.describe(self.stride)} are not congruent")
        if any(not it.is_int(s) or s < 0 for s in _leaves(self.shape)):
            raise LayoutError(f"a shape is non-negative ints, got {format_int_tuple(self.shape)}")
        if any(not (it.is_int(d) or isinstance(d, ScaledBasis)) for d in _leaves(self.stride)):
            raise LayoutError(f"a stride is ints and scaled bases, got {it.describe(self.stride)}")

    def __call__(self, *coord: Any) -> Any:
        """The coordinate at a 1-D index or a coordinate (an index is a run-time int)."""
        return basis_crd2idx(coord[0] if len(coord) == 1 else tuple(coord), self.shape, self.stride)

    def size(self) -> int:
        return it.product(self.shape)

    def rank(self) -> int:
        return len(self.shape) if isinstance(self.shape, tuple) else 1

    def depth(self) -> int:
        return it.depth(self.shape)

    def coords(self) -> list[Any]:
        """``self(i)`` for every index ``i`` in ``[0, size)``."""
        return [self(i) for i in range(self.size())]

    def __str__(self) -> str:
        return f"{format_int_tuple(self.shape)}:{format_stride(self.stride)}"

    @staticmethod
    def parse(text: str) -> CoordLayout:
        """Read ``shape:stride`` text with scaled-basis strides."""
        return parsed_as(parse_coord_layout(text), CoordLayout, text,
                         "a stride with a scaled basis such as _1@0")


def make_basis_like(shape: IntTuple, path: tuple[int, ...] = ()) -> Any:
    """CuTe's ``make_basis_like``: the unit basis ``E<path..., i>`` at every leaf of ``shape``.

    >>> format_stride(make_basis_like((2, (3, 4))))
    '(_1@0,(_1@0@1,_1@1@1))'
    """
    if not isinstance(path, tuple) or not all(it.is_int(k) and k >= 0 for k in path):
        raise LayoutError(f"make_basis_like: a mode path is a tuple of indices, got {it.describe(path)}")
    if not it._valid(shape):
        raise it.not_int_tuple("make_basis_like", shape)
    return _basis_like(shape, path)


def _basis_like(shape: IntTuple, path: tuple[int, ...]) -> Any:
    if isinstance(shape, tuple):
        return tuple(_basis_like(s, (*path, k)) for k, s in enumerate(shape))
    return E(*path)


@dataclass(frozen=True)
class CountingTensor:
    """CuTe's counting tensor: an ArithmeticTuple ``origin`` plus a layout, element ``i`` at
    ``origin + layout(i)``; printed ``ArithTuple(..) o layout``.

    >>> t = make_identity_tensor((2, 3))
    >>> str(t), str(t(4))
    ('ArithTuple(_0,_0) o (2,3):(_1@0,_1@1)', '(0,2)')
    """

    origin: Any
    layout: CoordLayout | Layout

    def __post_init__(self) -> None:
        if not isinstance(self.origin, ArithmeticTuple) or not isinstance(self.layout, (CoordLayout, Layout)):
            raise LayoutError(f"a counting tensor is an ArithmeticTuple and a layout, got "
                              f"{it.describe(self.origin)} and {it.describe(self.layout)}")

    def __call__(self, *coord: Any) -> Any:
        return basis_add(self.origin, self.layout(*coord))

    def size(self) -> int:
        return int(self.layout.size())

    def coords(self) -> list[Any]:
        return [self(i) for i in range(self.size())]

    def __str__(self) -> str:
        return f"ArithTuple{format_value(self.origin)} o {self.layout}"


def make_counting_tensor(layout: CoordLayout | Layout) -> CountingTensor:
    """CuTe's ``make_counting_tensor``: origin all static zeros, shaped like the layout's codomain."""
    if not isinstance(layout, (CoordLayout, Layout)):
        raise LayoutError(f"make_counting_tensor needs a layout, got {it.describe(layout)}")
    top = layout(Int(0))
    zeros = _zeros_like(top)
    return CountingTensor(zeros if isinstance(zeros, tuple) else ArithmeticTuple((zeros,)), layout)


def _zeros_like(v: Any) -> Any:
    v = as_arithmetic_tuple(v)
    return ArithmeticTuple(_zeros_like(x) for x in v) if isinstance(v, tuple) else Int(0)


def make_identity_tensor(shape: IntTuple) -> CountingTensor:
    """CuTe's ``make_identity_tensor(shape)``: every element is its own coordinate."""
    if not it._valid(shape) or any(s < 0 for s in it.flatten(shape)):
        raise it.not_int_tuple("make_identity_tensor", shape)
    return make_counting_tensor(CoordLayout(shape, make_basis_like(shape)))


# ---------------------------------------------------------------- the integer algebra on bases


@dataclass(frozen=True)
class BasisCodec:
    """Scaled-basis strides as single integers, one wide digit per mode path, so the integer
    layout algebra (composition, divides, complements: they only multiply strides by ints and
    compare them) runs unchanged on coordinate layouts; ``decode`` maps results back.

    >>> L, codec = encode_layout(CoordLayout.parse("(_4,_8):(_2@0,_1@1)"))
    >>> str(decode_layout(L, codec))
    '(_4,_8):(_2@0,_1@1)'
    """

    paths: tuple[tuple[int, ...], ...]  # paths[0] is () for plain integer strides
    static: bool  # every stride of the encoded layout was static: so are those of the results
    static_shape: bool  # likewise for the shapes (a dynamic extent makes the results' dynamic)

    def encode(self, d: Any) -> int:
        if isinstance(d, ScaledBasis):
            return int(d.value) * _WIDTH ** self.paths.index(d.modes)
        return int(d)

    def decode(self, x: int) -> Any:
        digits = []
        for _k in self.paths[:-1]:
            r = x % _WIDTH
            r = r - _WIDTH if r >= _WIDTH // 2 else r
            digits.append(r)
            x = (x - r) // _WIDTH
        digits.append(x)
        live = [(k, v) for k, v in enumerate(digits) if v]
        if not live or live == [(0, digits[0])]:
            return _int(digits[0], self.static)
        if len(live) > 1:
            raise LayoutError(f"a stride mixes the bases {[self.paths[k] for k, _v in live]}: CuTe "
                              "has no single stride for it")
        k, v = live[0]
        return ScaledBasis(_int(v, self.static), self.paths[k])


_WIDTH = 1 << 100  # far above any stride a layout of at most 2^40 elements reaches


def _map_leaves(t: Any, f: Callable[[Any], Any]) -> Any:
    return tuple(_map_leaves(x, f) for x in t) if isinstance(t, tuple) else f(t)


def encode_layout(layout: CoordLayout | Layout) -> tuple[Layout, BasisCodec]:
    """``layout`` as an integer Layout and the codec that reads its strides back."""
    leaves = list(_leaves(layout.stride))
    paths = ((),) + tuple(sorted({d.modes for d in leaves if isinstance(d, ScaledBasis)}))
    static = all(_static(d.value if isinstance(d, ScaledBasis) else d) for d in leaves)
    codec = BasisCodec(paths, static, all(_static(s) for s in _leaves(layout.shape)))
    return Layout(layout.shape, _map_leaves(layout.stride, codec.encode)), codec


def decode_layout(layout: Layout, codec: BasisCodec) -> CoordLayout | Layout:
    """The result of the integer algebra on an encoded layout, with its bases back."""
    shape = _map_leaves(layout.shape, lambda s: _int(s, codec.static_shape))
    stride = _map_leaves(layout.stride, codec.decode)
    if all(it.is_int(d) for d in _leaves(stride)):
        return Layout(shape, stride)
    return CoordLayout(shape, stride)


# ---------------------------------------------------------------- text
#   stride leaf := int ("@" uint)*          e.g. _1@0, _8@1@0, 3@2
#   tensor      := "ArithTuple" inttuple " o " layout

_AT = re.compile(r"@([0-9]{1,6})")


def _read_stride(cur: Cursor, depth: int = 0) -> Any:
    cur.skip()
    if cur.accept("("):
        if depth >= it.MAX_DEPTH:
            raise cur.error(f"at most {it.MAX_DEPTH} levels of nested parentheses")
        if cur.accept(")"):
            return ()
        items = [_read_stride(cur, depth + 1)]
        while not cur.accept(")"):
            cur.expect(",", what="',' or ')' in the stride")
            items.append(_read_stride(cur, depth + 1))
        return tuple(items)
    value = it.read_int_tuple(cur)
    if isinstance(value, tuple):
        raise cur.error("a stride entry")
    modes = []
    while (m := _AT.match(cur.text, cur.pos)) is not None:
        cur.pos = m.end()
        modes.append(int(m.group(1)))
    if cur.text.startswith("@", cur.pos):
        raise cur.error("a mode index of at most 6 digits after '@'", at=cur.pos + 1)
    return ScaledBasis(value, tuple(reversed(modes))) if modes else value


def read_coord_layout(cur: Cursor) -> CoordLayout | Layout:
    """``shape:stride`` whose stride may hold scaled bases; a plain Layout when none does."""
    start = cur.pos
    shape = it.read_int_tuple(cur)
    if not cur.peek(":"):
        cur.pos = start
        return read_layout(cur)  # a bare shape (compact strides), or its error
    cur.expect(":")
    at = cur.pos
    stride = _read_stride(cur)
    if not _congruent(shape, stride):
        raise ParseError(cur.text, at, f"a stride congruent with the shape {format_int_tuple(shape)}",
                         context=cur.text[start:cur.pos])
    if all(it.is_int(d) for d in _leaves(stride)):
        return Layout(shape, stride)
    try:
        return CoordLayout(shape, stride)
    except LayoutError as e:
        raise ParseError(cur.text, start, f"a valid layout ({e})") from None


def read_counting_tensor(cur: Cursor, read_layout: Callable[[Cursor], Any]) -> CountingTensor:
    """``ArithTuple(..) o L`` at the cursor (``L`` read by ``read_layout``)."""
    cur.expect("ArithTuple", what="'ArithTuple'")
    cur.skip()
    at = cur.pos
    origin = it.read_int_tuple(cur)
    if not isinstance(origin, tuple):
        raise ParseError(cur.text, at, "a tuple such as (0,6) after 'ArithTuple'")
    if not re.compile(r"\s+o\s+").match(cur.text, cur.pos):
        raise cur.error("' o ' after the ArithTuple")
    cur.skip()
    cur.expect("o")
    layout_at = cur.pos
    layout = read_layout(cur)
    if not isinstance(layout, (CoordLayout, Layout)):
        raise ParseError(cur.text, layout_at, "a layout shape:stride after 'ArithTuple(..) o'")
    return CountingTensor(_as_arith(origin), layout)


def _as_arith(t: Any) -> Any:
    return ArithmeticTuple(_as_arith(x) for x in t) if isinstance(t, tuple) else t


def parse_coord_layout(text: str) -> CoordLayout | Layout:
    """Read ``shape:stride`` text whose strides may be scaled bases (``(2,3):(_1@0,_1@1)``)."""
    return it.parse_whole(text, read_coord_layout, "CuTe layout text")
