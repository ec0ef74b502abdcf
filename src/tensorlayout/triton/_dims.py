"""Helpers on dimension names and flattened indices shared by the Triton modules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorlayout.errors import LayoutError

__all__ = ["dim_pairs", "names_list", "same_names", "split_index", "supremum"]


def names_list(names: Any, what: str) -> list[str]:
    """``names`` as a list of str, or a LayoutError."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence) or \
            not all(isinstance(n, str) for n in names):
        raise LayoutError(f"{what} needs a list of dimension names, got {names!r}")
    return list(names)


def dim_pairs(pairs: Any, what: str) -> list[tuple[str, int]]:
    """``[(name, size), ...]`` checked: str names, positive int sizes."""
    ok = isinstance(pairs, Sequence) and not isinstance(pairs, (str, bytes))
    out = []
    for p in pairs if ok else ():
        if not (isinstance(p, Sequence) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], int)
                and not isinstance(p[1], bool) and p[1] > 0):
            ok = False
            break
        out.append((p[0], p[1]))
    if not ok:
        raise LayoutError(f"{what} needs a list of (name, size) pairs, got {pairs!r}")
    return out


def same_names(a: Any, b: list[str], what: str) -> None:
    """Raise unless ``a`` lists the names of ``b`` once each, in any order."""
    a = names_list(a, what)
    if sorted(a) != sorted(b) or len(set(a)) != len(a):
        raise LayoutError(f"{what}: dimensions must match, ignoring order, but got {a} and {b}")


def split_index(flat: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """``flat`` as digits over ``sizes``, the first one fastest (Triton's ``reshapeOuts`` order).

    >>> split_index(13, [4, 2, 2])
    (1, 1, 1)
    """
    out = []
    for size in sizes:
        out.append(flat % size)
        flat //= size
    return tuple(out)


def supremum(x: list[str], y: list[str]) -> list[str]:
    """The shortest list with both ``x`` and ``y`` as subsequences, preferring ``x`` first
    (Triton's ``supremum``, the dim order of a product).

    >>> supremum(["lane", "block"], ["register", "block"])
    ['lane', 'register', 'block']
    """
    if x == y or not y:
        return list(x)
    if not x or not set(x) & set(y):
        return list(x) + list(y)
    pos_x = {n: i for i, n in enumerate(x)}
    pos_y = {n: i for i, n in enumerate(y)}
    result: list[str] = []
    i = j = 0
    while True:
        while i < len(x) and x[i] in result:
            i += 1
        while j < len(y) and y[j] in result:
            j += 1
        if i >= len(x) and j >= len(y):
            return result
        result.append(_supremum_next(x, y, i, j, pos_x, pos_y))


def _supremum_next(x: list[str], y: list[str], i: int, j: int, pos_x: dict[str, int],
                   pos_y: dict[str, int]) -> str:
    """The next name of :func:`supremum` given the cursors ``i`` into ``x`` and ``j`` into ``y``."""
    if i < len(x) and j < len(y) and x[i] == y[j]:
        return x[i]
    inf = len(x) + len(y) + 1
    cand_x = pos_y[x[i]] if i < len(x) and pos_y.get(x[i], -1) >= j else inf
    cand_y = pos_x[y[j]] if j < len(y) and pos_x.get(y[j], -1) >= i else inf
    if i < len(x) and cand_x == inf:
        return x[i]
    if j < len(y) and cand_y == inf:
        return y[j]
    return x[i] if cand_x <= cand_y else y[j]
