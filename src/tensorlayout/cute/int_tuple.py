"""IntTuple: an int or a (nested) tuple of IntTuples, and the functions CuTe defines on it.

Everything here is a small pure function over plain Python ints and tuples.

>>> shape = parse_int_tuple("(3,(2,3))")
>>> rank(shape), depth(shape), size(shape), flatten(shape)
(2, 2, 18, (3, 2, 3))
>>> prefix_product(shape), shape_div(shape, 6)
((1, (3, 6)), (1, (1, 3)))

The maps between coordinates and indices (``idx2crd``, ``crd2idx``, ``crd2crd``) are in
:mod:`tensorlayout.cute.coords`.
"""

from __future__ import annotations

import functools
import re
import reprlib
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, Union

import numpy as np

from tensorlayout._cursor import Cursor, read_whole
from tensorlayout.core.intmath import ceil_div as _ceil_div
from tensorlayout.errors import AlgebraError, ArgumentTypeError, LayoutError, expect_text

__all__ = [
    "Int",
    "IntTuple",
    "Underscore",
    "_",
    "ceil_div",
    "compatible",
    "congruent",
    "depth",
    "elem_less",
    "flatten",
    "format_int_tuple",
    "inner_product",
    "is_int",
    "is_tuple",
    "parse_int_tuple",
    "prefix_product",
    "product",
    "rank",
    "read_int_tuple",
    "shape_div",
    "shape_mod",
    "signum",
    "size",
    "suffix_product",
    "unflatten",
    "weakly_congruent",
]

_F = TypeVar("_F", bound=Callable[..., Any])

IntTuple = Union[int, tuple[Any, ...]]  # noqa: UP007 - a runtime alias


class Int(int):
    """A static integer (CuTe's ``Int<N>{}``, TLA's ``Int<N>{}``): equal to ``N``, printed ``_N``.

    Arithmetic on it gives plain ints, as dynamic values; only printing differs.

    >>> Int(2) == 2, str(Int(2)), format_int_tuple((Int(2), 4))
    (True, '_2', '(_2,4)')
    """

    __slots__ = ()

    def __new__(cls, value: int) -> Int:
        if not (is_int(value) or isinstance(value, np.integer)):
            raise LayoutError(f"Int: a static integer is an int, got {describe(value)}")
        return super().__new__(cls, int(value))

    def __repr__(self) -> str:
        return f"_{int(self)}"

    __str__ = __repr__


class Underscore:
    """CuTe's ``_``: a wildcard mode in slices and tilers (printed ``_``)."""

    _instance: Underscore | None = None

    def __new__(cls) -> Underscore:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "_"

    def __reduce__(self) -> str:
        return "_"


_ = Underscore()
_LEAF_TYPES = frozenset((int, Int))


def _valid(t: Any, level: int = 0) -> bool:
    """An int, or a tuple of them nested at most ``MAX_DEPTH`` levels (the one depth rule: the
    text parser's limit, kept by every public IntTuple entry and by ``Layout()``, so no walk of
    an accepted value can exhaust Python's recursion limit)."""
    if type(t) is tuple:
        return level < MAX_DEPTH and all(_valid(x, level + 1) for x in t)
    return isinstance(t, int) and not isinstance(t, bool)


@functools.lru_cache(maxsize=4096)
def _valid_tuple(t: tuple[Any, ...]) -> bool:
    return all(_valid(x, 1) for x in t)


def _valid_fast(t: Any) -> bool:
    """:func:`_valid`, memoised for tuples (layouts are checked on every coordinate)."""
    if type(t) is tuple:
        try:
            return _valid_tuple(t)
        except TypeError:  # an unhashable leaf: not an IntTuple
            return False
    return isinstance(t, int) and not isinstance(t, bool)


def _valid_crd(c: Any, level: int = 0) -> bool:
    """A coordinate: ints, int arrays, tuples of them nested at most ``MAX_DEPTH`` levels."""
    if type(c) is int:
        return True
    if type(c) is tuple:
        if level >= MAX_DEPTH:
            return False
        return all(type(x) is int for x in c) or all(_valid_crd(x, level + 1) for x in c)
    if isinstance(c, np.ndarray):
        return c.dtype.kind in "iu"
    return isinstance(c, (int, np.integer)) and not isinstance(c, bool)


