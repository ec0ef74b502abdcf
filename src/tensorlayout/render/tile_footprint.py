"""Pictures of one output tile and the footprint it reads in every operand (XLA's experimental
tiler, :mod:`tensorlayout.tiling.experimental`).

For concrete tile sizes and one tile id, every leaf of the tiled computation (the fusion's
operands) and the root get a panel: the tensor as a 2-D grid (rows: the leading dims
flattened; columns: the last dim), cropped around the tile. Cells the tile reads are filled
(their in-tile position as label), cells inside the tensor between them are blank, so strides
show as gaps; elements the tile addresses past the tensor (overhang) or past its upper bound
(masked) are drawn dashed beyond or inside the grid. Sequential dimensions (a dot's
contraction, a reduction) are shown at their first step.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n p0 = f32[9,12] parameter(0)\\n"
...                  " ROOT s = f32[3,5] slice(p0), slice={[1:9:3], [2:12:2]}\\n}")
>>> panels = tile_footprints(m.entry.root, [2, 4], [0, 1])
>>> [(p.name, len(p.read), len(p.overhang)) for p in panels]
[('p0.tile_0', 2, 6), ('s.tile_0', 2, 6)]
>>> svg = tile_footprint_svg(m.entry.root, [2, 4], [0, 1])
>>> svg.count('class="read"'), svg.count('class="overhang"')
(4, 12)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from tensorlayout.core.intmath import prod
from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.render._draw import color
from tensorlayout.tiling.experimental import TiledHloComputation, TiledHloInstruction, TilingSpace

__all__ = ["Footprint", "tile_footprint_svg", "tile_footprints"]

CELL = 22
GAP = 36
MAX_SPAN = 48  # rows or columns drawn per panel at most


@dataclass(frozen=True)
class Footprint:
    """One panel: a tiled instruction's tensor and what the chosen tile touches in it."""

    name: str
    title: str
    shape: tuple[int, ...]
    read: dict[tuple[int, ...], int]  # element -> position in the tile (row-major)
    overhang: tuple[tuple[int, ...], ...]  # addressed past the tensor or the upper bound


def _evaluate(instr: TiledHloInstruction, tids: Sequence[int], name: str) -> Footprint:
    tile = instr.tile
    fields = [
        [e.evaluate(list(tids)) for e in (d.offset, d.size, d.stride, d.upper_bound)] for d in tile.dim_tiles
    ]
    shape = tuple(instr.hlo.shape.dimensions) if instr.hlo.shape.is_array else ()
    read: dict[tuple[int, ...], int] = {}
    overhang = []
    for k, local in enumerate(itertools.product(*(range(size) for _, size, _, _ in fields))):
        index = tuple(off + i * st for (off, _, st, _), i in zip(fields, local))
        inside = all(0 <= x < min(ub, n) for x, (_, _, _, ub), n in zip(index, fields, shape))
        if inside:
            read[index] = k
        else:
            overhang.append(index)
    at = ", ".join(map(str, tids))
    title = f"{name} = {instr.hlo.opcode}  {tile.to_string(False).strip()}  at tile ids ({at})"
    return Footprint(name, title, shape, read, tuple(overhang))


def tile_footprints(
    fusion: HloInstruction, tile_sizes: Sequence[int], tile_ids: Sequence[int] | None = None
) -> list[Footprint]:
    """The footprints of the tile ``tile_ids`` (default: all 0) in every leaf and the root."""
    space = TilingSpace.create(fusion).assign_tile_sizes(list(tile_sizes))
    computation = TiledHloComputation.tile(fusion, space).simplify().sort_instructions_post_order()
    tids = list(tile_ids) if tile_ids is not None else [0] * space.num_dimensions
    tids += [0] * (space.num_dimensions - len(tids))
    names = computation.tile_names()
    leaves = [i for i in _all(computation) if not i.operands]
    drawn = [i for i in [*leaves, *computation.roots] if i.hlo.shape.is_array and i.hlo.shape.rank]
    return [_evaluate(i, tids, names[id(i)]) for i in drawn]


