"""XLA ↔ CuTe through the layout core, and every notation as an indexing map.

>>> str(xla_to_cute("f32[3,5]{1,0:T(2,2)}"))
'((2,2),(2,3)):((2,12),(1,4))'
"""

from __future__ import annotations

from typing import Any

from tensorlayout import cute
from tensorlayout.convert._text import parse_target
from tensorlayout.cute.lowering import from_core
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.indexing.layouts import layout_map
from tensorlayout.indexing.map import IndexingMap
from tensorlayout.lowering import as_cute, lower
from tensorlayout.xla import Shape, parse_shape

__all__ = ["as_cute", "as_shape", "to_indexing_map", "xla_to_cute"]


def as_shape(x: Shape | str) -> Shape:
    shape = parse_shape(x) if isinstance(x, str) else x
    if not isinstance(shape, Shape):
        raise LayoutError(f"expected an XLA shape or its text, but got {type(x).__name__}")
    if shape.kind == "tuple":
        raise UnsupportedError(f"{shape} is a tuple shape; convert its element shapes one at a time")
    if not shape.is_array:
        raise UnsupportedError(f"{shape} is a {shape.kind} shape, which holds no array elements")
    if shape.layout is None:
        raise LayoutError(f"shape {shape} has no layout")
    return shape


def xla_to_cute(shape: Shape | str) -> cute.Layout:
    """The XLA layout as a hierarchical CuTe layout over the padded logical domain.

    Mode ``k`` is logical dim ``k``; its sub-modes are the digits the tiles split it into,
    least significant first, the top one counting whole tiles (so it covers the padding).
    A rank-0 shape gives ``():()``. Combined dims (``*`` over two dims of size > 1) and a
    later tile that does not divide the extent an earlier one left raise
    :class:`UnsupportedError`.

    >>> str(xla_to_cute("bf16[16,256]{1,0:T(8,128)(2,1)}"))
    '((2,4,2),(128,2)):((1,256,2048),(2,1024))'
    """
    return from_core(lower(as_shape(shape)))


def to_indexing_map(x: Any, *, simplify: bool = True) -> IndexingMap:
    """Logical index → physical element offset as an :class:`~tensorlayout.indexing.IndexingMap`.

    Accepts an XLA shape (text or :class:`Shape`), a CuTe layout (text or value), a TLA layout
    (whose domain is the origin shape) or a one-to-one Triton linear layout. The map is
    simplified unless ``simplify=False``.

    >>> print(to_indexing_map("((4,2),(4,3)):((4,16),(1,32))"))
    (d0, d1) -> ((d1 / 4) * 32 + d0 * 4 + d1 mod 4), domain: d0 in [0, 7], d1 in [0, 11]
    """
    parsed = parse_target(x) if isinstance(x, str) else x
    return layout_map(lower(as_shape(parsed) if isinstance(parsed, Shape) else parsed), simplify=simplify)
