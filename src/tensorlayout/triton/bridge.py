"""Triton linear layouts as CuTe layouts and back, where the two notations meet.

A linear layout is a CuTe ``shape:stride`` layout exactly when XOR never differs from ``+``:
every basis sets at most one output bit, and no two bases set the same one. Then each in dim
is a CuTe mode of 2's (coalesced) whose strides are the basis values, read as CuTe's index
of the output: the output dims flattened with ``dim0`` fastest (CuTe's column-major tile
index). Everything else (swizzles, XOR-combined bases) raises :class:`UnsupportedError`.

>>> from tensorlayout.triton import NVMMADistributedLayout
>>> c = NVMMADistributedLayout([2, 0], [1, 1], [16, 8]).to_linear_layout([16, 8])
>>> str(to_cute(c, ["lane", "register"]))
'((4,8),(2,2)):((32,1),(16,8))'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorlayout.cute import Layout
from tensorlayout.cute.int_tuple import flatten
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton._dims import dim_pairs, names_list, split_index
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["from_cute", "to_cute"]


def _mode(strides: list[int]) -> tuple[Any, Any]:
    """A mode of 2's with these strides, adjacent ones merged when the stride doubles (or stays 0)."""
    shape: list[int] = []
    stride: list[int] = []
    for s in strides:
        if shape and stride[-1] * shape[-1] == s:
            shape[-1] *= 2
        else:
            shape.append(2)
            stride.append(s)
    if not shape:
        return 1, 0
    if len(shape) == 1:
        return shape[0], stride[0]
    return tuple(shape), tuple(stride)


def _check_cute_bases(ll: LinearLayout, names: Sequence[str]) -> None:
    seen: dict[int, str] = {}
    for name in names:
        for i, col in enumerate(ll.flattened_bases(name)):
            where = f"{name}={1 << i}"
            if col & (col - 1):
                raise UnsupportedError(f"not a CuTe layout: basis {where} sets several output bits "
                                       f"(index {col}), and XOR of such bases is not a sum of strides")
            if col and col in seen:
                raise UnsupportedError(f"not a CuTe layout: bases {seen[col]} and {where} both set "
                                       f"output bit {col.bit_length() - 1}; XOR cancels where CuTe adds")
            seen[col] = where


def to_cute(ll: LinearLayout, in_dims: Sequence[str] | None = None) -> Layout:
    """The CuTe layout of ``ll``: one mode per in dim, in ``in_dims`` order if given (size-1 in
    dims may be left out).

    >>> str(to_cute(LinearLayout.from_bases([("lane", [[0, 1], [1, 0]])], ["dim0", "dim1"])))
    '(2,2):(2,1)'
    """
    if not isinstance(ll, LinearLayout):
        raise LayoutError(f"to_cute needs a LinearLayout, got {type(ll).__name__}")
    names = ll.get_in_dim_names() if in_dims is None else names_list(in_dims, "to_cute")
    needed = [n for n in ll.get_in_dim_names() if ll.get_in_dim_size(n) > 1]
    if len(set(names)) != len(names) or not set(needed) <= set(names) <= set(ll.get_in_dim_names()):
        raise LayoutError(f"in_dims {names} must list each in dim of size > 1 ({needed}) once")
    if not names:
        raise UnsupportedError("a layout without in dims has no CuTe form")
    _check_cute_bases(ll, names)
    modes = [_mode(ll.flattened_bases(n)) for n in names]
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def _mode_bases(shape: Any, stride: Any) -> list[int]:
    """The bases of one CuTe mode: each leaf ``2**k : s`` gives ``s, 2s, ..., 2**(k-1) s``."""
    bases = []
    for n, s in zip(flatten(shape), flatten(stride)):
        if n & (n - 1) or n <= 0:
            raise UnsupportedError(f"not a linear layout: mode size {n} is not a power of two")
        if s and (s < 0 or s & (s - 1)):
            raise UnsupportedError(f"not a linear layout: stride {s} is not a power of two or 0")
        bases += [s << j if s else 0 for j in range(n.bit_length() - 1)]
    return bases


def from_cute(layout: Layout, in_dims: Sequence[str], out_dims: Sequence[tuple[str, int]]) -> LinearLayout:
    """The linear layout of a CuTe layout with power-of-two shapes and strides whose strides set
    distinct bits; each top-level mode becomes an in dim, the index splits into ``out_dims``.

    >>> print(from_cute(Layout((2, 2), (2, 1)), ["lane"], [("dim0", 2), ("dim1", 2)]))
    <BLANKLINE>
     - lane=1 -> (0, 1)
       lane=2 -> (1, 0)
    where out dims are: [dim0 (size 2), dim1 (size 2)]
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"from_cute needs a CuTe Layout, got {type(layout).__name__}")
    names = names_list(in_dims, "from_cute")
    out_dims = dim_pairs(out_dims, "from_cute")
    modes = len(layout.shape) if isinstance(layout.shape, tuple) and len(names) > 1 else 1
    if len(names) != modes:
        raise LayoutError(f"{len(names)} in dims for a layout with {modes} top-level modes")
    sizes = [s for _, s in out_dims]
    if modes == 1:
        bases = [(names[0], _mode_bases(layout.shape, layout.stride))]
    else:
        assert isinstance(layout.shape, tuple) and isinstance(layout.stride, tuple)
        bases = [(n, _mode_bases(sh, st)) for n, sh, st in zip(names, layout.shape, layout.stride)]
    seen: set[int] = set()
    for _, vals in bases:
        for v in vals:
            if v and v in seen:
                raise UnsupportedError(f"not a linear layout: two strides set output bit "
                                       f"{v.bit_length() - 1}")
            seen.add(v)
    total = 1 << sum(size.bit_length() - 1 for size in sizes)
    if any(v >= total for _, vals in bases for v in vals):
        raise LayoutError(f"a CuTe index exceeds the out dims {sizes}")
    return LinearLayout.from_bases([(n, [list(split_index(v, sizes)) for v in vals]) for n, vals in bases],
                                   [n for n, _ in out_dims], sizes, require_surjective=False)
