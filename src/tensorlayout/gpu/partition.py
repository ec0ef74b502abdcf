"""What one thread owns: CuTe's ``ThrMMA``/``ThrCopy`` views of a tensor (``partition_A/B/C``,
``partition_S/D``, ``retile_S/D``, the fragment shapes) for a thread index.

A tensor is a :class:`~tensorlayout.cute.Layout` (offsets: the partition is a layout and the
offset its first element moves to) or a :class:`~tensorlayout.cute.CountingTensor` such as
``make_identity_tensor(shape)`` (coordinates: the partition is again a counting tensor, printed
as CuTe prints it). The steps are CuTe's ``thrfrg_*``/``tidfrg_*``: divide by the permutation,
zip-divide by the atom, compose the atom's TV layout, zip-divide by the threads, slice the thread.

>>> from tensorlayout.cute import Int, make_identity_tensor
>>> from tensorlayout.gpu import make_tiled_mma, mma_atom
>>> tm = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"))
>>> print(get_slice(tm, 3).partition_c(make_identity_tensor((Int(16), Int(8)))))
ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

from tensorlayout.cute import (
    CountingTensor,
    Int,
    Layout,
    _,
    coalesce,
    composition,
    logical_divide,
    logical_product,
    make_fragment_like,
    make_layout,
    prepend,
    product_each,
    right_inverse,
    size,
    upcast,
    zip_layouts,
    zipped_divide,
)
from tensorlayout.cute.basis import CoordLayout, basis_add, basis_crd2idx, decode_layout, encode_layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA, _zipped_divide_by_guide

__all__ = ["CopyFit", "ThrCopy", "ThrMMA", "copy_fits", "get_slice", "partition_shape_a", "partition_shape_b",
           "partition_shape_c"]

Tensor = Union[Layout, CountingTensor]  # noqa: UP007 - a runtime alias
#: A partition of a Layout: (the layout, the offset of its first element); of a counting tensor: one.
Part = Union[tuple[Layout, int], CountingTensor]  # noqa: UP007 - a runtime alias


def _static(layout: Layout) -> Layout:
    """A TiledMMA/TiledCopy layout as CuTe has it: a type, so every int in it is static."""
    def st(t: Any) -> Any:
        return tuple(st(x) for x in t) if isinstance(t, tuple) else Int(t)
    return Layout(st(layout.shape), st(layout.stride))


def _flat_coord(layout: Layout, idx: int) -> tuple[Any, ...]:
    """``layout.get_flat_coord(idx)`` for a run-time ``idx``, statics as CuTe keeps them
    (a static extent-1 mode gives ``_0``)."""
    out = []
    for mode in _static(layout).modes():
        hier = _idx2crd(idx, mode.shape, mode.stride)
        out.append(basis_crd2idx(hier, mode.shape, _static(make_layout(mode.shape)).stride))
    return tuple(out)


def _idx2crd(idx: int, shape: Any, stride: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(_idx2crd(idx, s, d) for s, d in zip(shape, stride))
    return Int(0) if shape == 1 else (idx // stride) % shape


class _View:
    """A tensor as the integer algebra sees it, and the way back to the caller's kind."""

    def __init__(self, tensor: Tensor) -> None:
        if isinstance(tensor, CountingTensor):
            self.origin: Any = tensor.origin
            inner = tensor.layout
        elif isinstance(tensor, Layout):
            self.origin, inner = Int(0), tensor
        else:
            raise LayoutError(f"a partition takes a Layout or a CountingTensor, got {type(tensor).__name__}")
        self.counting = isinstance(tensor, CountingTensor)
        self.layout, self.codec = encode_layout(inner)

    def back(self, layout: Layout) -> CoordLayout | Layout:
        return decode_layout(layout, self.codec)

    def slice(self, thr_layout: Layout, thr_crd: Any, rest: Layout) -> Part:
        """The tensor at ``thr_crd`` of ``thr_layout`` (the thread modes), keeping ``rest``."""
        offset = basis_add(self.origin, _offset(self.back(thr_layout), thr_crd))
        part = _static_mode0(self.back(rest))
        if self.counting:
            return CountingTensor(offset, part)
        assert isinstance(part, Layout)
        return part, int(offset)


def _static_mode0(part: CoordLayout | Layout) -> CoordLayout | Layout:
    """The value mode comes from the atom, static in C++ whatever the tensor's extents."""
    shape = part.shape
    assert isinstance(shape, tuple)
    static = (_static(make_layout(shape[0])).shape, *shape[1:])
    return Layout(static, part.stride) if isinstance(part, Layout) else CoordLayout(static, part.stride)