_SHOW = reprlib.Repr()
_SHOW.maxlevel, _SHOW.maxtuple, _SHOW.maxother, _SHOW.maxstring = 6, 12, 120, 60


def describe(x: Any) -> str:
    """``repr(x)`` for an error message: short, and safe on any nesting (``repr`` itself fails
    past about 1000 levels).

    >>> describe(((((((((1,),),),),),),),))
    '(((((((...),),),),),),)'
    """
    return _SHOW.repr(x)


def not_int_tuple(what: str, x: Any) -> LayoutError:
    """The error for ``x`` where ``what`` needs an IntTuple (see :func:`_valid`): an
    :class:`ArgumentTypeError` when a leaf is not an int (a float, text), else too deep."""
    kind = ArgumentTypeError if _wrong_leaf(x, 0) else LayoutError
    return kind(f"{what}: expected an int or a tuple of ints nested at most {MAX_DEPTH} "
                f"levels, got {describe(x)}")


def _wrong_leaf(x: Any, level: int) -> bool:
    """Some leaf of ``x`` (within the depth limit) is neither an int nor a tuple."""
    if isinstance(x, tuple):
        return level < MAX_DEPTH and any(_wrong_leaf(y, level + 1) for y in x)
    return not is_int(x)


def _require(fn: _F) -> _F:
    """Decorator: every IntTuple argument must be an int or a nested tuple of ints."""
    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        for a in args:
            if not _valid(a):
                raise not_int_tuple(fn.__name__, a)
        return fn(*args)
    return wrapper  # type: ignore[return-value]


def bad_coordinate(what: str, c: Any) -> LayoutError:
    """The error for ``c`` where ``what`` needs a coordinate (see :func:`_valid_crd`)."""
    return LayoutError(f"{what}: a coordinate must be ints, int arrays or tuples of them nested at "
                       f"most {MAX_DEPTH} levels, got {describe(c)}")


def is_int(x: object) -> bool:
    """True for a Python int leaf (bools are not leaves)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_tuple(x: object) -> bool:
    return isinstance(x, tuple)


@_require
def rank(t: IntTuple) -> int:
    """Number of top-level modes (1 for an int)."""
    return len(t) if isinstance(t, tuple) else 1


@_require
def depth(t: IntTuple) -> int:
    """0 for an int, 1 + the deepest child for a tuple."""
    if isinstance(t, tuple):
        return 1 + max((depth(x) for x in t), default=0)
    return 0


def product(t: IntTuple) -> int:
    """Product of all leaves (``size``)."""
    if type(t) is tuple:
        p = 1
        for x in t:
            p *= product(x) if type(x) is tuple else x
        return p
    return t  # type: ignore[return-value]


size = product


def flatten(t: IntTuple) -> tuple[Any, ...]:
    """The leaves, left to right, as a flat tuple (an int gives a 1-tuple)."""
    if type(t) is not tuple:
        return (t,)
    for x in t:
        if type(x) is tuple:
            break
    else:
        return t  # already flat
    out: list[Any] = []
    for x in t:
        if type(x) is tuple:
            out.extend(flatten(x))
        else:
            out.append(x)
    return tuple(out)


def unflatten(flat: Iterable[Any], profile: IntTuple) -> IntTuple:
    """Re-nest ``flat`` leaves in the profile of ``profile``."""
    it = iter(flat)

    def go(p: IntTuple) -> IntTuple:
        if isinstance(p, tuple):
            return tuple(go(x) for x in p)
        try:
            return next(it)
        except StopIteration:
            raise AlgebraError(f"unflatten: too few leaves for the profile {format_int_tuple(profile)}") \
                from None
    out = go(profile)
    if next(it, None) is not None:
        raise AlgebraError(f"unflatten: too many leaves for the profile {format_int_tuple(profile)}")
    return out


def transform_leaf(t: IntTuple, f: Callable[[Any], Any]) -> IntTuple:
    if isinstance(t, tuple):
        return tuple(transform_leaf(x, f) for x in t)
    return f(t)


def zip_leaves(a: IntTuple, b: IntTuple, f: Callable[[Any, Any], Any]) -> IntTuple:
    """Apply ``f`` leaf by leaf to two congruent IntTuples."""
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            raise AlgebraError(f"expected congruent tuples, got {format_int_tuple(a)} and "
                               f"{format_int_tuple(b)}")
        return tuple(zip_leaves(x, y, f) for x, y in zip(a, b))
    if isinstance(b, tuple):
        raise AlgebraError(f"expected congruent tuples, got {format_int_tuple(a)} and {format_int_tuple(b)}")
    return f(a, b)


@_require
def inner_product(a: IntTuple, b: IntTuple) -> int:
    """Sum of leaf-by-leaf products of two congruent IntTuples."""
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            raise AlgebraError(f"inner_product needs congruent tuples, got {format_int_tuple(a)} and "
                               f"{format_int_tuple(b)}")
        return sum(inner_product(x, y) for x, y in zip(a, b))
    if isinstance(b, tuple):
        raise AlgebraError(f"inner_product needs congruent tuples, got {a} and {format_int_tuple(b)}")
    return a * b


@_require
def prefix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive prefix product, left to right over the leaves: ``((2,3),4)`` → ``((1,2),6)``."""
    if isinstance(t, tuple):
        out = []
        for x in t:
            out.append(prefix_product(x, init))
            init *= product(x)
        return tuple(out)
    return init


