"""What converting one thread-value layout into another costs, before compiling: the data path
(nothing, a register permutation, warp shuffles, shared memory — the one Triton 3.9 takes on
Hopper), its instructions per thread, the bytes through shared memory, and the bank conflicts of
each shared-memory access measured on the CUDA bank model. Layouts are Triton encodings or text,
distributed ``LinearLayout`` s, or CuTe TV layouts ``(thread, value) -> element`` of an M x N tile.

>>> from tensorlayout.cute import Layout
>>> rows = Layout(((32, 4), 8), ((1, 32), 128))   # thread t holds row t of a 128x8 tile
>>> cols = Layout(((8, 16), 8), ((128, 1), 16))   # thread t holds 8 elements of a column
>>> cost = conversion_cost(rows, cols, [128, 8], "f32")
>>> cost.path, cost.free, cost.scratch_bytes
('shared', False, 4096)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.cute import Layout
from tensorlayout.design.conversion import TritonConversion, triton_convert_layout
from tensorlayout.errors import LayoutError
from tensorlayout.triton.banks import hardware_bank_conflicts
from tensorlayout.triton.bridge import from_cute
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["ConversionCost", "conversion_cost", "tv_linear_layout"]

WARP = 32


def tv_linear_layout(tv: Layout, shape: Sequence[int]) -> LinearLayout:
    """A CuTe TV layout (threads, values) -> column-major element of an ``M x N`` tile as a
    distributed ``LinearLayout`` (register, lane, warp, block); power-of-two sizes whose
    strides set distinct bits.

    >>> ll = tv_linear_layout(Layout((32, 2), (2, 1)), [64])
    >>> ll.apply({"register": 1, "lane": 3, "warp": 0, "block": 0})
    {'dim0': 7}
    """
    if not isinstance(tv, Layout) or not isinstance(tv.shape, tuple) or len(tv.shape) != 2:
        raise LayoutError("a TV layout has two modes, (threads, values)")
    outs = [(f"dim{i}", int(s)) for i, s in enumerate(shape)]
    ll = from_cute(tv, ["thread", "register"], outs).transpose_ins(["register", "thread"])
    threads, values = ll.get_in_dim_size("thread"), ll.get_in_dim_size("register")
    if threads % WARP:
        raise LayoutError(f"a TV layout for warps needs a multiple of {WARP} threads, got {threads}")
    return ll.reshape_ins([("register", values), ("lane", WARP), ("warp", threads // WARP), ("block", 1)])


@dataclass(frozen=True)
class ConversionCost:
    """The cost of one conversion. ``instructions`` are per thread (PTX names); the bytes
    through shared memory count every element stored and loaded by the CTA (broadcast copies
    included); ``wavefronts`` gives, for the ld/st.shared side(s), the worst wavefronts per
    instruction phase on the bank model (1 = conflict-free)."""

    conversion: TritonConversion
    bytes_through_shared: int
    wavefronts: Mapping[str, int]

    @property
    def path(self) -> str:
        """``none``, ``registers``, ``shuffles`` or ``shared``."""
        return self.conversion.path

    @property
    def free(self) -> bool:
        """No data leaves its thread: the conversion costs no instruction."""
        return self.conversion.is_free

    @property
    def scratch_bytes(self) -> int:
        """Shared scratch allocated."""
        return self.conversion.scratch_bytes

    @property
    def instructions(self) -> Mapping[str, int]:
        """PTX instructions per thread (shared accesses, shuffles, barriers)."""
        return self.conversion.ptx_op_counts

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        c = self.conversion
        out: dict[str, Any] = {"path": self.path, "free": self.free, "scratch_bytes": self.scratch_bytes,
                               "bytes_through_shared": self.bytes_through_shared,
                               "instructions": dict(self.instructions), "wavefronts": dict(self.wavefronts),
                               "mixed_transpositions": c.mixed_transpositions}
        if c.shared is not None:
            out["rounds"] = c.shared.rounds
            out["triton_bank_conflicts"] = {"read": c.shared.bank_conflicts[0],
                                            "write": c.shared.bank_conflicts[1]}
        return out


def _layout(x: Any, shape: Sequence[int]) -> Any:
    return tv_linear_layout(x, shape) if isinstance(x, Layout) else x


def _shared_offsets(c: TritonConversion) -> LinearLayout:
    """The swizzled scratch layout with its in dims as one ``offset`` (reps above the rest)."""
    assert c.shared is not None
    ll = c.shared.layout
    names = ll.get_in_dim_names()
    bases = [("offset", [v for n in names for v in dict(ll.bases)[n]]), ("block", [])]
    return LinearLayout.from_bases(bases, ll.get_out_dim_names(), ll.get_out_dim_sizes())


def _moved_bytes(c: TritonConversion) -> int:
    bits = max(c.bitwidth, 8)
    total = 0
    for ll in (c.src, c.dst):
        copies = sum(1 for n in ("lane", "warp") for b in ll.flattened_bases(n) if not b)
        total += ll.get_total_out_dim_size() * (1 << copies) * bits // 8
    return total


def conversion_cost(src: Any, dst: Any, shape: Sequence[int], dtype: str | int = "f16",
                    num_warps: int | None = None) -> ConversionCost:
    """The data path and cost of converting ``src`` into ``dst`` over a tensor of ``shape``."""
    s, d = _layout(src, shape), _layout(dst, shape)
    c = triton_convert_layout(s, d, shape, dtype, num_warps)
    if c.shared is None:
        return ConversionCost(c, 0, {})
    offsets = _shared_offsets(c)
    bits = max(c.bitwidth, 8)
    waves = {}
    for name, side, ll in (("store", c.shared.store, c.src), ("load", c.shared.load, c.dst)):
        if side.op == "shared":
            waves[name] = hardware_bank_conflicts(_one_round(ll, c), offsets, bits).excess + 1
    return ConversionCost(c, _moved_bytes(c), waves)


def _one_round(ll: LinearLayout, c: TritonConversion) -> LinearLayout:
    """``ll`` without the register bases that pick the round (every round accesses the
    scratch buffer alike), nor broadcast registers."""
    assert c.shared is not None
    flat_reps = set(c.shared.layout.flatten_outs().flattened_bases("reps"))
    flat = ll.flatten_outs().flattened_bases("register")
    keep = [v for v, f in zip(dict(ll.bases)["register"], flat) if f and f not in flat_reps]
    bases = [(n, keep if n == "register" else vs) for n, vs in ll.bases]
    return LinearLayout.from_bases(bases, ll.get_out_dim_names(), ll.get_out_dim_sizes(), False)