def _offset(layout: CoordLayout | Layout, crd: Any) -> Any:
    return basis_crd2idx(crd, layout.shape, layout.stride)


def _join(*modes: Layout) -> Layout:
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _unfold(lay: Layout, k: int) -> list[Layout]:
    """Mode ``k`` of ``lay`` as its own modes (a leaf mode is one)."""
    mode = lay[k]
    return list(mode.modes()) if isinstance(mode.shape, tuple) else [mode]


# ---------------------------------------------------------------- MMA


def _thrfrg(tm: TiledMMA, ref: Layout, dims: tuple[int, int], atom_tv: Layout) -> Layout:
    """CuTe's ``thrfrg_A/B/C``: ``((ThrV,(Thr0,Thr1)),(FrgV,(Rest0,Rest1)))`` of an operand tensor
    (a ``_`` permutation keeps the mode whole, as C++ does)."""
    t_tensor = logical_divide(ref, tuple(tm.permutation[d] for d in dims))
    a_tile = tuple(make_layout(tm.atom.shape_mnk[d]) for d in dims)
    tv = composition(zipped_divide(t_tensor, a_tile), (atom_tv, _))
    thr = (_, tuple(make_layout(int(size(tm.thr_layout_vmnk[d + 1]))) for d in dims))
    return _zipped_divide_by_guide(tv, thr)


def _check_slice(view: Any, tiled: object, kind: type, threads: Callable[[Any], Any]) -> None:
    """``view`` (a ThrMMA or ThrCopy) slices a ``kind``; ``threads(tiled)``'s size bounds ``view.thr_idx``."""
    if not isinstance(tiled, kind):
        raise LayoutError(f"{type(view).__name__} slices a {kind.__name__}, got {type(tiled).__name__}")
    n = int(size(threads(tiled)))
    if not isinstance(view.thr_idx, int) or not 0 <= view.thr_idx < n:
        raise LayoutError(f"a thread index of this {kind.__name__} is in [0, {n}), got {view.thr_idx!r}")


#: operand -> (tensor modes among M, N, K; ThrLayoutVMNK modes of its threads)
_OPERANDS = {"A": ((0, 2), (1, 3)), "B": ((1, 2), (2, 3)), "C": ((0, 1), (1, 2))}


@dataclass(frozen=True)
class ThrMMA:
    """``tiled_mma.get_slice(thr_idx)``: thread ``thr_idx``'s view of the MMA operands."""

    tiled_mma: TiledMMA
    thr_idx: int

    def __post_init__(self) -> None:
        _check_slice(self, self.tiled_mma, TiledMMA, lambda tm: tm.thr_layout_vmnk)

    def thr_vmnk(self) -> tuple[Any, ...]:
        """``(v, m, n, k)``: the thread's coordinate in ``ThrLayoutVMNK``."""
        return _flat_coord(self.tiled_mma.thr_layout_vmnk, self.thr_idx)

    def _partition(self, operand: str, tensor: Tensor) -> Part:
        dims, thr_modes = _OPERANDS[operand]
        view = _View(tensor)
        atom = self.tiled_mma.atom
        atom_tv = {"A": atom.layout_a, "B": atom.layout_b, "C": atom.layout_c}[operand]
        thr = _thrfrg(self.tiled_mma, view.layout, dims, atom_tv)
        v = self.thr_vmnk()
        crd = (v[0], (v[thr_modes[0]], v[thr_modes[1]]))
        return view.slice(thr[0], crd, _join(thr[1][0], *_unfold(thr[1], 1)))

    def partition_a(self, tensor: Tensor) -> Part:
        """``partition_A``: the thread's ``(FrgV, RestM, RestK)`` of an ``M x K`` tensor."""
        return self._partition("A", tensor)

    def partition_b(self, tensor: Tensor) -> Part:
        """``partition_B``: the thread's ``(FrgV, RestN, RestK)`` of an ``N x K`` tensor."""
        return self._partition("B", tensor)

    def partition_c(self, tensor: Tensor) -> Part:
        """``partition_C``: the thread's ``(FrgV, RestM, RestN)`` of an ``M x N`` tensor."""
        return self._partition("C", tensor)

    def partition_fragment_a(self, tensor: Layout) -> Layout:
        """``partition_fragment_A``: the registers, ``make_fragment_like`` of the partition."""
        return make_fragment_like(_layout_of(self.partition_a(tensor)))

    def partition_fragment_b(self, tensor: Layout) -> Layout:
        return make_fragment_like(_layout_of(self.partition_b(tensor)))

    def partition_fragment_c(self, tensor: Layout) -> Layout:
        """``partition_fragment_C``: accumulators, compact over the partition's shape."""
        return make_layout(_layout_of(self.partition_c(tensor)).shape)