def _all(computation: TiledHloComputation) -> list[TiledHloInstruction]:
    out: list[TiledHloInstruction] = []

    def walk(instrs: Sequence[TiledHloInstruction]) -> None:
        for i in instrs:
            out.append(i)
            for region in i.regions:
                walk(region.instructions)

    walk(computation.instructions)
    return out


def _grid(index: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, int]:
    """Row and column of an element in the 2-D view (leading dims flattened)."""
    if not index:
        return 0, 0
    row = 0
    for x, n in zip(index[:-1], shape[:-1]):
        row = row * n + x
    return row, index[-1]


def _panel(fp: Footprint, top: int, tile: int) -> tuple[list[str], int, int]:
    rows, cols = (prod(fp.shape[:-1]), fp.shape[-1]) if fp.shape else (1, 1)
    points = [_grid(i, fp.shape) for i in [*fp.read, *fp.overhang]] or [(0, 0)]
    r0 = max(min(r for r, _ in points) - 1, 0)
    c0 = max(min(c for _, c in points) - 1, 0)
    r1 = min(max(max(r for r, _ in points) + 2, rows), r0 + MAX_SPAN)
    c1 = min(max(max(c for _, c in points) + 2, cols), c0 + MAX_SPAN)
    x0, y0 = 8, top + 20
    out = [f'<text x="{x0}" y="{top + 14}" font-size="12" font-family="monospace">{escape(fp.title)}</text>']
    for r, c in itertools.product(range(r0, min(r1, rows)), range(c0, min(c1, cols))):
        out.append(
            f'<rect class="cell" x="{x0 + (c - c0) * CELL}" y="{y0 + (r - r0) * CELL}" width="{CELL}" '
            f'height="{CELL}" fill="#ffffff" stroke="#bbbbbb"/>'
        )
    for index, k in fp.read.items():
        r, c = _grid(index, fp.shape)
        if r0 <= r < r1 and c0 <= c < c1:
            x, y = x0 + (c - c0) * CELL, y0 + (r - r0) * CELL
            out.append(
                f'<rect class="read" x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{color(tile)}" '
                f'stroke="#333333" data-index="{",".join(map(str, index))}"/>'
            )
            out.append(
                f'<text x="{x + CELL / 2}" y="{y + CELL * 0.65}" font-size="9" '
                f'text-anchor="middle">{k}</text>'
            )
    for index in fp.overhang:
        r, c = _grid(index, fp.shape)
        if r0 <= r < r1 and c0 <= c < c1:
            out.append(
                f'<rect class="overhang" x="{x0 + (c - c0) * CELL + 2}" y="{y0 + (r - r0) * CELL + 2}" '
                f'width="{CELL - 4}" height="{CELL - 4}" fill="none" stroke="#cc0000" '
                f'stroke-dasharray="3,2" data-index="{",".join(map(str, index))}"/>'
            )
    return out, (c1 - c0) * CELL + 2 * x0, (r1 - r0) * CELL + 20


def tile_footprint_svg(
    fusion: HloInstruction, tile_sizes: Sequence[int], tile_ids: Sequence[int] | None = None, tile: int = 0
) -> str:
    """One SVG with a panel per footprint (:func:`tile_footprints`), operands first, the output
    tile last; read cells in the color of ``tile``, overhang dashed red."""
    panels = tile_footprints(fusion, tile_sizes, tile_ids)
    if not panels:
        raise TensorLayoutError(f"{fusion.name} has no tiled array to draw")
    body: list[str] = []
    top, width = 0, 0
    for fp in panels:
        parts, w, h = _panel(fp, top, tile)
        body += parts
        width = max(width, w, 8 * len(fp.title))
        top += h + GAP
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top}" '
        f'viewBox="0 0 {width} {top}">\n' + "\n".join(body) + "\n</svg>\n"
    )
