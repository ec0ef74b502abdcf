"""XLA's GPU read-coalescing analysis: is each fusion operand read coalesced, as XLA decides it.

Beside the step-based :func:`~tensorlayout.hlo.coalescing.coalescing_report`, this module
answers XLA's yes/no (``CoalescingAnalysis::IsReadCoalesced``, spec xla_tiling §7):

* the **indexing path** (``use_heuristic=False``): the emitter's map from thread ids to the
  hero operands, composed through the fusion to each parameter and its linearized physical
  layout, sampled on the first warp (``thread_x in [0, 31]``, every other id 0), split into
  ``f(thread_x) + g(s)``, turned into contiguous intervals and costed in 128-byte
  transactions; coalesced when ``ideal > 0.9 * transactions``;
* the **heuristic** (``IsReadCoalescedHeuristic``), XLA's fallback when the emitter exposes no
  thread-id indexing: a non-transpose emitter reading a transpose of the minor dimension (not
  of a broadcast/iota) is uncoalesced, so is a reduction fusing two row reductions.

The emitter kind comes from :func:`emitter_fusion_kind` (``HloFusionAnalysis::
GetEmitterFusionKind``). The thread-id maps are built here for the loop emitter and the
reduction emitters (:mod:`tensorlayout.hlo.reduction_emitter`, single-root reductions); for the
other kinds (transpose, concatenate, scatter, reductions with side outputs...)
:func:`read_coalescing` falls back to the heuristic and says so in ``method``.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module('''HloModule m
... f {
...   p0 = f32[100,8] parameter(0)
...   ROOT t = f32[8,100] transpose(p0), dimensions={1,0}
... }
... ENTRY e {
...   p = f32[100,8] parameter(0)
...   ROOT fusion = f32[8,100] fusion(p), kind=kLoop, calls=f
... }''')
>>> r = read_coalescing(m.entry.root)
>>> r.kind, r.method, r.per_operand
('kLoop', 'indexing', (False,))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tensorlayout.core.intmath import ceil_div
from tensorlayout.hlo import analysis
from tensorlayout.hlo.emitter_kind import (
    emitter_fusion_kind,
    find_non_trivial_hero,
    fusion_roots,
    is_read_coalesced_heuristic,
    transposes_minor_dimension,
)
from tensorlayout.hlo.fusion import FusionAdaptor, group_by_producers
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.ops._common import bounds, delinearize, linearize, major_to_minor
from tensorlayout.hlo.reduction_emitter import (
    ReductionDimensions,
    reduction_dimensions,
    reduction_thread_id_to_input_indexing,
)
from tensorlayout.indexing import Expr, IndexingMap, Interval, compose, const, var
from tensorlayout.indexing.expr import ADD, CONST, MUL
from tensorlayout.xla.shape import Shape

__all__ = [
    "RTX_A6000",
    "DeviceDescription",
    "ReadCoalescing",
    "ReductionDimensions",
    "bandwidth_utilization_rate",
    "emitter_fusion_kind",
    "is_indexing_coalesced",
    "is_read_coalesced_heuristic",
    "loop_thread_id_to_output_indexing",
    "read_coalescing",
    "reduction_dimensions",
    "transposes_minor_dimension",
]

WARP = 32
BYTES_PER_TRANSACTION = 128
COALESCED_THRESHOLD = 0.9
MAX_UNROLL_FACTOR = 4
LOOP_THREADS_PER_BLOCK = 128  # threads per warp x 4 warp schedulers per SM


@dataclass(frozen=True)
class DeviceDescription:
    """The device facts the analysis reads (``se::DeviceDescription``)."""

    name: str
    threads_per_core_limit: int
    core_count: int
    dram_to_l2_transaction_size_bytes: int
    threads_per_warp: int = WARP


#: The device of XLA's coalescing tests (``TestGpuDeviceInfo::RTXA6000DeviceInfo``).
RTX_A6000 = DeviceDescription("NVIDIA RTX A6000", 1536, 84, 64)


@dataclass(frozen=True)
class ReadCoalescing:
    """XLA's answer per fusion operand, the emitter kind and how it was decided."""

    kind: str
    method: str  # "indexing" (thread-id maps) or "heuristic"
    per_operand: tuple[bool, ...]


