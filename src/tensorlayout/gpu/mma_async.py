"""The asynchronous tensor-core MMAs: SM90 ``wgmma`` (CuTe's GMMA) and SM100 ``tcgen05.mma`` (UMMA).

GMMA (``mma_traits_sm90_gmma.hpp``): a warpgroup of 128 threads; an A/B operand in shared memory
is seen whole by every thread (``(_128,(M,K)):(_0,(_1,M))``); A in registers (``RS``) and C use
the m64 fragments, ``p = 32 / bits(A)`` K elements per register. K is 256 bits of A.

UMMA (``mma_traits_sm100.hpp``): one issuing "thread" per CTA (two for the ``2x1SM`` forms, each
owning half of M, and of N for B); every layout is the whole column-major tile. K is 256 bits of A
(32 elements for the 8/6/4-bit kinds, 64 for MXF4), doubled by 2:4 sparsity.

>>> from tensorlayout.gpu.cxx_names import parse_type
>>> a = resolve_mma_async(parse_type("SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,128,"
...                                   "UMMA::Major::K,UMMA::Major::K>"))
>>> a.shape_mnk, str(a.layout_b)
((256, 128, 16), '(_2,(_64,_16)):(_64,(_1,_128))')
"""

from __future__ import annotations

import re

from tensorlayout.cute import Layout
from tensorlayout.cute.int_tuple import Int
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atom_types import MMAAtom
from tensorlayout.gpu.cxx_names import Arg, CxxType, sizeof_bits, static_layout

__all__ = ["gmma_names", "resolve_mma_async"]


def _lay(shape: object, stride: object) -> Layout:
    return static_layout(Layout(shape, stride))  # type: ignore[arg-type]


# ---------------------------------------------------------------- SM90 GMMA

_GMMA = re.compile(r"SM90_64x(\d+)x(\d+)_([A-Z0-9]+)_(SS|RS)(_TN)?(_SATURATE)?")
_G_TYPES = {  # D A B -> (bits D, bits A, bits B, K, needs _TN)
    "F16F16F16": (16, 16, 16, 16, False), "F32F16F16": (32, 16, 16, 16, False),
    "F32BF16BF16": (32, 16, 16, 16, False), "F32TF32TF32": (32, 32, 32, 8, True),
    **{f"S32{a}{b}": (32, 8, 8, 32, True) for a in ("S8", "U8") for b in ("S8", "U8")},
    **{f"{d}{a}{b}": (int(d[1:]), 8, 8, 32, True) for d in ("F16", "F32")
       for a in ("E4M3", "E5M2") for b in ("E4M3", "E5M2")},
}


def _gmma_n_ok(types: str, n: int) -> bool:
    """The N extents CuTe defines: multiples of 8 up to 256; for integer inputs 8, 16, 24 and
    multiples of 16 from 32."""
    if types.startswith("S32"):
        return n in (8, 16, 24) or (n % 16 == 0 and 32 <= n <= 256)
    return n % 8 == 0 and 8 <= n <= 256


def gmma_names(n: int) -> list[str]:
    """Every GMMA atom name of extent N = ``n`` (SS and RS; integer ones also ``_SATURATE``).

    >>> gmma_names(8)[:2]
    ['SM90_64x8x16_F16F16F16_SS', 'SM90_64x8x16_F16F16F16_RS']
    """
    out = []
    for types, (_d, _a, _b, k, tn) in _G_TYPES.items():
        if _gmma_n_ok(types, n):
            for src in ("SS", "RS"):
                base = f"SM90_64x{n}x{k}_{types}_{src}{'_TN' if tn else ''}"
                out += [base, base + "_SATURATE"] if types.startswith("S32") else [base]
    return out


def _gmma_a_regs(bits: int) -> Layout:
    """The m64 register fragment of A (``ALayout_64xK``)."""
    p = 32 // bits
    vals = ([(p, 64)] if p > 1 else []) + [(2, 8), (2, 256 * p)]
    return _lay(((4, 8, 4), tuple(s for s, _ in vals)), ((64 * p, 1, 16), tuple(d for _, d in vals)))


def _major(arg: Arg) -> str:
    short = arg.short if isinstance(arg, CxxType) else str(arg)
    if short not in ("K", "MN"):
        raise LayoutError(f"a GMMA/UMMA major is K or MN (GMMA::Major::K), got {arg}")
    return short


def _gmma(t: CxxType) -> MMAAtom | None:
    m = _GMMA.fullmatch(t.name)
    if m is None:
        return None
    n, k = int(m.group(1)), int(m.group(2))
    types, src, tn, sat = m.group(3), m.group(4), m.group(5), m.group(6)
    spec = _G_TYPES.get(types)
    if spec is None or spec[3] != k or spec[4] != bool(tn) or not _gmma_n_ok(types, n) or (
            sat and not types.startswith("S32")):
        raise LayoutError(f"CuTe defines no GMMA atom {t.name}")
    majors = ("K", "K")
    if not tn and t.args:  # <tnspA, tnspB[, scaleA, scaleB]>
        if len(t.args) < 2:
            raise LayoutError(f"{t.name} takes the majors of A and B, got {t}")
        majors = (_major(t.args[0]), _major(t.args[1]))
    if src == "RS" and majors[0] != "K":
        raise LayoutError(f"{t.name}: A in registers is K-major, got {t}")
    bd, ba, bb, _k, _tn = spec
    a = _lay((128, (64, k)), (0, (1, 64))) if src == "SS" else _gmma_a_regs(ba)
    c = _lay(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))
    return MMAAtom(_gmma_name(t, majors), (64, n, k), _lay(128, 1), a,
                   _lay((128, (n, k)), (0, (1, n))), c, (ba, bb, bd), majors)


