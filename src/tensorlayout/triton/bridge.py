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

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import ComposedLayout, Layout, TlaLayout
from tensorlayout.cute.int_tuple import flatten
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.lowering import lower
from tensorlayout.triton._dims import dim_pairs, names_list, split_index
from tensorlayout.triton.linear_layout import LinearLayout
from tensorlayout.xla import Shape, parse_shape

__all__ = ["element_layout", "from_cute", "from_xla", "shared_from_offsets", "shared_layout", "to_cute"]


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


#: How many elements :func:`from_xla` checks one by one at most.
MAX_CHECKED = 1 << 22


def _one_to_one(ll: LinearLayout) -> None:
    """Refuse a layout that is not a bijection between its points and the tensor's elements."""
    if not ll.is_injective():
        raise UnsupportedError("not one offset per element: some elements are held at several points "
                               "(a broadcast, e.g. registers or lanes repeating data)")
    if not ll.is_surjective():
        raise UnsupportedError("not one offset per element: some elements of the tensor are held nowhere")


def element_layout(ll: LinearLayout) -> Layout:
    """Where each element lives, as a CuTe layout ``(dim0, dim1, ...) -> index``: the index of
    the point holding it, the in dims flattened in their order, the first fastest (a distributed
    layout's ``register + registers * (lane + lanes * (warp + ...))``, a shared layout's
    ``offset``). Needs a one-to-one layout whose inverse is a CuTe layout (no XOR swizzle); with
    it, :func:`tensorlayout.convert.cute_to_xla` gives the XLA layout, where one exists.

    >>> from tensorlayout.triton import SwizzledSharedLayout
    >>> str(element_layout(SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout([8, 4])))
    '(8,4):(1,8)'
    """
    if not isinstance(ll, LinearLayout):
        raise LayoutError(f"element_layout needs a LinearLayout, got {type(ll).__name__}")
    _one_to_one(ll)
    flat = ll.invert().reshape_outs([("index", ll.get_total_in_dim_size())])
    return to_cute(flat, ll.get_out_dim_names())


def from_xla(shape: Shape | str) -> LinearLayout:
    """The Triton shared layout (``offset -> (dim0, dim1, ...)``) of an XLA array shape whose
    offsets are linear over GF(2): power-of-two dims, no padding, every element at the XOR of
    its index bits' offsets (any minor_to_major and power-of-two tiles).

    >>> print(from_xla("f16[4,4]{0,1:T(2,2)}"))
    <BLANKLINE>
     - offset=1 -> (1, 0)
       offset=2 -> (0, 1)
       offset=4 -> (2, 0)
       offset=8 -> (0, 2)
     - block is a size 1 dimension
    where out dims are: [dim0 (size 4), dim1 (size 4)]
    """
    return shared_layout(parse_shape(shape) if isinstance(shape, str) else shape)


def shared_layout(x: Shape | Layout | ComposedLayout | TlaLayout | CoreLayout | str) -> LinearLayout:
    """The Triton shared layout of an XLA shape or a CuTe layout (swizzled ones too; anything
    :func:`tensorlayout.lowering.lower` reads, text included) whose offsets are linear over
    GF(2), as :func:`from_xla` says. CuTe's 128-byte swizzle of a 16-bit ``8x64`` tile is
    Triton's NVMMA 128-byte shared layout:

    >>> from tensorlayout.triton import NVMMASharedLayout
    >>> sw128 = NVMMASharedLayout(128, 16).to_linear_layout([8, 64])
    >>> shared_layout("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)") == sw128
    True
    """
    lay = lower(x)
    name = lay.name or str(x)
    dims = tuple(lay.shape)
    if any(n <= 0 or n & (n - 1) for n in dims):
        raise UnsupportedError(f"{name} has no Triton layout: dims {list(dims)} are not all powers of two")
    if lay.size != prod(dims):
        raise UnsupportedError(f"{name} has no Triton layout: its {lay.size} slots do not hold its "
                               f"{prod(dims)} elements one each (padding or holes; a linear layout "
                               "has none)")
    if prod(dims) > MAX_CHECKED:
        raise UnsupportedError(f"{name} has {prod(dims)} elements; a Triton layout of it is checked element "
                               f"by element, so at most {MAX_CHECKED}")
    bases = [(f"dim{d}", [[lay.offset(tuple(1 << b if k == d else 0 for k in range(len(dims))))]
                         for b in range(n.bit_length() - 1)]) for d, n in enumerate(dims)]
    forward = LinearLayout.from_bases(bases, ["offset"], [max(prod(dims), 1)], require_surjective=False)
    _check_linear(name, lay.offsets(), forward, dims)
    return shared_from_offsets(forward)


def shared_from_offsets(forward: LinearLayout) -> LinearLayout:
    """The shared layout ``offset -> (dim0, ...)`` (with Triton's size-1 ``block`` dim) of a
    one-to-one ``(dim0, ...) -> offset`` layout.

    >>> print(shared_from_offsets(from_cute(Layout((2, 2), (2, 1)), ["dim0", "dim1"], [("offset", 4)])))
    <BLANKLINE>
     - offset=1 -> (0, 1)
       offset=2 -> (1, 0)
     - block is a size 1 dimension
    where out dims are: [dim0 (size 2), dim1 (size 2)]
    """
    if not (forward.is_injective() and forward.is_surjective()):
        raise UnsupportedError("no shared layout: the offsets do not hold exactly one element each")
    inverse = forward.invert()
    return LinearLayout.from_bases([*inverse.bases, ("block", [])], inverse.get_out_dim_names(),
                                   inverse.get_out_dim_sizes())


def _check_linear(name: str, offsets: np.ndarray, forward: LinearLayout, dims: tuple[int, ...]) -> None:
    """Every element's offset is the XOR of its bits' offsets (else the layout is not linear)."""
    index = np.indices(dims, dtype=np.int64).reshape(len(dims), prod(dims))  # C order, as offsets()
    linear = np.zeros(index.shape[1], dtype=np.int64)
    for d in range(len(dims)):
        for b, v in enumerate(forward.flattened_bases(f"dim{d}")):
            linear ^= ((index[d] >> b) & 1) * v
    bad = np.flatnonzero(linear != offsets)
    if bad.size:
        idx = tuple(int(i) for i in np.unravel_index(int(bad[0]), dims))
        raise UnsupportedError(f"{name} has no Triton layout: element {idx} is at offset "
                               f"{int(offsets[bad[0]])}, not at the XOR {int(linear[bad[0]])} of its "
                               "index bits' offsets")