def _layout_of(part: Part) -> Layout:
    if isinstance(part, CountingTensor) or not isinstance(part[0], Layout):
        raise LayoutError("a fragment is made from a partition of a Layout")
    return part[0]


def _partition_shape(tm: TiledMMA, operand: str, shape: Any) -> Any:
    """CuTe's ``partition_shape_A/B/C``: the shape thread 0 gets of a tensor of ``shape``."""
    return _layout_of(ThrMMA(tm, 0)._partition(operand, make_layout(shape))).shape


def partition_shape_a(tm: TiledMMA, shape: Any) -> Any:
    """``partition_shape_A(tiled_mma, (M, K))``."""
    return _partition_shape(tm, "A", shape)


def partition_shape_b(tm: TiledMMA, shape: Any) -> Any:
    """``partition_shape_B(tiled_mma, (N, K))``."""
    return _partition_shape(tm, "B", shape)


def partition_shape_c(tm: TiledMMA, shape: Any) -> Any:
    """``partition_shape_C(tiled_mma, (M, N))``.

    >>> from tensorlayout.gpu import make_tiled_mma, mma_atom
    >>> partition_shape_c(make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1)), (64, 64))
    ((_2, _2), 2, 4)
    """
    return _partition_shape(tm, "C", shape)


# ---------------------------------------------------------------- copy


def _thrval2mn(tc: TiledCopy, trg: Layout) -> Layout:
    """CuTe's ``tile2thrfrg`` map ``((thr),(val)) -> m + M·n`` for the atom's ``trg`` side."""
    ref = tc.atom.val_layout_ref(tc.bits)
    atom_tv = zipped_divide(tc.layout_tv, (int(size(ref[0])), int(size(ref[1]))))
    trg_tv = composition(atom_tv, (composition(right_inverse(ref), trg), _))
    return coalesce(zip_layouts(trg_tv[0], trg_tv[1]), (1, (1, 1)))


@dataclass(frozen=True)
class ThrCopy:
    """``tiled_copy.get_slice(thr_idx)``: thread ``thr_idx``'s view of a copy's source and destination."""

    tiled_copy: TiledCopy
    thr_idx: int

    def __post_init__(self) -> None:
        _check_slice(self, self.tiled_copy, TiledCopy, lambda tc: tc.layout_tv[0])

    def _partition(self, trg: Layout, tensor: Tensor) -> Part:
        view = _View(tensor)
        tc = self.tiled_copy
        tiles = zipped_divide(view.layout, tuple(make_layout(t) for t in tc.tiler))
        tv = composition(tiles, (_thrval2mn(tc, trg), _))  # ((thr,val),(RestM,RestN,...))
        return view.slice(tv[0][0], self.thr_idx, _join(tv[0][1], *_unfold(tv, 1)))

    def partition_s(self, tensor: Tensor) -> Part:
        """``partition_S``: the thread's ``(CPY, CPY_M, CPY_N)`` of the source tensor."""
        return self._partition(self.tiled_copy.atom.val_layout_src(self.tiled_copy.bits), tensor)

    def partition_d(self, tensor: Tensor) -> Part:
        """``partition_D``: the thread's ``(CPY, CPY_M, CPY_N)`` of the destination tensor."""
        return self._partition(self.tiled_copy.atom.val_layout_dst(self.tiled_copy.bits), tensor)

    def retile_s(self, tensor: Layout) -> Layout:
        """``retile_S``: a thread's register tensor regrouped as the copy's ``(CPY, CPY_M, CPY_N)``."""
        return _retile(self.tiled_copy, tensor)

    def retile_d(self, tensor: Layout) -> Layout:
        """``retile_D``: as :meth:`retile_s` (CuTe retiles both sides alike)."""
        return _retile(self.tiled_copy, tensor)


def _retile(tc: TiledCopy, tensor: Layout) -> Layout:
    """CuTe's ``TiledCopy::retile``: the first ``size<0>(tensor)`` values of each thread, in the
    order ``TiledLayout_TV`` gives them, grouped by the atom's values."""
    if not isinstance(tensor, Layout):
        raise LayoutError(f"retile takes a register Layout, got {type(tensor).__name__}")
    rank = tensor.rank()
    v = int(size(tensor[0]))
    atom_vals = int(size(tc.atom.val_layout_ref(tc.bits)[1]))
    num_thr = int(size(tc.layout_tv[0]))
    inv = composition(right_inverse(tc.layout_tv), make_layout(tc.tiler))
    frg_mn = upcast(inv, num_thr * v)
    frg_v = zipped_divide(logical_product(make_layout(v), right_inverse(frg_mn)), make_layout(atom_vals))
    t_tensor = zipped_divide(tensor, tuple(make_layout(s) for s in prepend(product_each(frg_mn.shape), v)))
    v_tensor = composition(t_tensor, (frg_v, _))
    rest = _unfold(v_tensor, 1)[1:rank]
    return _join(v_tensor[0], *rest)


