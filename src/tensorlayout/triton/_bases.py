"""Checking and normalising what ``LinearLayout.from_bases`` is given: bases, out-dim names
and sizes (Triton's own checks and messages).

>>> log2(8), is_pow2(6)
(3, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tensorlayout.errors import LayoutError
from tensorlayout.triton._packed import pack_dims
from tensorlayout.triton._text import Bases, OutDims

__all__ = ["MAX_BITS", "MAX_DIM_SIZE", "check_bases", "fast_pack", "fast_sizes", "good_out_dims",
           "infer_sizes", "is_int", "is_pow2", "log2", "norm_bases", "norm_names", "plain_out_dims",
           "sizes_ok"]

#: Largest out-dim size (Triton keeps sizes and basis values in int32).
MAX_DIM_SIZE = 1 << 30
#: Triton's GF(2) matrix keeps one uint64 per row: at most 64 in bits and 64 out bits.
MAX_BITS = 64


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def is_pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def log2(x: int) -> int:
    return x.bit_length() - 1


def norm_bases(bases: Any) -> Bases:
    """``[(name, [[...], ...]), ...]`` (or a mapping) as nested tuples, type-checked."""
    items = bases.items() if isinstance(bases, Mapping) else bases
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise LayoutError(f"bases must be a sequence of (in_dim_name, [[...], ...]) pairs, got {bases!r}")
    out = []
    for item in items:
        if not isinstance(item, Sequence) or isinstance(item, str) or len(item) != 2:
            raise LayoutError(f"each entry of bases must be a pair (in_dim_name, vectors), got {item!r}")
        name, vectors = item
        if not isinstance(name, str):
            raise LayoutError(f"in-dim names must be str, got {name!r}")
        if isinstance(vectors, (str, bytes)) or not isinstance(vectors, Iterable):
            raise LayoutError(f"the bases of in-dim '{name}' must be a list of vectors, got {vectors!r}")
        vecs = []
        for v in vectors:
            if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
                raise LayoutError(f"a basis of in-dim '{name}' must be a list of ints, got {v!r}")
            vec = tuple(v)
            if not all(is_int(x) for x in vec):
                raise LayoutError(f"a basis of in-dim '{name}' must hold ints, got {list(vec)!r}")
            vecs.append(vec)
        out.append((name, tuple(vecs)))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise LayoutError(f"in-dim names must be distinct, got {names}")
    return tuple(out)


def norm_names(names: Any, what: str) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise LayoutError(f"{what} must be a sequence of str, got {names!r}")
    got = tuple(names)
    if not all(isinstance(n, str) for n in got):
        raise LayoutError(f"{what} must be str, got {list(got)!r}")
    if len(set(got)) != len(got):
        raise LayoutError(f"{what} must be distinct, got {list(got)}")
    return got


def infer_sizes(bases: Bases, names: tuple[str, ...]) -> OutDims:
    """Triton's inference: each size is the next power of two above every basis value."""
    sizes = [1] * len(names)
    for _, vectors in bases:
        for v in vectors:
            for i, x in enumerate(v[: len(names)]):
                sizes[i] = max(sizes[i], 1 << x.bit_length() if x >= 0 else 1)
    return tuple(zip(names, sizes))


def check_bases(bases: Bases, out_dims: OutDims) -> None:
    """Triton's ``checkInvariants`` (minus surjectivity), plus its int32 and 64-bit limits."""
    rank = len(out_dims)
    for name, vectors in bases:
        for v in vectors:
            if any(x < 0 for x in v):
                raise LayoutError(f"basis values must be non-negative; in-dim '{name}' has {list(v)}")
            if len(v) != rank:
                raise LayoutError(f"every basis needs {rank} values (one per out dim); "
                                  f"in-dim '{name}' has {list(v)}")
    for name, size in out_dims:
        if not is_int(size) or not is_pow2(size) or size > MAX_DIM_SIZE:
            raise LayoutError(f"out-dim '{name}' has size {size!r}; sizes are powers of 2 up to 2**30")
    for name, vectors in bases:
        for v in vectors:
            for (out, size), x in zip(out_dims, v):
                if x >= size:
                    raise LayoutError(f"basis value {x} of in-dim '{name}' is not below the size "
                                      f"{size} of out-dim '{out}'")
    n_in = sum(len(v) for _, v in bases)
    n_out = sum(log2(s) for _, s in out_dims)
    if n_in > MAX_BITS or n_out > MAX_BITS:
        raise LayoutError(f"layout too large: {n_in} in bits and {n_out} out bits (Triton allows 64 each)")


