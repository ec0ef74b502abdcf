"""XLA's experimental ``TiledHloComputation``: every instruction of a fusion with its tile.

``TiledHloComputation.tile`` walks from the roots to the parameters, propagating tiles to the
operands (:func:`~tensorlayout.tiling.experimental.tile_propagation.propagate_tile_to_input`)
and sharing equal ``(hlo, tile)`` pairs within a region. Regions hold the operands of a dot /
scaled dot / ragged dot (the contraction loop), of a reduce or a scan whose sequential tile
does not cover its dimension (the loop body), and one per concatenate operand (the branches).
Fused parameters stand for the fusion's operands. ``simplify`` and
``sort_instructions_post_order`` give XLA's printed form.

>>> from tensorlayout.hlo import parse_module
>>> from tensorlayout.tiling.experimental.tiling_space import TilingSpace
>>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[8,4] parameter(0)\\n"
...                  " ROOT n = f32[8,4] negate(p0)\\n}")
>>> space = TilingSpace.create(m.entry.root).assign_tile_sizes([2, 4])
>>> c = TiledHloComputation.tile(m.entry.root, space).simplify().sort_instructions_post_order()
>>> print(c.to_string().split("Tiled HLO:")[1])
<BLANKLINE>
  p0.tile_0 = parameter(0)  offsets [tid_0 * 2, 0] sizes [2, 4] strides [1, 1] upper bounds [8, 4]
  n.tile_0 = negate(p0.tile_0)  offsets [tid_0 * 2, 0] sizes [2, 4] strides [1, 1] upper bounds [8, 4]
<BLANKLINE>
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tensorlayout.hlo.fusion import FusionAdaptor
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.tiling.experimental.errors import TilingStatusError
from tensorlayout.tiling.experimental.hlo_text import instruction_to_string, unique_names
from tensorlayout.tiling.experimental.tile import Tile
from tensorlayout.tiling.experimental.tile_propagation import propagate_tile_to_input
from tensorlayout.tiling.experimental.tiling_space import SEQUENTIAL, TilingSpace

__all__ = ["TiledHloComputation", "TiledHloInstruction", "TiledHloRegion"]


@dataclass(frozen=True, eq=False)
class TiledHloInstruction:
    """An instruction with its tile, its tiled operands and its regions (the lists are filled
    while the computation is tiled, then only read)."""

    hlo: HloInstruction
    tile: Tile
    operands: list[TiledHloInstruction] = field(default_factory=list)
    regions: list[TiledHloRegion] = field(default_factory=list)

    def runtime_variables(self) -> list[TiledHloInstruction]:
        """The operands that are a dynamic slice's offsets."""
        return self.operands[1:] if self.hlo.opcode == "dynamic-slice" else []

    def to_string(self, field_separator: str = "\n\t") -> str:
        """``TiledHloInstruction::ToString``: ``hlo: ...``, ``tile: ...`` and the regions."""
        text = f"hlo: {instruction_to_string(self.hlo)}{field_separator}tile: {self.tile}"
        for k, region in enumerate(self.regions):
            text += f"{field_separator}region #{k} {{"
            for instr in region.instructions:
                text += field_separator + instr.to_string(field_separator)
            text += f"{field_separator}}}"
        return text

    __str__ = to_string


@dataclass(frozen=True)
class TiledHloRegion:
    """Instructions grouped as a loop body or a branch, with the ones that feed the owner."""

    instructions: tuple[TiledHloInstruction, ...] = ()
    roots: tuple[TiledHloInstruction, ...] = ()

    def __post_init__(self) -> None:
        for root in self.roots:
            if not any(root is i for i in self.instructions):
                raise TilingStatusError(
                    "kInternal", f"Root instruction {root} must be present in the region."
                )


def _name_of(hlo: HloInstruction) -> str:
    parent = hlo.parent
    module = parent.module if parent is not None else None
    return unique_names(module).get(hlo, hlo.name) if module is not None else hlo.name


