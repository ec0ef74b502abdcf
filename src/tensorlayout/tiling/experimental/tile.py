"""XLA's experimental ``DimTile`` and ``Tile`` (``xla/codegen/tiling/experimental/tile.h``).

A tile of an instruction's output is, per dimension, an offset, a size, a stride and an upper
bound (indices at or past it are masked), each an expression over the tiling space's tile ids
``tid_i`` (dimensions ``d_i``), tile sizes ``ts_i`` (symbols ``s_i``) and runtime variables
``rt_k`` (the symbols after the tile sizes). ``replica_ids`` tile the replica id an all-gather
reads from.

>>> from tensorlayout.indexing import var, const
>>> tile = Tile(2, 1, (DimTile(var(0) * var(2), var(2), const(1), const(16)),
...                    DimTile(var(4) + var(1) * var(3), var(3), const(1), const(32))))
>>> print(tile)
(tid_0, tid_1){rt_0} -> offsets [tid_0 * ts_0, rt_0 + tid_1 * ts_1] sizes [ts_0, ts_1] \
strides [1, 1] upper bounds [16, 32]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tensorlayout.core.intmath import row_major_strides
from tensorlayout.indexing import Expr, const, var

__all__ = [
    "DimTile",
    "Tile",
    "delinearize_index",
    "get_default_dim_tile",
    "get_full_dim_tile",
    "linearize_shape",
    "tiles_to_string",
]


@dataclass(frozen=True)
class DimTile:
    """One dimension of a tile: ``offset + stride * [0, size)``, masked at ``upper_bound``."""

    offset: Expr
    size: Expr
    stride: Expr
    upper_bound: Expr

    def to_string(self) -> str:
        """``DimTile::ToString`` (variables unnamed: ``d0``, ``s0``...).

        >>> print(DimTile(const(0), const(4), const(1), const(12)))
        offset [0], size [4], stride [1], upper bound [12]
        """
        return (
            f"offset [{self.offset.to_string()}], size [{self.size.to_string()}], "
            f"stride [{self.stride.to_string()}], upper bound [{self.upper_bound.to_string()}]"
        )

    __str__ = to_string

    def replace(self, mapping: Mapping[Expr, Expr]) -> DimTile:
        """Every field with the sub-expressions in ``mapping`` replaced."""
        return DimTile(
            *(e.replace(dict(mapping)) for e in (self.offset, self.size, self.stride, self.upper_bound))
        )


def variable_names(num_dimensions: int, num_rt_vars: int) -> list[str]:
    """Names by variable id: ``tid_i``, then ``ts_i``, then ``rt_k``."""
    return (
        [f"tid_{i}" for i in range(num_dimensions)]
        + [f"ts_{i}" for i in range(num_dimensions)]
        + [f"rt_{k}" for k in range(num_rt_vars)]
    )


@dataclass(frozen=True)
class Tile:
    """A tile of an instruction output in a tiling space of ``num_dimensions`` dimensions and
    ``num_rt_vars`` runtime variables."""

    num_dimensions: int
    num_rt_vars: int
    dim_tiles: tuple[DimTile, ...]
    replica_ids: tuple[DimTile, ...] = ()

    @property
    def offsets(self) -> tuple[Expr, ...]:
        return tuple(d.offset for d in self.dim_tiles)

    @property
    def sizes(self) -> tuple[Expr, ...]:
        return tuple(d.size for d in self.dim_tiles)

    @property
    def strides(self) -> tuple[Expr, ...]:
        return tuple(d.stride for d in self.dim_tiles)

    @property
    def upper_bounds(self) -> tuple[Expr, ...]:
        return tuple(d.upper_bound for d in self.dim_tiles)

    @classmethod
    def from_fields(
        cls,
        num_dimensions: int,
        num_rt_vars: int,
        offsets: Sequence[Expr],
        sizes: Sequence[Expr],
        strides: Sequence[Expr],
        upper_bounds: Sequence[Expr],
    ) -> Tile:
        """The tile with these per-dimension fields."""
        return cls(
            num_dimensions,
            num_rt_vars,
            tuple(DimTile(*f) for f in zip(offsets, sizes, strides, upper_bounds, strict=True)),
        )

    def clone_with_new_dims(self, dim_tiles: Sequence[DimTile]) -> Tile:
        """``CloneWithNewDims``: the same tile (replica ids kept) with other dimensions."""
        return replace(self, dim_tiles=tuple(dim_tiles))

    def replace_exprs(self, mapping: Mapping[Expr, Expr]) -> Tile:
        """``Replace``: sub-expressions replaced in every dimension and replica id."""
        return replace(
            self,
            dim_tiles=tuple(d.replace(mapping) for d in self.dim_tiles),
            replica_ids=tuple(d.replace(mapping) for d in self.replica_ids),
        )

    def to_string(self, print_variables: bool = True) -> str:
        """``Tile::ToString``: ``(tid_0, ...){rt_0, ...} -> offsets [...] sizes [...] ...``."""
        names = variable_names(self.num_dimensions, self.num_rt_vars)
        head = ""
        if print_variables:
            head = "(" + ", ".join(names[: self.num_dimensions]) + ")"
            if self.num_rt_vars:
                head += "{" + ", ".join(names[2 * self.num_dimensions :]) + "}"
            head += " ->"
        text = head + _fields(self.dim_tiles, names)
        if self.replica_ids:
            text += " replica ids {" + _fields(self.replica_ids, names) + "}"
        return text

    def __str__(self) -> str:
        return self.to_string()


def _fields(dim_tiles: Sequence[DimTile], names: list[str]) -> str:
    def join(exprs: Sequence[Expr]) -> str:
        return ", ".join(e.to_string(names) for e in exprs)

    return (
        f" offsets [{join([d.offset for d in dim_tiles])}] sizes [{join([d.size for d in dim_tiles])}]"
        f" strides [{join([d.stride for d in dim_tiles])}]"
        f" upper bounds [{join([d.upper_bound for d in dim_tiles])}]"
    )


def tiles_to_string(tiles: Sequence[Tile]) -> str:
    """``ToString(Tiles)``: one ``k) <tile>`` line per tile."""
    return "".join(f"{k}) {t}\n" for k, t in enumerate(tiles))


def get_full_dim_tile(dim_size: int) -> DimTile:
    """``GetFullDimTile``: offset 0, size the next power of two, stride 1, bound ``dim_size``."""
    size = dim_size if dim_size <= 1 else 1 << (dim_size - 1).bit_length()
    return DimTile(const(0), const(size), const(1), const(dim_size))


def get_default_dim_tile(dim_id: int, tile_size: Expr, dim_size: int) -> DimTile:
    """``GetDefaultDimTile``: ``tid * ts``, size ``ts``, stride 1, bound ``dim_size``."""
    return DimTile(var(dim_id) * tile_size, tile_size, const(1), const(dim_size))


def linearize_shape(dims: Sequence[int], exprs: Sequence[Expr]) -> Expr:
    """``LinearizeShape``: ``0 + e0 * s0 + e1 * s1 + ...`` with row-major strides."""
    out: Expr = const(0)
    for e, s in zip(exprs, row_major_strides(dims)):
        out = out + e * s
    return out


def delinearize_index(dims: Sequence[int], linear: Expr) -> list[Expr]:
    """``DelinearizeIndex``: ``[r / s0, (r mod s0) / s1, ...]``, the remainder carried on.

    >>> [str(e) for e in delinearize_index([2, 3, 4], var(0))]
    ['v0 / 12', '(v0 mod 12) / 4', 'v0 mod 12 mod 4']
    """
    out: list[Expr] = []
    remainder = linear
    for stride in row_major_strides(dims):
        out.append(remainder // stride)
        remainder = remainder % stride
    return out
