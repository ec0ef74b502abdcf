"""Warp-level ``mma.sync`` atoms (SM75/80/89/120), SM70's quad-pair ``mma`` and SM61's ``dp4a``/``dp2a``.

CuTe writes one traits struct per instruction; their fragment layouts all follow the PTX register
fragments, derived here from the shape and the width of A's registers: a thread ``t`` holds
``p = 32 / bits(A)`` consecutive K elements per 32-bit register, lane ``t / 4`` gives the row and
``t % 4`` the K group; the values run over the ``p`` elements, the upper 8 rows (M = 16) and the
K chunks of ``4p``. C holds two consecutive columns per row (``mma_traits_sm80.hpp``).

>>> from tensorlayout.gpu.cxx_names import parse_type
>>> atom = resolve_mma_sync(parse_type("SM80_16x8x32_S32S8S8S32_TN"))
>>> str(atom.layout_a), atom.val_bits
('((_4,_8),(_4,_2,_2)):((_64,_1),(_16,_8,_256))', (8, 8, 32))
"""

from __future__ import annotations

import re

from tensorlayout.cute import Layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atom_types import MMAAtom
from tensorlayout.gpu.cxx_names import CxxType, sizeof_bits, static_layout

__all__ = ["MMA_SYNC_NAMES", "resolve_mma_sync"]

_TOKEN = re.compile(r"GC64|C64|F64|BF16|TF32|F32|F16|S32|S8|U8|S4|U4|U1|E4M3|E5M2")
_BITS = {"GC64": 128, "C64": 128, "F64": 64, "BF16": 16, "TF32": 32, "F32": 32, "F16": 16, "S32": 32,
         "S8": 8, "U8": 8, "S4": 4, "U4": 4, "U1": 1, "E4M3": 8, "E5M2": 8}
_NAME = re.compile(r"(SM75|SM80|SM89)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+)_TN(_SATURATE|_XORPOPC|_ANDPOPC)?")

_I8 = [f"S32{a}{b}S32" for a in ("S8", "U8") for b in ("S8", "U8")]
_I4 = [f"S32{a}{b}S32" for a in ("S4", "U4") for b in ("S4", "U4")]
_F8 = [f"{c}{a}{b}{c}" for c in ("F32", "F16") for a in ("E4M3", "E5M2") for b in ("E4M3", "E5M2")]
_F16 = ["F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32"]

#: (arch, "MxNxK") -> the type strings CuTe defines; integer types also come ``_SATURATE``,
#: 1-bit ones only as ``_XORPOPC`` / ``_ANDPOPC``.
_DEFINED: dict[tuple[str, str], list[str]] = {
    ("SM75", "16x8x8"): ["F32F16F16F32"], ("SM75", "8x8x16"): ["S32S8S8S32"],
    ("SM80", "16x8x8"): [*_F16, "F32TF32TF32F32"], ("SM80", "16x8x16"): [*_F16, *_I8],
    ("SM80", "16x8x4"): ["F32TF32TF32F32"], ("SM80", "8x8x4"): ["F64F64F64F64", "C64C64C64C64",
                                                                "GC64C64C64GC64"],
    ("SM80", "8x8x16"): _I8, ("SM80", "16x8x32"): [*_I8, *_I4], ("SM80", "8x8x32"): _I4,
    ("SM80", "16x8x64"): _I4, ("SM80", "16x8x256"): ["S32U1U1S32"], ("SM80", "8x8x128"): ["S32U1U1S32"],
    ("SM80", "16x8x128"): ["S32U1U1S32"], ("SM89", "16x8x32"): _F8,
}


def _suffixes(types: str) -> tuple[str, ...]:
    if "U1" in types:
        return ("_XORPOPC", "_ANDPOPC")
    return ("", "_SATURATE") if types.startswith("S32") else ("",)


#: Every name of the table above.
MMA_SYNC_NAMES: tuple[str, ...] = tuple(
    f"{arch}_{shape}_{t}_TN{s}" for (arch, shape), ts in _DEFINED.items() for t in ts for s in _suffixes(t))


def _lay(shape: object, stride: object) -> Layout:
    return static_layout(Layout(shape, stride))  # type: ignore[arg-type]


def _tv(thr: tuple[int, int], vals: list[tuple[int, int]]) -> Layout:
    """``((4,8), vals)`` with one value mode unwrapped and none as ``_1:_0``."""
    vs = vals or [(1, 0)]
    v_shape = vs[0][0] if len(vs) == 1 else tuple(s for s, _d in vs)
    v_stride = vs[0][1] if len(vs) == 1 else tuple(d for _s, d in vs)
    return _lay(((4, 8), v_shape), (thr, v_stride))


