"""Parsers for symbolic maps and indexing maps, in every text form XLA prints (spec §2.2).

The forms and the grammar are described in :mod:`~tensorlayout.indexing.map_text`, which
parses them into a map of any class; the functions here build :class:`IndexingMap`.

>>> print(parse_indexing_map('#xla.indexing_map<"(d0) -> (d0 floordiv 2), domain: d0 in [0, 9]">'))
(d0) -> (d0 / 2), domain: d0 in [0, 9]
"""

from __future__ import annotations

from tensorlayout.indexing.exprparse import (
    VariableMap,
    parse_expr,
    parse_symbolic_expr,
    parse_symbolic_expr_and_advance,
)
from tensorlayout.indexing.map import IndexingMap
from tensorlayout.indexing.map_text import (
    ParsedOperandIndexing,
    instruction_indexing_as,
    parse_map_as,
)
from tensorlayout.indexing.symbolic_map import SymbolicMap, parse_symbolic_map, parse_symbolic_map_and_advance

__all__ = [
    "ParsedOperandIndexing",
    "SymbolicMap",
    "VariableMap",
    "indexing_map_from_symbolic_map",
    "parse_expr",
    "parse_indexing_map",
    "parse_instruction_indexing",
    "parse_symbolic_expr",
    "parse_symbolic_expr_and_advance",
    "parse_symbolic_map",
    "parse_symbolic_map_and_advance",
]


#: ``IndexingMap.from_symbolic_map`` under the free-function name, one definition for both.
indexing_map_from_symbolic_map = IndexingMap.from_symbolic_map


def parse_instruction_indexing(text: str) -> dict[int, list[ParsedOperandIndexing[IndexingMap]]]:
    """Parse ``HloInstructionIndexing::ToString`` text: ``operand id = N`` then that operand's maps.

    >>> blocks = parse_instruction_indexing(
    ...     "operand id = 0 (d0) -> (d0), domain: d0 in [0, 9]\\n"
    ...     "operand id = 1 unknown indexing\\n")
    >>> [(k, [str(p.map) for p in v]) for k, v in blocks.items()]
    [(0, ['(d0) -> (d0), domain: d0 in [0, 9]']), (1, ['UNDEFINED'])]
    """
    return instruction_indexing_as(IndexingMap, text)


def parse_indexing_map(text: str) -> IndexingMap:
    """Parse an indexing map in any form XLA prints (also ``UNDEFINED``), see :func:`~.map_text.parse_map_as`.

    An ``operand id = N`` block is accepted when it holds exactly one map, and so is one
    operand's text as printed (a map followed by its ``runtime variables:`` and ``replica
    id:`` sections); the runtime variables and replica map are dropped: use
    :func:`parse_instruction_indexing` for those.

    >>> parse_indexing_map("(d0) -> (d0), domain: d0 in [3, 2]").is_known_empty
    True
    >>> print(parse_indexing_map("(d0) -> (d0)\\ndomain:\\nd0 in [0, 9]\\nis_simplified: false"))
    (d0) -> (d0), domain: d0 in [0, 9]
    """
    return parse_map_as(IndexingMap, text)
