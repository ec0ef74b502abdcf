"""Gluon's shared-memory layouts beyond the swizzled one: ``NVMMASharedLayout`` (TMA/wgmma),
``SharedLinearLayout`` (offset bases written out) and ``PaddedSharedLayout`` (a linear layout
plus padding after every interval of elements).

>>> L = SharedLinearLayout([[0, 1], [1, 0]]).to_linear_layout([2, 2])
>>> [L.apply({"offset": o, "block": 0}) for o in range(4)]
[{'dim0': 0, 'dim1': 0}, {'dim0': 0, 'dim1': 1}, {'dim0': 1, 'dim1': 0}, {'dim0': 1, 'dim1': 1}]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton.encodings import (
    combine_with_shape,
    ensure_layout_not_smaller_than,
    fit_cga,
    pow2_list,
    powers_below,
    standard_out_dim_names,
)
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["NVMMASharedLayout", "PaddedSharedLayout", "SharedLinearLayout"]


def _vectors(bases: Any, what: str, rank: int | None = None) -> list[list[int]]:
    """``bases`` as lists of non-negative ints, all of one rank."""
    if isinstance(bases, (str, bytes)) or not isinstance(bases, Sequence):
        raise LayoutError(f"{what} must be a list of bases, got {bases!r}")
    out = []
    for b in bases:
        ok = isinstance(b, Sequence) and not isinstance(b, (str, bytes))
        if not ok or any(not isinstance(x, int) or isinstance(x, bool) or x < 0 for x in b):
            raise LayoutError(f"{what} must hold lists of non-negative ints, got {b!r}")
        out.append(list(b))
    ranks = {len(b) for b in out} | ({rank} if rank is not None else set())
    if len(ranks) > 1:
        raise LayoutError(f"{what}: every basis must have the same rank{'' if rank is None else f' {rank}'}, "
                          f"got {out}")
    return out


def _spanned_sizes(bases: Sequence[Sequence[int]], rank: int) -> list[int]:
    """The out sizes Triton infers: the power of two above each dim's largest basis entry."""
    return [1 << max([b[d] for b in bases] + [0]).bit_length() for d in range(rank)]


