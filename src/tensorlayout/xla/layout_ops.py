"""What an XLA :class:`~tensorlayout.xla.layout.Layout` does beyond reading and printing its common
annotations: equality under ``Layout::Equal``'s ``Ignore*`` options (:meth:`Layout.equal`) and the
readers of the rare annotations (index and pointer types ``#(..)``/``*(..)``, split configs
``SC(..)``, dim-level types ``D(..)``), which the layout parser loads from here when one comes.

>>> from tensorlayout.xla.layout import parse_layout
>>> layout_equal(parse_layout("{1,0:T(8,128)}"), parse_layout("{1,0}"), ignore_tiles=True)
True
>>> parse_layout("{0:#(u16)SC(0:4)}").split_configs
(SplitConfig(dimension=0, split_indices=(4,)),)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensorlayout._cursor import Cursor
from tensorlayout.xla.annotation import _CLOSE, _OPEN, SplitConfig, read_xla_int
from tensorlayout.xla.types import ELEMENT_TYPES, PrimitiveType

if TYPE_CHECKING:
    from tensorlayout.xla.layout import Layout

__all__ = ["layout_equal", "read_index_type", "read_pointer_type", "read_split_configs",
           "skip_dim_level_types"]


def layout_equal(a: Layout, b: Layout, *, ignore_tiles: bool = False, ignore_tail_padding: bool = False,
                 ignore_index_primitive_type: bool = False, ignore_pointer_primitive_type: bool = False,
                 ignore_element_size: bool = False, ignore_memory_space: bool = False,
                 ignore_split_configs: bool = False, ignore_physical_shape: bool = False,
                 minor_to_major_only: bool = False) -> bool:
    """``Layout::Equal`` with its ``Ignore*`` options (:meth:`Layout.equal`).

    >>> from tensorlayout.xla.layout import Layout
    >>> layout_equal(Layout((1, 0), memory_space=1), Layout((1, 0)), ignore_memory_space=True)
    True
    """
    if a.minor_to_major != b.minor_to_major:
        return False
    if minor_to_major_only:
        return True
    return (
        (ignore_tiles or a.tiles == b.tiles)
        and (ignore_tail_padding or a.tail_padding_alignment_in_elements
             == b.tail_padding_alignment_in_elements)
        and (ignore_index_primitive_type
             or a.index_primitive_type == b.index_primitive_type)
        and (ignore_pointer_primitive_type
             or a.pointer_primitive_type == b.pointer_primitive_type)
        and (ignore_element_size or a.element_size_in_bits == b.element_size_in_bits)
        and (ignore_memory_space or a.memory_space == b.memory_space)
        and (ignore_split_configs or a.split_configs == b.split_configs)
        and (ignore_physical_shape or a.physical_shape == b.physical_shape)
    )


# index := '#' '(' UTYPE ')'     pointer := '*' '(' UTYPE ')'
def _read_unsigned_type(cur: Cursor) -> PrimitiveType:
    cur.expect("(", _OPEN)
    start = cur.pos
    name = cur.identifier("an unsigned integer type")
    t = ELEMENT_TYPES.get(name)
    if t is None or not t.is_unsigned:
        raise cur.error("an unsigned integer type such as u32", at=start)
    cur.expect(")", _CLOSE)
    return t


def read_index_type(cur: Cursor) -> dict[str, object]:
    """``#(UTYPE)``, after its ``#``: the index type of a (sparse) layout.

    >>> read_index_type(Cursor("(u16)"))["index_primitive_type"].name
    'u16'
    """
    return {"index_primitive_type": _read_unsigned_type(cur)}


def read_pointer_type(cur: Cursor) -> dict[str, object]:
    """``*(UTYPE)``, after its ``*``: the pointer type of a (sparse) layout.

    >>> read_pointer_type(Cursor("(u32)"))["pointer_primitive_type"].name
    'u32'
    """
    return {"pointer_primitive_type": _read_unsigned_type(cur)}


# splits := 'SC' ('(' INT ':' [INT (',' INT)*] ')')+
def read_split_configs(cur: Cursor) -> dict[str, object]:
    """``SC(d:i,...)...``, after its ``SC``: the split configs.

    >>> read_split_configs(Cursor("(0:4)(1:)"))["split_configs"]
    (SplitConfig(dimension=0, split_indices=(4,)), SplitConfig(dimension=1, split_indices=()))
    """
    configs: list[SplitConfig] = []
    while cur.accept("("):
        dim = read_xla_int(cur, "a physical dimension number")
        cur.expect(":")
        idx: list[int] = []
        if not cur.peek(")"):
            idx.append(read_xla_int(cur, "a split index"))
            while cur.accept(","):
                idx.append(read_xla_int(cur, "a split index"))
        cur.expect(")", _CLOSE)
        configs.append(SplitConfig(dim, tuple(idx)))
    if not configs:
        raise cur.error("'(' to start a split config after SC")
    return {"split_configs": tuple(configs)}


# dlt := 'D' '(' [lvl (',' lvl)*] ')'     lvl := ('D'|'C'|'S'|'H') ['+'] ['~']
def skip_dim_level_types(cur: Cursor) -> dict[str, object]:
    """XLA (2026) parses dim-level types and drops them; so do we.

    >>> skip_dim_level_types(Cursor("(D,C+)"))
    {}
    """
    cur.expect("(")
    if cur.accept(")"):
        return {}
    while True:
        cur.skip()
        if cur.pos < len(cur.text) and cur.text[cur.pos] in "DCSH":
            cur.pos += 1
        else:
            raise cur.error("a DimLevelType abbreviation (D, C, or S)")
        cur.accept("+")
        cur.accept("~")
        if not cur.accept(","):
            break
    cur.expect(")")
    return {}
