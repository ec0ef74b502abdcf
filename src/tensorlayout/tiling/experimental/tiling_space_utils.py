"""``GetFlatTilingsForInputSpace``: every candidate tiling of an input space.

>>> get_flat_tilings_for_input_space([3, 4])
[(1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (2, 4), (3, 1), (3, 2), (3, 4)]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from tensorlayout.tiling.experimental.errors import TilingStatusError

__all__ = ["get_flat_tilings_for_input_space", "possible_tile_sizes"]


def possible_tile_sizes(dim_size: int) -> list[int]:
    """Powers of two below ``dim_size``, then ``dim_size`` itself (``[0]`` for 0).

    >>> possible_tile_sizes(11)
    [1, 2, 4, 8, 11]
    """
    if dim_size < 0:
        raise TilingStatusError("kInvalidArgument", "Dimension size must be non-negative.")
    if dim_size == 0:
        return [0]
    sizes = [1 << k for k in range(max(dim_size - 1, 0).bit_length()) if 1 << k < dim_size]
    return [*sizes, dim_size]


def get_flat_tilings_for_input_space(input_space: Sequence[int]) -> list[tuple[int, ...]]:
    """The Cartesian product of :func:`possible_tile_sizes` per dimension, last fastest."""
    return list(itertools.product(*(possible_tile_sizes(n) for n in input_space)))