def fast_pack(bases: Any, out_dims: OutDims) -> tuple[tuple[tuple[str, int], ...], list[int]] | None:
    """In dims and columns of plain list/tuple bases that need no conversion, else None."""
    if type(bases) is not list and type(bases) is not tuple:
        return None
    ins: list[tuple[str, int]] = []
    vecs: list[Any] = []
    try:
        for name, vectors in bases:
            if type(name) is not str:
                return None
            ins.append((name, len(vectors)))
            vecs += vectors
    except (TypeError, ValueError):
        return None
    if len(ins) > 1 and len({n for n, _ in ins}) != len(ins):
        return None
    cols = pack_dims(vecs, out_dims)
    return None if cols is None else (tuple(ins), cols)


def fast_sizes(bases: Any, rank: int) -> list[int] | None:
    """Triton's inferred out-dim sizes (the power of two above every basis value) for plain
    list/tuple bases of ints, else None (the slow path explains what is wrong)."""
    if type(bases) is not list and type(bases) is not tuple:
        return None
    top = [0] * rank
    try:
        for _, vectors in bases:
            for v in vectors:
                if len(v) != rank:
                    return None
                for i, x in enumerate(v):
                    if type(x) is not int or x < 0:
                        return None
                    top[i] |= x
    except (TypeError, ValueError):
        return None
    return [1 << t.bit_length() for t in top]


_GOOD_OUT_DIMS: set[OutDims] = set()


def good_out_dims(out_dims: Any) -> bool:
    """Distinct str names with power-of-two int sizes Triton accepts, 64 out bits at most (kept
    once seen)."""
    try:
        if out_dims in _GOOD_OUT_DIMS:
            return True
    except TypeError:  # an unhashable name
        return False
    names = {n for n, _ in out_dims}
    good = len(names) == len(out_dims) and not set(map(type, names)) - {str} and sizes_ok(out_dims) and \
        sum(log2(s) for _, s in out_dims) <= MAX_BITS
    if good:
        if len(_GOOD_OUT_DIMS) > 4096:
            _GOOD_OUT_DIMS.clear()
        _GOOD_OUT_DIMS.add(out_dims)
    return good


_PLAIN_OUT_DIMS: dict[tuple[Any, ...], OutDims] = {}


def plain_out_dims(names: Sequence[Any], sizes: Sequence[Any]) -> OutDims | None:
    """``tuple(zip(names, sizes))`` when the sizes are ints and :func:`good_out_dims` holds (kept per
    names and sizes), else None.

    >>> plain_out_dims(["dim0"], [4]), plain_out_dims(["dim0"], [4.0])
    ((('dim0', 4),), None)
    """
    if len(names) != len(sizes):
        return None
    for s in sizes:
        if type(s) is not int:  # 4.0 == 4 and True == 1: types first
            return None
    key = (*names, *sizes)  # same lengths: the names, then the sizes
    try:
        got = _PLAIN_OUT_DIMS.get(key)
    except TypeError:  # an unhashable name
        return None
    if got is None:
        out_dims = tuple(zip(names, sizes))
        if not good_out_dims(out_dims):
            return None
        if len(_PLAIN_OUT_DIMS) > 4096:
            _PLAIN_OUT_DIMS.clear()
        got = _PLAIN_OUT_DIMS[key] = out_dims
    return got


def sizes_ok(out_dims: OutDims) -> bool:
    return all(type(s) is int and 0 < s <= MAX_DIM_SIZE and not s & (s - 1) for _, s in out_dims)