class _Cse:
    """Instructions of one region by ``(hlo, tile)``, in insertion order."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[int, Tile], TiledHloInstruction] = {}

    def insert(self, instr: TiledHloInstruction) -> tuple[TiledHloInstruction, bool]:
        key = (id(instr.hlo), instr.tile)
        found = self.by_key.get(key)
        if found is not None:
            return found, False
        self.by_key[key] = instr
        return instr, True


def _loop_needed(space: TilingSpace, hlo: HloInstruction, position: int | None = None) -> bool:
    """A sequential dimension of ``hlo`` whose tile is smaller than the dimension."""
    return any(
        d.type == SEQUENTIAL
        and d.hlo is hlo
        and d.tile_size is not None
        and d.tile_size < d.dimension_size
        and (position is None or d.dim_position == position)
        for d in space.dimensions
    )


def _region_schema(space: TilingSpace, hlo: HloInstruction) -> tuple[list[list[int]], list[int]]:
    """``GetRegionSchema``: operand groups that start nested regions, and the plain operands."""
    n = len(hlo.operands)
    if hlo.opcode in ("dot", "scaled-dot", "ragged-dot"):
        return [list(range(n))], []
    if hlo.opcode == "reduce" and _loop_needed(space, hlo):
        return [list(range(n // 2))], list(range(n // 2, n))
    if hlo.opcode == "scan" and _loop_needed(space, hlo):
        inputs = n - int(hlo.attribute("num_carries", 0))
        return [list(range(inputs))], list(range(inputs, n))
    if hlo.opcode == "concatenate":
        return [[k] for k in range(n)], []
    return [], list(range(n))


def _create_region(
    roots: list[TiledHloInstruction], adaptor: FusionAdaptor, space: TilingSpace
) -> TiledHloRegion:
    """``CreateHloRegion``: the backward walk from ``roots`` (instructions unordered)."""
    cse = _Cse()
    canonical, worklist = [], []
    for root in roots:
        instr, inserted = cse.insert(root)
        canonical.append(instr)
        if inserted:
            worklist.append(instr)
    while worklist:
        node = worklist.pop()
        hlo = node.hlo
        if hlo not in adaptor or not hlo.operands:
            continue
        tiles = propagate_tile_to_input(space, hlo, node.tile, 0)
        operands = [TiledHloInstruction(adaptor.resolve(op), t) for op, t in zip(hlo.operands, tiles)]
        resolved: list[TiledHloInstruction | None] = [None] * len(operands)
        groups, plain = _region_schema(space, hlo)
        for group in groups:
            region = _create_region([operands[k] for k in group], adaptor, space)
            for k, root in zip(group, region.roots):
                resolved[k] = root
            node.regions.append(region)
        for k in plain:
            instr, inserted = cse.insert(operands[k])
            resolved[k] = instr
            if inserted:
                worklist.append(instr)
        node.operands.extend(r for r in resolved if r is not None)
    return TiledHloRegion(tuple(cse.by_key.values()), tuple(canonical))


def _map_region(
    region: TiledHloRegion, rewrite: Callable[[TiledHloInstruction], TiledHloInstruction]
) -> TiledHloRegion:
    return TiledHloRegion(
        tuple(rewrite(i) for i in region.instructions), tuple(rewrite(r) for r in region.roots)
    )


def _copy(
    region: TiledHloRegion, tile_of: Callable[[Tile], Tile], order: Callable[[TiledHloRegion], TiledHloRegion]
) -> TiledHloRegion:
    """A copy of the region graph with ``tile_of`` applied to every tile, each region ``order``ed."""
    memo: dict[int, TiledHloInstruction] = {}

    def rewrite(instr: TiledHloInstruction) -> TiledHloInstruction:
        got = memo.get(id(instr))
        if got is None:
            got = TiledHloInstruction(instr.hlo, tile_of(instr.tile))
            memo[id(instr)] = got
            got.regions.extend(order(_map_region(r, rewrite)) for r in instr.regions)
            got.operands.extend(rewrite(o) for o in instr.operands)
        return got

    return order(_map_region(region, rewrite))


def _post_order(region: TiledHloRegion) -> TiledHloRegion:
    """``SortInstructionsPostOrder``: def before use from the region roots (runtime
    variables first)."""
    order: dict[int, int] = {}

    def visit(instr: TiledHloInstruction) -> None:
        if id(instr) in order:
            return
        for rt in instr.runtime_variables():
            visit(rt)
        for op in instr.operands:
            visit(op)
        order[id(instr)] = len(order)

    for root in region.roots:
        visit(root)
    return TiledHloRegion(tuple(sorted(region.instructions, key=lambda i: order[id(i)])), region.roots)


class _NameUniquer:
    """XLA's ``NameUniquer("_")``: a trailing ``_<n>`` is a counter shared by its stem."""

    def __init__(self) -> None:
        self.used: dict[str, set[int]] = {}

    def get(self, name: str) -> str:
        found = re.fullmatch(r"(.+)_(\d+)", name)
        stem, n = (found.group(1), int(found.group(2))) if found else (name, 0)
        used = self.used.setdefault(stem, set())
        while n in used:
            n += 1
        used.add(n)
        return f"{stem}_{n}" if found or n else stem