@_require
def suffix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive product right to left (LayoutRight strides): ``(3,(6,2),8)`` → ``(96,(16,8),1)``."""
    if isinstance(t, tuple):
        out = []
        for x in reversed(t):
            out.append(suffix_product(x, init))
            init *= product(x)
        return tuple(reversed(out))
    return init


@_require
def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's shape_div: divide ``a`` by ``b`` left to right, each leaf by what it can absorb."""
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(a) != len(b):
                raise AlgebraError(f"shape_div needs equal ranks, got {format_int_tuple(a)} and "
                                   f"{format_int_tuple(b)}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for x in a:
            out.append(shape_div(x, b))
            b = shape_div(b, product(x))
        return tuple(out)
    if isinstance(b, tuple):
        return shape_div(a, product(b))
    if b == 0 or a == 0:
        raise AlgebraError(f"shape_div by zero ({a} / {b})")
    if a % b != 0 and b % a != 0:
        raise AlgebraError(f"shape_div needs {a} and {b} to divide one another")
    return a // b if a % b == 0 else 1


@_require
def shape_mod(a: IntTuple, b: IntTuple) -> IntTuple:
    """The part of ``a`` that fits in ``b`` (the doc's shape_mod): ``(6,2) mod 2`` → ``(2,1)``."""
    if isinstance(a, tuple):
        out = []
        for x in a:
            px = product(x)
            out.append(shape_mod(x, b))
            b = shape_div(b, px)
        return tuple(out)
    if isinstance(b, tuple):
        b = product(b)
    if a == 0 or b == 0:
        raise AlgebraError(f"shape_mod by zero ({a} mod {b})")
    if a % b != 0 and b % a != 0:
        raise AlgebraError(f"shape_mod needs {a} and {b} to divide one another")
    return a if b % a == 0 else b


def signum(x: int) -> int:
    """-1, 0 or 1 (CuTe's ``signum``)."""
    return (x > 0) - (x < 0)


def ceil_div(a: int, b: int) -> int:
    """:func:`tensorlayout.core.intmath.ceil_div` with a typed error for ``b == 0``.

    >>> ceil_div(7, 2)
    4
    """
    if b == 0:
        raise AlgebraError("ceil_div by zero")
    return _ceil_div(a, b)


@_require
def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same nesting profile."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not isinstance(b, tuple)


@_require
def weakly_congruent(a: IntTuple, b: IntTuple) -> bool:
    """``a``'s profile is a coarsening of ``b``'s (an int in ``a`` matches anything)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            weakly_congruent(x, y) for x, y in zip(a, b))
    return True


@_require
def compatible(a: IntTuple, b: IntTuple) -> bool:
    """Every coordinate of shape ``a`` is also a valid coordinate of shape ``b`` (same size)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return a == product(b)


def _same_leaf_kind(a: IntTuple, b: IntTuple, what: str) -> None:
    """C++ compiles every comparison of an order: a tuple never faces an int."""
    if isinstance(a, tuple) != isinstance(b, tuple):
        raise AlgebraError(f"{what}: a tuple compared with an int ({format_int_tuple(a)} and "
                           f"{format_int_tuple(b)})")


@_require
def elem_less(a: IntTuple, b: IntTuple) -> bool:
    """Every leaf of ``a`` is below the matching leaf of ``b`` (coordinate in bounds); a tuple
    against an int is refused, as C++ refuses to compile it.

    >>> elem_less((1, (2, 3)), (2, (3, 4))), elem_less((1, 5), (2, 3))
    (True, False)
    """
    return _elem_less(a, b)


def _elem_less(a: IntTuple, b: IntTuple) -> bool:
    """:func:`elem_less` on checked IntTuples."""
    _same_leaf_kind(a, b, "elem_less")
    if not isinstance(a, tuple):
        return a < b  # type: ignore[operator]
    assert isinstance(b, tuple)
    less = [_elem_less(x, y) for x, y in zip(a, b)]  # C++ instantiates every pair
    return all(less) and len(a) <= len(b)


# ---------------------------------------------------------------- text


def format_int_tuple(t: Any) -> str:
    """CuTe's print form, no spaces: ``(3,(2,3))``; ``_`` for the wildcard."""
    if isinstance(t, tuple):
        return "(" + ",".join(format_int_tuple(x) for x in t) + ")"
    if t is None or t is _:
        return "_"
    if isinstance(t, int) and t.bit_length() > MAX_BITS:  # str() itself fails past 4300 digits
        raise LayoutError(f"an integer of about {int(t.bit_length() * 0.30103)} digits is past the "
                          f"{MAX_DIGITS}-digit limit of CuTe's text form")
    return str(t)


#: The deepest nesting and the longest integer literal the CuTe parsers read.
MAX_DEPTH = 100
MAX_DIGITS = 4000
MAX_BITS = 13287  # 2**13287 has 4000 digits: every int of at most this many bits prints
_INT_LITERAL = re.compile(r"-?[0-9]+")


def _read_int(cur: Cursor) -> int | None:
    """An integer literal at the cursor (ASCII digits, at most ``MAX_DIGITS``), or None."""
    cur.skip()
    m = _INT_LITERAL.match(cur.text, cur.pos)
    if m is None:
        return None
    if m.end() - m.start() > MAX_DIGITS:
        raise cur.error(f"an integer of at most {MAX_DIGITS} digits")
    cur.pos = m.end()
    return int(m.group())


def read_int_tuple(cur: Cursor, *, allow_underscore: bool = False, depth: int = 0) -> IntTuple:
    """Read one IntTuple at the cursor (ints may carry CuTe's static marker ``_3``)."""
    cur.skip()
    if cur.accept("("):
        if depth >= MAX_DEPTH:
            cur.pos -= 1
            raise cur.error(f"at most {MAX_DEPTH} levels of nested parentheses")
        items: list[Any] = []
        if cur.accept(")"):
            return ()
        while True:
            items.append(read_int_tuple(cur, allow_underscore=allow_underscore, depth=depth + 1))
            if cur.accept(")"):
                return tuple(items)
            cur.expect(",", what="',' or ')' in the tuple")
    if cur.peek("_"):
        start = cur.pos
        cur.pos += 1
        if cur.text.startswith("-", cur.pos) or cur.text[cur.pos:cur.pos + 1].isdigit():
            value = _read_int(cur)
            if value is not None:
                return Int(value)
        if allow_underscore:
            return _  # type: ignore[return-value]  # a wildcard entry inside a tiler text
        cur.pos = start
        raise cur.error("an integer or '('")
    value = _read_int(cur)
    if value is None:
        raise cur.error("an integer or '('")
    return value


def parse_int_tuple(text: str, *, allow_underscore: bool = True) -> IntTuple:
    """Parse IntTuple text such as ``(3,(2,3))`` (``_`` allowed as a wildcard).

    >>> parse_int_tuple("((2,3), _4)")
    ((2, 3), _4)
    """
    return parse_whole(text, lambda cur: read_int_tuple(cur, allow_underscore=allow_underscore),
                       "IntTuple text")


_T = TypeVar("_T")


def parse_whole(text: str, read: Callable[[Cursor], _T], what: str) -> _T:
    """Run the reader ``read`` over all of ``text``: a ParseError unless it reads everything."""
    return read_whole(expect_text(text, what), read)
