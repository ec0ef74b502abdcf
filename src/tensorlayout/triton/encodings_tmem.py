"""Blackwell tensor memory (TMEM) as Gluon describes it, lowered as Triton 3.9 lowers it.

Tensor memory is 128 lanes (rows) x 512 columns of 32-bit cells per CTA. A
:class:`TensorMemoryLayout` places a 2-D tensor there; its linear layout maps ``row`` (TMEM lane)
and ``col`` (TMEM column) to the tensor's ``dim0``/``dim1``, as Gluon's
``to_linear_layout`` prints it (``_TensorMemoryLinearLayout(rows, cols, shape)``): a zero basis
along ``col`` means an element spans several 32-bit columns (``col_stride``), one along ``row``
at rows 32/64 a copy held for another warp's sub-partition. The layout is for one CTA's TMEM; its
out dims keep the whole tensor's shape (the other CTAs of a ``cga_layout`` hold the rest).

>>> L = TensorMemoryLayout([64, 64], 1).to_linear_layout([64, 64])
>>> [L.apply({"row": r, "col": 0}) for r in (8, 16, 32)]
[{'dim0': 8, 'dim1': 0}, {'dim0': 0, 'dim1': 0}, {'dim0': 16, 'dim1': 0}]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tensorlayout.errors import LayoutError
from tensorlayout.triton.encodings import (
    ensure_layout_not_larger_than,
    fit_cga,
    pow2_list,
    powers_below,
    standard_out_dim_names,
)
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["TensorMemoryLayout", "TensorMemoryScalesLayout"]

Bases = list[list[int]]


def _cta_shape(shape: Sequence[int], cga_layout: Sequence[Sequence[int]]) -> list[int]:
    """The 2-D tensor shape one CTA holds."""
    full = pow2_list(shape, "the tensor-memory shape", 2)
    return fit_cga(full, cga_layout)[1]


def _layout(rows: Bases, cols: Bases, shape: Sequence[int]) -> LinearLayout:
    return LinearLayout.from_bases([("row", rows), ("col", cols)], standard_out_dim_names(2), list(shape),
                                   require_surjective=False)


def _repeat(cols: Bases, start: Sequence[int], reps: Sequence[int]) -> Bases:
    """``cols`` followed by the column bases that repeat a ``start``-sized tile ``reps`` times,
    along dim0 then dim1."""
    return cols + [[start[0] * r, 0] for r in powers_below(reps[0])] + \
        [[0, start[1] * r] for r in powers_below(reps[1])]


@dataclass(frozen=True)
class TensorMemoryLayout:
    """``#ttng.tensor_memory_encoding``: ``block`` = [blockM, blockN] elements per MMA tile
    (blockM 64 or 128), ``col_stride`` 32-bit columns per element step (1, 2 or 4: 32 / bitwidth for
    unpacked data), ``two_ctas`` for the 2-CTA MMA (``cga_layout`` then starts with ``[1, 0]``).

    >>> print(TensorMemoryLayout([128, 64], 2).to_linear_layout([128, 4]).bases[1])
    ('col', [[0, 0], [0, 1], [0, 2]])
    """

    block: Sequence[int]
    col_stride: int
    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)
    two_ctas: bool = False
    fp4_padded: bool = False

    def _check(self) -> tuple[int, int, int]:
        """(blockM, blockN, the column stride in effect), as Gluon's builder checks them."""
        block_m, block_n = pow2_list(self.block, "block", 2)
        if block_m not in (64, 128):
            raise LayoutError(f"blockM must be 64 or 128 but got {block_m}")
        if self.col_stride not in (1, 2, 4) or isinstance(self.col_stride, bool):
            raise LayoutError(f"colStride must be 1, 2, or 4 but got {self.col_stride!r}")
        if self.fp4_padded and self.col_stride != 1:
            raise LayoutError("fp4Padded tensor memory layout requires colStride 1 but got "
                              f"{self.col_stride}")
        if self.two_ctas and (not self.cga_layout or list(self.cga_layout[0]) != [1, 0]):
            raise LayoutError("twoCTAs layout requires the first CGALayout block basis to be [1, 0]")
        return block_m, block_n, 2 if self.fp4_padded else self.col_stride

    def _tile(self, m: int, n: int) -> tuple[Bases, Bases, list[int]]:
        """Row bases, column bases and the [M, N] extent of one CTA's MMA tile."""
        block_m, block_n, stride = self._check()
        block_n = min(block_n, n)
        padding = [[0, 0] for _ in powers_below(stride)]
        if block_m == 128:
            return [[r, 0] for r in powers_below(128)], padding + [[0, c] for c in powers_below(block_n)], \
                [128, block_n]
        if self.two_ctas:  # 64 rows of the tile, then its right half in rows 64..127
            rows = [[r, 0] for r in powers_below(64)] + [[0, block_n // 2]]
            return rows, padding + [[0, c] for c in powers_below(block_n // 2)], [64, block_n]
        extent = [128, block_n] if m > 64 else [64, 2 * block_n] if n > block_n else [64, block_n]
        third = [64, 0] if m > 64 else [0, block_n] if n > block_n else [0, 0]
        rows = [[r, 0] for r in powers_below(16)] + [third, [16, 0], [32, 0]]
        return rows, padding + [[0, c] for c in powers_below(block_n)], extent

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """``row, col -> dim0, dim1`` for a tensor of ``shape`` (Triton's ``tensorMemoryToLinearLayout``);
        raises where Triton 3.9 asserts (one CTA's part smaller than the MMA tile)."""
        m, n = _cta_shape(shape, self.cga_layout)
        rows, cols, extent = self._tile(m, n)
        if m < extent[0] or n < extent[1]:
            raise LayoutError(f"each CTA holds [{m}, {n}] of the tensor {list(shape)}, less than the "
                              f"tensor-memory tile {extent} (Triton 3.9 asserts repsM >= 1 && repsN >= 1)")
        return _layout(rows, _repeat(cols, extent, [m // extent[0], n // extent[1]]), shape)


@dataclass(frozen=True)
class TensorMemoryScalesLayout:
    """``#ttng.tensor_memory_scales_encoding``: the block scales of ``tcgen05.mma`` (one byte per
    scale): 32 rows, copied to the 4 sub-partitions, 4 scales per 32-bit column.

    >>> print(TensorMemoryScalesLayout().to_linear_layout([128, 4]).bases[1])
    ('col', [[0, 1], [0, 2], [32, 0], [64, 0]])
    """

    cga_layout: Sequence[Sequence[int]] = field(default_factory=list)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """``row, col -> dim0, dim1`` for scales of ``shape`` (``tensorMemoryScalesToLinearLayout``)."""
        m, n = _cta_shape(shape, self.cga_layout)
        rows = [[r, 0] for r in powers_below(32)] + [[0, 0], [0, 0]]
        cols = _repeat([[0, 1], [0, 2], [32, 0]], [64, 4], [-(-m // 64), -(-n // 4)])
        tile = _layout(rows, cols, [max(64, 64 * -(-m // 64)), max(4, 4 * -(-n // 4))])
        fitted = dict(ensure_layout_not_larger_than(tile, {"dim0": m, "dim1": n}).bases)
        return _layout(fitted["row"], fitted["col"], shape)
