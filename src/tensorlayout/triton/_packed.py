"""A linear layout's bases packed into machine words: one int per input bit (a *column*), the out
dims side by side in it, the first out dim in the lowest bits (Triton's flattening order). Each out
dim of size ``2**k`` owns ``k`` bits, so a basis value below the size packs exactly and XOR of
columns is XOR of bases.

>>> pack_dims(((1, 3), (0, 7)), (("dim0", 2), ("dim1", 16)))
[7, 14]
>>> unpack(14, (("dim0", 2), ("dim1", 16)))
(0, 7)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tensorlayout.triton._text import OutDims

__all__ = ["Move", "field_moves", "fields", "pack_dims", "repack", "unpack", "xor_bits"]

#: ``(old shift, mask, new shift)``: one out dim's bits moved to a new place.
Move = tuple[int, int, int]


def fields(out_dims: OutDims) -> list[tuple[int, int]]:
    """``(shift, mask)`` of each out dim's bits in a column.

    >>> fields((("a", 4), ("b", 2)))
    [(0, 3), (2, 1)]
    """
    out, shift = [], 0
    for _, size in out_dims:
        k = size.bit_length() - 1
        out.append((shift, (1 << k) - 1))
        shift += k
    return out


def pack_dims(vectors: Iterable[Sequence[int]], out_dims: OutDims) -> list[int] | None:
    """The columns of these basis vectors, or None when one does not fit (the caller explains)."""
    sizes = [s for _, s in out_dims]
    shifts = [s for s, _ in fields(out_dims)]
    rank = len(sizes)
    cols = []
    for v in vectors:
        if len(v) != rank:
            return None
        c = 0
        for x, size, shift in zip(v, sizes, shifts):
            if type(x) is not int or not 0 <= x < size:
                return None
            c |= x << shift
        cols.append(c)
    return cols


def unpack(col: int, out_dims: OutDims) -> tuple[int, ...]:
    """One column as its basis vector."""
    return tuple(col >> shift & mask for shift, mask in fields(out_dims))


def field_moves(src: OutDims, dst: OutDims, offset: dict[str, int] | None = None) -> list[Move]:
    """Moves taking each out dim of ``src`` to the same-named one of ``dst`` (plus ``offset`` bits
    within it); dims of ``src`` absent from ``dst`` are dropped."""
    where = {n: f for (n, _), f in zip(dst, fields(dst))}
    moves = []
    for (name, _), (shift, mask) in zip(src, fields(src)):
        if name in where and mask:
            moves.append((shift, mask, where[name][0] + (offset or {}).get(name, 0)))
    return moves


def repack(cols: Iterable[int], moves: list[Move]) -> list[int]:
    """Each column with its out-dim fields moved.

    >>> repack([0b1101], [(0, 1, 2), (1, 7, 0)])
    [10]
    """
    if len(moves) == 1:
        (old, mask, new), = moves
        return [(c >> old & mask) << new for c in cols]
    return [sum((c >> old & mask) << new for old, mask, new in moves) for c in cols]


def xor_bits(cols: Sequence[int], x: int) -> int:
    """XOR of the columns picked by the set bits of ``x`` (bits past the columns ignored).

    >>> xor_bits([1, 2, 4], 0b101)
    5
    """
    acc = 0
    for c in cols:
        if x & 1:
            acc ^= c
        x >>= 1
        if not x:
            break
    return acc