# ---- the loop emitter's thread-id maps ---------------------------------------------------------

def _may_prevent_vectorization(fusion: HloInstruction) -> bool:
    """``MayPreventVectorization``: dot, sort, a concat of > 10 operands, a variadic reduce."""
    for i in fusion.fused_computation.instructions:
        if i.opcode in ("dot", "sort") or (i.opcode == "concatenate" and len(i.operands) > 10):
            return True
        if i.opcode == "reduce" and i.shape.is_tuple:
            return True
    return False


def _unroll_factor(fusion: HloInstruction, shape: Shape, device: DeviceDescription) -> int:
    """``ComputeLoopFusionConfig``'s unroll factor."""
    n = shape.elements_in()
    unroll = 1
    if n >= device.threads_per_core_limit * device.core_count and not _may_prevent_vectorization(fusion):
        unroll = next((u for u in (4, 2) if u <= MAX_UNROLL_FACTOR and n % u == 0), 1)
    bits = min(leaf.element_type.bit_width for r in fusion_roots(fusion) for leaf in r.shape.leaves())
    return max(unroll, ceil_div(8, bits))


def loop_thread_id_to_output_indexing(shape: Shape, unroll: int) -> IndexingMap:
    """The loop emitter's map ``(th_x, th_y, th_z, bl_x, bl_y, bl_z)[chunk, unroll] -> output``.

    >>> print(loop_thread_id_to_output_indexing(Shape.parse("f32[4,8]"), 1).simplify())
    (d0, d1, d2, d3, d4, d5)[s0, s1] -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31], d1 in [0, 0], \
d2 in [0, 0], d3 in [0, 0], d4 in [0, 0], d5 in [0, 0], s0 in [0, 0], s1 in [0, 0]
    """
    n = shape.elements_in()
    threads = min(LOOP_THREADS_PER_BLOCK, max(ceil_div(n, unroll), 1))
    blocks = ceil_div(ceil_div(n, unroll), threads)
    chunks = ceil_div(n, threads * blocks * unroll)
    th_x, bl_x, chunk, unroll_id = var(0), var(3), var(6), var(7)
    linear = chunk * (threads * blocks * unroll) + (bl_x * threads + th_x) * unroll + unroll_id
    order = major_to_minor(shape)
    physical = delinearize(linear, [shape.dimensions[d] for d in order])
    results: list[Expr] = [const(0)] * shape.rank
    for p, d in enumerate(order):
        results[d] = physical[p]
    dims = [(0, threads - 1), (0, 0), (0, 0), (0, blocks - 1), (0, 0), (0, 0)]
    return IndexingMap(results, dims, [(0, chunks - 1), (0, unroll - 1)], (), [(linear, (0, n - 1))])


def _linearized_physical(shape: Shape) -> IndexingMap:
    """``logical index -> linear offset`` in the physical (layout) order, tiling ignored."""
    order = major_to_minor(shape)
    expr = linearize([var(d) for d in order], [shape.dimensions[d] for d in order])
    return IndexingMap([expr], bounds(shape.dimensions)).simplify()


def _dtype_bits(shapes: list[Shape]) -> int:
    """The smallest element bit width among array shapes (XLA's ``input_output_info``)."""
    bits = [leaf.element_type.bit_width for shape in shapes for leaf in shape.leaves() if leaf.is_array]
    return min(bits) if bits else 1 << 30


def _loop_hero_maps(fusion: HloInstruction, root: HloInstruction, device: DeviceDescription
                    ) -> list[list[IndexingMap]]:
    """The loop emitter: thread ids -> the root's output, composed with the root's own maps."""
    shape = next(iter(root.shape.leaves()))
    thread_to_output = loop_thread_id_to_output_indexing(shape, _unroll_factor(fusion, shape, device))
    hero_maps = analysis.output_to_input_indexing(root, 0)
    return [[compose(thread_to_output, oi.map).simplify() for oi in g] for g in hero_maps.indexing_maps]


