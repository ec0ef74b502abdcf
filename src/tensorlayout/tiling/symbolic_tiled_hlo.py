"""XLA's ``SymbolicTiledHloInstruction``: an HLO instruction, the map from the tiling parameters to
its output index, its symbolic tile, and its operands, runtime variables and regions.

>>> from tensorlayout.hlo import parse_module
>>> from tensorlayout.indexing import IndexingMap
>>> p = parse_module("HloModule m\\nENTRY e {\\n ROOT p = f32[4] parameter(0)\\n}").entry.root
>>> print(SymbolicTiledHloInstruction(p, IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]")))
hlo: %p = f32[4]{0} parameter(0)
(no symbolic tile)
indexing map: (d0) -> (d0), domain: d0 in [0, 3]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.hlo import HloInstruction
from tensorlayout.indexing import IndexingMap
from tensorlayout.tiling.symbolic_tile import SymbolicTile

__all__ = ["SymbolicTiledHloInstruction", "hlo_to_string", "tile_listing"]

_SKIPPED_ATTRIBUTES = ("metadata", "backend_config", "frontend_attributes", "statistics")


#: Prints tiles into ``lines`` at an indent, given each tile's head line.
TilePrinter = Callable[[Sequence[Any], Callable[[Any], str], list[str], str], None]


def tile_listing(tiles: Sequence[Any], print_tiles: TilePrinter) -> str:
    """XLA's printout of tiled instructions: ``print_tiles(tiles, head, lines, "")`` where
    ``head(tile)`` is ``name = opcode(operand names)``, the tiles of its regions named first; one
    naming for the whole listing (``<hlo name>.tile_<n>``, ``n`` counting that instruction's tiles
    in the order they are first named); the lines joined.

    >>> from types import SimpleNamespace as NS
    >>> a = NS(hlo=NS(name="p", opcode="parameter"), regions=(), operands=())
    >>> b = NS(hlo=NS(name="n", opcode="negate"), regions=(), operands=(a,))
    >>> print(tile_listing([a, b], lambda ts, head, lines, indent: lines.extend(map(head, ts))))
    p.tile_0 = parameter()
    n.tile_0 = negate(p.tile_0)
    """
    names: dict[int, str] = {}
    counts: dict[str, int] = {}

    def name(tile: Any) -> str:
        if id(tile) not in names:
            n = counts.get(tile.hlo.name, 0)
            counts[tile.hlo.name] = n + 1
            names[id(tile)] = f"{tile.hlo.name}.tile_{n}"
        return names[id(tile)]

    def head(tile: Any) -> str:
        for region in tile.regions:
            for r in region:
                name(r)
        return f"{name(tile)} = {tile.hlo.opcode}({', '.join(name(o) for o in tile.operands)})"
    lines: list[str] = []
    print_tiles(tiles, head, lines, "")
    return "\n".join(lines)


def hlo_to_string(hlo: HloInstruction, *, full: bool = False) -> str:
    """XLA's ``HloInstruction::ToString`` as the tiling code prints it.

    The short form (tiled instructions): ``%name = shape opcode(%operands), attributes``
    without metadata or backend config. ``full=True`` is XLA's default form (the one in its
    bail-out reasons): operand shapes before the operand names and every attribute.
    """
    if full:
        shapes = [o.shape.to_string(with_layout=True) for o in hlo.operands]
        operands = ", ".join(f"{s} %{o}" for s, o in zip(shapes, hlo.operand_names, strict=False))
    else:
        operands = ", ".join(f"%{o}" for o in hlo.operand_names)
    head = f"%{hlo.name} = {hlo.shape.to_string(with_layout=True)} {hlo.opcode}("
    if hlo.opcode == "parameter":
        head += f"{hlo.parameter_number})"
    elif hlo.opcode == "constant":
        head += f"{hlo.literal})"
    else:
        head += f"{operands})"
    attrs = [f"{k}={v}" for k, v in hlo.raw_attributes.items() if full or k not in _SKIPPED_ATTRIBUTES]
    return ", ".join([head, *attrs])


@dataclass(frozen=True, slots=True, eq=False)
class SymbolicTiledHloInstruction:
    """``SymbolicTiledHloInstruction`` (identity equality: the analysis deduplicates by value)."""

    hlo: HloInstruction
    indexing_map: IndexingMap
    symbolic_tile: SymbolicTile | None = None
    operands: tuple[SymbolicTiledHloInstruction, ...] = ()
    runtime_variables: tuple[SymbolicTiledHloInstruction, ...] = ()
    regions: tuple[tuple[SymbolicTiledHloInstruction, ...], ...] = ()
    #: For a nested fusion: the ``SymbolicTileAnalysis`` of its computation (XLA's
    #: ``SymbolicTiledHloFusionInstruction``).
    fusion_analysis: Any = None

    def to_string(self, field_separator: str = "\n") -> str:
        """XLA's ``ToString``: hlo, symbolic tile, indexing map, runtime variables, region sizes."""
        parts = [f"hlo: {hlo_to_string(self.hlo)}"]
        parts.append("(no symbolic tile)" if self.symbolic_tile is None
                     else self.symbolic_tile.to_string(field_separator))
        parts.append(f"indexing map: {self.indexing_map}")
        if self.runtime_variables:
            rts = ", ".join(rt.to_string(field_separator) for rt in self.runtime_variables)
            parts.append(f"runtime variables: ({rts})")
        if self.regions:
            parts.append("regions sizes: [" + ", ".join(str(len(r)) for r in self.regions) + "]")
        return field_separator.join(parts)

    def __str__(self) -> str:
        return self.to_string()
