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

from collections.abc import Callable, Iterable, Sequence

from tensorlayout.triton._text import OutDims

__all__ = ["Move", "Mover", "field_moves", "fields", "mover", "pack_dims", "repack", "unpack"]

#: ``(old shift, mask, new shift)``: one out dim's bits moved to a new place.
Move = tuple[int, int, int]


_FIELDS: dict[OutDims, tuple[tuple[int, int], ...]] = {}


def fields(out_dims: OutDims) -> tuple[tuple[int, int], ...]:
    """``(shift, mask)`` of each out dim's bits in a column (kept per ``out_dims``).

    >>> fields((("a", 4), ("b", 2)))
    ((0, 3), (2, 1))
    """
    got = _FIELDS.get(out_dims)
    if got is None:
        out, shift = [], 0
        for _, size in out_dims:
            k = size.bit_length() - 1
            out.append((shift, (1 << k) - 1))
            shift += k
        if len(_FIELDS) > 4096:
            _FIELDS.clear()
        got = _FIELDS[out_dims] = tuple(out)
    return got


def pack_dims(vectors: Iterable[Sequence[int]], out_dims: OutDims) -> list[int] | None:
    """The columns of these basis vectors, or None when one does not fit (wrong length, not an
    int, out of range: the caller explains).

    >>> pack_dims([(1, 3), (0, 7)], (("a", 2), ("b", 8)))
    [7, 14]
    >>> pack_dims([(2, 3)], (("a", 2), ("b", 8))) is None
    True
    """
    try:
        if len(out_dims) == 1:
            return _pack1(vectors, out_dims[0][1])
        if len(out_dims) == 2:
            return _pack2(vectors, out_dims[0][1], out_dims[1][1], fields(out_dims)[1][0])
        if len(out_dims) == 3:
            return _pack3(vectors, out_dims, fields(out_dims))
        return _pack_any(vectors, out_dims)
    except (TypeError, ValueError):  # a vector of the wrong length or not a sequence
        return None


def _pack1(vectors: Iterable[Sequence[int]], n0: int) -> list[int] | None:
    out = []
    for a, in vectors:
        if type(a) is not int or not 0 <= a < n0:
            return None
        out.append(a)
    return out


def _pack2(vectors: Iterable[Sequence[int]], n0: int, n1: int, s1: int) -> list[int] | None:
    out = []
    for a, b in vectors:
        if type(a) is not int or type(b) is not int or not (0 <= a < n0 and 0 <= b < n1):
            return None
        out.append(a | b << s1)
    return out


def _pack3(vectors: Iterable[Sequence[int]], out_dims: OutDims,
           fs: tuple[tuple[int, int], ...]) -> list[int] | None:
    (_, n0), (_, n1), (_, n2) = out_dims
    s1, s2 = fs[1][0], fs[2][0]
    out = []
    for a, b, c in vectors:
        if type(a) is not int or type(b) is not int or type(c) is not int or \
                not (0 <= a < n0 and 0 <= b < n1 and 0 <= c < n2):
            return None
        out.append(a | b << s1 | c << s2)
    return out


def _pack_any(vectors: Iterable[Sequence[int]], out_dims: OutDims) -> list[int] | None:
    sizes = [s for _, s in out_dims]
    shifts = [s for s, _ in fields(out_dims)]
    cols = []
    for v in vectors:
        if len(v) != len(sizes):
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


Mover = Callable[[Sequence[int]], list[int]]
_MOVERS: dict[tuple[OutDims, OutDims, tuple[tuple[str, int], ...]], Mover] = {}


def mover(src: OutDims, dst: OutDims, offset: dict[str, int] | None = None) -> Mover:
    """A function moving columns' fields from ``src`` to ``dst`` (see :func:`field_moves`), reduced
    to a plain shift when every field of ``src`` moves by the same amount (kept per arguments).

    >>> mover((("a", 4),), (("b", 2), ("a", 4)))([1, 3])
    [2, 6]
    """
    key = (src, dst, tuple(offset.items()) if offset else ())
    got = _MOVERS.get(key)
    if got is None:
        if len(_MOVERS) > 4096:
            _MOVERS.clear()
        got = _MOVERS[key] = _make_mover(src, field_moves(src, dst, offset))
    return got


def _make_mover(src: OutDims, moves: list[Move]) -> Mover:
    kept = sum(1 for _, mask in fields(src) if mask)
    deltas = {new - old for old, _, new in moves}
    if len(moves) == kept and len(deltas) <= 1:
        d = deltas.pop() if deltas else 0
        if d == 0:
            return list
        if d > 0:
            return lambda cols: [c << d for c in cols]
        return lambda cols: [c >> -d for c in cols]
    if not moves:
        return lambda cols: [0] * len(cols)
    if len(moves) == 1:
        (o1, m1, n1), = moves
        return lambda cols: [(c >> o1 & m1) << n1 for c in cols]
    if len(moves) == 2:
        (o1, m1, n1), (o2, m2, n2) = moves
        return lambda cols: [(c >> o1 & m1) << n1 | (c >> o2 & m2) << n2 for c in cols]
    return lambda cols: repack(cols, moves)


def repack(cols: Iterable[int], moves: list[Move]) -> list[int]:
    """Each column with its out-dim fields moved.

    >>> repack([0b1101], [(0, 1, 2), (1, 7, 0)])
    [10]
    """
    if len(moves) == 1:
        (old, mask, new), = moves
        return [(c >> old & mask) << new for c in cols]
    return [sum((c >> old & mask) << new for old, mask, new in moves) for c in cols]
