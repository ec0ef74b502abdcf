"""Map-level rewrites besides ``simplify`` (spec §3.3–§3.4): unused variables, rescaling, mod merging.

>>> from tensorlayout.indexing.map import IndexingMap
>>> m = IndexingMap.parse("(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 7]")
>>> print(m.remove_unused_symbols())
(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 7]
"""

from __future__ import annotations

from collections.abc import Iterable
from math import gcd

from tensorlayout.core.intmath import trunc_div
from tensorlayout.errors import IndexingError
from tensorlayout.indexing.canonical import const_rhs
from tensorlayout.indexing.expr import ADD, MOD, MUL, VAR, Expr, const, make, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map_base import IndexingMapBase, M, _State

__all__ = [
    "convert_range_variables_to_dimensions",
    "get_used_parameters",
    "merge_mod_constraints",
    "remove_unused",
    "rescale_symbols",
]


def merge_mod_constraints(state: _State[M], exact: bool = False) -> bool:
    """MergeModConstraints (spec §3.4), in place on a working state; True if anything changed.

    Constraints ``L mod c_i in [r, r]`` with the same ``L`` and ``r`` merge into one
    ``L mod lcm(c_i) in [r, r]``; a variable ``L`` also gets its bounds snapped to the residue
    with C++ truncating division, as XLA does (``s0 in [-21, -2]``, ``s0 mod 6 = 0`` gives
    ``[-18, -6]``). That can drop valid negative values (``d1 in [-1, 0]``, ``d1 mod 2 = 1``
    becomes empty, though ``-1 mod 2 = 1``); ``exact=True`` rounds to the residue exactly.
    """
    groups: dict[tuple[Expr, int], list[tuple[Expr, int]]] = {}
    for expr, iv in state.constraints.items():
        if expr.kind == MOD and iv.is_point and (c := const_rhs(expr)) is not None and c > 0:
            assert expr.lhs is not None
            groups.setdefault((expr.lhs, iv.lower), []).append((expr, c))
    changed = False
    for (lhs, r), items in groups.items():
        if state.known_empty:
            break
        d = items[0][1]
        if len(items) >= 2:
            for expr, c in items:
                d = d * c // gcd(d, c)
                del state.constraints[expr]
            state.add_constraint(make(MOD, lhs, const(d)), Interval(r, r))
            changed = True
        if lhs.kind == VAR and not state.known_empty:
            b = state.get_bounds(lhs.value)
            if exact:  # the first and last values in the bounds whose floor-mod d is r
                new = Interval(b.lower + (r - b.lower) % d, b.upper - (b.upper - r) % d)
                if not 0 <= r < d:
                    new = Interval(b.lower, b.lower - 1)
            else:
                lo = trunc_div(b.lower, d) * d + r
                if lo < b.lower:
                    lo += d
                hi = trunc_div(b.upper, d) * d + r
                if hi > b.upper:
                    hi -= d
                new = Interval(lo, hi)
            if new != b:
                changed = True
                state.set_bounds(lhs.value, new)
                if not new.is_feasible:
                    state.reset_to_known_empty()
    return changed


def _only_unused(vs: frozenset[int], unused: set[int], first: int) -> bool:
    """XLA's IsFunctionOfUnusedVarsOnly: no kept kind of variable, and only unused ones."""
    return all(v >= first and v in unused for v in vs)


def _unused_variables(m: IndexingMapBase, first: int) -> tuple[set[int], list[Expr]]:
    """XLA's DetectUnusedVariables: the removable variables and the constraints to drop.

    Unused means: in no result, and in no constraint that also uses a variable that stays.
    One pass, as XLA: a constraint that only used unused variables but now shares one with a
    kept constraint is kept, while its other variables may still go (they become 0).
    """
    used: set[int] = set()
    for r in m.results:
        used |= r.variables()
    unused = {i for i in range(first, m.num_vars) if i not in used}
    candidates = []
    for e, _ in m._constraints:
        vs = e.variables()
        if _only_unused(vs, unused, first):
            candidates.append(e)
        else:
            unused -= vs
    return unused, [e for e in candidates if _only_unused(e.variables(), unused, first)]


def remove_unused(m: M, symbols_only: bool) -> tuple[M, list[bool]]:
    """RemoveUnusedSymbols / RemoveUnusedVars; the mask marks removed symbols (resp. dims++symbols).

    Runtime variables are symbols like range variables. Removed variables become 0 in the
    constraints that stay, which are then re-added (XLA's CompressVars). The mask is empty when
    nothing was removed.

    >>> from tensorlayout.indexing import IndexingMap
    >>> m = IndexingMap.parse("(d0)[s0, s1] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], "
    ...                       "s1 in [0, 7], s0 + s1 in [0, 5], s1 + d0 in [0, 9]")
    >>> print(m.remove_unused_symbols())
    (d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], s0 + d0 in [0, 9]
    """
    if m.is_undefined or (symbols_only and m.num_symbols == 0):
        return m, []
    first = m.num_dims if symbols_only else 0
    removed, dropped = _unused_variables(m, first)
    if not removed:
        return m, []
    order = [i for i in range(m.num_vars) if i not in removed]
    repl: dict[int, Expr] = {old: var(new) for new, old in enumerate(order)}
    repl.update({i: const(0) for i in removed})
    all_vars = m.all_vars()
    n, r1 = m.num_dims, m.num_dims + m.num_range_vars
    state = _State(type(m), [e.replace_variables(repl) for e in m.results],
                   [all_vars[i] for i in order if i < n],
                   [all_vars[i] for i in order if n <= i < r1],
                   [all_vars[i] for i in order if i >= r1], known_empty=m.is_known_empty)
    moved = []
    for e, iv in m._constraints:
        if e in dropped:
            continue
        new_e = e.replace_variables(repl)
        if new_e is e:
            state.constraints[e] = iv
        else:
            moved.append((new_e, iv))
    for e, iv in moved:
        state.add_constraint(e, iv)
    return state.freeze(), [i in removed for i in range(first, m.num_vars)]


