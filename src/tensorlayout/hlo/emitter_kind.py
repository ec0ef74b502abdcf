"""Which GPU emitter XLA picks for a fusion, and XLA's read-coalescing heuristic.

``emitter_fusion_kind`` follows ``HloFusionAnalysis::GetEmitterFusionKind``: a real reduction
hero (the reduction emitter takes it and its sibling roots are compatible), a tiled transpose
hero, several roots (the loop emitter), scatter, sort, a concatenate hero of at most four
operands; the loop emitter otherwise. Heroes are found as ``FindNonTrivialHero`` finds them.
``is_read_coalesced_heuristic`` is ``IsReadCoalescedHeuristic``.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nf {\\n p = f32[8] parameter(0)\\n ROOT n = f32[8] negate(p)\\n}\\n"
...                  "ENTRY e {\\n p = f32[8] parameter(0)\\n"
...                  " ROOT r = f32[8] fusion(p), kind=kLoop, calls=f\\n}")
>>> emitter_fusion_kind(m.entry.root), is_read_coalesced_heuristic("kLoop", m.entry.root)
('kLoop', True)
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import HloError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.opcodes import ELEMENTWISE_OPCODES
from tensorlayout.hlo.ops._common import major_to_minor
from tensorlayout.hlo.reduction_emitter import (
    WARP,
    ReductionDimensions,
    consecutive_dimensions,
    reduction_dimensions,
)
from tensorlayout.xla.shape import Shape

__all__ = [
    "emitter_fusion_kind",
    "find_non_trivial_hero",
    "fusion_roots",
    "is_input_fusible_reduction",
    "is_read_coalesced_heuristic",
    "is_reduction_from_or_to_contiguous_dimensions",
    "transposes_minor_dimension",
]


def _faster_than_elemental(r: ReductionDimensions) -> bool:
    """``IsUnnestedReductionFasterThanElemental``."""
    if r.is_row_reduction:
        return r.dimensions[2] >= WARP or WARP % r.dimensions[2] == 0
    major, minor = r.dimensions[1], r.dimensions[2]
    elemental = (
        major < WARP
        or (major < 2 * WARP and minor < WARP)
        or (major < 4 * WARP and minor < 8)
        or (major < 8 * WARP and minor < 3)
    )
    return not elemental


def is_reduction_from_or_to_contiguous_dimensions(instr: HloInstruction) -> bool:
    """``IsReductionFromOrToContiguousDimensions``: a reduce the reduction emitter handles."""
    if instr.opcode != "reduce":
        return False
    shape = instr.operands[0].shape
    reduced = list(instr.attribute("dimensions", ()))
    kept = [d for d in range(shape.rank) if d not in reduced]
    contiguous = (not kept or consecutive_dimensions(shape, kept)) or (
        bool(reduced) and consecutive_dimensions(shape, reduced)
    )
    return contiguous and _faster_than_elemental(reduction_dimensions(instr))


def _race_free(r: ReductionDimensions) -> bool:
    """``ReductionIsRaceFree`` (row: W <= 1024 * 16 and D <= 8; column: H <= 32 * 128)."""
    if r.is_row_reduction:
        return r.dimensions[2] <= 1024 * 16 and r.dimensions[0] <= 8
    return r.dimensions[1] <= WARP * 128


def _is_intermediate(instr: HloInstruction, allowed_operands: int = 1) -> bool:
    """``IsIntermediate``: an elementwise op (not a layout-changing copy), a bitcast, or a
    reshape that is a bitcast, with 1 to ``allowed_operands`` operands."""
    if not 0 < len(instr.operands) <= allowed_operands:
        return False
    if instr.opcode == "copy":
        return instr.shape.to_string(with_layout=True) == instr.operands[0].shape.to_string(with_layout=True)
    if instr.opcode in ELEMENTWISE_OPCODES or instr.opcode == "bitcast":
        return True
    if instr.opcode == "reshape":  # a bitcast when both layouts are the default (approximation)
        operand = instr.operands[0].shape
        return major_to_minor(operand) == tuple(range(operand.rank)) and major_to_minor(instr.shape) == tuple(
            range(instr.shape.rank)
        )
    return False


def _find_hero(root: HloInstruction, members: set[HloInstruction], wanted: str) -> HloInstruction | None:
    """``FindHero``: the one ``wanted`` op reached from ``root`` through intermediate ops (up to
    3 operands), whose users inside the fusion are all intermediate; None if none or several."""
    found: list[HloInstruction] = []
    queue, seen = [root], {id(root)}
    while queue:
        node = queue.pop(0)
        if node.opcode == wanted:
            found.append(node)
            continue
        if not _is_intermediate(node, 3):
            continue
        for op in node.operands:
            if op in members and id(op) not in seen:
                seen.add(id(op))
                queue.append(op)
    if len(found) != 1:
        return None
    stack, seen = list(found[0].users), set()
    while stack:
        user = stack.pop()
        if id(user) in seen or user not in members:
            continue
        seen.add(id(user))
        if user.opcode not in ("tuple", "parameter") and not _is_intermediate(user, 3):
            return None
        stack.extend(user.users)
    return found[0]


def find_non_trivial_hero(root: HloInstruction) -> HloInstruction:
    """``FindNonTrivialHero``: up through single-operand intermediate ops; a (tiled) transpose
    or concatenate found through wider elementwise ops; else a reduce, else the root."""
    members = set(root.parent.instructions) if root.parent is not None else {root}
    node = root
    while _is_intermediate(node) and node.operands[0] in members and node.operands[0].opcode != "parameter":
        node = node.operands[0]
    for wanted, accept in (("transpose", _is_tiled_transpose), ("concatenate", lambda h: True)):
        hero = _find_hero(node, members, wanted)
        if hero is not None and accept(hero):
            return hero
    return node if node.opcode == "reduce" else root


def _is_real_reduction_hero(root: HloInstruction, hero: HloInstruction) -> bool:
    """``IsRealReductionHero``."""
    if not is_reduction_from_or_to_contiguous_dimensions(hero):
        return False
    return root is hero or _race_free(reduction_dimensions(hero))


def _is_tiled_transpose(hero: HloInstruction) -> bool:
    """A transpose the transpose emitter takes (approximation of
    ``GetDescriptionForTiledTransposeEmitter``: it moves the minor dimension and both minor
    dimensions have at least 16 elements)."""
    if hero.opcode != "transpose" or not transposes_minor_dimension(hero):
        return False
    operand = hero.operands[0].shape
    return (
        operand.dimensions[major_to_minor(operand)[-1]] >= 16
        and hero.shape.dimensions[major_to_minor(hero.shape)[-1]] >= 16
    )


def fusion_roots(fusion: HloInstruction) -> tuple[HloInstruction, ...]:
    root = fusion.fused_computation.root
    return tuple(root.operands) if root.opcode == "tuple" else (root,)


def emitter_fusion_kind(fusion: HloInstruction) -> str:
    """``HloFusionAnalysis::GetEmitterFusionKind`` of a fusion: kLoop, kReduction, kTranspose,
    kConcatenate, kScatter, kCustomFusion, kTriton or kCuDnn.

    >>> from tensorlayout.hlo import parse_module
    >>> m = parse_module("HloModule m\\nf {\\n p = f32[8] parameter(0)\\n ROOT n = f32[8] negate(p)\\n}\\n"
    ...                  "ENTRY e {\\n p = f32[8] parameter(0)\\n"
    ...                  " ROOT r = f32[8] fusion(p), kind=kLoop, calls=f\\n}")
    >>> emitter_fusion_kind(m.entry.root)
    'kLoop'
    """
    if fusion.opcode != "fusion":
        raise HloError(f"{fusion.name} is a {fusion.opcode}, not a fusion")
    if fusion.fusion_kind == "kCustom":
        config = fusion.raw_attributes.get("backend_config", "")
        if "__triton" in config:
            return "kTriton"
        return "kCuDnn" if "__cudnn" in config else "kCustomFusion"
    roots = fusion_roots(fusion)
    heroes = [find_non_trivial_hero(r) for r in roots]
    if _reduction_kind(roots, heroes):
        return "kReduction"
    if any(_is_tiled_transpose(h) for h in heroes):
        return "kTranspose"
    if len(roots) > 1:
        return "kLoop"
    if roots[0].opcode in ("scatter", "sort"):
        return "kScatter" if roots[0].opcode == "scatter" else "kSort"
    if heroes[0].opcode == "concatenate" and not roots[0].shape.is_tuple and len(heroes[0].operands) <= 4:
        return "kConcatenate"
    return "kLoop"


def _reduction_kind(roots: Sequence[HloInstruction], heroes: Sequence[HloInstruction]) -> bool:
    """A real reduction hero whose sibling roots are compatible reductions or have as many
    elements as its input."""
    first = next((h for r, h in zip(roots, heroes) if _is_real_reduction_hero(r, h)), None)
    if first is None:
        return False
    for root, hero in zip(roots, heroes):
        if hero is first:
            continue
        if not _is_real_reduction_hero(root, hero):
            if root.shape.elements_in() != first.operands[0].shape.elements_in():
                return False
        elif reduction_dimensions(hero) != reduction_dimensions(first):
            return False
    return True


# ---- the heuristic ---------------------------------------------------------------------------


def _most_minor_non_trivial(shape: Shape) -> tuple[int, int]:
    """``MostMinorNonTrivialDimension``: (dim, its position in minor-to-major)."""
    for pos, dim in enumerate(reversed(major_to_minor(shape))):
        if shape.dimensions[dim] > 1:
            return dim, pos
    return -1, shape.rank


def transposes_minor_dimension(instr: HloInstruction) -> bool:
    """``TransposesMinorDimension``: a copy or transpose moving the minor non-trivial dim
    (for a fusion: any instruction inside)."""
    if instr.opcode == "fusion":
        return any(transposes_minor_dimension(i) for i in instr.fused_computation.instructions)
    if instr.opcode == "copy":
        return _most_minor_non_trivial(instr.operands[0].shape)[0] != _most_minor_non_trivial(instr.shape)[0]
    if instr.opcode != "transpose":
        return False
    operand = instr.operands[0].shape
    position = {d: p for p, d in enumerate(reversed(major_to_minor(operand)))}
    first = _most_minor_non_trivial(operand)[1]
    perm = instr.attribute("dimensions", ())
    for out_dim in reversed(major_to_minor(instr.shape)):
        if instr.shape.dimensions[out_dim] == 1:
            continue
        return position[perm[out_dim]] > first
    return False


def _is_broadcast(instr: HloInstruction) -> bool:
    """A broadcast or iota reached through bitcasts and single-operand elementwise ops."""
    while True:
        if instr.opcode in ("broadcast", "iota"):
            return True
        passes = instr.opcode == "bitcast" or instr.opcode in ELEMENTWISE_OPCODES
        if len(instr.operands) != 1 or not passes:
            return False
        instr = instr.operands[0]


def _is_bad_transpose(instr: HloInstruction) -> bool:
    if instr.opcode == "fusion":
        return any(
            transposes_minor_dimension(i) and not _is_broadcast(i.operands[0])
            for i in instr.fused_computation.instructions
            if i.opcode != "parameter"
        )
    return transposes_minor_dimension(instr) and not _is_broadcast(instr.operands[0])


def is_input_fusible_reduction(instr: HloInstruction) -> bool:
    """``IsInputFusibleReduction``: a reduce-input fusion or a reduction the reduction emitter takes."""
    if instr.opcode == "fusion":
        return any(_is_real_reduction_hero(r, find_non_trivial_hero(r)) for r in fusion_roots(instr))
    return is_reduction_from_or_to_contiguous_dimensions(instr)


def is_read_coalesced_heuristic(
    fusion_kind: str, producer: HloInstruction, consumer: HloInstruction | None = None
) -> bool:
    """``IsReadCoalescedHeuristic(fusion_kind, producer, consumer)``."""
    bad = _is_bad_transpose(producer) or (consumer is not None and _is_bad_transpose(consumer))
    if fusion_kind != "kTranspose" and bad:
        return False
    return not (
        fusion_kind == "kReduction"
        and consumer is not None
        and is_input_fusible_reduction(producer)
        and is_input_fusible_reduction(consumer)
    )
