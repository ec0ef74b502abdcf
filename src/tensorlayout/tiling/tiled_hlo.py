"""XLA's ``TiledHloInstruction`` and ``TiledHloComputation``: concrete tiles for chosen tile sizes.

Each tiled instruction has its tile sizes and strides and, as a map from the program id
``pid_0`` to the tile's offsets, ``tile_offsets_indexing``.

>>> from tensorlayout.hlo import parse_module
>>> from tensorlayout.indexing import IndexingMap
>>> p = parse_module("HloModule m\\nENTRY e {\\n ROOT p = f32[32,64] parameter(0)\\n}").entry.root
>>> offsets = IndexingMap.parse("(pid_0) -> ((pid_0 / 4) * 16, (pid_0 mod 4) * 16), domain: pid_0 in [0, 7]")
>>> print(TiledHloInstruction.create(p, (), (), (16, 16), (1, 1), offsets))
hlo: %p = f32[32,64]{1,0} parameter(0)
tile_sizes: (16, 16)
tile_strides: (1, 1)
tile_offsets_indexing: (pid_0) -> ((pid_0 / 4) * 16, (pid_0 mod 4) * 16), domain: pid_0 in [0, 7]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from tensorlayout.errors import HloError
from tensorlayout.hlo import HloInstruction
from tensorlayout.indexing import IndexingMap
from tensorlayout.tiling.symbolic_tiled_hlo import hlo_to_string, tile_listing

__all__ = ["TiledHloComputation", "TiledHloInstruction"]


def _tuple_text(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


@dataclass(frozen=True, slots=True, eq=False)
class TiledHloInstruction:
    """``TiledHloInstruction``: one tile of an instruction (identity equality; see :meth:`key`)."""

    hlo: HloInstruction
    operands: tuple[TiledHloInstruction, ...]
    runtime_variables: tuple[TiledHloInstruction, ...]
    tile_sizes: tuple[int, ...]
    tile_strides: tuple[int, ...]
    tile_offsets_indexing: IndexingMap | None = None
    regions: tuple[tuple[TiledHloInstruction, ...], ...] = ()
    #: For a nested fusion: its tiled computation (XLA's ``TiledHloFusionInstruction``).
    called_computation: TiledHloComputation | None = None

    @classmethod
    def create(cls, hlo: HloInstruction, operands: Sequence[TiledHloInstruction],
               runtime_variables: Sequence[TiledHloInstruction], tile_sizes: Sequence[int],
               tile_strides: Sequence[int], tile_offsets_indexing: IndexingMap | None = None,
               regions: Sequence[Sequence[TiledHloInstruction]] = (),
               called_computation: TiledHloComputation | None = None) -> TiledHloInstruction:
        """``Create``: checks the counts against the HLO's rank (HloError, with XLA's messages)."""
        rank = len(hlo.shape.dimensions)
        if len(tile_sizes) != rank:
            raise HloError(f"Number of tile sizes must be equal to the rank of the hlo shape. "
                           f"tile_sizes = {len(tile_sizes)}, hlo = {hlo_to_string(hlo)}")
        if len(tile_strides) != rank:
            raise HloError(f"Number of tile strides must be equal to the rank of the hlo shape. "
                           f"tile_strides = {len(tile_strides)}, hlo = {hlo_to_string(hlo)}")
        m = tile_offsets_indexing
        if m is not None:
            if m.num_dims != 1:
                raise HloError(f"tile_offsets_indexing must have 1 dim. tile_offsets_indexing = {m}")
            if m.num_results != rank:
                raise HloError("tile_offsets_indexing must have the same number of results as the rank of "
                               f"the hlo shape. tile_offsets_indexing = {m}, hlo = {hlo_to_string(hlo)}")
            if m.num_rt_vars != len(runtime_variables):
                raise HloError(f"tile_offsets_indexing has {m.num_rt_vars} runtime variables, but "
                               f"{len(runtime_variables)} runtime variables were provided")
        return cls(hlo, tuple(operands), tuple(runtime_variables), tuple(tile_sizes), tuple(tile_strides), m,
                   tuple(tuple(r) for r in regions), called_computation)

    def key(self) -> tuple[object, ...]:
        """What XLA's deduplication compares: leaves by offsets, others by operand identity."""
        base = (id(self.hlo), self.tile_sizes, self.tile_strides)
        if not self.operands:
            return (*base, self.tile_offsets_indexing, tuple(id(r) for r in self.runtime_variables))
        return (*base, tuple(id(o) for o in self.operands), tuple(id(r) for r in self.runtime_variables))

    def operand(self, i: int) -> TiledHloInstruction:
        return self.operands[i]

    def to_string(self, field_separator: str = "\n") -> str:
        """XLA's ``ToString``: hlo, tile sizes, strides and offsets (``nullopt`` if not computed)."""
        offsets = "nullopt" if self.tile_offsets_indexing is None else str(self.tile_offsets_indexing)
        return field_separator.join([
            f"hlo: {hlo_to_string(self.hlo)}",
            f"tile_sizes: {_tuple_text(self.tile_sizes)}",
            f"tile_strides: {_tuple_text(self.tile_strides)}",
            f"tile_offsets_indexing: {offsets}",
        ])

    def __str__(self) -> str:
        return self.to_string()


@dataclass(frozen=True, slots=True)
class TiledHloComputation:
    """``TiledHloComputation``: tiled instructions (def before use), the roots and the tile grid."""

    instructions: tuple[TiledHloInstruction, ...]
    roots: tuple[TiledHloInstruction, ...]
    num_output_tiles_per_dim: tuple[int, ...]

    @property
    def num_output_tiles(self) -> int:
        """The number of program ids (product of the tiles per dimension)."""
        return prod(self.num_output_tiles_per_dim)

    def get_root(self) -> TiledHloInstruction:
        return self.roots[0]

    def to_string(self) -> str:
        """Each instruction as ``name.tile_0 = opcode(operand tiles)`` and its fields, indented."""
        return tile_listing(self.instructions, _print_block)

    def __str__(self) -> str:
        return self.to_string()


def _print_block(instrs: Sequence[TiledHloInstruction], head: Callable[[Any], str], lines: list[str],
                 indent: str) -> None:
    for t in instrs:
        lines.append(f"{indent}{head(t)}")
        lines.extend(f"{indent}  {line}" for line in t.to_string().split("\n"))
        if t.operands:
            lines.append(f"{indent}  operands:")
            lines.extend(f"{indent}    %{o.hlo.name} = {o.hlo.opcode}()" for o in t.operands)
        if t.regions:
            lines.append(f"{indent}  region sizes: {_tuple_text([len(r) for r in t.regions])}")
            for i, region in enumerate(t.regions):
                lines.append(f"{indent}  region.{i} {{")
                _print_block(region, head, lines, indent + "    ")
                lines.append(f"{indent}  }}")


