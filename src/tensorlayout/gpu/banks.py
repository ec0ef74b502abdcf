"""Shared-memory bank conflicts of one warp-wide access to a (possibly swizzled) layout.

Hardware model (CUDA programming guide, compute capability 5.x+): 32 banks of 4 bytes,
``bank = (byte_address / 4) % 32``. A request is split by the per-lane vector width: up to
4 bytes, one phase of 32 lanes; 8 bytes, two of 16; 16 bytes, four of 8. In a phase the
wavefronts are the most distinct 32-bit words any bank must serve (same word: broadcast).
Conflicts are wavefronts beyond one per phase. :func:`triton_bank_conflicts` is Triton's
``bank_conflicts`` rule instead (a GF(2) span intersection), which can differ.

The access is a :class:`~tensorlayout.gpu.tv.TVLayout` over the shared tile's logical
``(m, n)`` coordinates: lane ``t`` reads its values ``0..V-1`` as one contiguous vector.

>>> from tensorlayout.gpu.tv import TVLayout
>>> lanes_by_row = TVLayout.parse("(32,4):(1,32)", (32, 32))   # lane t: row t, 4 fp32
>>> bank_conflicts("(32,32):(32,1)", 32, lanes_by_row).conflicts
28
>>> from tensorlayout.cute import ComposedLayout, Layout, Swizzle
>>> swizzled = ComposedLayout(Swizzle(3, 2, 3), 0, Layout.parse("(32,32):(32,1)"))
>>> bank_conflicts(swizzled, 32, lanes_by_row).conflicts
0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tensorlayout.core.banks import LANES_PER_PHASE, WORD_BITS, Phase, phase_of
from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import ComposedLayout, Layout
from tensorlayout.cute.int_tuple import is_int
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.gpu.atoms import universal_copy
from tensorlayout.gpu.tiled import make_tiled_copy
from tensorlayout.gpu.tv import TVLayout, check_tile
from tensorlayout.lowering import lower

__all__ = ["BankReport", "Phase", "bank_conflicts", "check_element_bits", "shared_core", "span_conflicts",
           "triton_bank_conflicts", "vector_access"]


SharedLayout = Layout | ComposedLayout | CoreLayout | str


@dataclass(frozen=True)
class BankReport:
    """Wavefronts of one warp access: per phase, and in total against the ideal (one per phase)."""

    vector_bytes: int
    lanes_per_phase: int
    phases: tuple[Phase, ...]

    @property
    def wavefronts(self) -> int:
        return sum(p.wavefronts for p in self.phases)

    @property
    def ideal(self) -> int:
        return len(self.phases)

    @property
    def conflicts(self) -> int:
        """Excess wavefronts: ``wavefronts - ideal``."""
        return self.wavefronts - self.ideal

    @property
    def max_way(self) -> int:
        """The worst n-way conflict of any phase (1: conflict-free)."""
        return max((p.wavefronts for p in self.phases), default=0)

    def summary(self) -> str:
        """``W wavefronts for P phases, E excess, worst N-way``."""
        return (f"{self.wavefronts} wavefronts for {self.ideal} phase{'s' if self.ideal != 1 else ''}, "
                f"{self.conflicts} excess, worst {self.max_way}-way")

    def __str__(self) -> str:
        lines = [f"{self.vector_bytes}-byte vectors, {self.lanes_per_phase} lanes per phase: "
                 + self.summary()]
        for k, p in enumerate(self.phases):
            worst = ", ".join(f"bank {b}: {len(w)} words (lanes {','.join(map(str, ls))})"
                              for b, w, ls in p.collisions[:4])
            more = f" (+{len(p.collisions) - 4} more banks)" if len(p.collisions) > 4 else ""
            lines.append(f"  phase {k} (lanes {p.lanes[0]}-{p.lanes[-1]}): {p.wavefronts} wavefronts"
                         + (f"; {worst}{more}" if worst else ""))
        return "\n".join(lines)


def check_element_bits(bits: int) -> None:
    """A :class:`LayoutError` unless ``bits`` is a power of two from 1 to 128."""
    if bits not in (1, 2, 4, 8, 16, 32, 64, 128) or isinstance(bits, bool):
        raise LayoutError(f"element_bits must be a power of two from 1 to 128, got {bits!r}")


def shared_core(smem: SharedLayout) -> CoreLayout:
    """The rank-2 core layout of a shared-memory layout given as CuTe text or objects."""
    core = lower(smem)
    if core.rank != 2:
        raise LayoutError(f"a shared-memory tile for a bank report is rank 2 (M, N), got {core.shape}")
    return core


def _lane_words(core: CoreLayout, bits: int, access: TVLayout, lane: int) -> list[int]:
    """The 32-bit words lane ``lane`` touches; its values must fill one aligned vector (in any
    order: registers may be permuted, as Triton's vectorisation does)."""
    coords = np.array([access.coord(lane, v) for v in range(access.num_values)], dtype=np.int64)
    if (coords >= np.array(core.shape)).any():
        raise LayoutError(f"lane {lane} reads {coords.tolist()}, outside the shared tile {core.shape}")
    offs = np.sort(core.offsets_at(coords))
    if not (np.diff(offs) == 1).all() or int(offs[0]) % len(offs):
        raise LayoutError(f"lane {lane}'s values sit at offsets {offs.tolist()}: not one contiguous, "
                          "aligned vector, so the access is not a single vector load or store")
    start, stop = int(offs[0]) * bits, (int(offs[-1]) + 1) * bits
    return list(range(start // WORD_BITS, (stop - 1) // WORD_BITS + 1))


def bank_conflicts(smem: SharedLayout, element_bits: int, access: TVLayout, warp: int = 0) -> BankReport:
    """The hardware-model bank report of warp ``warp``'s access (lane ``t`` = thread ``32·warp+t``).

    >>> r = bank_conflicts("(8,64):(64,1)", 16, TVLayout.parse("((8,4),8):((1,64),8)", (8, 64)))
    >>> r.vector_bytes, r.lanes_per_phase, r.wavefronts, r.max_way
    (16, 8, 32, 8)
    """
    check_element_bits(element_bits)
    if not isinstance(access, TVLayout):
        raise LayoutError(f"the access is a TVLayout (lane, value) -> (m, n), got {type(access).__name__}")
    core = shared_core(smem)
    vec_bits = access.num_values * element_bits
    if vec_bits % 8 or vec_bits // 8 not in LANES_PER_PHASE:
        raise LayoutError(f"a lane moves {vec_bits} bits; a shared-memory vector is 8, 16, 32, 64 or "
                          "128 bits")
    first = 32 * warp
    if not (0 <= first < access.num_threads):
        raise LayoutError(f"warp {warp} is outside the access's {access.num_threads} threads")
    lanes = range(first, min(first + 32, access.num_threads))
    words = {t: _lane_words(core, element_bits, access, t) for t in lanes}
    step = LANES_PER_PHASE[vec_bits // 8]
    phases = tuple(phase_of(range(s, min(s + step, lanes.stop)), words)
                   for s in range(lanes.start, lanes.stop, step))
    return BankReport(vec_bits // 8, step, phases)


def _rank_gf2(vectors: list[int]) -> int:
    """The dimension of the GF(2) span of bit vectors (ints)."""
    basis: list[int] = []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return len(basis)


def _is_pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def _inverse_bases(core: CoreLayout) -> list[int]:
    """Flattened tensor coordinates ``m + M·n`` of every offset bit, checking GF(2) linearity."""
    m, n = core.shape
    offs = core.offsets()  # C order: m * N + n
    if not (_is_pow2(m) and _is_pow2(n)) or sorted(offs.tolist()) != list(range(m * n)):
        raise UnsupportedError(f"Triton's bank count needs a power-of-two bijective shared layout; "
                               f"{core.name or core.shape} is not")
    flat = np.empty(m * n, dtype=np.int64)
    idx = np.arange(m * n)
    flat[offs] = (idx // n) + m * (idx % n)
    bases = [int(flat[1 << i]) for i in range((m * n).bit_length() - 1)]
    expect = np.zeros(m * n, dtype=np.int64)
    for i, b in enumerate(bases):
        expect ^= np.where((np.arange(m * n) >> i) & 1, b, 0)
    if not (expect == flat).all():
        raise UnsupportedError(f"{core.name or core.shape} is not GF(2)-linear (not a power-of-two "
                               "layout with XOR swizzles), so Triton's bank count does not apply")
    return bases


def triton_bank_conflicts(smem: SharedLayout, element_bits: int, access: TVLayout) -> int:
    """Triton's ``bank_conflicts``: ``2^dim(span(segment bases) ∩ span(kept lane bases)) - 1``.

    The vector is the access's values per lane (Triton picks it as the largest ``v <= 128/bits``
    whose registers hit offsets ``1 … v/2`` while every other basis keeps the low ``log2 v`` offset
    bits zero; pass an access with that many values for parity); lane bases are
    ``access.index(2^i, 0)``, the top ``log2(vector bits / 32)`` of them dropped; segment bases
    are the offsets past 128 bytes.

    >>> from tensorlayout.cute import Swizzle
    >>> sw = ComposedLayout(Swizzle(5, 0, 5), 0, Layout.parse("(32,32):(32,1)"))
    >>> acc = TVLayout.parse("(32,4):(1,32)", (32, 32))
    >>> triton_bank_conflicts(sw, 32, acc), bank_conflicts(sw, 32, acc).max_way
    (0, 4)
    """
    check_element_bits(element_bits)
    core = shared_core(smem)
    bases = _inverse_bases(core)
    seg_start = max(0, (1024 // element_bits).bit_length() - 1)
    lane_count = min(access.num_threads, 32)
    lanes = [access.index(1 << i, 0) for i in range(lane_count.bit_length() - 1)]
    return span_conflicts(bases[seg_start:], lanes, access.num_values * element_bits)


def span_conflicts(segment: Sequence[int], lanes: Sequence[int], vec_bits: int) -> int:
    """Triton's final step: drop the top ``log2(max(vec_bits/32, 1))`` lane bases, then
    ``2^dim(span(segment) ∩ span(lanes)) - 1`` (bases as flattened tensor coordinates).

    >>> span_conflicts([32, 64, 128], [32, 64, 128, 256, 512], 128)
    7
    """
    drop = max(vec_bits // 32, 1).bit_length() - 1
    kept = list(lanes[:len(lanes) - drop] if drop else lanes)
    both = _rank_gf2(list(segment)) + _rank_gf2(kept) - _rank_gf2(list(segment) + kept)
    return (1 << both) - 1


def vector_access(tile: tuple[int, int], element_bits: int, vector_bits: int = 128,
                  along: str = "row") -> TVLayout:
    """A warp's 32 lanes each moving one ``vector_bits`` vector along ``n``: lanes walk the
    ``row`` (then the next rows) or down the ``column`` (then the next vector column).

    >>> acc = vector_access((8, 64), 16, 128, "row")
    >>> [acc.coord(t, 0) for t in (0, 1, 8)]
    [(0, 0), (0, 8), (1, 0)]
    """
    m, n = check_tile(tile)
    check_element_bits(element_bits)
    vec = vector_bits // element_bits if is_int(vector_bits) else 0
    if vec < 1 or vector_bits % element_bits or n % vec or along not in ("row", "column"):
        raise LayoutError(f"cannot lay {vector_bits}-bit vectors of {element_bits}-bit elements "
                          f"along the {along} of a {m}x{n} tile")
    per_row = n // vec
    if along == "row":
        lanes_n = min(per_row, 32)
        thr = Layout((32 // lanes_n, lanes_n), (lanes_n, 1))
    else:
        lanes_m = min(m, 32)
        thr = Layout((lanes_m, 32 // lanes_m), (1, lanes_m))
    tc = make_tiled_copy(universal_copy(vector_bits), element_bits, thr, Layout((1, vec), (0, 1)))
    return tc.tv_s()
