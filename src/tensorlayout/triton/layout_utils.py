"""Triton's ``LayoutUtils`` on :class:`~tensorlayout.triton.LinearLayout` (``reshapeLayout``,
``transposeLinearLayout``, ``zerosLike``, ``supremum``, ``actionRemoveBroadcastedRegs``,
``squareSublayoutIsIdentity``) and ``ColumnAction``, a reordering of one in dim's bases.

>>> from tensorlayout.triton import LinearLayout
>>> ll = LinearLayout.from_bases([("register", [[0, 1], [0, 0], [1, 0]])], ["dim0", "dim1"])
>>> action = action_remove_broadcasted_regs(ll)
>>> print(action)
ColumnAction([0, 2], register, 3)
>>> action.apply(ll).bases
[('register', [[0, 1], [1, 0]])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.errors import LayoutError
from tensorlayout.triton._dims import names_list
from tensorlayout.triton._dims import supremum as _supremum
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["ColumnAction", "action_remove_broadcasted_regs", "reshape_layout",
           "square_sublayout_is_identity", "supremum", "transpose_linear_layout", "zeros_like"]


def _ints(values: Any, what: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or \
            not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise LayoutError(f"{what} must be a list of non-negative ints, got {values!r}")
    return tuple(values)


def _layout(x: Any, what: str) -> LinearLayout:
    if not isinstance(x, LinearLayout):
        raise LayoutError(f"{what} needs a LinearLayout, got {type(x).__name__}")
    return x


def reshape_layout(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """The layout over a tensor of ``shape`` (out dims ``dim0..``) holding its elements in the same
    row-major order (Triton's ``reshapeLayout``: the last dim is the fastest).

    >>> ll = LinearLayout.identity_1d(8, "offset", "dim0")
    >>> reshape_layout(ll, [2, 4]).apply({"offset": 5})
    {'dim0': 1, 'dim1': 1}
    """
    _layout(layout, "reshape_layout")
    shape = _ints(shape, "reshape_layout's shape")
    names = [f"dim{i}" for i in range(len(shape))]
    src = layout.get_out_dim_names()[::-1]
    return layout.transpose_outs(src).reshape_outs(list(zip(names, shape))[::-1]).transpose_outs(names)


def transpose_linear_layout(layout: LinearLayout, order: Sequence[int]) -> LinearLayout:
    """Each basis with its components permuted by ``order`` (out dim ``i`` takes component
    ``order[i]``); names kept, sizes inferred, so the result must be surjective (Triton's
    ``transposeLinearLayout``).

    >>> ll = LinearLayout.from_bases([("lane", [[1, 0], [0, 1], [0, 2]])], ["dim0", "dim1"])
    >>> transpose_linear_layout(ll, [1, 0]).out_dims
    [('dim0', 4), ('dim1', 2)]
    """
    order = _ints(order, "transpose_linear_layout's order")
    if sorted(order) != list(range(_layout(layout, "transpose_linear_layout").num_out_dims)):
        raise LayoutError(f"transpose_linear_layout: order {list(order)} is not a permutation of the "
                          f"{layout.num_out_dims} out dims")
    bases = [(n, [[v[i] for i in order] for v in vs]) for n, vs in layout.bases]
    return LinearLayout.from_bases(bases, layout.get_out_dim_names())


def zeros_like(layout: LinearLayout) -> LinearLayout:
    """The same dims and sizes, every basis zero (Triton's ``zerosLike``).

    >>> zeros_like(LinearLayout.identity_1d(4, "lane", "dim0")).bases
    [('lane', [[0], [0]])]
    """
    _layout(layout, "zeros_like")
    bases = [(n, [[0] * layout.num_out_dims for _ in vs]) for n, vs in layout.bases]
    return LinearLayout.from_bases(bases, layout.get_out_dim_names(), layout.get_out_dim_sizes(), False)


def supremum(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """The shortest list with ``x`` and ``y`` as subsequences, ``x`` first where both fit (Triton's
    ``supremum``, the dim order of a product).

    >>> supremum(["a", "b"], ["a", "c"])
    ['a', 'b', 'c']
    """
    return _supremum(names_list(x, "supremum"), names_list(y, "supremum"))


def square_sublayout_is_identity(layout: LinearLayout, dims: Sequence[str]) -> bool:
    """Whether ``dims`` (in dims and out dims alike) map to themselves as the identity (Triton's
    ``squareSublayoutIsIdentity``; no dims: True).

    >>> square_sublayout_is_identity(LinearLayout.identity_1d(4, "in", "in"), ["in"])
    True
    """
    dims = names_list(dims, "square_sublayout_is_identity")
    if not dims:
        return True
    sub = _layout(layout, "square_sublayout_is_identity").sublayout(dims, dims)
    if any(layout.get_in_dim_size(d) != layout.get_out_dim_size(d) for d in dims):
        return False
    return sub.flattened_bases() == [1 << i for i in range(sub.get_total_in_dim_size_log2())]


@dataclass(frozen=True)
class ColumnAction:
    """Bases of ``in_dim`` reordered or dropped: base ``i`` of the result is base ``action[i]``
    (Triton's ``ColumnAction``).

    >>> act = ColumnAction((2, 0, 1), "register", 3)
    >>> act.apply_values(list("abcdefgh"))
    ['a', 'e', 'b', 'f', 'c', 'g', 'd', 'h']
    """

    action: Sequence[int]
    in_dim: str
    in_size_log2: int

    def __post_init__(self) -> None:
        got = _ints(self.action, "ColumnAction's action")
        if not isinstance(self.in_dim, str) or not isinstance(self.in_size_log2, int) or \
                any(a >= self.in_size_log2 for a in got):
            raise LayoutError(f"ColumnAction({list(got)}, {self.in_dim!r}, {self.in_size_log2!r}): every "
                              "entry must be below in_size_log2")

    def is_identity(self) -> bool:
        """``action`` is ``0, 1, ..., in_size_log2 - 1``."""
        return list(self.action) == list(range(self.in_size_log2))

    def apply(self, layout: LinearLayout) -> LinearLayout:
        """``layout`` with the bases of ``in_dim`` reordered by the action."""
        if _layout(layout, "ColumnAction.apply").get_in_dim_size_log2(self.in_dim) != self.in_size_log2:
            raise LayoutError(f"ColumnAction.apply: in dim '{self.in_dim}' of the layout does not have "
                              f"{self.in_size_log2} bases")
        bases = [(n, [vs[a] for a in self.action] if n == self.in_dim else vs) for n, vs in layout.bases]
        return LinearLayout.from_bases(bases, layout.get_out_dim_names(), layout.get_out_dim_sizes(), False)

    def apply_values(self, values: Sequence[Any]) -> list[Any]:
        """The values (one per input of ``in_dim``, e.g. registers) reordered as the action
        reorders the inputs."""
        if len(values) != 1 << self.in_size_log2:
            raise LayoutError(f"ColumnAction.apply_values needs {1 << self.in_size_log2} values, "
                              f"got {len(values)}")
        perm = self.apply(LinearLayout.identity_1d(len(values), self.in_dim, self.in_dim))
        return [values[perm.apply({self.in_dim: i})[self.in_dim]]
                for i in range(perm.get_in_dim_size(self.in_dim))]

    def inverse(self) -> ColumnAction:
        """The action undoing this one (a permutation only).

        >>> ColumnAction((2, 0, 1), "register", 3).inverse().action
        (1, 2, 0)
        """
        if sorted(self.action) != list(range(self.in_size_log2)):
            raise LayoutError(f"{self} is not a permutation: it has no inverse")
        inv = [0] * len(self.action)
        for i, a in enumerate(self.action):
            inv[a] = i
        return ColumnAction(tuple(inv), self.in_dim, self.in_size_log2)

    def left_compose(self, other: ColumnAction) -> ColumnAction:
        """``other`` then this action: entry ``i`` is ``action[other.action[i]]`` (Triton's
        ``leftCompose``).

        >>> ColumnAction((2, 0, 1), "r", 3).left_compose(ColumnAction((2, 0, 1), "r", 3)).action
        (1, 2, 0)
        """
        if not isinstance(other, ColumnAction) or (other.in_dim, other.in_size_log2, len(other.action)) != \
                (self.in_dim, self.in_size_log2, len(self.action)):
            raise LayoutError("left_compose needs an action on the same in dim, size and length")
        return ColumnAction(tuple(self.action[a] for a in other.action), self.in_dim, self.in_size_log2)

    def __str__(self) -> str:
        return f"ColumnAction([{', '.join(map(str, self.action))}], {self.in_dim}, {self.in_size_log2})"


def action_remove_broadcasted_regs(layout: LinearLayout) -> ColumnAction:
    """The action keeping only the non-zero bases of ``register`` (the first in dim), in order
    (Triton's ``actionRemoveBroadcastedRegs``)."""
    names = _layout(layout, "action_remove_broadcasted_regs").get_in_dim_names()
    if not names or names[0] != "register":
        raise LayoutError(f"action_remove_broadcasted_regs needs 'register' as the first in dim, got {names}")
    bases = layout.bases[0][1]
    return ColumnAction(tuple(i for i, v in enumerate(bases) if any(v)), "register", len(bases))
