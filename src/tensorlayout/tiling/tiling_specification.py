"""XLA's ``TilingSpecification`` and ``Tiling``: which instructions take tile sizes, and how many.

A fusion's tiling parameters are its (real) root's output dimensions plus, for every dot, one
per contracting dimension; the specification lists ``(instruction, count)`` use-before-def
with the constraints the sizes must satisfy. A ``Tiling`` gives each such instruction its
sizes; ``flatten`` lines them up in specification order.

>>> from tensorlayout.hlo import parse_module
>>> root = parse_module("HloModule m\\nENTRY e {\\n ROOT p = f32[4,8] parameter(0)\\n}").entry.root
>>> spec = TilingSpecification(((root, 2),))
>>> Tiling({root: (2, 8)}).flatten(spec), Tiling({root: (2,)}).conforms_to(spec)
((2, 8), False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo import HloInstruction
from tensorlayout.tiling.constraint_expression import ConstraintExpression

__all__ = ["FlatTiling", "InstructionMapping", "Tiling", "TilingSpecification"]

FlatTiling = tuple[int, ...]
InstructionMapping = tuple[HloInstruction, int]


@dataclass(frozen=True, slots=True)
class TilingSpecification:
    """``TilingSpecification``: ``parameter_mapping`` (instruction, number of tile sizes) and constraints."""

    parameter_mapping: tuple[InstructionMapping, ...]
    constraints: ConstraintExpression = field(default_factory=ConstraintExpression.get_always_satisfied)

    @property
    def num_parameters(self) -> int:
        """The total number of tile sizes (the length of a flat tiling)."""
        return sum(n for _, n in self.parameter_mapping)

    def parameter_index(self, instruction: HloInstruction, local_index: int) -> int:
        """``ParameterIndex``: the flat position of ``instruction``'s ``local_index``-th tile size."""
        offset = 0
        for hlo, n in self.parameter_mapping:
            if hlo is instruction:
                if not 0 <= local_index < n:
                    raise UnsupportedError(f"{hlo.name} has {n} tiling parameters, not {local_index + 1}")
                return offset + local_index
            offset += n
        raise UnsupportedError(f"{instruction.name} has no tiling parameters in the specification")

    def to_string(self) -> str:
        """One ``name: count`` per instruction, then the constraints (over ``d0...``)."""
        items = ", ".join(f"{h.name}: {n}" for h, n in self.parameter_mapping)
        return f"parameter_mapping: [{items}], constraints: {self.constraints.to_string(self.num_parameters)}"


@dataclass(frozen=True, slots=True)
class Tiling:
    """``Tiling``: tile sizes per instruction (``Tiling::TileMapping``)."""

    tile_sizes: Mapping[HloInstruction, Sequence[int]]

    def flatten(self, spec: TilingSpecification) -> FlatTiling:
        """``Flatten``: the sizes in specification order (UnsupportedError if one is missing or wrong)."""
        flat: list[int] = []
        for hlo, n in spec.parameter_mapping:
            sizes = self.tile_sizes.get(hlo)
            if sizes is None:
                raise UnsupportedError(f"No tile sizes found for instruction {hlo.name}")
            if len(sizes) != n:
                raise UnsupportedError(
                    f"Expected {n} tile sizes for instruction {hlo.name}, got {len(sizes)}"
                )
            flat.extend(sizes)
        return tuple(flat)

    @classmethod
    def unflatten(cls, flat: Sequence[int], spec: TilingSpecification) -> Tiling:
        """``Unflatten``: split a flat tiling by the specification."""
        if len(flat) != spec.num_parameters:
            raise UnsupportedError(f"Expected {spec.num_parameters} tile sizes, got {len(flat)}")
        out: dict[HloInstruction, tuple[int, ...]] = {}
        at = 0
        for hlo, n in spec.parameter_mapping:
            out[hlo] = tuple(flat[at : at + n])
            at += n
        return cls(out)

    def conforms_to(self, spec: TilingSpecification) -> bool:
        """``ConformsTo``: same instructions, right counts, constraints satisfied."""
        if len(self.tile_sizes) != len(spec.parameter_mapping):
            return False
        try:
            flat = self.flatten(spec)
        except UnsupportedError:
            return False
        return spec.constraints.is_satisfied_by(flat)
