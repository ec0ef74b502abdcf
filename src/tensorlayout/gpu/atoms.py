"""MMA and copy atoms as CuTe defines them: thread-value layouts of one hardware instruction.

The layouts follow CuTe's ``MMA_Traits`` (``mma_traits_sm80.hpp``, ``mma_traits_sm90_gmma.hpp``)
and ``Copy_Traits`` (``copy_traits_sm75.hpp``): ``(thread, value) -> m + M·k`` of the atom's
``A`` (M x K), ``B`` (N x K) and ``C`` (M x N) tiles; copy layouts count **bits**, and
:meth:`CopyAtom.val_layout_src` re-expresses them in elements as ``Copy_Atom<Op, T>`` does.

>>> atom = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
>>> str(atom.layout_c), atom.tv_c().coord(5, 3)
('((4,8),(2,2)):((32,1),(16,8))', (9, 3))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from tensorlayout.cute import Layout, recast_layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.tv import TVLayout

__all__ = ["COPY_ATOMS", "MMA_ATOMS", "CopyAtom", "MMAAtom", "copy_atom", "mma_atom", "sm90_gmma",
           "universal_copy"]


@dataclass(frozen=True)
class MMAAtom:
    """One MMA instruction: its ``Shape_MNK``, ``ThrID`` and A/B/C TV layouts (CuTe's traits).

    >>> print(mma_atom("SM80_16x8x8_F16F16F16F16_TN"))
    MMA_Atom
      ThrID:      32:1
      Shape_MNK:  (16,8,8)
      LayoutA_TV: ((4,8),(2,2)):((32,1),(16,8))
      LayoutB_TV: ((4,8),2):((16,1),8)
      LayoutC_TV: ((4,8),(2,2)):((32,1),(16,8))
    """

    name: str
    shape_mnk: tuple[int, int, int]
    thr_id: Layout
    layout_a: Layout
    layout_b: Layout
    layout_c: Layout

    def tv_a(self) -> TVLayout:
        """A's TV layout over the ``M x K`` tile."""
        return TVLayout(self.layout_a, (self.shape_mnk[0], self.shape_mnk[2]), f"{self.name} A")

    def tv_b(self) -> TVLayout:
        """B's TV layout over the ``N x K`` tile."""
        return TVLayout(self.layout_b, (self.shape_mnk[1], self.shape_mnk[2]), f"{self.name} B")

    def tv_c(self) -> TVLayout:
        """C's TV layout over the ``M x N`` tile."""
        return TVLayout(self.layout_c, (self.shape_mnk[0], self.shape_mnk[1]), f"{self.name} C")

    def __str__(self) -> str:
        m, n, k = self.shape_mnk
        return (f"MMA_Atom\n  ThrID:      {self.thr_id}\n  Shape_MNK:  ({m},{n},{k})\n"
                f"  LayoutA_TV: {self.layout_a}\n  LayoutB_TV: {self.layout_b}\n"
                f"  LayoutC_TV: {self.layout_c}")


@dataclass(frozen=True)
class CopyAtom:
    """One copy instruction: ``ThrID`` and (thread, bit) layouts of source, destination, reference.

    >>> str(copy_atom("SM75_U32x4_LDSM_N").val_layout_src(16))
    '(32,8):(8,1)'
    """

    name: str
    thr_id: Layout
    src: Layout
    dst: Layout
    ref: Layout

    def val_layout_src(self, bits: int) -> Layout:
        """The source layout in elements of ``bits`` bits (``Copy_Atom<Op, T>::ValLayoutSrc``)."""
        return recast_layout(self.src, 1, bits)

    def val_layout_dst(self, bits: int) -> Layout:
        """The destination layout in elements of ``bits`` bits."""
        return recast_layout(self.dst, 1, bits)

    def val_layout_ref(self, bits: int) -> Layout:
        """The reference layout in elements of ``bits`` bits."""
        return recast_layout(self.ref, 1, bits)


def _L(shape: object, stride: object) -> Layout:
    return Layout(shape, stride)  # type: ignore[arg-type]


_WARP = _L(32, 1)
_C16x8 = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))


def _sm80(name: str, k: int, a: Layout, b: Layout) -> MMAAtom:
    return MMAAtom(name, (16, 8, k), _WARP, a, b, _C16x8)


def _sm80_atoms() -> list[MMAAtom]:
    """``mma.sync`` m16n8k16 / m16n8k8 (f16, bf16, tf32, s8) with their fragment layouts."""
    a16 = _L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
    b16 = _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))
    a8 = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    b8 = _L(((4, 8), 2), ((16, 1), 8))
    out = [_sm80(f"SM80_16x8x16_{t}_TN", 16, a16, b16)
           for t in ("F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32")]
    out += [_sm80(f"SM80_16x8x8_{t}_TN", 8, a8, b8)
            for t in ("F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32")]
    out.append(_sm80("SM80_16x8x8_F32TF32TF32F32_TN", 8, _L(((4, 8), (2, 2)), ((16, 1), (8, 64))),
                     _L(((4, 8), 2), ((8, 1), 32))))
    out.append(_sm80("SM80_16x8x16_S32S8S8S32_TN", 16, _L(((4, 8), (4, 2)), ((64, 1), (16, 8))),
                     _L(((4, 8), 4), ((32, 1), 8))))
    return out


