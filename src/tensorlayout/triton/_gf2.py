"""Bit-matrix arithmetic over GF(2): rows are Python ints, bit ``c`` is column ``c``.

A row's lowest set bit is its pivot, so reduced row echelon form here is the one Triton's
``f2reduce`` computes (pivots in increasing column order, each pivot column zero elsewhere).

>>> rref([0b011, 0b110, 0b101])
[5, 6, 0]
>>> rank([0b011, 0b110, 0b101])
2
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["echelon", "fast_rank", "independent", "lowest_bit", "rank", "rref", "solve"]


def lowest_bit(x: int) -> int:
    """Index of the lowest set bit of ``x > 0``.

    >>> lowest_bit(0b1000)
    3
    """
    return (x & -x).bit_length() - 1


def rref(rows: Sequence[int]) -> list[int]:
    """Reduced row echelon form; non-zero rows first in increasing pivot order, zero rows last.

    >>> rref([0b10, 0b11])
    [1, 2]
    """
    pending = [r for r in rows]
    done: list[int] = []
    ncols = max((r.bit_length() for r in pending), default=0)
    for col in range(ncols):
        bit = 1 << col
        pivot = next((i for i, r in enumerate(pending) if r & bit), None)
        if pivot is None:
            continue
        row = pending.pop(pivot)
        pending = [r ^ row if r & bit else r for r in pending]
        done = [r ^ row if r & bit else r for r in done]
        done.append(row)
    return done + [0] * (len(rows) - len(done))


def rank(rows: Sequence[int]) -> int:
    """Number of linearly independent rows.

    >>> rank([3, 3, 0])
    1
    """
    return sum(1 for r in rref(rows) if r)


def echelon(cols: Sequence[int]) -> tuple[dict[int, tuple[int, int]], int]:
    """Column echelon form: ``{lowest bit: (reduced column, which columns make it)}`` for the
    columns independent of those before them (Triton's basic variables), and the mask of those
    columns. A later column is never needed to write an earlier one.

    >>> piv, basic = echelon([0b01, 0b11, 0b10])
    >>> sorted(piv), bin(basic)
    ([1, 2], '0b11')
    """
    pivots: dict[int, tuple[int, int]] = {}
    basic = 0
    for j, c in enumerate(cols):
        combo = 1 << j
        while c:
            low = c & -c
            hit = pivots.get(low)
            if hit is None:
                pivots[low] = (c, combo)
                basic |= 1 << j
                break
            c ^= hit[0]
            combo ^= hit[1]
    return pivots, basic


def fast_rank(cols: Sequence[int]) -> int:
    """The rank of the columns (the same as :func:`rank` of the rows).

    >>> fast_rank([3, 3, 1])
    2
    """
    pivots: dict[int, int] = {}
    return sum(_insert(pivots, c) for c in cols)


def independent(cols: Sequence[int]) -> bool:
    """Whether the columns are linearly independent (full column rank): :func:`fast_rank`'s
    elimination, stopped at the first dependent column.

    >>> independent([0b011, 0b110, 0b101]), independent([0b01, 0b11])
    (False, True)
    """
    pivots: dict[int, int] = {}
    return all(_insert(pivots, c) for c in cols)


def _insert(pivots: dict[int, int], c: int) -> bool:
    """Reduce column ``c`` by ``pivots`` (keyed by their lowest set bit) and keep what is left as a
    new pivot: whether ``c`` was independent of them."""
    while c:
        low = c & -c
        hit = pivots.get(low)
        if hit is None:
            pivots[low] = c
            return True
        c ^= hit
    return False


def solve(pivots: dict[int, tuple[int, int]], target: int) -> int | None:
    """The columns (a bit mask) whose XOR is ``target``, using only basic columns (free variables
    0, Triton's least-squares choice); None when ``target`` is outside their span.

    >>> solve(echelon([0b01, 0b11, 0b10])[0], 0b10)
    3
    """
    combo = 0
    while target:
        hit = pivots.get(target & -target)
        if hit is None:
            return None
        target ^= hit[0]
        combo ^= hit[1]
    return combo
