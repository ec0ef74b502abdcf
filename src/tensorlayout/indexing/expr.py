"""Interned affine expressions: XLA's ``SymbolicExpr`` as immutable Python nodes.

One variable id space: in a map with N dims, ids ``0..N-1`` are the dims ``d_i`` and id
``N+j`` is the symbol ``s_j`` (range variables first, then runtime variables ``rt_k``).
Nodes are hash-consed, so structurally equal expressions are the same object. The intern
table holds its nodes weakly: a node no one uses any more leaves it, so the table is bounded by
the live expressions (plus the memo of :func:`_variables`, which ``clear_caches()`` empties).

>>> x, y = var(0), var(1)
>>> e = (x + 42) * y // 2
>>> print(e)
((v0 + 42) * v1) / 2
>>> e is (x + 42) * y // 2
True
>>> e.evaluate([5, 3])
70
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from math import gcd
from typing import Protocol, Union

from tensorlayout.core.intmath import INT64_MAX, INT64_MIN, ceil_div
from tensorlayout.errors import IndexingError
from tensorlayout.indexing._guard import guarded

__all__ = [
    "ADD",
    "CEILDIV",
    "CONST",
    "FLOORDIV",
    "MAX",
    "MIN",
    "MOD",
    "MUL",
    "VAR",
    "Expr",
    "clear_memos",
    "compare",
    "const",
    "interned_count",
    "largest_known_divisor",
    "make",
    "out_of_int64",
    "var",
]

# Node kinds; the numeric order is XLA's total order of node types (spec §1.1, §3.2).
ADD, MUL, MOD, FLOORDIV, CEILDIV, MAX, MIN, VAR, CONST = range(9)
_KIND_NAMES = ("add", "mul", "mod", "floordiv", "ceildiv", "max", "min", "var", "const")
_COMMUTATIVE = (ADD, MUL, MIN, MAX)
ExprLike = Union["Expr", int]
Names = Sequence[str] | Callable[[int], str] | int | None


def _cxx_mod(x: int, d: int) -> int:
    """XLA's ``Evaluate`` of ``x mod d``: Python ``%`` for d > 0, C++'s formula for d < 0."""
    if d > 0:
        return x % d
    r = abs(x) % abs(d) * (1 if x >= 0 else -1)  # C++ truncating remainder
    r += abs(d)
    return abs(r) % abs(d) * (1 if r >= 0 else -1)


def _fold(kind: int, a: int, b: int) -> int | None:
    """Fold two constants; None when the operation is undefined (division by zero)."""
    if kind == ADD:
        return a + b
    if kind == MUL:
        return a * b
    if kind == MIN:
        return min(a, b)
    if kind == MAX:
        return max(a, b)
    if b == 0:
        return None
    if kind == FLOORDIV:
        return a // b
    if kind == CEILDIV:
        return ceil_div(a, b)
    return _cxx_mod(a, b)


class ExprPrinter(Protocol):
    """Prints an expression with variable names (``printer.expr_to_string``)."""

    def __call__(self, e: Expr, names: Names = None, *, floordiv: bool = False) -> str: ...


_PRINTER: list[ExprPrinter] = []


def _name_list(names: Names) -> list[str]:
    """Dim names given as a list (or none), to be extended by symbol names."""
    if names is None:
        return []
    if isinstance(names, Sequence) and not isinstance(names, str):
        return list(names)
    raise IndexingError("symbol_names extends a list of dim names, not a count or a function")


def install_printer(printer: ExprPrinter) -> None:
    """Set the printer behind :meth:`Expr.to_string` (done by ``tensorlayout.indexing``).

    The printer needs the canonicalizer, which is built on this module, so it cannot be
    imported here.
    """
    _PRINTER[:] = [printer]


@dataclass(frozen=True, eq=False, repr=False)
class Expr:
    """One immutable, interned expression node (build with :func:`var`, :func:`const`, operators).

    Equality and hashing are by identity: equal structure is the same node.

    >>> (var(0) * 2) * 3 is var(0) * 6
    True
    """

    # declared by hand, not with ``slots=True``: the intern table refers to nodes weakly
    __slots__ = ("__weakref__", "kind", "lhs", "rhs", "value")

    kind: int
    lhs: Expr | None
    rhs: Expr | None
    value: int

    # ---- structure -------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        """The node is a constant (``value`` holds it)."""
        return self.kind == CONST

    @property
    def is_var(self) -> bool:
        """The node is a variable (``value`` holds its id)."""
        return self.kind == VAR

    @property
    def is_binary(self) -> bool:
        """``IsBinaryOp``: an operation node (add, mul, mod, floordiv, ceildiv, min, max)."""
        return self.kind < VAR

    @property
    def kind_name(self) -> str:
        """``GetType``, by name: ``"add"``, ``"mul"``, ..., ``"var"`` or ``"const"``."""
        return _KIND_NAMES[self.kind]

    def walk(self) -> Iterator[Expr]:
        """All nodes in post-order (children first, left before right).

        >>> [str(e) for e in (var(0) + 42).walk()]
        ['v0', '42', 'v0 + 42']
        """
        stack: list[tuple[Expr, bool]] = [(self, False)]
        while stack:
            e, expanded = stack.pop()
            if expanded or e.lhs is None or e.rhs is None:
                yield e
            else:
                stack += ((e, True), (e.rhs, False), (e.lhs, False))

    @guarded
    def variables(self) -> frozenset[int]:
        """The ids of the variables the expression mentions."""
        return _variables(self)

    @guarded
    def replace_variables(self, replacements: Sequence[Expr | None] | dict[int, Expr]) -> Expr:
        """Substitute variables (creation-time rules only); ``None`` or a missing id keeps the variable.

        >>> print((var(0) + var(1)).replace_variables([None, var(2) * 10]))
        v0 + v2 * 10
        """
        table = replacements if isinstance(replacements, dict) else dict(enumerate(replacements))
        return _substitute_vars(self, table, {})

    def replace_dims(self, dims: Sequence[ExprLike], current_num_dims: int, new_num_dims: int,
                     num_symbols: int) -> Expr:
        """Substitute dims ``v0..v{current_num_dims-1}`` and renumber symbols for ``new_num_dims`` dims.

        >>> print((var(0) + var(1) * 2).replace_dims([7], 1, 0, 1))
        v0 * 2 + 7
        """
        table: dict[int, Expr] = {i: _lift(d) for i, d in enumerate(dims)}
        for j in range(num_symbols):
            table[current_num_dims + j] = var(new_num_dims + j)
        return self.replace_variables(table)

    def replace_symbols(self, symbols: Sequence[ExprLike], num_dims: int) -> Expr:
        """Substitute symbol ``j`` (variable ``num_dims + j``) by ``symbols[j]``."""
        return self.replace_variables({num_dims + j: _lift(s) for j, s in enumerate(symbols)})

    def replace_dims_and_symbols(self, dims: Sequence[ExprLike], symbols: Sequence[ExprLike]) -> Expr:
        """Substitute dims by ``dims`` and the following variables by ``symbols``, at once."""
        table = {i: _lift(d) for i, d in enumerate(dims)}
        table.update({len(dims) + j: _lift(s) for j, s in enumerate(symbols)})
        return self.replace_variables(table)

    @guarded
    def replace(self, old: Expr | Mapping[Expr, Expr], new: Expr | None = None) -> Expr:
        """Replace whole subexpressions (all at once when given a mapping), rebuilding bottom-up.

        >>> e = (var(0) + 2) * (var(1) + 2)
        >>> print(e.replace(var(0) + 2, const(5)), "|", e.replace({var(0): var(1), var(1): var(0)}))
        (v1 + 2) * 5 | (v1 + 2) * (v0 + 2)
        """
        table = dict(old) if isinstance(old, Mapping) else {old: new}
        return _substitute_nodes(self, table, {})

    def is_multiple_of(self, k: int) -> bool:
        """True if the expression is a multiple of ``k`` at every point (by :func:`largest_known_divisor`).

        >>> (var(0) * 6).min(var(1) * 4).is_multiple_of(2), (var(0) * 10 // 2).is_multiple_of(2)
        (True, False)
        """
        return k != 0 and largest_known_divisor(self) % k == 0

    # ---- evaluation ------------------------------------------------------------------
    @guarded
    def evaluate(self, values: Sequence[int]) -> int:
        """Value at a point (floor division, XLA's mod); raises IndexingError on division by zero."""
        out = self._eval(values, safe=False)
        assert out is not None
        return out

    @guarded
    def safe_evaluate(self, values: Sequence[int]) -> int | None:
        """Like :meth:`evaluate` but None on division by zero, mod by d <= 0 or int64 overflow.

        >>> print((var(0) // 0).safe_evaluate([5]))
        None
        """
        return self._eval(values, safe=True)

    def _eval(self, values: Sequence[int], safe: bool) -> int | None:
        k = self.kind
        if k == CONST:
            return self.value
        if k == VAR:
            if self.value >= len(values):
                raise IndexingError(f"no value given for variable v{self.value} ({len(values)} values)")
            v = values[self.value]
            if isinstance(v, bool) or not isinstance(v, int):
                raise IndexingError(f"variable values must be ints, got {v!r}")
            return v
        assert self.lhs is not None and self.rhs is not None
        a = self.lhs._eval(values, safe)
        b = self.rhs._eval(values, safe)
        if a is None or b is None:
            return None
        if k in (FLOORDIV, CEILDIV, MOD) and b == 0:
            if safe:
                return None
            raise IndexingError(f"division by zero evaluating {self}")
        if safe and k == MOD and b < 0:
            return None
        if safe and k == FLOORDIV and a == INT64_MIN and b == -1:
            return None
        out = _fold(k, a, b)
        if safe and out is not None and not INT64_MIN <= out <= INT64_MAX:
            return None
        return out

    # ---- Python operators (XLA's C++ operators) ---------------------------------------
    def __add__(self, other: ExprLike) -> Expr:
        return make(ADD, self, _lift(other))

    def __radd__(self, other: ExprLike) -> Expr:
        return make(ADD, _lift(other), self)

    def __sub__(self, other: ExprLike) -> Expr:
        return make(ADD, self, make(MUL, _lift(other), const(-1)))

    def __rsub__(self, other: ExprLike) -> Expr:
        return make(ADD, _lift(other), make(MUL, self, const(-1)))

    def __mul__(self, other: ExprLike) -> Expr:
        return make(MUL, self, _lift(other))

    def __rmul__(self, other: ExprLike) -> Expr:
        return make(MUL, _lift(other), self)

    def __neg__(self) -> Expr:
        return make(MUL, self, const(-1))

    def __floordiv__(self, other: ExprLike) -> Expr:
        return self.floor_div(other)

    def __rfloordiv__(self, other: ExprLike) -> Expr:
        return _lift(other).floor_div(self)

    def __mod__(self, other: ExprLike) -> Expr:
        o = _lift(other)
        if o.kind == CONST and o.value in (1, -1):
            return const(0)
        return make(MOD, self, o)

    def __rmod__(self, other: ExprLike) -> Expr:
        return _lift(other) % self

    def floor_div(self, other: ExprLike) -> Expr:
        """``self floordiv other``; dividing by the constant 1 gives ``self``."""
        o = _lift(other)
        return self if o.kind == CONST and o.value == 1 else make(FLOORDIV, self, o)

    def ceil_div(self, other: ExprLike) -> Expr:
        """``self ceildiv other``; dividing by the constant 1 gives ``self``."""
        o = _lift(other)
        return self if o.kind == CONST and o.value == 1 else make(CEILDIV, self, o)

    def min(self, other: ExprLike) -> Expr:
        """``min(self, other)`` as an expression."""
        return make(MIN, self, _lift(other))

    def max(self, other: ExprLike) -> Expr:
        """``max(self, other)`` as an expression."""
        return make(MAX, self, _lift(other))

    # ---- printing --------------------------------------------------------------------
    @guarded
    def to_string(self, names: Names = None, symbol_names: Sequence[str] | None = None, *,
                  floordiv: bool = False) -> str:
        """Print in XLA's syntax; ``names`` names the variables (default ``v<id>``).

        ``names`` is a list of names, a function of the id, or the number of dims (then
        variables print as ``d<i>`` and ``s<j>``); ``symbol_names`` extends a list of dim names.

        >>> e = var(0) - var(1) * 2
        >>> e.to_string(["d0", "d1"]), e.to_string(1), e.to_string(["foo"], ["bar"])
        ('d0 - d1 * 2', 'd0 - s0 * 2', 'foo - bar * 2')
        """
        if symbol_names is not None:
            names = [*_name_list(names), *symbol_names]
        if not _PRINTER:
            raise IndexingError("the expression printer is not installed (import tensorlayout.indexing)")
        return _PRINTER[0](self, names, floordiv=floordiv)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"Expr({self.to_string()!r})"

    def __reduce__(self) -> tuple[object, ...]:
        if self.kind == CONST:
            return (const, (self.value,))
        if self.kind == VAR:
            return (var, (self.value,))
        return (make, (self.kind, self.lhs, self.rhs))

    def __copy__(self) -> Expr:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Expr:
        return self


_Key = tuple[int, object, object, int]
#: The intern table: structure → a weak reference to its one node. An entry leaves when its node
#: dies (:func:`_forget`), so the table never outgrows the live expressions.
_TABLE: dict[_Key, weakref.KeyedRef] = {}
_VARS_CACHE: dict[Expr, frozenset[int]] = {}
_NO_VARS: frozenset[int] = frozenset()


def _forget(ref: weakref.KeyedRef, table: dict[_Key, weakref.KeyedRef] = _TABLE) -> None:
    """Drop a dead node's entry (unless its structure was interned again since). The table is
    bound here, not read as a global: nodes that die while the interpreter tears the module's
    globals down (set to None) still find it."""
    if table.get(ref.key) is ref:
        del table[ref.key]


def clear_memos() -> None:
    """Forget the memoised variable sets (they keep their nodes alive); results are unaffected.

    >>> clear_memos(); sorted((var(0) + var(2)).variables())
    [0, 2]
    """
    _VARS_CACHE.clear()


def interned_count() -> int:
    """How many expression nodes the intern table holds (all of them alive).

    >>> interned_count() >= 1
    True
    """
    return len(_TABLE)


# The two rebuilders are module functions, not closures: a recursive closure refers to itself
# through a cell, so every call would leave a cycle (function <-> cell) for the cyclic GC.
def _substitute_vars(e: Expr, table: Mapping[int, Expr | None], memo: dict[Expr, Expr]) -> Expr:
    """``e`` with variable ``i`` replaced by ``table[i]`` (others kept), bottom-up; ``memo`` shares
    rebuilt subexpressions."""
    if e.kind == CONST:
        return e
    if e.kind == VAR:
        r = table.get(e.value)
        return e if r is None else r
    got = memo.get(e)
    if got is None:
        assert e.lhs is not None and e.rhs is not None
        got = make(e.kind, _substitute_vars(e.lhs, table, memo), _substitute_vars(e.rhs, table, memo))
        memo[e] = got
    return got


def _substitute_nodes(e: Expr, table: Mapping[Expr, Expr | None], memo: dict[Expr, Expr]) -> Expr:
    """``e`` with every subexpression found in ``table`` replaced (outermost first), bottom-up."""
    hit = table.get(e)
    if hit is not None:
        return hit
    if e.lhs is None or e.rhs is None:
        return e
    got = memo.get(e)
    if got is None:
        got = make(e.kind, _substitute_nodes(e.lhs, table, memo), _substitute_nodes(e.rhs, table, memo))
        memo[e] = got
    return got


def _variables(e: Expr) -> frozenset[int]:
    cached = _VARS_CACHE.get(e)
    if cached is None:
        if e.kind == VAR:
            cached = frozenset((e.value,))
        elif e.kind == CONST:
            cached = _NO_VARS
        else:
            assert e.lhs is not None and e.rhs is not None
            cached = _variables(e.lhs) | _variables(e.rhs)
        _VARS_CACHE[e] = cached
    return cached


def _intern(kind: int, lhs: Expr | None, rhs: Expr | None, value: int) -> Expr:
    key = (kind, lhs, rhs, value)
    ref = _TABLE.get(key)
    node = None if ref is None else ref()
    if node is None:
        node = Expr(kind, lhs, rhs, value)
        _TABLE[key] = weakref.KeyedRef(node, _forget, key)
    return node


def out_of_int64(e: Expr) -> int | None:
    """The first constant of ``e`` outside int64 (folding can make one), else None.

    >>> out_of_int64(var(0) * 2**62 * 4), out_of_int64(var(0) * 4)
    (18446744073709551616, None)
    """
    for x in e.walk():
        if x.kind == CONST and not INT64_MIN <= x.value <= INT64_MAX:
            return x.value
    return None


def const(value: int) -> Expr:
    """The constant ``value``.

    >>> const(3) + 4
    Expr('7')
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise IndexingError(f"an expression constant must be an int, not {type(value).__name__}")
    return _intern(CONST, None, None, int(value))


def var(index: int) -> Expr:
    """The variable with id ``index`` (a dim if ``index < num_dims`` in its map, else a symbol).

    >>> str(var(3))
    'v3'
    """
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise IndexingError(f"a variable id must be a non-negative int, got {index!r}")
    return _intern(VAR, None, None, index)


def _lift(x: ExprLike) -> Expr:
    if isinstance(x, Expr):
        return x
    return const(x)


def make(kind: int, lhs: Expr, rhs: Expr) -> Expr:
    """The binary-op factory with XLA's creation-time rules (spec §1.1), nothing more.

    >>> make(ADD, const(2), var(0))
    Expr('v0 + 2')
    """
    if not (isinstance(lhs, Expr) and isinstance(rhs, Expr)):
        raise IndexingError("expression operands must be expressions")
    if kind not in (ADD, MUL, MOD, FLOORDIV, CEILDIV, MAX, MIN):
        raise IndexingError(f"unknown binary expression kind {kind!r}")
    if lhs.kind == CONST and rhs.kind == CONST:
        folded = _fold(kind, lhs.value, rhs.value)
        if folded is not None:
            return const(folded)
    if kind in _COMMUTATIVE and lhs.kind == CONST and rhs.kind != CONST:
        lhs, rhs = rhs, lhs
    if rhs.kind == CONST:
        c = rhs.value
        if kind == ADD and c == 0:
            return lhs
        if kind == MUL:
            if c == 0:
                return rhs
            if c == 1:
                return lhs
            if lhs.kind == MUL and lhs.rhs is not None and lhs.rhs.kind == CONST:
                assert lhs.lhs is not None
                return make(MUL, lhs.lhs, const(lhs.rhs.value * c))
    return _intern(kind, lhs, rhs, 0)


def largest_known_divisor(e: Expr) -> int:
    """The largest integer known to divide ``e`` at every point (0 for the constant 0).

    Products multiply, sums/min/max take the gcd, ``x mod c`` is ``gcd(x's, c)``, and
    ``x / c`` (or ``ceildiv``) divides ``x``'s divisor when ``c`` divides it.

    >>> largest_known_divisor(var(0) * 6 + var(1) * 4), largest_known_divisor(var(0) * 12 // 3)
    (2, 4)
    """
    k = e.kind
    if k == CONST:
        return abs(e.value)
    if k == VAR:
        return 1
    assert e.lhs is not None and e.rhs is not None
    if k == MUL:
        return largest_known_divisor(e.lhs) * largest_known_divisor(e.rhs)
    if k in (ADD, MIN, MAX):
        return gcd(largest_known_divisor(e.lhs), largest_known_divisor(e.rhs))
    if e.rhs.kind != CONST or e.rhs.value == 0:
        return 1
    c, lhs = abs(e.rhs.value), largest_known_divisor(e.lhs)
    if k == MOD:
        return gcd(lhs, c)
    return lhs // c if lhs % c == 0 else 1  # FLOORDIV, CEILDIV


@guarded
def compare(a: Expr, b: Expr) -> int:
    """XLA's total order on expressions: by kind, then value, then (lhs, rhs); -1, 0 or 1.

    >>> compare(var(0) * 4, var(0)), compare(var(1), const(0))
    (-1, -1)
    """
    return _compare(a, b)


def _compare(a: Expr, b: Expr) -> int:
    if a is b:
        return 0
    if a.kind != b.kind:
        return -1 if a.kind < b.kind else 1
    if a.kind in (VAR, CONST):
        return (a.value > b.value) - (a.value < b.value)
    assert a.lhs is not None and b.lhs is not None and a.rhs is not None and b.rhs is not None
    c = _compare(a.lhs, b.lhs)
    return c if c else _compare(a.rhs, b.rhs)