def _rescalable(expr: Expr, iv: Interval, num_dims: int) -> int | None:
    """The divisor ``c`` if the constraint reads ``s mod c in [k, k]`` with a symbol ``s`` and ``c > 0``."""
    c = const_rhs(expr) if expr.kind == MOD and iv.is_point else None
    lhs = expr.lhs
    if c is None or c <= 0 or lhs is None or lhs.kind != VAR or lhs.value < num_dims:
        return None
    return c


def rescale_symbols(m: M) -> tuple[M, bool]:
    """RescaleSymbols: for ``s mod c in [k, k]`` substitute ``s -> s * c + k`` (spec §3.3).

    As XLA: MergeModConstraints runs first; each symbol (range or runtime) is rescaled by its
    first such constraint only, with new bounds ``trunc((lo - k) / c)``, ``trunc((hi - k) / c)``;
    the other constraints get the substitution and are stored as they come out (no folding into
    bounds), and infeasible new bounds are kept as they are. Returns the map and whether it
    rescaled.

    >>> from tensorlayout.indexing import IndexingMap
    >>> m = IndexingMap.parse("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 9], s0 mod 6 in [3, 3]")
    >>> print(m.rescale_symbols())
    (d0)[s0] -> (s0 * 6 + 3), domain: d0 in [0, 3], s0 in [0, 1]
    """
    if m.is_undefined or m.is_known_empty:
        return m, False
    state = m._state()
    merge_mod_constraints(state)
    if state.known_empty:
        return state.freeze(), False
    replace: dict[int, Expr] = {}
    deleted: set[Expr] = set()
    for expr, iv in state.constraints.items():
        c = _rescalable(expr, iv, state.num_dims)
        if c is None or expr.lhs is None or expr.lhs.value in replace:
            continue
        s, k = expr.lhs, iv.lower
        replace[s.value] = make(ADD, make(MUL, s, const(c)), const(k))
        deleted.add(expr)
        b = state.get_bounds(s.value)
        state.set_bounds(s.value, Interval(trunc_div(b.lower - k, c), trunc_div(b.upper - k, c)))
    if not replace:
        return state.freeze(), False
    state.results = [r.replace_variables(replace) for r in state.results]
    state.constraints = {e.replace_variables(replace): iv
                         for e, iv in state.constraints.items() if e not in deleted}
    return state.freeze(), True


def get_used_parameters(exprs: Iterable[Expr], num_dims: int) -> tuple[list[int], list[int]]:
    """Sorted unique dim ids and symbol indices mentioned by ``exprs``.

    >>> from tensorlayout.indexing.parse import parse_expr
    >>> get_used_parameters([parse_expr("d0 + s1", num_dims=2)], 2)
    ([0], [1])
    """
    used: set[int] = set()
    for e in exprs:
        used |= e.variables()
    return sorted(i for i in used if i < num_dims), sorted(i - num_dims for i in used if i >= num_dims)


def convert_range_variables_to_dimensions(m: M, indices: Iterable[int]) -> M:
    """XLA's ``ConvertRangeVariablesToDimensions``: move range vars to the end of the dims.

    The chosen range variables keep their names and bounds; runtime variables stay.

    >>> from tensorlayout.indexing import IndexingMap
    >>> m = IndexingMap.parse("(d0)[a, b] -> (d0 + a + b), domain: d0 in [0, 3], a in [0, 1], b in [0, 2]")
    >>> print(convert_range_variables_to_dimensions(m, [1]))
    (d0, b)[a] -> (d0 + a + b), domain: d0 in [0, 3], b in [0, 2], a in [0, 1]
    """
    chosen = sorted(set(indices))
    if any(not 0 <= i < m.num_range_vars for i in chosen):
        raise IndexingError(f"range variable indices {chosen} out of range [0, {m.num_range_vars})")
    n, r = m.num_dims, m.num_range_vars
    rest = [j for j in range(r) if j not in chosen]
    order = [*range(n), *(n + j for j in chosen), *(n + j for j in rest), *range(n + r, m.num_vars)]
    repl = {old: var(new) for new, old in enumerate(order)}
    dims = (*m.dim_vars, *(m.range_vars[j] for j in chosen))
    ranges = tuple(m.range_vars[j] for j in rest)
    results = tuple(e.replace_variables(repl) for e in m.results)
    cons = tuple((e.replace_variables(repl), iv) for e, iv in m._constraints)
    return type(m)._make(results, dims, ranges, m.rt_vars, cons, m.is_known_empty, m.is_undefined)
