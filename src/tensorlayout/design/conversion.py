"""Triton's ``convert_layout``, decided before compiling: the data path Triton 3.9 picks on Hopper
(``cuda:90``) — nothing, a register permutation, warp shuffles, or a round trip through shared
memory — and, through shared memory, the swizzled layout it synthesises (generic swizzling), the
instructions of each side (``st.shared``/``ld.shared`` by width, ``stmatrix``/``ldmatrix``), the
rounds, the scratch bytes and the PTX instruction counts.

>>> from tensorlayout.triton import BlockedLayout, NVMMADistributedLayout
>>> c = triton_convert_layout(BlockedLayout([1, 2], [2, 16], [1, 4], [1, 0]),
...                           NVMMADistributedLayout([2, 0], [2, 2], [16, 8]), [32, 64], "f16")
>>> c.path, c.scratch_bytes, c.ptx_op_counts["stmatrix.sync.aligned.m8n8.x4.shared.b16"]
('shared', 4096, 4)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.design import _triton_lowering as low
from tensorlayout.design._triton_swizzle import Side, SmemPlan, plan_shared
from tensorlayout.errors import LayoutError
from tensorlayout.triton._mlir import parse_layout
from tensorlayout.triton.encodings import to_linear_layout
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["ELEMENT_BITS", "SharedRoundTrip", "TritonConversion", "element_bits", "triton_convert_layout"]

#: Element widths by the names Triton (and the conformance data) use.
ELEMENT_BITS: Mapping[str, int] = {
    "i1": 1, "i8": 8, "u8": 8, "int8": 8, "fp8": 8, "f8e4m3fn": 8, "f8e5m2": 8, "e4m3": 8, "e5m2": 8,
    "i16": 16, "f16": 16, "fp16": 16, "bf16": 16, "half": 16,
    "i32": 32, "f32": 32, "fp32": 32, "tf32": 32, "float": 32,
    "i64": 64, "f64": 64, "fp64": 64,
}

_MATRIX = {"matrix": "", "matrix.trans": ".trans"}


def element_bits(dtype: str | int) -> int:
    """Bits per element for a dtype name (or a width).

    >>> element_bits("bf16"), element_bits(32)
    (16, 32)
    """
    if isinstance(dtype, int) and not isinstance(dtype, bool) and dtype in (1, 8, 16, 32, 64):
        return dtype
    bits = ELEMENT_BITS.get(str(dtype).lower()) if isinstance(dtype, str) else None
    if bits is None:
        raise LayoutError(f"unknown element type {dtype!r}: use one of {', '.join(sorted(ELEMENT_BITS))}")
    return bits


@dataclass(frozen=True)
class SharedRoundTrip:
    """The shared-memory part of a conversion: ``layout`` maps the in dims ``vector``, ``bank``,
    ``segment``, ``reps`` to the tensor (Triton's swizzled scratch layout); ``store``/``load``
    are the instructions per round (``store_op``/``load_op`` their PTX names); ``rounds`` the
    number of store/barrier/load rounds; ``bank_conflicts`` the (read, write) excess wavefronts
    Triton scores for its choice."""

    layout: LinearLayout
    store: low.RoundOps
    load: low.RoundOps
    rounds: int
    scratch_bytes: int
    bank_conflicts: tuple[int, int]
    store_op: str
    load_op: str


@dataclass(frozen=True)
class TritonConversion:
    """Triton's lowering of ``convert_layout(src -> dst)``: ``path`` is ``none``, ``registers``,
    ``shuffles`` or ``shared``; ``ptx_op_counts`` counts the shared-memory instructions and
    barriers as PTX spells them (byte permutes, ``prmt``, are not modelled)."""

    src: LinearLayout
    dst: LinearLayout
    bitwidth: int
    path: str
    shared: SharedRoundTrip | None
    ptx_op_counts: Mapping[str, int]
    mixed_transpositions: int

    @property
    def scratch_bytes(self) -> int:
        """Bytes of shared scratch the conversion allocates (0 off the shared path)."""
        return self.shared.scratch_bytes if self.shared else 0

    @property
    def is_free(self) -> bool:
        """No data moves between threads (nothing, or a register permutation)."""
        return self.path in ("none", "registers")


def _layout_of(x: Any, shape: Sequence[int], what: str) -> LinearLayout:
    if isinstance(x, str):
        return parse_layout(x, shape)
    ll = to_linear_layout(x, shape)
    if not all(ll.has_in_dim(d) for d in ("register", "lane", "warp")):
        raise LayoutError(f"{what} must be a distributed layout (register, lane, warp), got in dims "
                          f"{ll.get_in_dim_names()}")
    return ll


def _check_warps(src: LinearLayout, dst: LinearLayout, num_warps: int | None) -> None:
    for name, ll in (("source", src), ("destination", dst)):
        if num_warps is not None and ll.get_in_dim_size("warp") != num_warps:
            raise LayoutError(f"the {name} layout spans {ll.get_in_dim_size('warp')} warps, not "
                              f"num_warps={num_warps}")
    if src.get_in_dim_size("warp") != dst.get_in_dim_size("warp"):
        raise LayoutError(f"the source spans {src.get_in_dim_size('warp')} warps, the destination "
                          f"{dst.get_in_dim_size('warp')}")
    if src.out_dims != dst.out_dims:
        raise LayoutError(f"source and destination cover different tensors: {src.out_dims} vs {dst.out_dims}")
    if src.get_in_dim_size("block") != 1:
        raise LayoutError("conversions across CTAs (block bases) are not modelled")


def _smem_layout(plan: SmemPlan, like: LinearLayout) -> LinearLayout:
    flat = like.flatten_outs()
    name = flat.get_out_dim_names()[0]
    bases = [(dim, [[b] for b in bs]) for dim, bs in
             (("vector", plan.vector), ("bank", plan.bank), ("segment", plan.segment), ("reps", plan.reps))]
    one = LinearLayout.from_bases(bases, [name], [flat.get_out_dim_size(name)])
    return one.reshape_outs(like.out_dims)


def _access_type(vector_bits: int, bitwidth: int) -> str:
    """The PTX vector type of one ld/st.shared: more than 4 narrow elements, and 4 bytes, go as
    32-bit words (Triton packs the first, LLVM the second); otherwise ``.vN`` of the element."""
    vec = vector_bits // bitwidth
    if (vec > 4 and bitwidth < 32) or (vec == 4 and bitwidth == 8):
        vec, bitwidth = vector_bits // 32, 32
    return (f".v{vec}" if vec > 1 else "") + f".b{bitwidth}"


def _op_name(side: low.RoundOps, store: bool, bitwidth: int) -> str:
    if side.op == "shared":
        return ("st" if store else "ld") + ".shared" + _access_type(side.vector_bits, bitwidth)
    return (f"{'st' if store else 'ld'}matrix.sync.aligned.m8n8.x{side.vector_bits // 32}{_MATRIX[side.op]}"
            ".shared.b16")


def _counts(shared: SharedRoundTrip, warp_sync: bool) -> dict[str, int]:
    counts: dict[str, int] = {}
    for side, name in ((shared.store, shared.store_op), (shared.load, shared.load_op)):
        counts[name] = counts.get(name, 0) + side.per_round * shared.rounds
    counts["bar.warp.sync" if warp_sync else "bar.sync"] = 2 * shared.rounds - 1
    return counts


def _warp_sync(src: LinearLayout, dst: LinearLayout) -> bool:
    """``isCvtDimSync`` over warps: the conversion keeps each warp's data in the warp and neither
    side broadcasts over warps (or blocks)."""
    comp = dst.invert_and_compose(src)
    return all(comp.is_trivial_over([d]) and src.get_free_variable_masks()[d] == 0
               and dst.get_free_variable_masks()[d] == 0 for d in ("block", "warp"))


def _through_shared(src: LinearLayout, dst: LinearLayout, bitwidth: int) -> tuple[SharedRoundTrip, bool]:
    bits = max(bitwidth, 8)
    s, d = low.without_broadcast_registers(src), low.without_broadcast_registers(dst)
    plan, scored = plan_shared(Side.of(s), Side.of(d), bits)
    rounds = 1 << len(plan.reps)
    size = src.get_total_out_dim_size()
    store, load = low.round_ops(s, plan, plan.store, bits), low.round_ops(d, plan, plan.load, bits)
    shared = SharedRoundTrip(_smem_layout(plan, src), store, load, rounds, size // rounds * bits // 8, scored,
                             _op_name(store, True, bits), _op_name(load, False, bits))
    return shared, _warp_sync(s, d)


def triton_convert_layout(src: Any, dst: Any, shape: Sequence[int], dtype: str | int = "f16",
                          num_warps: int | None = None) -> TritonConversion:
    """What Triton 3.9 emits on ``cuda:90`` for ``convert_layout`` from ``src`` to ``dst`` over a
    tensor of ``shape`` and ``dtype``: each layout an encoding object (``BlockedLayout``...),
    Triton's text (``#ttg.blocked<{...}>``) or a distributed ``LinearLayout``; ``num_warps``,
    when given, must be the layouts' warp count."""
    bitwidth = element_bits(dtype)
    s, d = _layout_of(src, shape, "source"), _layout_of(dst, shape, "destination")
    _check_warps(s, d, num_warps)
    path = low.data_path(s, d)
    mixed = low.mixed_transpositions(s, d) if path in ("shuffles", "shared") and \
        low.minimal_cvt_layout(s, d).get_out_dim_names() == ["register", "lane"] else 0
    if path != "shared":
        counts = low.shuffle_counts(s, d, bitwidth) if path == "shuffles" else {}
        return TritonConversion(s, d, bitwidth, path, None, counts, mixed)
    shared, warp_sync = _through_shared(s, d, bitwidth)
    return TritonConversion(s, d, bitwidth, path, shared, _counts(shared, warp_sync), mixed)
