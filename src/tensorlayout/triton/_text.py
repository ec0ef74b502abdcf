"""Triton's printed form of a linear layout (``LinearLayout::toString``), both ways.

The text starts with a newline; each input dimension is a bullet ``" - "`` whose later bases
are indented by three spaces; an input dimension without bases prints ``is a size 1
dimension``; the last line names the output dimensions and their sizes::

    <newline>
     - register=1 -> (0, 1)
       register=2 -> (8, 0)
     - warp is a size 1 dimension
    where out dims are: [dim0 (size 16), dim1 (size 8)]

>>> print(format_layout((("register", ((0, 1), (8, 0))), ("warp", ())), (("dim0", 16), ("dim1", 8))))
<BLANKLINE>
 - register=1 -> (0, 1)
   register=2 -> (8, 0)
 - warp is a size 1 dimension
where out dims are: [dim0 (size 16), dim1 (size 8)]
"""

from __future__ import annotations

import re

from tensorlayout._cursor import Cursor
from tensorlayout.errors import expect_text

__all__ = ["Bases", "OutDims", "format_layout", "parse_layout"]

Bases = tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]
OutDims = tuple[tuple[str, int], ...]

_NAME = re.compile(r"[^\s=()\[\],]+")
_WHERE = "where out dims are:"


def _out_dims_text(out_dims: OutDims) -> str:
    return "[" + ", ".join(f"{name} (size {size})" for name, size in out_dims) + "]"


def format_layout(bases: Bases, out_dims: OutDims) -> str:
    """The text Triton's ``LinearLayout::toString`` prints for these bases and output dims.

    >>> format_layout((), ())
    '\\n(empty layout)'
    """
    if not bases:
        if not out_dims:
            return "\n(empty layout)"
        return "\n(empty layout with out-dims " + _out_dims_text(out_dims) + ")"
    parts = ["\n"]
    for name, vectors in bases:
        if not vectors:
            parts.append(f" - {name} is a size 1 dimension\n")
            continue
        lines = [f"{name}={1 << i} -> (" + ", ".join(map(str, v)) + ")" for i, v in enumerate(vectors)]
        parts.append(" - " + "\n   ".join(lines) + "\n")
    parts.append(_WHERE + " " + _out_dims_text(out_dims))
    return "".join(parts)


def _read_out_dims(cur: Cursor) -> list[tuple[str, int]]:
    cur.expect("[", "'[' opening the out dims")
    dims: list[tuple[str, int]] = []
    if cur.accept("]"):
        return dims
    while True:
        name = cur.identifier("an out-dim name", _NAME)
        cur.expect("(", "'(' before the out-dim size")
        cur.expect("size", "'size'")
        size = cur.unsigned("an out-dim size")
        cur.expect(")", "')' after the out-dim size")
        dims.append((name, size))
        if cur.accept("]"):
            return dims
        cur.expect(",", "',' or ']' in the out dims")


def _read_vector(cur: Cursor) -> tuple[int, ...]:
    cur.expect("(", "'(' opening a basis vector")
    values: list[int] = []
    if cur.accept(")"):
        return ()
    while True:
        values.append(cur.unsigned("a non-negative basis value"))
        if cur.accept(")"):
            return tuple(values)
        cur.expect(",", "',' or ')' in a basis vector")


def _read_entry(cur: Cursor, name: str | None, index: int) -> tuple[str, tuple[int, ...]]:
    """``NAME=2^index -> (v, ...)``; ``name`` is the dimension the entry must continue."""
    start = cur.pos
    got = cur.identifier("an in-dim name", _NAME)
    if name is not None and got != name:
        raise cur.error(f"'{name}' (the basis list of {name} continues)", at=start)
    cur.expect("=", "'=' after the in-dim name")
    at = cur.pos
    value = cur.unsigned("the input value 2^i")
    if value != 1 << index:
        raise cur.error(f"{1 << index} (the input value of basis {index})", at=at)
    cur.expect("->", "'->'")
    return got, _read_vector(cur)


def _read_in_dim(cur: Cursor) -> tuple[str, tuple[tuple[int, ...], ...]]:
    """One bullet: ``- NAME is a size 1 dimension`` or its list of bases."""
    cur.expect("-", "'-' starting an in-dim, or 'where out dims are:'")
    mark = cur.pos
    name = cur.identifier("an in-dim name", _NAME)
    if cur.accept("is"):
        for word in ("a", "size", "1", "dimension"):
            cur.expect(word, repr(word))
        return name, ()
    cur.pos = mark
    name, first = _read_entry(cur, None, 0)
    vectors = [first]
    while not cur.peek("-") and not cur.peek(_WHERE):
        vectors.append(_read_entry(cur, name, len(vectors))[1])
    return name, tuple(vectors)


def parse_layout(text: str) -> tuple[list[tuple[str, tuple[tuple[int, ...], ...]]], list[tuple[str, int]]]:
    """Read Triton's printed form back into ``(bases, out_dims)``; whitespace is free.

    >>> parse_layout(" - lane=1 -> (1, 0)\\nwhere out dims are: [dim0 (size 2), dim1 (size 1)]")
    ([('lane', ((1, 0),))], [('dim0', 2), ('dim1', 1)])
    """
    cur = Cursor(expect_text(text, "the text of a linear layout"))
    bases: list[tuple[str, tuple[tuple[int, ...], ...]]] = []
    if cur.accept("(empty layout"):
        out: list[tuple[str, int]] = []
        if cur.accept("with"):
            cur.expect("out-dims", "'out-dims'")
            out = _read_out_dims(cur)
        cur.expect(")", "')' closing '(empty layout'")
        cur.expect_end()
        return bases, out
    while not cur.peek(_WHERE):
        bases.append(_read_in_dim(cur))
    cur.expect(_WHERE)
    out = _read_out_dims(cur)
    cur.expect_end()
    return bases, out