def _reduction_hero_maps(fusion: HloInstruction, root: HloInstruction, device: DeviceDescription
                         ) -> list[list[IndexingMap]] | None:
    """The reduction emitter for a fusion whose one root is its reduction hero; None otherwise
    (side outputs and several reduction groups are not built)."""
    roots = fusion_roots(fusion)
    if len(roots) != 1 or find_non_trivial_hero(root) is not root or root.opcode != "reduce":
        return None
    in_bits = _dtype_bits([op.shape for op in fusion.operands])
    out_bits = _dtype_bits([fusion.shape])
    maps = reduction_thread_id_to_input_indexing(root, in_bits, out_bits, device.core_count)
    return [[m] if m is not None else [] for m in maps]


def _concatenate_hero_maps(fusion: HloInstruction, root: HloInstruction, device: DeviceDescription
                           ) -> tuple[HloInstruction, list[list[IndexingMap]]]:
    """The concatenate emitter: every operand of the concatenate hero read by the loop over the
    operand largest along the concatenated dimension (unrolled by a common divisor)."""
    hero = find_non_trivial_hero(root)
    dim = hero.attribute("dimensions", (0,))[0]
    largest = max(hero.operands, key=lambda op: op.shape.dimensions[dim]).shape
    unroll = _unroll_factor(fusion, largest, device)
    for op in hero.operands:
        unroll = math.gcd(unroll, op.shape.dimensions[dim])
    thread_map = loop_thread_id_to_output_indexing(largest, max(unroll, 1))
    return hero, [[thread_map] for _ in hero.operands]


def _hero_maps(fusion: HloInstruction, root: HloInstruction, kind: str, device: DeviceDescription
               ) -> tuple[HloInstruction, list[list[IndexingMap]]] | None:
    """The hero of ``root`` and, per hero operand, the emitter's thread-id maps into it."""
    if kind == "kLoop":
        return root, _loop_hero_maps(fusion, root, device)
    if kind == "kConcatenate":
        return _concatenate_hero_maps(fusion, root, device)
    if kind == "kReduction":
        maps = _reduction_hero_maps(fusion, root, device)
        return None if maps is None else (root, maps)
    return None


def _thread_to_operand_maps(fusion: HloInstruction, kind: str, device: DeviceDescription
                            ) -> dict[HloInstruction, list[IndexingMap]] | None:
    """Per fusion operand, the maps thread ids -> linearized physical offset; None when the
    emitter's thread-id indexing is not built here (XLA then falls back to the heuristic too,
    for emitters without it)."""
    adaptor = FusionAdaptor.for_instruction(fusion)
    out: dict[HloInstruction, list[IndexingMap]] = {}
    for root in adaptor.roots:
        found = _hero_maps(fusion, root, kind, device)
        if found is None:
            return None
        hero, per_operand = found
        for hero_operand, maps in zip(hero.operands, per_operand):
            if not hero_operand.shape.is_array or not hero_operand.shape.dimensions:
                continue
            groups = group_by_producers(adaptor, hero_operand, analysis.output_to_input_indexing)
            for thread_to_hero in maps:
                _collect(fusion, thread_to_hero, groups, out)
    return out


def _collect(fusion: HloInstruction, thread_to_hero: IndexingMap, groups: dict, out: dict) -> None:
    for operand in fusion.operands:
        if operand not in groups or not operand.shape.is_array or not operand.shape.dimensions:
            continue
        physical = _linearized_physical(operand.shape)
        for oi in groups[operand]:
            if oi.map.is_undefined:
                out[operand] = [IndexingMap.undefined()]
                break
            out.setdefault(operand, []).append(compose(thread_to_hero, compose(oi.map, physical)).simplify())


# ---- deciding one map --------------------------------------------------------------------------