@dataclass(frozen=True)
class TiledHloComputation:
    """The tiling space and the root region of a tiled fusion."""

    tiling_space: TilingSpace
    region: TiledHloRegion

    @classmethod
    def tile(cls, fusion: HloInstruction, space: TilingSpace) -> TiledHloComputation:
        """``TiledHloComputation::Tile`` of a fusion (or one instruction) in ``space``."""
        adaptor = FusionAdaptor.for_instruction(fusion)
        roots = [TiledHloInstruction(adaptor.resolve(r), t) for r, t in zip(adaptor.roots, space.tiled_roots)]
        return cls(space, _create_region(roots, adaptor, space))

    @property
    def instructions(self) -> tuple[TiledHloInstruction, ...]:
        return self.region.instructions

    @property
    def roots(self) -> tuple[TiledHloInstruction, ...]:
        return self.region.roots

    def simplify(self) -> TiledHloComputation:
        """``Simplify``: every tile simplified in the tiling space."""
        return TiledHloComputation(
            self.tiling_space, _copy(self.region, self.tiling_space.simplify_tile, lambda r: r)
        )

    def sort_instructions_post_order(self) -> TiledHloComputation:
        """``SortInstructionsPostOrder``: every region in def-before-use order."""
        return TiledHloComputation(self.tiling_space, _copy(self.region, lambda t: t, _post_order))

    def tile_names(self) -> dict[int, str]:
        """``id(instruction) -> name.tile_k`` as XLA names the tiles (``NameUniquer("_")``,
        each instruction before the instructions of its regions)."""
        names: dict[int, str] = {}
        uniquer = _NameUniquer()

        def name(instr: TiledHloInstruction) -> None:
            if id(instr) in names:
                return
            names[id(instr)] = uniquer.get(f"{_name_of(instr.hlo)}.tile_0")
            for region in instr.regions:
                for i in region.instructions:
                    name(i)

        for instr in self.region.instructions:
            name(instr)
        return names

    def to_string(self) -> str:
        """``TiledHloComputation::ToString``: the tiling space, then ``Tiled HLO:`` with one
        ``name.tile_k = opcode(operands) <tile>`` line per instruction, regions nested."""
        names = self.tile_names()
        lines = [self.tiling_space.to_string(), "Tiled HLO:"]
        for instr in self.region.instructions:
            _print(instr, names, lines, 2)
        return "\n".join(lines) + "\n"

    __str__ = to_string


def _print(instr: TiledHloInstruction, names: dict[int, str], lines: list[str], indent: int) -> None:
    pad = " " * indent
    if instr.hlo.opcode == "parameter":
        args = str(instr.hlo.parameter_number)
    else:
        args = ", ".join(names[id(o)] for o in instr.operands)
    lines.append(f"{pad}{names[id(instr)]} = {instr.hlo.opcode}({args}) {instr.tile.to_string(False)}")
    for k, region in enumerate(instr.regions):
        lines.append(f"{pad}region #{k} {{")
        for i in region.instructions:
            _print(i, names, lines, indent + 2)
        lines.append(f"{pad}}}")


def tiled_instruction(
    hlo: HloInstruction, tile: Tile, operands: Sequence[TiledHloInstruction] = ()
) -> TiledHloInstruction:
    """A tiled instruction built by hand (XLA's ``TiledHloInstruction(hlo, tile)``)."""
    return TiledHloInstruction(hlo, tile, list(operands))
