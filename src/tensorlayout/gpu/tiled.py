"""``make_tiled_mma`` and ``make_tiled_copy``: an atom repeated over threads and values, as CuTe does.

The tiled TV layouts are computed with CuTe's own algebra steps (``mma_atom.hpp`` /
``copy_atom.hpp``): divide the tile by the permutation, zip-divide by the atom, compose the
atom's TV layout into the atom mode, zip-divide the rest by the thread layout, then map the
thread index back through ``right_inverse`` of ``ThrLayoutVMNK``.

>>> from tensorlayout.gpu.atoms import mma_atom
>>> t = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
>>> t.tile_size(), str(t.thr_layout_vmnk)
((32, 16, 16), '(_32,_2,_2,_1):(_1,_32,_64,_0)')
>>> str(t.layout_c_tv())
'((_4,_8,_2,_2),((_2,_2),(_1,_1))):((_64,_1,_16,_256),((_32,_8),(_0,_0)))'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tensorlayout.cute import (
    Layout,
    _,
    coalesce,
    complement,
    composition,
    logical_divide,
    make_layout,
    raked_product,
    right_inverse,
    size,
    tiled_product,
    zip_layouts,
    zipped_divide,
)
from tensorlayout.cute.int_tuple import Int, format_int_tuple
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atoms import CopyAtom, MMAAtom
from tensorlayout.gpu.cxx_names import static_layout
from tensorlayout.gpu.tv import TVLayout, offset_range

__all__ = ["TiledCopy", "TiledMMA", "make_tiled_copy", "make_tiled_copy_a", "make_tiled_copy_b",
           "make_tiled_copy_c", "make_tiled_mma"]

Perm = Any  # None (CuTe's ``_``), an int, or a Layout


def _as_thr_layout(thr: Layout | tuple[int, ...]) -> Layout:
    """CuTe's ``append<3>(thr_layout, Layout<_1,_0>{})``: pad the M,N,K thread layout to rank 3."""
    lay = thr if isinstance(thr, Layout) else make_layout(tuple(thr))
    modes = list(lay.modes())
    if len(modes) > 3:
        raise LayoutError(f"a TiledMMA thread layout has rank <= 3 (M, N, K), got {lay}")
    modes += [Layout(1, 0)] * (3 - len(modes))
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _check_perm(p: Perm) -> Perm:
    if p is None or p is _ or isinstance(p, Layout):
        return None if p is _ else p
    if isinstance(p, int) and not isinstance(p, bool) and p > 0:
        return p
    raise LayoutError(f"a permutation entry is None ('_'), a positive int or a Layout, got {p!r}")


def _join(modes: list[Layout]) -> Layout:
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _zip2_by(lay: Layout, guide: Any) -> tuple[Layout, Layout]:
    """CuTe's ``zip2_by``: a non-tuple guide (``_`` included) splits a rank-2 mode into (tile, rest)."""
    modes = list(lay.modes())
    if not isinstance(guide, tuple):
        if len(modes) != 2:
            raise LayoutError(f"zip2_by: expected a rank-2 (tile, rest) mode, got {lay}")
        return modes[0], modes[1]
    split = [_zip2_by(m, g) for m, g in zip(modes, guide)]
    return _join([t for t, _r in split]), _join([r for _t, r in split] + modes[len(guide):])


def _zipped_divide_by_guide(lay: Layout, tiler: tuple[Any, ...]) -> Layout:
    """``zipped_divide`` where a ``_`` entry splits a rank-2 mode as (tile, rest), as C++ does.

    (``tensorlayout.cute.zipped_divide`` keeps such a mode whole in the tile part.)
    """
    tiles, rests = _zip2_by(logical_divide(lay, tiler), tiler)
    return _join([tiles, rests])


def _fmt_perm(p: Perm) -> str:
    if p is None:
        return "_"
    return str(static_layout(p)) if isinstance(p, Layout) else str(Int(p))