def _assign_rt_vars(m: IndexingMap) -> IndexingMap:
    """``AssignValuesToRTVars``: every runtime variable at the midpoint of its range."""
    if not m.num_rt_vars:
        return m
    nd, nr = m.num_dims, m.num_range_vars
    repl = {nd + nr + k: const((v.bounds.lower + v.bounds.upper) // 2) for k, v in enumerate(m.rt_vars)}
    results = [r.replace_variables(repl) for r in m.results]
    return IndexingMap(results, m.dim_vars, m.range_vars, ()).simplify().remove_unused_symbols()


def _first_warp(m: IndexingMap) -> IndexingMap:
    """Compose with ``(thread_x) -> (thread_x, 0, 0, 0, 0, 0)``, thread_x in [0, 31]."""
    sample = IndexingMap([var(0)] + [const(0)] * (m.num_dims - 1), [(0, WARP - 1)])
    return compose(sample, m).simplify().rescale_symbols().remove_unused_symbols()


def _assign_outer_loop_ivs(m: IndexingMap) -> IndexingMap:
    """``AssignValuesToOuterLoopIVs``: all range vars but the last at their lower bound."""
    if m.num_range_vars <= 1:
        return m
    nd, nr = m.num_dims, m.num_range_vars
    repl: dict[int, Expr] = {nd + j: const(m.range_vars[j].bounds.lower) for j in range(nr - 1)}
    repl[nd + nr - 1] = var(nd)
    results = [r.replace_variables(repl) for r in m.results]
    return IndexingMap(results, m.dim_vars, [m.range_vars[-1]], ()).simplify().remove_unused_symbols()


def _summands(e: Expr) -> list[Expr]:
    if e.kind == ADD and e.lhs is not None and e.rhs is not None:
        return _summands(e.lhs) + _summands(e.rhs)
    return [e]


def _partition_expr(e: Expr, num_dims: int) -> tuple[Expr, Expr] | None:
    """``Partition``: ``e = f(thread_x) + g(s0)``, or None when a summand uses both."""
    f: Expr = const(0)
    g: Expr = const(0)
    for term in reversed(_summands(e)):
        used = term.variables()
        on_x, on_s = 0 in used, num_dims in used
        if on_x and on_s:
            return None
        if on_x:
            f = term + f if not (f.kind == CONST and f.value == 0) else term
        if on_s:
            g = term + g if not (g.kind == CONST and g.value == 0) else term
    return f, g


def _runs(values: list[int]) -> list[Interval]:
    """Sorted distinct values merged into contiguous intervals."""
    out: list[Interval] = []
    for v in sorted(set(values)):
        if out and v == out[-1].upper + 1:
            out[-1] = Interval(out[-1].lower, v)
        else:
            out.append(Interval(v, v))
    return out


def _extend(intervals: list[Interval], length: int) -> list[Interval]:
    """``ExtendIntervals``: each ``[lo, hi + length]``, overlapping or adjacent ones merged."""
    out: list[Interval] = []
    for iv in intervals:
        lo, hi = iv.lower, iv.upper + length
        if out and out[-1].upper >= lo - 1:
            out[-1] = Interval(out[-1].lower, max(out[-1].upper, hi))
        else:
            out.append(Interval(lo, hi))
    return out


def _contiguous_intervals(f: Expr, g: Expr, m: IndexingMap) -> list[Interval]:
    """``FindContiguousIntervals`` for ``f(thread_x) + g(s)``."""
    s = var(m.num_dims)
    if f.kind != MUL and f == var(0):
        return [Interval(0, WARP - 1)]
    if f.kind == MUL and f.rhs is not None and f.rhs.kind == CONST:
        c = f.rhs.value
        if c == -1:
            return [Interval(0, WARP - 1)]
        if g == s:
            rng = m.range_vars[0].bounds
            n = rng.upper - rng.lower + 1
            if n >= abs(c):
                return [Interval(0, c * (WARP - 1) + n - 1)]
            return [Interval(rng.lower + c * i, rng.upper + c * i) for i in range(WARP)]
        return [Interval(c * i, c * i) for i in range(WARP)]
    x = m.dim_vars[0].bounds
    intervals = _runs([f.evaluate([t] + [0] * (m.num_vars - 1)) for t in range(x.lower, x.upper + 1)])
    if g != s:
        return intervals
    rng = m.range_vars[0].bounds
    return _extend(intervals, rng.upper - rng.lower)


def _transactions_coalesced(intervals: list[Interval], bytes_per_element: int) -> bool:
    """``EstimateCoalescingViaMemoryTransactionsCount``."""
    lengths = [iv.upper - iv.lower + 1 for iv in intervals]
    transactions = sum(ceil_div(n * bytes_per_element, BYTES_PER_TRANSACTION) for n in lengths)
    if transactions == 0:
        return True
    ideal = ceil_div(sum(lengths) * bytes_per_element, BYTES_PER_TRANSACTION)
    return ideal > transactions * COALESCED_THRESHOLD


def is_indexing_coalesced(thread_to_linear: IndexingMap, bytes_per_element: int) -> bool:
    """``IsIndexingCoalesced``: XLA's decision for one thread-ids -> linear offset map.

    >>> m = IndexingMap.parse("(d0, d1, d2, d3, d4, d5) -> (d0 * 2), domain: d0 in [0, 127], "
    ...     "d1 in [0, 0], d2 in [0, 0], d3 in [0, 0], d4 in [0, 0], d5 in [0, 0]")
    >>> is_indexing_coalesced(m, 4)
    False
    """
    if thread_to_linear.is_undefined:
        return False
    if thread_to_linear.num_results == 0:
        return True
    sample = _first_warp(_assign_rt_vars(thread_to_linear))
    if sample.is_known_empty:
        return True
    sample = _assign_outer_loop_ivs(sample)
    result = sample.results[0]
    parts = _partition_expr(result, sample.num_dims)
    constraints = list(sample.constraints)
    if parts is None or len(constraints) > 1:
        return False
    if constraints and constraints[0] != result:
        return False
    return _transactions_coalesced(_contiguous_intervals(*parts, sample), bytes_per_element)


def read_coalescing(fusion: HloInstruction, *, use_heuristic: bool = False,
                    device: DeviceDescription = RTX_A6000) -> ReadCoalescing:
    """XLA's ``CoalescingAnalysis`` of a fusion: ``IsReadCoalesced`` for every operand."""
    kind = emitter_fusion_kind(fusion)
    maps = None if use_heuristic else _thread_to_operand_maps(fusion, kind, device)
    if maps is None:
        answer = is_read_coalesced_heuristic(kind, fusion)
        return ReadCoalescing(kind, "heuristic", tuple(answer for _ in fusion.operands))
    answers = []
    for operand in fusion.operands:
        size = max(operand.shape.element_type.bit_width // 8, 1) if operand.shape.is_array else 1
        answers.append(all(is_indexing_coalesced(m, size) for m in maps.get(operand, ())))
    return ReadCoalescing(kind, "indexing", tuple(answers))


def bandwidth_utilization_rate(shape: Shape, tile_sizes: Sequence[int], tile_strides: Sequence[int],
                               device: DeviceDescription = RTX_A6000) -> float:
    """``BandwidthUtilizationRateHeuristicForTiledMemoryAccess`` of a tile of ``shape``.

    >>> bandwidth_utilization_rate(Shape.parse("s8[256,16]"), (6, 16), (1, 1))
    0.75
    """
    contiguous = 1
    for dim in reversed(major_to_minor(shape)):
        if tile_strides[dim] != 1:
            break
        contiguous *= min(tile_sizes[dim], shape.dimensions[dim])
        if tile_sizes[dim] < shape.dimensions[dim]:
            break
    nbytes = contiguous * max(shape.element_type.bit_width // 8, 1)
    t = device.dram_to_l2_transaction_size_bytes
    return nbytes / (t * ceil_div(nbytes, t))
