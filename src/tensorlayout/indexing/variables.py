"""Indexing-map variables: bounds plus an optional name, and XLA's ``VariableKind`` names.

A dim, range or runtime variable prints by its name when it has one (GPU maps name their
dims ``th_x, th_y, th_z, bl_x, bl_y, bl_z``), else as ``d<i>``, ``s<j>`` or ``rt<k>``.

>>> [v.name for v in dim_vars_from_gpu_grid([128, 1, 1, 4, 1, 1])][:4]
['th_x', 'th_y', 'th_z', 'bl_x']
>>> to_variable_type("th_w"), to_variable_name(VariableKind.BLOCK_Y)
(<VariableKind.WARP_THREAD: 'th_w'>, 'bl_y')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import NamedTuple

from tensorlayout.errors import IndexingError, expect_text
from tensorlayout.indexing.interval import Interval

__all__ = [
    "Variable",
    "VariableKind",
    "dim_vars_from_gpu_grid",
    "dim_vars_from_tensor_sizes",
    "range_vars_from_tensor_sizes",
    "to_variable_name",
    "to_variable_type",
]


class Variable(NamedTuple):
    """One dim, range or runtime variable: its bounds and an optional name (``th_x``...).

    An immutable pair (a named tuple, so hashing and equality are cheap for map caching).

    >>> Variable.of({"bounds": (0, 31), "name": "th_x"})
    Variable(bounds=Interval(0, 31), name='th_x')
    """

    bounds: Interval
    name: str = ""

    @classmethod
    def of(cls, v: object) -> Variable:
        """A Variable from a Variable, an Interval, a ``(lo, hi)`` pair or a ``{"bounds", "name"}`` dict."""
        if isinstance(v, Variable):
            return v
        if isinstance(v, Mapping):
            name = v.get("name", "") or ""
            if not isinstance(name, str):
                raise IndexingError(f"a variable name must be a string, got {name!r}")
            return cls(Interval.of(v.get("bounds")), name)
        return cls(Interval.of(v))


class VariableKind(str, Enum):
    """XLA's ``VariableKind``: what a named variable stands for; the value is its printed name."""

    DEFAULT = "default"
    THREAD_X = "th_x"
    THREAD_Y = "th_y"
    THREAD_Z = "th_z"
    BLOCK_X = "bl_x"
    BLOCK_Y = "bl_y"
    BLOCK_Z = "bl_z"
    WARP = "warp"
    WARP_THREAD = "th_w"


def to_variable_type(name: str) -> VariableKind:
    """XLA's ``ToVariableType``: the kind a variable name stands for (``default`` if none)."""
    expect_text(name, "a variable name")
    try:
        return VariableKind(name)
    except ValueError:
        return VariableKind.DEFAULT


def to_variable_name(kind: VariableKind) -> str:
    """XLA's ``ToVariableName``: the name printed for a kind."""
    return VariableKind(kind).value


def dim_vars_from_gpu_grid(grid_sizes: Sequence[int]) -> list[Variable]:
    """XLA's ``DimVarsFromGPUGrid``: six dims ``th_x..bl_z`` with bounds ``[0, size - 1]``."""
    if len(grid_sizes) != 6:
        raise IndexingError(f"a GPU grid has 6 sizes (threads then blocks), got {len(grid_sizes)}")
    kinds = ("th_x", "th_y", "th_z", "bl_x", "bl_y", "bl_z")
    return [Variable(Interval.of((0, n - 1)), k) for n, k in zip(grid_sizes, kinds)]


def dim_vars_from_tensor_sizes(tensor_sizes: Sequence[int]) -> list[Variable]:
    """XLA's ``DimVarsFromTensorSizes``: one unnamed variable ``[0, size - 1]`` per size.

    >>> dim_vars_from_tensor_sizes([4, 1])
    [Variable(bounds=Interval(0, 3), name=''), Variable(bounds=Interval(0, 0), name='')]
    """
    return [Variable(Interval.of((0, n - 1))) for n in tensor_sizes]


def range_vars_from_tensor_sizes(tensor_sizes: Sequence[int]) -> list[Variable]:
    """XLA's ``RangeVarsFromTensorSizes``: the same variables, used as range variables."""
    return dim_vars_from_tensor_sizes(tensor_sizes)