def _tv(layout: Layout, rows: int, cols: int, name: str) -> TVLayout:
    """A TV layout over ``rows x cols``, more columns if a permutation layout reaches past the tile
    (a permutation whose cosize exceeds its size: CuTe does not check this)."""
    return TVLayout(layout, (rows, max(cols, offset_range(layout)[1] // rows + 1)), name)


@dataclass(frozen=True)
class TiledMMA:
    """An MMA atom tiled over ``thr_layout_vmnk`` threads and the ``permutation`` of M, N, K."""

    atom: MMAAtom
    thr_layout_vmnk: Layout
    permutation: tuple[Perm, Perm, Perm]

    def _perm_tile(self, i: int) -> Perm:
        """CuTe's ``permutation_mnk<I>``: the permutation, or atom size times thread extent."""
        p = self.permutation[i]
        return self.atom.shape_mnk[i] * int(size(self.thr_layout_vmnk[i + 1])) if p is None else p

    def tile_size(self) -> tuple[int, int, int]:
        """``(tile_size<0>, tile_size<1>, tile_size<2>)``: the M, N, K extents the TiledMMA covers."""
        return tuple(int(size(p)) if isinstance(p, Layout) else int(p)  # type: ignore[return-value]
                     for p in (self._perm_tile(i) for i in range(3)))

    def _thrfrg(self, ref: Layout, dims: tuple[int, int], atom_tv: Layout) -> Layout:
        """``((ThrV,(Thr0,Thr1)),(FrgV,(Rest0,Rest1)))`` of the (dim0, dim1) operand tile."""
        t_tensor = logical_divide(ref, tuple(self._perm_tile(d) for d in dims))
        a_tile = tuple(make_layout(self.atom.shape_mnk[d]) for d in dims)
        tv = composition(zipped_divide(t_tensor, a_tile), (atom_tv, _))
        thr = (_, tuple(make_layout(int(size(self.thr_layout_vmnk[d + 1]))) for d in dims))
        return _zipped_divide_by_guide(tv, thr)

    def _thridx_to_thrid(self) -> Layout:
        """``thr_idx -> (ThrV,ThrM,ThrN,ThrK)``, CuTe's completed right inverse of ``ThrLayoutVMNK``."""
        v = self.thr_layout_vmnk
        full = make_layout(v, complement(v))
        return composition(Layout((int(size(v)), 1), (1, 0)), right_inverse(full))

    def _ref(self, i: int, j: int) -> Layout:
        ts = self.tile_size()
        return make_layout((ts[i], ts[j]))

    def layout_c_tv(self) -> Layout:
        """``get_layoutC_TV()``: ``(thr_idx, val) -> m + M·n`` of the tiled M x N tile."""
        frg = self._thrfrg(self._ref(0, 1), (0, 1), self.atom.layout_c)
        return static_layout(composition(frg, (self._thridx_to_thrid(), _)))

    def _operand_tv(self, dims: tuple[int, int], atom_tv: Layout, strides: tuple[int, int]) -> Layout:
        v = self.thr_layout_vmnk
        frg = self._thrfrg(self._ref(*dims), dims, atom_tv)
        widen = Layout((int(size(v[1])), int(size(v[2]))), strides)
        tv = composition(composition(frg, ((_, (widen, _)), _)), (self._thridx_to_thrid(), _))
        return static_layout(tv)

    def layout_a_tv(self) -> Layout:
        """``get_layoutA_TV()``: ``(thr_idx, val) -> m + M·k`` (threads along N see the same A)."""
        return self._operand_tv((0, 2), self.atom.layout_a, (1, 0))

    def layout_b_tv(self) -> Layout:
        """``get_layoutB_TV()``: ``(thr_idx, val) -> n + N·k`` (threads along M see the same B)."""
        return self._operand_tv((1, 2), self.atom.layout_b, (0, 1))

    def tv_a(self) -> TVLayout:
        """A's :class:`TVLayout` over ``M x K`` (widened where a permutation reaches past it)."""
        return _tv(self.layout_a_tv(), self.tile_size()[0], self.tile_size()[2], f"{self.atom.name} A")

    def tv_b(self) -> TVLayout:
        """B's :class:`TVLayout` over ``N x K``."""
        return _tv(self.layout_b_tv(), self.tile_size()[1], self.tile_size()[2], f"{self.atom.name} B")

    def tv_c(self) -> TVLayout:
        """C's :class:`TVLayout` over ``M x N``."""
        return _tv(self.layout_c_tv(), self.tile_size()[0], self.tile_size()[1], f"{self.atom.name} C")

    def __str__(self) -> str:
        perm = ",".join(_fmt_perm(p) for p in self.permutation)
        return (f"TiledMMA\n  ThrLayoutVMNK:  {self.thr_layout_vmnk}\n  PermutationMNK: ({perm})\n"
                f"{self.atom}")


def make_tiled_mma(atom: MMAAtom, thr_layout: Layout | tuple[int, ...] = (1, 1, 1),
                   permutation: tuple[Perm, ...] = (None, None, None)) -> TiledMMA:
    """CuTe's ``make_tiled_mma(atom, thr_layout, permutations)``; ``None`` stands for ``_``.

    >>> from tensorlayout.gpu.atoms import mma_atom
    >>> make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 1, 1), (32, 16, 16)).tile_size()
    (32, 16, 16)
    """
    if not isinstance(atom, MMAAtom):
        raise LayoutError(f"make_tiled_mma needs an MMAAtom, got {type(atom).__name__}")
    perm = tuple(_check_perm(p) for p in permutation)
    if len(perm) > 3:
        raise LayoutError(f"a permutation has at most 3 entries (M, N, K), got {len(perm)}")
    perm = perm + (None,) * (3 - len(perm))
    thr = _as_thr_layout(thr_layout)
    if thr.size() < 1:
        raise LayoutError(f"a TiledMMA needs at least one thread along each of M, N, K, got {thr}")
    vmnk = static_layout(tiled_product(atom.thr_id, thr))
    return TiledMMA(atom, vmnk, perm)


@dataclass(frozen=True)
class TiledCopy:
    """A copy atom tiled by ``layout_tv`` (``(thr_idx, val_idx) -> m + M·n`` of ``tiler``)."""

    atom: CopyAtom
    bits: int
    layout_tv: Layout
    tiler: tuple[int, ...]

    def __post_init__(self) -> None:
        ref = self.atom.val_layout_ref(self.bits)
        for k, what in ((0, "thrs"), (1, "vals")):
            if int(size(self.layout_tv[k])) % int(size(ref[k])):
                raise LayoutError(f"TiledCopy uses too few {what} for {self.atom.name}: "
                                  f"{size(self.layout_tv[k])} is not a multiple of {size(ref[k])} "
                                  f"(layout {self.layout_tv}, atom {ref})")

    def _ref2trg(self, trg: Layout) -> Layout:
        return composition(right_inverse(self.atom.val_layout_ref(self.bits)), trg)

    def _tile2thrfrg(self, trg: Layout) -> Layout:
        ref = self.atom.val_layout_ref(self.bits)
        atom_tv = zipped_divide(self.layout_tv, (int(size(ref[0])), int(size(ref[1]))))
        trg_tv = composition(atom_tv, (self._ref2trg(trg), _))
        thrval2mn = coalesce(zip_layouts(trg_tv[0], trg_tv[1]), (1, (1, 1)))
        return composition(make_layout(self.tiler), thrval2mn)

    def layout_s_tv(self) -> Layout:
        """``get_layoutS_TV()``: source ``(thr_idx, val_idx) -> m + M·n`` of the tile."""
        return static_layout(self._tile2thrfrg(self.atom.val_layout_src(self.bits)))

    def layout_d_tv(self) -> Layout:
        """``get_layoutD_TV()``: destination ``(thr_idx, val_idx) -> m + M·n`` of the tile."""
        return static_layout(self._tile2thrfrg(self.atom.val_layout_dst(self.bits)))

    def _tile2(self) -> tuple[int, int]:
        m = self.tiler[0]
        n = int(size(Layout(self.tiler[1:], (0,) * len(self.tiler[1:])))) if len(self.tiler) > 1 else 1
        return m, n

    def tv_s(self) -> TVLayout:
        return TVLayout(self.layout_s_tv(), self._tile2(), f"{self.atom.name} src")

    def tv_d(self) -> TVLayout:
        return TVLayout(self.layout_d_tv(), self._tile2(), f"{self.atom.name} dst")

    def __str__(self) -> str:
        return (f"TiledCopy\n  Tiler_MN:       {format_int_tuple(tuple(Int(t) for t in self.tiler))}\n"
                f"  TiledLayout_TV: {self.layout_tv}\n{self.atom.describe(self.bits)}")


def make_tiled_copy(atom: CopyAtom, bits: int, thr_layout: Layout, val_layout: Layout) -> TiledCopy:
    """CuTe's ``make_tiled_copy(Copy_Atom<Op, T>{}, thr_layout, val_layout)`` for ``T`` of ``bits``.

    >>> from tensorlayout.gpu.atoms import universal_copy
    >>> tc = make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)), make_layout((1, 8)))
    >>> tc.tiler, str(tc.layout_tv)
    ((16, 64), '((_8,_16),_8):((_128,_1),_16)')
    """
    if not isinstance(atom, CopyAtom):
        raise LayoutError(f"make_tiled_copy needs a CopyAtom, got {type(atom).__name__}")
    layout_mn = raked_product(thr_layout, val_layout)
    layout_tv = static_layout(composition(right_inverse(layout_mn), make_layout((int(size(thr_layout)),
                                                                                 int(size(val_layout))))))
    tiler = tuple(int(size(m)) for m in layout_mn.modes())
    return TiledCopy(atom, bits, layout_tv, tiler)


def _check_copy(atom: CopyAtom, mma: TiledMMA) -> None:
    if not isinstance(atom, CopyAtom) or not isinstance(mma, TiledMMA):
        raise LayoutError("make_tiled_copy_a/b/c need a CopyAtom and a TiledMMA")


def make_tiled_copy_a(atom: CopyAtom, bits: int, mma: TiledMMA) -> TiledCopy:
    """CuTe's ``make_tiled_copy_A``: ``atom`` laid out as ``mma``'s A operand over ``M x K``.

    >>> from tensorlayout.gpu.atoms import copy_atom, mma_atom
    >>> tm = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"))
    >>> str(make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, tm).layout_s_tv())
    '((_16,_2),(_8,_1)):((_1,_128),(_16,_0))'
    """
    _check_copy(atom, mma)
    m, _n, k = mma.tile_size()
    return TiledCopy(atom, bits, mma.layout_a_tv(), (m, k))


def make_tiled_copy_b(atom: CopyAtom, bits: int, mma: TiledMMA) -> TiledCopy:
    """CuTe's ``make_tiled_copy_B``: ``atom`` laid out as ``mma``'s B operand over ``N x K``."""
    _check_copy(atom, mma)
    _m, n, k = mma.tile_size()
    return TiledCopy(atom, bits, mma.layout_b_tv(), (n, k))


def make_tiled_copy_c(atom: CopyAtom, bits: int, mma: TiledMMA) -> TiledCopy:
    """CuTe's ``make_tiled_copy_C``: ``atom`` laid out as ``mma``'s C over ``M x N``."""
    _check_copy(atom, mma)
    m, n, _k = mma.tile_size()
    return TiledCopy(atom, bits, mma.layout_c_tv(), (m, n))