def _fragment(rows: int, k: int, bits: int, with_halves: bool) -> Layout:
    """A (``rows`` = M) or B (``rows`` = N) over ``rows x k`` for registers of ``bits``-bit values."""
    p = max(1, 32 // bits)
    vals = [(p, rows)] if p > 1 else []
    if with_halves and rows == 16:
        vals.append((2, 8))
    if k // (4 * p) > 1:
        vals.append((k // (4 * p), rows * 4 * p))
    return _tv((rows * p, 1), vals)


def warp_mma(name: str, m: int, n: int, k: int, bits: tuple[int, int, int],
             reg_bits: int | None = None) -> MMAAtom:
    """The ``mma.sync`` atom m``m``n``n``k``k``; ``reg_bits`` is the width of A/B's register
    elements when it differs from ``bits`` (SM120's 8-bit and 4-bit containers)."""
    rb = reg_bits or bits[0]
    c_vals = [(2, m)] + ([(2, 8)] if m == 16 else [])
    c = _tv((2 * m, 1), c_vals)
    return MMAAtom(name, (m, n, k), _lay(32, 1), _fragment(m, k, rb, True),
                   _fragment(n, k, rb, False), c, bits)


def _sm_mma(t: CxxType) -> MMAAtom | None:
    m = _NAME.fullmatch(t.name)
    if m is None:
        return None
    arch, mm, nn, kk, types, suffix = m.groups()
    defined = _DEFINED.get((arch, f"{mm}x{nn}x{kk}"), [])
    if t.args or types not in defined or (suffix or "") not in _suffixes(types):
        raise LayoutError(f"CuTe defines no MMA atom {t}")
    toks = _TOKEN.findall(types)
    bits = (_BITS[toks[1]], _BITS[toks[2]], _BITS[toks[3]])
    return warp_mma(t.name, int(mm), int(nn), int(kk), bits)


def _sm70(t: CxxType) -> MMAAtom | None:
    m = re.fullmatch(r"SM70_8x8x4_(F16F16F16F16|F32F16F16F32)_([NT])([NT])", t.name)
    if m is None:
        return None
    row, col = _lay((8, 4), (1, 8)), _lay(((4, 2), 4), ((8, 4), 1))
    a = row if m.group(2) == "T" else col
    b = row if m.group(3) == "N" else col
    if m.group(1).startswith("F16"):
        c, cb = _lay((8, 8), (1, 8)), 16
    else:
        c, cb = _lay(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), 32
    return MMAAtom(t.name, (8, 8, 4), _lay((4, 2), (1, 16)), a, b, c, (16, 16, cb))


def _sm61(t: CxxType) -> MMAAtom | None:
    k = {"SM61_DP4A": 4, "SM61_DP2A": 2}.get(t.name)
    if k is None:
        return None
    one = _lay(1, 0)
    return MMAAtom(t.name, (1, 1, k), one, _lay((1, k), (0, 1)), _lay((1, k), (0, 1)),
                   _lay((1, 1), (0, 0)), (32 // k, 32 // k, 32))


_SM120_F8F6F4 = {"float_e4m3_t", "float_e5m2_t", "float_e2m3_t", "float_e3m2_t", "float_e2m1_t",
                 "type_erased_dynamic_float8_t", "type_erased_dynamic_float6_t",
                 "type_erased_dynamic_float4_t"}


def _sm120(t: CxxType) -> MMAAtom | None:
    short = t.name.replace("SM120::BLOCKSCALED::", "")
    k, nargs = {"SM120_16x8x32_TN": (32, 3), "SM120_16x8x32_TN_VS": (32, 5),
                "SM120_16x8x64_TN_VS": (64, 5)}.get(short, (0, 0))
    if not k:
        return None
    if short.endswith("_VS") != t.name.startswith("SM120::BLOCKSCALED::") or len(t.args) != nargs:
        raise LayoutError(f"{short} takes {nargs} template arguments (a, b, c"
                          f"{', sf, VS' if nargs == 5 else ''}) under "
                          f"{'SM120::BLOCKSCALED::' if nargs == 5 else 'cute::'}, got {t}")
    for arg in t.args[:2]:
        if str(arg).replace("cutlass::", "") not in _SM120_F8F6F4:
            raise LayoutError(f"{short}: A and B are 8/6/4-bit floats, got {arg}")
    reg = 8 if k == 32 else 4
    return warp_mma(str(t), 16, 8, k, (reg, reg, sizeof_bits(str(t.args[2]))), reg)


#: The resolvers of this module, tried in turn on a parsed name.
RESOLVERS = (_sm_mma, _sm70, _sm61, _sm120)


def resolve_mma_sync(t: CxxType) -> MMAAtom | None:
    """The atom ``t`` names if it is one of this module's, else None (a LayoutError if it is
    one of their names with arguments CuTe does not define)."""
    for resolve in RESOLVERS:
        atom = resolve(t)
        if atom is not None:
            return atom
    return None