@dataclass(frozen=True)
class SharedLinearLayout:
    """``#ttg.shared_linear``: shared memory given by its ``offset`` (and ``block``) bases; the
    tensor shape is the one the bases span, and the map must be onto it, one offset per element
    once the zero bases are removed.

    >>> SharedLinearLayout([[1, 0], [0, 2], [0, 4]], [[0, 1]]).shape
    [2, 8]
    """

    offset_bases: Sequence[Sequence[int]]
    block_bases: Sequence[Sequence[int]] = field(default_factory=list)
    alignment: int = 16

    @property
    def rank(self) -> int:
        """The rank of the bases."""
        offsets = _vectors(self.offset_bases, "offset_bases")
        if not offsets or not offsets[0]:
            raise LayoutError("SharedLinearLayout offset_bases must not be empty")
        return len(offsets[0])

    @property
    def shape(self) -> list[int]:
        """The tensor shape the bases span (Gluon's ``SharedLinearLayout.shape``)."""
        rank = self.rank
        return _spanned_sizes(_vectors(self.offset_bases, "offset_bases", rank)
                              + _vectors(self.block_bases, "block_bases", rank), rank)

    def _layout(self) -> LinearLayout:
        rank = self.rank
        if not isinstance(self.alignment, int) or isinstance(self.alignment, bool) or self.alignment <= 0 \
                or self.alignment & (self.alignment - 1):
            raise LayoutError("SharedLinearLayout alignment must be a positive power of two, "
                              f"got {self.alignment!r}")
        bases = [("offset", _vectors(self.offset_bases, "offset_bases", rank)),
                 ("block", _vectors(self.block_bases, "block_bases", rank))]
        ll = LinearLayout.from_bases(bases, standard_out_dim_names(rank), self.shape,
                                     require_surjective=False)
        if not ll.is_surjective():
            raise LayoutError(f"the shared_linear bases {dict(bases)} do not reach every element of "
                              f"{self.shape} "
                              "(Triton 3.9 aborts: 'Layout is expected to be surjective')")
        nonzero = sum(1 for _, vs in bases for v in vs if any(v))
        if nonzero != ll.get_total_out_dim_size_log2():
            raise LayoutError(f"the shared_linear bases {dict(bases)}: after removing the zero bases the "
                              "layout must be bijective")
        return ll

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The ``offset, block`` layout; ``shape`` must be the one the bases span (Triton asserts it)."""
        ll = self._layout()
        if list(shape) != self.shape:
            raise LayoutError(f"a shared_linear layout with bases spanning {self.shape} is for that shape, "
                              f"not {list(shape)} (Triton 3.9 asserts)")
        return ll


@dataclass(frozen=True)
class PaddedSharedLayout:
    """``#ttg.padded_shared``: elements in the order of a linear layout (``offset_bases`` over the
    ``shape`` one CTA holds), with ``padding`` slots inserted after every ``interval`` elements for
    each ``[interval, padding]`` pair (the paddings of all intervals a position ends add up).

    Triton 3.9 gives it no linear layout (``to_linear_layout`` raises, as Triton aborts); the
    offsets are :meth:`offset`, and the layout without padding is :meth:`linear_component`.

    >>> P = PaddedSharedLayout([[2, 1], [4, 2]], [[1], [2], [4]], [], [8])
    >>> [P.offset([i]) for i in range(8)]
    [0, 1, 3, 4, 8, 9, 11, 12]
    """

    interval_padding_pairs: Sequence[Sequence[int]]
    offset_bases: Sequence[Sequence[int]]
    cga_layout: Sequence[Sequence[int]]
    shape: Sequence[int]

    @staticmethod
    def with_identity_for(interval_padding_pairs: Sequence[Sequence[int]], shape: Sequence[int],
                          order: Sequence[int],
                          cga_layout: Sequence[Sequence[int]] = ()) -> PaddedSharedLayout:
        """The padded layout whose elements go in ``order`` (minor dim first) over one CTA's part.

        >>> PaddedSharedLayout.with_identity_for([[4, 1]], [2, 4], [1, 0]).offset_bases
        [[0, 1], [0, 2], [1, 0]]
        """
        dims = pow2_list(shape, "shape")
        if sorted(order) != list(range(len(dims))):
            raise LayoutError(f"order must be a permutation of 0..{len(dims) - 1}, got {list(order)}")
        per_cta = fit_cga(dims, list(cga_layout))[1] if cga_layout else list(dims)
        bases = [[p if i == d else 0 for i in range(len(dims))]
                 for d in order for p in powers_below(per_cta[d])]
        pairs = [list(p) for p in interval_padding_pairs]
        return PaddedSharedLayout(pairs, bases, list(cga_layout), list(dims))

    def _pairs(self) -> list[tuple[int, int]]:
        pairs = [tuple(p) for p in self.interval_padding_pairs]
        if not pairs or any(len(p) != 2 for p in pairs):
            raise LayoutError("PaddedSharedLayout interval_padding_pairs must be a non-empty list of "
                              f"[interval, padding] pairs, got {self.interval_padding_pairs!r}")
        intervals = [i for i, _ in pairs]
        pow2_list(intervals, "PaddedSharedLayout intervals")
        pow2_list([p for _, p in pairs], "PaddedSharedLayout paddings")
        if len(set(intervals)) != len(intervals):
            raise LayoutError(f"PaddedSharedLayout intervals must be distinct, got {intervals}")
        return [(int(i), int(p)) for i, p in pairs]

    def linear_component(self) -> LinearLayout:
        """``offset, block -> dims`` before padding: the element at unpadded offset ``o`` of its CTA.

        >>> P = PaddedSharedLayout([[2, 2]], [[2], [1]], [], [4])
        >>> P.linear_component().apply({"offset": 1, "block": 0})
        {'dim0': 2}
        """
        self._pairs()
        dims = pow2_list(self.shape, "shape")
        if not dims:
            raise LayoutError("PaddedSharedLayout order must not be empty (rank 0)")
        per_cta = fit_cga(dims, self.cga_layout)[1]
        bases = _vectors(self.offset_bases, "offset_bases", len(dims))
        cta = LinearLayout.from_bases([("offset", bases)], standard_out_dim_names(len(dims)), per_cta,
                                      require_surjective=False)
        if not cta.is_invertible():
            raise LayoutError(f"offset_bases {bases} must place one element per offset over {per_cta}")
        return combine_with_shape(cta, dims, self.cga_layout)

    def padded(self, offset: int) -> int:
        """Unpadded offset -> padded offset: the paddings of every interval completed before it.

        >>> PaddedSharedLayout([[64, 8]], [[1]], [], [2]).padded(130)
        146
        """
        return offset + sum(offset // interval * pad for interval, pad in self._pairs())

    def offset(self, coords: Sequence[int]) -> int:
        """The padded shared-memory offset (in elements, within its CTA) of the element at ``coords``."""
        ll = self.linear_component()
        names = ll.get_out_dim_names()
        if len(coords) != len(names) or any(not 0 <= c < s for c, s in zip(coords, ll.get_out_dim_sizes())):
            raise LayoutError(f"coordinates {list(coords)} are outside the shape {list(self.shape)}")
        where = ll.invert().apply(dict(zip(names, coords)))
        return self.padded(where["offset"])

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """Refused as Triton 3.9 refuses it (it aborts): padding is not linear."""
        self.linear_component()
        raise UnsupportedError("padded shared encoding has no linear layout (Triton 3.9 aborts: use "
                               "paddedLinearLayout); PaddedSharedLayout.offset gives its offsets and "
                               "linear_component the layout without padding")


#: NVMMA swizzle width in bytes -> (per_phase, max_phase) of the 8-row swizzle atom.
_NVMMA_PHASES = {32: (4, 2), 64: (2, 4), 128: (1, 8)}


def _fp4_packed(col: int) -> int:
    """fp4-padded columns: of every 16 offsets the upper 8 are padding over the lower 8."""
    return col // 16 * 8 + col % 8


@dataclass(frozen=True)
class NVMMASharedLayout:
    """``#nvmma_shared``: the TMA/wgmma shared layout, CuTe's ``Sw<log2(swz/16),4,3>`` on bytes.

    >>> L = NVMMASharedLayout(128, 16).to_linear_layout([8, 64])
    >>> [L.apply({"offset": o, "block": 0}) for o in (64, 128, 256)]
    [{'dim0': 1, 'dim1': 8}, {'dim0': 2, 'dim1': 16}, {'dim0': 4, 'dim1': 32}]
    """

    swizzle_byte_width: int
    element_bitwidth: int
    rank: int = 2
    transposed: bool = False
    fp4_padded: bool = False
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)

    def _check(self) -> None:
        if self.element_bitwidth not in (8, 16, 32, 64) or isinstance(self.element_bitwidth, bool):
            raise LayoutError(f"element_bitwidth must be 8, 16, 32 or 64, got {self.element_bitwidth!r}")
        if self.swizzle_byte_width not in (0, 32, 64, 128) or isinstance(self.swizzle_byte_width, bool):
            raise LayoutError(f"swizzle_byte_width must be 0, 32, 64 or 128, got {self.swizzle_byte_width!r}")
        if self.fp4_padded and (self.swizzle_byte_width != 128 or self.element_bitwidth != 8):
            raise LayoutError("fp4_padded needs swizzle_byte_width=128 and element_bitwidth=8")

    def _tile(self, rows: int, cols: int) -> list[tuple[int, int]]:
        """(row, col) images of the offset bits over the collapsed [rows, cols] matrix."""
        swz, bits = self.swizzle_byte_width, self.element_bitwidth
        if swz == 0:
            return [(0, c) for c in powers_below(cols)] + [(r, 0) for r in powers_below(rows)]
        per_phase, max_phase = _NVMMA_PHASES[swz]
        tile_cols, pack = 8 * swz // bits, (_fp4_packed if self.fp4_padded else int)
        if cols * (2 if self.fp4_padded else 1) < tile_cols or rows < 8:
            raise LayoutError(f"Illegal shared layout; expected collapsed shapePerCTA to be at least "
                              f"[8, {tile_cols}], collapsedTmaShape: [{rows}, {cols}] (Triton 3.9 aborts)")
        vec = 128 // bits
        bases = [(0, pack(c)) for c in powers_below(tile_cols)]
        bases += [(r, pack(vec * (r // per_phase % max_phase))) for r in (1, 2, 4)]
        bases += [(r, 0) for r in powers_below(rows) if r >= 8]
        covered = tile_cols // 2 if self.fp4_padded else tile_cols
        return bases + [(0, c) for c in powers_below(cols) if c >= covered]

    def _transposed_nd(self, dims: Sequence[int]) -> LinearLayout:
        """Triton's transposed layout of rank > 2: the tile over [the last dim, the others
        collapsed], read row-major as the dims rotated left by one, then the first dim put back
        in front."""
        if self.swizzle_byte_width == 0:
            raise UnsupportedError("a transposed NVMMASharedLayout of rank > 2 without swizzling is not "
                                   "modelled (Triton 3.9 gives it broadcast offsets)")
        contiguous = 8 * self.swizzle_byte_width // self.element_bitwidth
        if min(dims[0] * (2 if self.fp4_padded else 1), 256) < contiguous:
            raise LayoutError(f"getTMABlockShape failed: invalid block shape for TMA operation (dim 0 of a "
                              f"transposed layout holds {dims[0]} elements, the swizzle needs {contiguous}; "
                              "Triton 3.9 aborts)")
        box = [min(d, 256) for d in dims]  # the TMA box: dim 0 is the swizzle's width
        box[0] = contiguous // (2 if self.fp4_padded else 1)
        cols = 1
        for d in box[:-1]:
            cols *= d
        rotated = [*box[1:], box[0]]
        bases = []
        for r, c in self._tile(box[-1], cols):
            flat, v = r * cols + c, list[int]()
            for size in reversed(rotated):
                v.insert(0, flat % size)
                flat //= size
            bases.append([v[-1], *v[:-1]])
        names = standard_out_dim_names(len(dims))
        cta = LinearLayout.from_bases([("offset", bases)], names, box)
        return ensure_layout_not_smaller_than(cta, dict(zip(names, dims)))

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The ``offset -> element`` layout; raises where Triton 3.9 aborts (shape below the atom)."""
        self._check()
        full = pow2_list(shape, "the tensor shape", self.rank)
        dims = fit_cga(full, self.cga_layout)[1]
        if len(dims) == 1:
            line = LinearLayout.identity_1d(dims[0], "offset", "dim0")
            return combine_with_shape(line, full, self.cga_layout)
        if self.transposed and len(dims) > 2:
            return combine_with_shape(self._transposed_nd(dims), full, self.cga_layout)
        col_dim = 0 if self.transposed else len(dims) - 1
        row_dims = [1] if self.transposed else list(range(len(dims) - 1))
        rows = 1
        for d in row_dims:
            rows *= dims[d]
        bases = []
        for r, c in self._tile(rows, dims[col_dim]):
            v = [0] * len(dims)
            v[col_dim] = c
            for d in reversed(row_dims):
                v[d], r = r % dims[d], r // dims[d]
            bases.append(v)
        names = standard_out_dim_names(len(dims))
        cta = LinearLayout.from_bases([("offset", bases)], names, list(dims))
        return combine_with_shape(cta, full, self.cga_layout)
