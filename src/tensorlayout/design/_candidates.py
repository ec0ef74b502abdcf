"""Candidate shared-memory layouts of an ``(MN, K)`` tile, their physical byte addresses, and their
spellings in CuTe (text, C++, DSL) and Triton.

Units, exactly: a candidate's swizzle ``Sw<B,M,S>`` (``Sw<B,4,3>`` for the atoms) acts on **byte
addresses**, as the hardware, TMA and CuTe's ``Sw<B,4,3> o smem_ptr[16b](unset) o L`` atoms once
bound to a shared pointer do; on ``2^e``-byte element offsets it is ``Sw<B,M-e,S>``, the form
CUTLASS's SM80 configs write as ``composition(Swizzle<3,3,3>{}, ...)`` for 16-bit types. Printed
as a layout function (no pointer), ``Sw<3,4,3> o smem_ptr[16b](unset) o L`` applies the swizzle
to element offsets: that is not the address, so offsets here always come from :meth:`Candidate.byte_offsets`.

>>> c = Candidate("K", "atom", 2, 64, 0, (128, 32), 16)
>>> c.name, c.atom_bytes, c.byte_offsets()[:3, 0].tolist()
('GMMA::Layout_K_SW64_Atom<half_t>', 512, [0, 64, 144])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tensorlayout.cute import Layout
from tensorlayout.cute import tile_to_shape as cute_tile_to_shape
from tensorlayout.cute.swizzle import ComposedLayout, SmemPtrFlag, Swizzle
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.cxx_names import static_layout
from tensorlayout.gpu.smem_atoms import smem_layout_atom
from tensorlayout.triton.encodings import SwizzledSharedLayout
from tensorlayout.triton.encodings_shared import NVMMASharedLayout, PaddedSharedLayout

__all__ = ["Candidate", "candidates", "padded_candidates"]

_ATOM_NAMES = {0: "INTER", 1: "SW32", 2: "SW64", 3: "SW128"}
#: The ``M`` of the byte swizzles ``Sw<B,M,S>`` tried over plain rows (16-, 32- and 64-byte chunks).
SWIZZLE_BASES = (4, 5, 6)
#: Padding tried (bytes per row) when no swizzle works.
PADDINGS = (4, 8, 16, 32, 64)


@dataclass(frozen=True)
class Candidate:
    """One layout of the ``tile``: ``base`` ``"atom"`` (a GMMA/UMMA atom of ``width`` bytes per row,
    8 rows, ``tile_to_shape``'d MN first, or K first with ``k_first``, as Triton stacks a transposed
    ``nvmma_shared``), ``"plain"`` (rows of the whole contiguous extent) or ``"padded"`` (plain rows
    ``pad`` bytes apart more); ``Sw<bits,base_m,shift>`` on byte addresses."""

    major: str
    base: str
    bits: int
    width: int
    pad: int
    tile: tuple[int, int]
    element_bits: int
    ctype: str = "half_t"
    base_m: int = 4
    shift: int = 3
    k_first: bool = False

    @property
    def swizzle(self) -> Swizzle:
        """The swizzle, on byte addresses."""
        return Swizzle(self.bits, self.base_m, self.shift)

    @property
    def element_bytes(self) -> int:
        return self.element_bits // 8

    @property
    def contig(self) -> int:
        """The tile dimension contiguous in memory (1 for K-major)."""
        return 1 if self.major == "K" else 0

    @property
    def atom_bytes(self) -> int:
        """The size that orders candidates: the bytes of the repeating atom (8 rows of an atom, the
        swizzle's span over plain rows, one row for an unswizzled plain layout), padding added."""
        row = self.tile[self.contig] * self.element_bytes
        if self.base == "atom":
            return 8 * self.width
        if self.base == "plain":
            return row if not self.bits else 1 << (self.bits + self.base_m + self.shift)
        return row + self.pad

    @property
    def atom_name(self) -> str | None:
        """CuTe's name of the atom a GMMA-atom candidate tiles (None for the others)."""
        if self.base != "atom":
            return None
        return f"GMMA::Layout_{self.major}_{_ATOM_NAMES[self.bits]}_Atom<{self.ctype}>"

    @property
    def name(self) -> str:
        """CuTe's atom name where the candidate is a GMMA atom tiled, else a description."""
        if self.atom_name is not None:
            return self.atom_name + (" tiled K first" if self.k_first else "")
        if self.base == "plain":
            return f"{self.swizzle} (bytes) over plain rows" if self.bits else "plain rows"
        return f"plain rows padded by {self.pad} B"

    def _row_stride(self) -> int:
        """Elements between rows of a plain or padded layout."""
        return self.tile[self.contig] + self.pad // self.element_bytes

    @cached_property
    def inner(self) -> Layout:
        """The layout over element offsets, swizzle left out: ``tile_to_shape`` of the atom or the rows."""
        if self.atom_name is not None:
            atom = smem_layout_atom(self.atom_name)
            if not isinstance(atom.inner, Layout):
                raise AssertionError(f"{self.atom_name} is not a swizzled layout")
            return static_layout(cute_tile_to_shape(atom.inner, self.tile, (1, 0) if self.k_first else None))
        stride = (self._row_stride(), 1) if self.major == "K" else (1, self._row_stride())
        return static_layout(Layout(self.tile, stride))

    @cached_property
    def _bytes(self) -> np.ndarray:
        elems = self.inner.offsets().reshape(self.tile[1], self.tile[0]).T
        table = np.ascontiguousarray(self.swizzle(elems * self.element_bytes))
        table.setflags(write=False)
        return table

    def byte_offsets(self) -> np.ndarray:
        """``table[mn, k]``: the byte address of every element (the swizzle on bytes; read-only)."""
        return self._bytes

    def element_offsets(self) -> np.ndarray:
        """``table[mn, k]``: the physical element index (byte address / element bytes)."""
        return self.byte_offsets() // self.element_bytes

    @property
    def allocated_bytes(self) -> int:
        return int(self.byte_offsets().max()) + self.element_bytes

    # ------------------------------------------------------------- spellings
    def cute_layout(self) -> ComposedLayout | Layout:
        """The layout as CuTe writes it for shared memory: the byte swizzle over a ``smem_ptr`` flag
        (as its GMMA atoms), or the plain layout where nothing is swizzled."""
        if not self.bits and self.base != "atom":
            return self.inner
        return ComposedLayout(self.swizzle, SmemPtrFlag(self.element_bits), self.inner)

    def cute_text(self) -> str:
        """CuTe's print of :meth:`cute_layout`."""
        return str(self.cute_layout())

    def _element_swizzle(self) -> tuple[int, int, int]:
        """The swizzle on element offsets: ``Sw<B, M - log2(bytes), S>``."""
        return self.bits, self.base_m - (self.element_bytes.bit_length() - 1), self.shift

    def _atom_layout(self) -> Layout:
        """The repeating unswizzled atom: 8 rows of ``width`` bytes (or one row of the tile)."""
        w = (self.width if self.base == "atom" else self.tile[self.contig] * self.element_bytes)
        w //= self.element_bytes
        rows = 8 if self.base == "atom" else self.tile[1 - self.contig]
        return static_layout(Layout((rows, w), (w, 1)) if self.major == "K" else Layout((w, rows), (1, w)))

    def cute_cpp(self) -> str:
        """C++ building the layout (``composition`` of the element swizzle and the atom,
        ``tile_to_shape``'d); bind it to a ``smem_ptr`` of the element type."""
        shape = f"Shape<_{self.tile[0]},_{self.tile[1]}>{{}}"
        if not self.bits and self.base != "atom":
            st = _ints(self.inner.stride)
            return f"make_layout({shape}, Stride<_{st[0]},_{st[1]}>{{}})"
        b, m, s = self._element_swizzle()
        a = self._atom_layout()
        sh, st = _ints(a.shape), _ints(a.stride)
        atom = (f"composition(Swizzle<{b},{m},{s}>{{}}, "
                f"Layout<Shape<_{sh[0]},_{sh[1]}>,Stride<_{st[0]},_{st[1]}>>{{}})")
        return f"tile_to_shape({atom}, {shape}{', Step<_2,_1>{}' if self.k_first else ''})"

    def cute_dsl(self) -> str:
        """CuTe DSL (Python) building the same layout (element-offset swizzle)."""
        tile = f"({self.tile[0]}, {self.tile[1]})"
        if not self.bits and self.base != "atom":
            return f"cute.make_layout({tile}, stride={_ints(self.inner.stride)})"
        b, m, s = self._element_swizzle()
        a = self._atom_layout()
        shape, stride = _ints(a.shape), _ints(a.stride)
        return (f"cute.tile_to_shape(cute.make_composed_layout(cute.make_swizzle({b}, {m}, {s}), 0, "
                f"cute.make_layout({shape}, stride={stride})), {tile}, {(1, 0) if self.k_first else (0, 1)})")

    def _triton_options(self) -> list[tuple[str, object]]:
        """Triton encodings that may spell this layout (each checked by value before it is given)."""
        order = [1, 0] if self.major == "K" else [0, 1]
        eb = self.element_bits
        out: list[tuple[str, object]] = []
        if self.base == "atom":
            width = 0 if self.bits == 0 else self.width
            out.append((f"#ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = "
                        f"{str(self.major == 'MN').lower()}, elementBitWidth = {eb}}}>",
                        NVMMASharedLayout(width, eb, 2, self.major == "MN")))
        if self.base != "padded":
            row = self.tile[self.contig] * self.element_bytes
            vec = (1 << self.base_m) // self.element_bytes
            per_phase = max(1, (1 << (self.base_m + self.shift)) // row)
            max_phase = 1 << self.bits
            out.append((f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, "
                        f"maxPhase = {max_phase}, order = [{order[0]}, {order[1]}]}}>",
                        SwizzledSharedLayout(vec, per_phase, max_phase, order)))
        else:
            interval, pad = self.tile[self.contig], self.pad // self.element_bytes
            out.append((f"#ttg.padded_shared<[{interval}:+{pad}] {{order = [{order[0]}, {order[1]}], "
                        f"shape = [{self.tile[0]}, {self.tile[1]}]}}>",
                        PaddedSharedLayout.with_identity_for([[interval, pad]], list(self.tile), order)))
        return out

    def triton(self) -> tuple[str, ...]:
        """The Triton shared encodings whose offsets equal this layout's (checked element by element)."""
        mine = self.element_offsets()
        tables = [(text, _triton_table(enc, self.tile)) for text, enc in self._triton_options()]
        return tuple(text for text, t in tables if t is not None and np.array_equal(t, mine))


def _ints(t: object) -> tuple[int, ...]:
    """A flat pair of (static) ints as plain ints."""
    return tuple(int(x) for x in t)  # type: ignore[attr-defined]


def _triton_table(enc: object, tile: tuple[int, int]) -> np.ndarray | None:
    """``table[d0, d1]``: the element offset a Triton shared encoding gives, None where Triton refuses."""
    try:
        if isinstance(enc, PaddedSharedLayout):
            ll = enc.linear_component()
            where = ll.apply_batch({"offset": np.arange(tile[0] * tile[1]), "block": 0})
            table = np.empty(tile, dtype=np.int64)
            table[where["dim0"], where["dim1"]] = [enc.padded(int(o)) for o in range(tile[0] * tile[1])]
            return table
        ll = enc.to_linear_layout(list(tile))  # type: ignore[attr-defined]
    except LayoutError:
        return None
    where = ll.apply_batch({"offset": np.arange(tile[0] * tile[1]), "block": 0})
    table = np.empty(tile, dtype=np.int64)
    table[where["dim0"], where["dim1"]] = np.arange(tile[0] * tile[1])
    return table


def _order(c: Candidate) -> tuple[bool, int, bool]:
    """Among layouts of one size: CuTe's atoms (MN first before K first), then the rest."""
    return c.base != "atom", c.atom_bytes, c.k_first


def candidates(tile: tuple[int, int], element_bits: int, major: str, ctype: str) -> list[Candidate]:
    """The swizzled candidates, smallest first: plain rows, the GMMA atoms (INTER, SW32, SW64, SW128)
    whose rows fit the contiguous extent, and every byte swizzle ``Sw<B,M,S>`` over plain rows
    (``B`` 1-3, ``M`` in :data:`SWIZZLE_BASES`, its source bits row bits of the tile), each layout
    once (an atom's name first)."""
    c = 1 if major == "K" else 0
    row = tile[c] * element_bits // 8
    if row % 16 or tile[1 - c] % 8:
        raise LayoutError(f"a {tile[0]}x{tile[1]} {major}-major tile of {element_bits}-bit elements needs "
                          "rows of a multiple of 16 bytes and a multiple of 8 rows")
    out = [Candidate(major, "plain", 0, row, 0, tile, element_bits, ctype)]
    out += [Candidate(major, "atom", b, 16 << b, 0, tile, element_bits, ctype, k_first=kf)
            for b in range(4) if row % (16 << b) == 0 for kf in (False, True)]
    total = (tile[0] * tile[1] * element_bits // 8).bit_length() - 1
    row_bit = (row - 1).bit_length()  # the first address bit that counts rows
    out += [Candidate(major, "plain", b, row, 0, tile, element_bits, ctype, m, s)
            for b in (1, 2, 3) for m in SWIZZLE_BASES for s in range(max(b, row_bit - m), total - m - b + 1)]
    seen: set[bytes] = set()
    unique = []
    for cand in sorted(out, key=_order):  # an atom names a layout first
        key = cand.byte_offsets().tobytes()
        if key not in seen:
            seen.add(key)
            unique.append(cand)
    return sorted(unique, key=lambda x: (x.atom_bytes, *_order(x)))


def padded_candidates(tile: tuple[int, int], element_bits: int, major: str, ctype: str) -> list[Candidate]:
    """Plain rows padded by each of :data:`PADDINGS` bytes that is a whole number of elements."""
    c = 1 if major == "K" else 0
    row = tile[c] * element_bits // 8
    return [Candidate(major, "padded", 0, row, p, tile, element_bits, ctype)
            for p in PADDINGS if p * 8 % element_bits == 0]