def _gmma_name(t: CxxType, majors: tuple[str, str]) -> str:
    """The base name, with ``<MN,MN>``-style majors where not both K."""
    return t.name if majors == ("K", "K") else f"{t.name}<{majors[0]},{majors[1]}>"


# ---------------------------------------------------------------- SM100 UMMA

_UMMA = re.compile(r"SM100_MMA_(TF32|F16BF16|S8|F8F6F4|MXF8F6F4|MXF4|MXF4NVF4)(_2x1SM)?_(SS|TS)(_SPARSE)?")
_U_K = {"TF32": 8, "F16BF16": 16, "S8": 32, "F8F6F4": 32, "MXF8F6F4": 32, "MXF4": 64, "MXF4NVF4": 64}
_U_BITS = {"TF32": (32,), "F16BF16": (16,), "S8": (8,), "F8F6F4": (4, 6, 8), "MXF8F6F4": (4, 6, 8),
           "MXF4": (4,), "MXF4NVF4": (4,)}


def _umma_m_ok(kind: str, two_sm: bool, m: int) -> bool:
    if kind.startswith("MX"):
        return m in ((256,) if kind == "MXF8F6F4" else (128, 256)) if two_sm else m == 128
    return m in ((128, 256) if two_sm else (64, 128))


def _umma_n_step(kind: str, two_sm: bool, src: str, sparse: bool, m: int, b_major: str) -> int:
    """The multiple N must be of (``mma_sm100_umma.hpp``'s static_asserts); N runs to 256."""
    if two_sm:
        return 32 if src == "TS" or kind == "S8" or (kind == "F8F6F4" and sparse) else 16
    if kind == "S8":
        return 16
    if src == "TS" or (kind == "F8F6F4" and sparse):
        return 8 if m == 64 else 16
    if kind == "F8F6F4" and b_major == "MN":
        return 16
    return 8


def _umma_args(t: CxxType) -> tuple[str, tuple[Arg, ...]]:
    if t.name == "MMA_Traits" and t.args and isinstance(t.args[0], CxxType):
        return t.args[0].name, t.args[1:]
    return t.name, t.args


def _int_arg(arg: Arg, what: str) -> int:
    if not isinstance(arg, int):
        raise LayoutError(f"UMMA {what} is an int, got {arg}")
    return int(arg)


def _umma(t: CxxType) -> MMAAtom | None:
    op, args = _umma_args(t)
    m = _UMMA.fullmatch(op)
    if m is None:
        return None
    kind, two_sm, src, sparse = m.group(1), bool(m.group(2)), m.group(3), bool(m.group(4))
    lead = 4 if kind.startswith("MX") else 3  # a, b, c[, sf]
    vs = 1 if kind in ("MXF4", "MXF4NVF4") else 0
    if len(args) < lead + 4 + vs:
        raise LayoutError(f"{op} takes <a, b, c{', sf' if lead == 4 else ''}, M, N"
                          f"{', VS' if vs else ''}, a_major, b_major, ...>, got {t}")
    mm, nn = _int_arg(args[lead], "M"), _int_arg(args[lead + 1], "N")
    majors = (_major(args[lead + 2 + vs]), _major(args[lead + 3 + vs]))
    ba, bb, bc = (sizeof_bits(str(a)) for a in args[:3])
    if ba not in _U_BITS[kind] or bb not in _U_BITS[kind]:
        raise LayoutError(f"{op} takes {'/'.join(map(str, _U_BITS[kind]))}-bit A and B, got {t}")
    if src == "TS" and majors[0] != "K":
        raise LayoutError(f"{op}: A in tensor memory is K-major, got {t}")
    step = _umma_n_step(kind, two_sm, src, sparse, mm, majors[1])
    if not _umma_m_ok(kind, two_sm, mm) or nn % step or not step <= nn <= 256:
        raise LayoutError(f"{op}: M={mm}, N={nn} is not an instruction shape (N a multiple of {step} "
                          f"up to 256; M as the static_asserts of mma_sm100_umma.hpp)")
    k = _U_K[kind] * (2 if sparse else 1)
    return MMAAtom(str(t), (mm, nn, k), *_umma_layouts(mm, nn, k, two_sm),
                   (Int(ba // 2) if sparse else ba, bb, bc), majors)


def _umma_layouts(m: int, n: int, k: int, two_sm: bool) -> tuple[Layout, Layout, Layout, Layout]:
    """ThrID, A, B, C: the whole tile per CTA, split in halves of M (and N for B) over two CTAs."""
    if not two_sm:
        return (_lay(1, 0), _lay((1, (m, k)), (0, (1, m))), _lay((1, (n, k)), (0, (1, n))),
                _lay((1, (m, n)), (0, (1, m))))
    return (_lay(2, 1), _lay((2, (m // 2, k)), (m // 2, (1, m))), _lay((2, (n // 2, k)), (n // 2, (1, n))),
            _lay((2, (m // 2, n)), (m // 2, (1, m))))


def resolve_mma_async(t: CxxType) -> MMAAtom | None:
    """The GMMA or UMMA atom ``t`` names, else None; a LayoutError for such a name with
    arguments CuTe does not define."""
    return _gmma(t) or _umma(t)