def _gmma_rows(values: tuple[int, int, int]) -> Layout:
    """The warpgroup fragment ``((4,8,4),(2,2,v)):((128,1,16),(64,8,512))`` of a 64-row tile."""
    return _L(((4, 8, 4), values), ((128, 1, 16), (64, 8, 512)))


def sm90_gmma(n: int, types: str = "F32F16F16", a_source: str = "SS") -> MMAAtom:
    """``wgmma.mma_async`` m64nNk16 for 16-bit inputs: A from smem (``SS``) or registers (``RS``).

    >>> str(sm90_gmma(64).layout_c)
    '((4,8,4),(2,2,8)):((128,1,16),(64,8,512))'
    """
    if not (isinstance(n, int) and 8 <= n <= 256 and n % 8 == 0):
        raise LayoutError(f"wgmma m64nNk16 needs N a multiple of 8 in 8..256, got {n!r}")
    if a_source not in ("SS", "RS"):
        raise LayoutError(f"a_source must be 'SS' (A in smem) or 'RS' (A in registers), got {a_source!r}")
    a = _L((128, (64, 16)), (0, (1, 64))) if a_source == "SS" else _gmma_rows((2, 2, 2))
    b = _L((128, (n, 16)), (0, (1, n)))
    return MMAAtom(f"SM90_64x{n}x16_{types}_{a_source}", (64, n, 16), _L(128, 1), a, b,
                   _gmma_rows((2, 2, n // 8)))


def _sm90_atoms() -> list[MMAAtom]:
    return [sm90_gmma(n, t, s) for n in (8, 16, 32, 64, 96, 128, 192, 256)
            for t in ("F16F16F16", "F32F16F16", "F32BF16BF16") for s in ("SS", "RS")]


MMA_ATOMS: dict[str, MMAAtom] = {a.name: a for a in _sm80_atoms() + _sm90_atoms()}


def _ldsm_src(rows: int) -> Layout:
    """Lanes supplying one 128-bit row address each (the others broadcast, stride 0)."""
    if rows == 32:
        return _L((32, 128), (128, 1))
    return _L(((rows, 32 // rows), 128), ((128, 0), 1))


def _ldsm_atoms() -> list[CopyAtom]:
    out = []
    for x, rows in ((1, 8), (2, 16), (4, 32)):
        dst_n = _L((32, 32), (32, 1)) if x == 1 else _L((32, (32, x)), (32, (1, 1024)))
        out.append(CopyAtom(f"SM75_U32x{x}_LDSM_N", _WARP, _ldsm_src(rows), dst_n, dst_n))
        vals = (16, 2) if x == 1 else (16, 2, x)
        strides = (1, 128) if x == 1 else (1, 128, 1024)
        dst_t = _L(((4, 8), vals), ((256, 16), strides))
        out.append(CopyAtom(f"SM75_U16x{2 * x}_LDSM_T", _WARP, _ldsm_src(rows), dst_t, dst_t))
    return out


def universal_copy(bits: int) -> CopyAtom:
    """``UniversalCopy<uintN_t>``: one thread moves one ``bits``-bit word.

    >>> str(universal_copy(128).val_layout_src(16))
    '(1,8):(0,1)'
    """
    if bits not in (8, 16, 32, 64, 128):
        raise LayoutError(f"UniversalCopy moves 8, 16, 32, 64 or 128 bits, got {bits!r}")
    lay = _L((1, bits), (0, 1))
    return CopyAtom(f"UniversalCopy<uint{bits}_t>", _L(1, 1), lay, lay, lay)


COPY_ATOMS: dict[str, CopyAtom] = {a.name: a for a in _ldsm_atoms()
                                   + [universal_copy(b) for b in (8, 16, 32, 64, 128)]}


_T = TypeVar("_T")


def _lookup(table: dict[str, _T], name: str, what: str) -> _T:
    if not isinstance(name, str) or name not in table:
        near = sorted(k for k in table if isinstance(name, str) and k.startswith(name[:8]))[:6]
        raise LayoutError(f"unknown {what} {name!r}" + (f"; similar: {', '.join(near)}" if near else ""))
    return table[name]


def mma_atom(name: str) -> MMAAtom:
    """The MMA atom named as in CuTe (``SM80_16x8x16_F32F16F16F32_TN``, ``SM90_64x128x16_F32F16F16_SS``).

    >>> mma_atom("SM90_64x128x16_F32F16F16_SS").shape_mnk
    (64, 128, 16)
    """
    return _lookup(MMA_ATOMS, name, "MMA atom")


def copy_atom(name: str) -> CopyAtom:
    """The copy atom named as in CuTe (``SM75_U32x4_LDSM_N``, ``UniversalCopy<uint128_t>``).

    >>> str(copy_atom("SM75_U32x1_LDSM_N").src)
    '((8,4),128):((128,0),1)'
    """
    return _lookup(COPY_ATOMS, name, "copy atom")

