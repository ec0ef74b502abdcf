"""C++ type spellings as CuTe users write them: ``SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,
UMMA::Major::K,UMMA::Major::K>``, ``Layout<Shape<_16,_8>,Stride<_8,_1>>``, and CUTLASS's numeric
types with their ``sizeof_bits``.

A name reads as ``ident(::ident)* [<arg, ...>] [{}]``; an argument is a name, an int or a static
``_N`` (``Int<N>``, ``C<N>``, ``integral_constant<T,v>`` read as their value).

>>> t = parse_type("SM120_16x8x32_TN<float_e2m3_t, float_e5m2_t, float>")
>>> t.name, [str(a) for a in t.args]
('SM120_16x8x32_TN', ['float_e2m3_t', 'float_e5m2_t', 'float'])
>>> str(t)
'SM120_16x8x32_TN<float_e2m3_t,float_e5m2_t,float>'
>>> str(layout_of_type(parse_type("Layout<Shape<_16,_8>,Stride<_8,_1>>{}")))
'(_16,_8):(_8,_1)'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from tensorlayout._cursor import Cursor, read_whole
from tensorlayout.cute import Layout, make_layout
from tensorlayout.cute.int_tuple import Int
from tensorlayout.errors import LayoutError, ParseError

__all__ = ["CxxType", "layout_of_type", "parse_type", "plain_layout", "sizeof_bits", "static_layout",
           "tuple_of_type"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*")
_STATIC = re.compile(r"_(-?[0-9]+)\b")


@dataclass(frozen=True)
class CxxType:
    """A C++ type name ``name<args...>``; an argument is a :class:`CxxType` or an int (a static
    ``_N`` is an :class:`~tensorlayout.cute.int_tuple.Int`)."""

    name: str
    args: tuple[Arg, ...] = ()

    @property
    def short(self) -> str:
        """The last ``::`` component (``UMMA::Major::K`` -> ``K``)."""
        return self.name.rsplit("::", 1)[-1]

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}<{','.join(str(a) for a in self.args)}>"


Arg = Union[CxxType, int]  # noqa: UP007 - a runtime alias

#: Wrappers of a compile-time integer: their value stands for them.
_INT_WRAPPERS = {"Int": 0, "C": 0, "cute::Int": 0, "cute::C": 0, "integral_constant": 1,
                 "cute::integral_constant": 1, "std::integral_constant": 1}


def _read_arg(cur: Cursor) -> Arg:
    cur.skip()
    m = cur.match(_STATIC)
    if m is not None:
        return Int(int(m.group(1)))
    value = cur.try_integer()
    if value is not None:
        return value
    return _read_type(cur)


def _read_type(cur: Cursor) -> Arg:
    cur.skip()
    name = cur.identifier("a C++ type name", _IDENT)
    args: list[Arg] = []
    if cur.accept("<"):
        with cur.nested("template arguments"):
            if not cur.accept(">"):
                args.append(_read_arg(cur))
                while cur.accept(","):
                    args.append(_read_arg(cur))
                cur.expect(">")
    cur.accept("{}")
    if name in _INT_WRAPPERS and len(args) == _INT_WRAPPERS[name] + 1:
        value = args[-1]
        if isinstance(value, int):
            return Int(value) if name.endswith(("Int", "C")) else value
        return CxxType(value.name, value.args)  # integral_constant<Enum, Enum::X>: the enumerator
    return CxxType(name, tuple(args))


def parse_type(text: str) -> CxxType:
    """Read a C++ type spelling (whitespace between tokens ignored)."""
    if not isinstance(text, str):
        raise ParseError(repr(text), 0, "a C++ type name")
    out = read_whole(text, _read_type)
    if not isinstance(out, CxxType):
        raise ParseError(text, 0, "a C++ type name, not an integer")
    return out


#: ``sizeof_bits`` of CUTLASS's value types.
_BITS = {
    "double": 64, "float": 32, "tfloat32_t": 32, "half_t": 16, "bfloat16_t": 16, "int64_t": 64,
    "uint64_t": 64, "int32_t": 32, "uint32_t": 32, "int16_t": 16, "uint16_t": 16, "int8_t": 8,
    "uint8_t": 8, "uint128_t": 128, "int4b_t": 4, "uint4b_t": 4, "bin1_t": 1, "uint1b_t": 1,
    "float_e4m3_t": 8, "float_e5m2_t": 8, "float_ue8m0_t": 8, "float_ue4m3_t": 8, "float_e2m3_t": 6,
    "float_e3m2_t": 6, "float_e2m1_t": 4, "type_erased_dynamic_float8_t": 8,
    "type_erased_dynamic_float6_t": 6, "type_erased_dynamic_float4_t": 4, "complex<double>": 128,
}


def sizeof_bits(type_name: str | CxxType) -> int:
    """CUTLASS's ``sizeof_bits`` of a value type (``cutlass::`` prefix allowed).

    >>> sizeof_bits("cutlass::float_e2m1_t"), sizeof_bits("half_t")
    (4, 16)
    """
    key = str(type_name).replace("cutlass::", "").replace("cute::", "")
    if key not in _BITS:
        raise LayoutError(f"unknown value type {key!r}; known: {', '.join(sorted(_BITS))}")
    return _BITS[key]


def _static(t: object) -> object:
    return tuple(_static(x) for x in t) if isinstance(t, tuple) else Int(int(t))  # type: ignore[call-overload]


def static_layout(layout: Layout) -> Layout:
    """``layout`` with every int static (printed ``_N``), as C++ builds it from static types.

    >>> str(static_layout(Layout((4, 2), (1, 4))))
    '(_4,_2):(_1,_4)'
    """
    return Layout(_static(layout.shape), _static(layout.stride))  # type: ignore[arg-type]


def _plain(t: object) -> object:
    return tuple(_plain(x) for x in t) if isinstance(t, tuple) else int(t)  # type: ignore[call-overload]


def plain_layout(layout: Layout) -> Layout:
    """``layout`` with plain ints (the same function, evaluated on the algebra's fast path).

    >>> str(plain_layout(static_layout(Layout((4, 2), (1, 4)))))
    '(4,2):(1,4)'
    """
    return Layout(_plain(layout.shape), _plain(layout.stride))  # type: ignore[arg-type]


def tuple_of_type(t: Arg) -> object:
    """``Shape<_2,Shape<_4,_8>>`` / ``Stride<..>`` / ``Tile<..>`` / an int as an IntTuple."""
    if isinstance(t, int):
        return t
    if t.short not in ("Shape", "Stride", "Tile", "Step", "tuple", "make_shape", "make_stride"):
        raise LayoutError(f"expected a Shape<...>, Stride<...> or an int, got {t}")
    items = tuple(tuple_of_type(a) for a in t.args)
    return items[0] if len(items) == 1 and t.short != "Tile" else items


def layout_of_type(t: Arg) -> Layout:
    """``Layout<Shape<..>[,Stride<..>]>`` as a static :class:`Layout` (compact column-major
    strides when none are given, as CuTe's ``make_layout``)."""
    if isinstance(t, int) or t.short != "Layout" or not 1 <= len(t.args) <= 2:
        raise LayoutError(f"expected Layout<Shape<...>[,Stride<...>]>, got {t}")
    shape = tuple_of_type(t.args[0])
    lay = make_layout(shape) if len(t.args) == 1 else Layout(shape, tuple_of_type(t.args[1]))  # type: ignore[arg-type]
    return static_layout(lay)