def get_slice(tiled: TiledMMA | TiledCopy, thr_idx: int) -> ThrMMA | ThrCopy:
    """CuTe's ``get_slice(thr_idx)`` / ``get_thread_slice``: one thread's view of a TiledMMA or TiledCopy."""
    if isinstance(tiled, TiledMMA):
        return ThrMMA(tiled, thr_idx)
    if isinstance(tiled, TiledCopy):
        return ThrCopy(tiled, thr_idx)
    raise LayoutError(f"get_slice takes a TiledMMA or a TiledCopy, got {type(tiled).__name__}")



# ---------------------------------------------------------------- does a TiledCopy fit a layout


@dataclass(frozen=True)
class CopyFit:
    """Whether every copy instruction of a TiledCopy moves one aligned, contiguous vector of a
    layout; if not, the first (thread, value) that breaks it (``None`` fields when it fits)."""

    fits: bool
    vector: int  # elements one thread moves per instruction
    thread: int | None = None
    value: int | None = None
    coord: tuple[int, ...] | None = None
    offset: int | None = None
    expected: str = ""

    def __str__(self) -> str:
        if self.fits:
            return f"fits: every instruction moves {self.vector} contiguous, aligned elements"
        return (f"does not fit: thread {self.thread} value {self.value} at {self.coord} lives at offset "
                f"{self.offset}, expected {self.expected}")


def copy_fits(tiled_copy: TiledCopy, layout: Any, side: str = "S") -> CopyFit:
    """Does ``tiled_copy`` fit ``layout`` (a Layout or a swizzled layout, rank 2, tiled by the
    copy's tile) on its source (``"S"``) or destination (``"D"``) side: does each thread's vector of
    the atom's values sit at consecutive offsets aligned to its width (cutlass issue 1858)?

    >>> from tensorlayout.cute import parse_layout
    >>> from tensorlayout.gpu import make_tiled_copy, universal_copy
    >>> tc = make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)), make_layout((1, 8)))
    >>> print(copy_fits(tc, parse_layout("(16,64):(64,1)")))
    fits: every instruction moves 8 contiguous, aligned elements
    >>> print(copy_fits(tc, parse_layout("(16,64):(1,16)")))
    does not fit: thread 0 value 1 at (0, 1) lives at offset 16, expected 1
    """
    if not isinstance(tiled_copy, TiledCopy):
        raise LayoutError(f"copy_fits takes a TiledCopy, got {type(tiled_copy).__name__}")
    if side not in ("S", "D"):
        raise LayoutError(f"side is 'S' (source) or 'D' (destination), got {side!r}")
    atom = tiled_copy.atom.val_layout_src if side == "S" else tiled_copy.atom.val_layout_dst
    vec = int(size(atom(tiled_copy.bits)[1]))
    tv = tiled_copy.tv_s() if side == "S" else tiled_copy.tv_d()
    tile = tv.tile
    shape = tuple(int(size(m)) for m in _modes_of(layout))
    if len(shape) != 2 or any(s % t for s, t in zip(shape, tile)):
        raise LayoutError(f"{layout} is not a rank-2 layout tiled by the copy's {tile[0]}x{tile[1]} tile")
    for rm, rn in ((a, b) for b in range(shape[1] // tile[1]) for a in range(shape[0] // tile[0])):
        for t in range(tv.num_threads):
            for v in range(tv.num_values):
                m, n = tv.coord(t, v)
                crd = (m + rm * tile[0], n + rn * tile[1])
                off = int(layout(*crd))
                if v % vec == 0:
                    first = off
                    if off % vec:
                        return CopyFit(False, vec, t, v, crd, off, f"a multiple of {vec}")
                elif off != first + v % vec:
                    return CopyFit(False, vec, t, v, crd, off, str(first + v % vec))
    return CopyFit(True, vec)


def _modes_of(layout: Any) -> tuple[Any, ...]:
    inner = layout
    while hasattr(inner, "inner"):
        inner = inner.inner
    if not isinstance(inner, Layout):
        raise LayoutError(f"copy_fits takes a Layout or a swizzled layout, got {type(layout).__name__}")
    return inner.modes()
