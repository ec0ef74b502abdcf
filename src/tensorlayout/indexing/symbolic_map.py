"""XLA's ``SymbolicMap`` (``xla/hlo/analysis/symbolic_map.h``): results over dims and symbols, no domain.

Variables are ids: dims ``0..num_dims-1``, then symbols (``s_j`` is id ``num_dims + j``).
This module also holds the map-header grammar shared with the indexing-map parser.

>>> sm = SymbolicMap.parse("(d0, d1)[s0] -> (d0 + s0, d1 * 2)")
>>> sm.is_function_of_dim(1), sm.is_function_of_symbol(0), sm.get_sub_map([1]).to_string()
(True, True, '(d0, d1)[s0] -> (d1 * 2)')
>>> get_unused_dimensions_bit_vector(SymbolicMap.parse("(d0, d1) -> (d1)"))
[True, False]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from tensorlayout._cursor import Cursor
from tensorlayout.core.intmath import show_int
from tensorlayout.errors import IndexingError, ParseError, expect_text
from tensorlayout.indexing.expr import CONST, VAR, Expr, out_of_int64, var
from tensorlayout.indexing.exprparse import _KEYWORDS, _NAME, _ExprParser, _run

__all__ = [
    "SymbolicMap",
    "compress_dims",
    "compress_symbols",
    "create_dim_expr",
    "create_symbol_expr",
    "get_dimension_index",
    "get_symbol_index",
    "get_unused_dimensions_bit_vector",
    "get_unused_symbols_bit_vector",
    "is_dimension",
    "is_symbol",
    "parse_symbolic_map",
    "parse_symbolic_map_and_advance",
]


def create_dim_expr(dim_id: int) -> Expr:
    """``CreateDimExpr``: the variable of dimension ``dim_id``."""
    return var(dim_id)


def create_symbol_expr(symbol_id: int, num_dims: int) -> Expr:
    """``CreateSymbolExpr``: the variable of symbol ``symbol_id`` after ``num_dims`` dims."""
    return var(symbol_id + num_dims)


def is_dimension(expr: Expr, num_dims: int) -> bool:
    """``IsDimension``: a variable whose id is below ``num_dims``."""
    return expr.kind == VAR and expr.value < num_dims


def is_symbol(expr: Expr, num_dims: int) -> bool:
    """``IsSymbol``: a variable whose id is ``num_dims`` or more."""
    return expr.kind == VAR and expr.value >= num_dims


def get_dimension_index(expr: Expr, num_dims: int) -> int:
    """``GetDimensionIndex``: the dimension number of a dimension variable."""
    if not is_dimension(expr, num_dims):
        raise IndexingError(f"{expr!r} is not a dimension of a map with {num_dims} dims")
    return expr.value


def get_symbol_index(expr: Expr, num_dims: int) -> int:
    """``GetSymbolIndex``: the symbol number of a symbol variable."""
    if not is_symbol(expr, num_dims):
        raise IndexingError(f"{expr!r} is not a symbol of a map with {num_dims} dims")
    return expr.value - num_dims


def _variables(n: int, offset: int = 0) -> list[Expr]:
    return [var(offset + i) for i in range(n)]


@dataclass(frozen=True)
class SymbolicMap:
    """A plain map ``(d...)[s...] -> (exprs)`` with no domain; symbols are ids ``num_dims + j``.

    Equality is XLA's: same counts and the same result expressions.

    >>> sm = SymbolicMap.parse("(d0)[s0] -> (d0 * 2 + s0 - 5)")
    >>> [str(r) for r in sm.results]
    ['v0 * 2 + v1 - 5']
    """

    num_dims: int
    num_symbols: int
    results: tuple[Expr, ...]

    @classmethod
    def get(cls, num_dims: int, num_symbols: int, exprs: Sequence[Expr]) -> SymbolicMap:
        """``SymbolicMap::Get``: the map with these counts and result expressions."""
        return cls(num_dims, num_symbols, tuple(exprs))

    @classmethod
    def parse(cls, text: str) -> SymbolicMap:
        """Parse ``(d...)[s...]{rt...} -> (exprs)`` with nothing after it."""
        sm, rest = parse_symbolic_map_and_advance(text)
        Cursor(text, len(text) - len(rest)).expect_end()
        return sm

    @property
    def num_results(self) -> int:
        """``GetNumResults``: the number of result expressions."""
        return len(self.results)

    def get_result(self, i: int) -> Expr:
        """``GetResult``: result expression ``i``."""
        if not 0 <= i < len(self.results):
            raise IndexingError(f"result index {i} out of range [0, {len(self.results)})")
        return self.results[i]

    def get_dim_expression(self, i: int) -> Expr:
        """``GetDimExpression``: the variable of dimension ``i``."""
        return create_dim_expr(i)

    def get_symbol_expression(self, j: int) -> Expr:
        """``GetSymbolExpression``: the variable of symbol ``j``."""
        return create_symbol_expr(j, self.num_dims)

    def is_empty(self) -> bool:
        """``IsEmpty``: the map has no results."""
        return not self.results

    def is_identity(self) -> bool:
        """``IsIdentity``: result ``i`` is dimension ``i``, one result per dimension."""
        return len(self.results) == self.num_dims and all(
            r.kind == VAR and r.value == i for i, r in enumerate(self.results))

    def is_constant(self) -> bool:
        """``IsConstant``: every result is a constant."""
        return all(r.kind == CONST for r in self.results)

    def get_constant_results(self) -> list[int]:
        """``GetConstantResults``: the values of a constant map (else an IndexingError)."""
        if not self.is_constant():
            raise IndexingError("Cannot get constant results from a non-constant map")
        return [r.value for r in self.results]

    def is_function_of_dim(self, dim_id: int) -> bool:
        """``IsFunctionOfDim``: some result uses dimension ``dim_id``."""
        return any(dim_id in r.variables() for r in self.results)

    def is_function_of_symbol(self, symbol_id: int) -> bool:
        """``IsFunctionOfSymbol``: some result uses symbol ``symbol_id``."""
        return any(self.num_dims + symbol_id in r.variables() for r in self.results)

    def replace_dims_and_symbols(self, dims: Sequence[Expr], symbols: Sequence[Expr],
                                 num_result_dims: int, num_result_symbols: int) -> SymbolicMap:
        """``ReplaceDimsAndSymbols``: substitute (an empty list keeps those variables)."""
        if (dims and len(dims) != self.num_dims) or (symbols and len(symbols) != self.num_symbols):
            raise IndexingError(f"expected {self.num_dims} dim and {self.num_symbols} symbol "
                                f"replacements (or none), got {len(dims)} and {len(symbols)}")
        table = [*(dims or _variables(self.num_dims)),
                 *(symbols or _variables(self.num_symbols, self.num_dims))]
        return SymbolicMap(num_result_dims, num_result_symbols,
                           tuple(r.replace_variables(table) for r in self.results))

    def compose(self, other: SymbolicMap) -> SymbolicMap:
        """``Compose``: ``self`` after ``other``; symbols are self's, then other's.

        >>> a = SymbolicMap.parse("(d0, d1)[s0] -> (d0 + s0, d1)")
        >>> b = SymbolicMap.parse("(d0)[s0, s1] -> (d0 * 2 + s0 * 3, d0 + s1)")
        >>> a.compose(b).to_string()
        '(d0)[s0, s1, s2] -> (d0 * 2 + s1 * 3 + s0, d0 + s2)'
        """
        if self.num_dims != other.num_results:
            raise IndexingError("Number of dimensions of this map must match number of results "
                                f"of other map ({self.num_dims} != {other.num_results})")
        dims, syms = other.num_dims, self.num_symbols + other.num_symbols
        moved = other.replace_dims_and_symbols(
            _variables(dims), _variables(other.num_symbols, dims + self.num_symbols), dims, syms)
        return self.replace_dims_and_symbols(list(moved.results),
                                             _variables(self.num_symbols, dims), dims, syms)

    def get_sub_map(self, result_indices: Sequence[int]) -> SymbolicMap:
        """``GetSubMap``: the map with only the chosen results."""
        return replace(self, results=tuple(self.get_result(i) for i in result_indices))

    def replace(self, expr: Expr, replacement: Expr) -> SymbolicMap:
        """``Replace``: every occurrence of the subexpression ``expr`` becomes ``replacement``."""
        return replace(self, results=tuple(r.replace(expr, replacement) for r in self.results))

    def to_string(self, dims: Sequence[str] | None = None, ranges: Sequence[str] | None = None,
                  rts: Sequence[str] = ()) -> str:
        """Print with names; symbols beyond ``len(ranges)`` are printed in ``{...}`` as runtime vars.

        This is the indexing-map header form (no ``[]`` without symbols); XLA's
        ``SymbolicMap::ToString`` always writes ``[...]``.

        >>> SymbolicMap(1, 1, (var(0) + var(1),)).to_string()
        '(d0)[s0] -> (d0 + s0)'
        """
        dn = list(dims) if dims is not None else [f"d{i}" for i in range(self.num_dims)]
        if ranges is None:
            ranges = [f"s{j}" for j in range(self.num_symbols - len(rts))]
        names = [*dn, *ranges, *rts]
        text = "(" + ", ".join(dn) + ")"
        if ranges:
            text += "[" + ", ".join(ranges) + "]"
        if rts:
            text += "{" + ", ".join(rts) + "}"
        return text + " -> (" + ", ".join(r.to_string(names) for r in self.results) + ")"

    def __str__(self) -> str:
        return self.to_string()


def _used(sm: SymbolicMap) -> frozenset[int]:
    return frozenset().union(*(r.variables() for r in sm.results))


def get_unused_dimensions_bit_vector(sm: SymbolicMap) -> list[bool]:
    """``GetUnusedDimensionsBitVector``: True for each dimension no result uses."""
    used = _used(sm)
    return [i not in used for i in range(sm.num_dims)]


def get_unused_symbols_bit_vector(sm: SymbolicMap) -> list[bool]:
    """``GetUnusedSymbolsBitVector``: True for each symbol no result uses."""
    used = _used(sm)
    return [sm.num_dims + j not in used for j in range(sm.num_symbols)]


def _check_unused(mask: Sequence[bool], actual: list[bool], what: str) -> None:
    if len(mask) != len(actual):
        raise IndexingError(f"expected a mask of {len(actual)} {what}s, got {len(mask)}")
    for i, (asked, unused) in enumerate(zip(mask, actual)):
        if asked and not unused:
            raise IndexingError(f"Attempting to compress a used {what}: {i}")


def compress_dims(sm: SymbolicMap, unused_dims: Sequence[bool]) -> SymbolicMap:
    """``CompressDims``: drop the marked (unused) dimensions and renumber the rest.

    >>> compress_dims(SymbolicMap.parse("(d0, d1)[s0] -> (d1 + s0)"), [True, False]).to_string()
    '(d0)[s0] -> (d0 + s0)'
    """
    _check_unused(unused_dims, get_unused_dimensions_bit_vector(sm), "dimension")
    kept = [i for i in range(sm.num_dims) if not unused_dims[i]]
    if len(kept) == sm.num_dims:
        return sm
    table = {old: var(new) for new, old in enumerate(kept)}
    table.update({sm.num_dims + j: var(len(kept) + j) for j in range(sm.num_symbols)})
    return SymbolicMap(len(kept), sm.num_symbols,
                       tuple(r.replace_variables(table) for r in sm.results))


def compress_symbols(sm: SymbolicMap, unused_symbols: Sequence[bool]) -> SymbolicMap:
    """``CompressSymbols``: drop the marked (unused) symbols and renumber the rest."""
    _check_unused(unused_symbols, get_unused_symbols_bit_vector(sm), "symbol")
    kept = [j for j in range(sm.num_symbols) if not unused_symbols[j]]
    if len(kept) == sm.num_symbols:
        return sm
    table = {sm.num_dims + old: var(sm.num_dims + new) for new, old in enumerate(kept)}
    return SymbolicMap(sm.num_dims, len(kept), tuple(r.replace_variables(table) for r in sm.results))


# ---- the map header grammar (shared with tensorlayout.indexing.parse) ---------------------------

def _name_list(cur: Cursor, close: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    if cur.accept(close):
        return out
    while True:
        cur.skip()
        at = cur.pos
        m = cur.match(_NAME)
        if not m or m.group() in _KEYWORDS:
            raise cur.error("a variable name")
        out.append((m.group(), at))
        if cur.accept(close):
            return out
        cur.expect(",", f"',' or '{close}'")


_Names = list[tuple[str, int]]


def _checked(cur: Cursor, parse: Callable[[], Expr]) -> Expr:
    """An expression whose constants, folded while parsing (``x * 2**62 * 4``), fit in int64."""
    cur.skip()
    at = cur.pos
    e = _run(cur, parse)
    big = out_of_int64(e)
    if big is not None:
        raise ParseError(cur.text, at, "an expression whose folded constants fit in int64",
                         context=f"it folds to the constant {show_int(big)}")
    return e


def _header(cur: Cursor) -> tuple[_Names, _Names, _Names, list[Expr]]:
    cur.expect("(", "'(' to start the dimension list")
    dims = _name_list(cur, ")")
    syms = _name_list(cur, "]") if cur.accept("[") else []
    rts = _name_list(cur, "}") if cur.accept("{") else []
    table: dict[str, Expr] = {}
    for i, (name, at) in enumerate([*dims, *syms, *rts]):
        if name in table:
            raise ParseError(cur.text, at, "a variable name not declared before", repr(name))
        table[name] = var(i)
    cur.expect("->", "'->'")
    cur.expect("(", "'(' to start the results")
    results: list[Expr] = []
    parser = _ExprParser(cur, table, None)
    if not cur.accept(")"):
        while True:
            results.append(_checked(cur, parser.expr))
            if cur.accept(")"):
                break
            cur.expect(",", "',' or ')' after a result")
    return dims, syms, rts, results


def parse_symbolic_map_and_advance(text: str) -> tuple[SymbolicMap, str]:
    """Parse a symbolic map at the start of ``text``; returns it and the unparsed rest.

    >>> sm, rest = parse_symbolic_map_and_advance("(d0) -> (d0) domain: d0 in [0, 1]")
    >>> str(sm), rest.strip()
    ('(d0) -> (d0)', 'domain: d0 in [0, 1]')
    """
    cur = Cursor(expect_text(text, "symbolic map text"))
    dims, syms, rts, results = _run(cur, lambda: _header(cur))
    return SymbolicMap(len(dims), len(syms) + len(rts), tuple(results)), text[cur.pos:]


def parse_symbolic_map(text: str) -> SymbolicMap:
    """XLA's ``ParseSymbolicMap``: :meth:`SymbolicMap.parse`."""
    return SymbolicMap.parse(text)
