"""Shared-memory and global-memory copy atoms: ``ldmatrix``/``stmatrix`` (SM75, SM90, SM100's
8-bit forms), ``cp.async`` (SM80), ``UniversalCopy`` and ``AutoVectorizingCopyWithAssumedAlignment``.

Layouts count bits (``Copy_Traits``). ``ldmatrix`` reads 8x128-bit rows whose addresses come
from 8, 16 or 32 lanes (the rest broadcast, stride 0); ``stmatrix`` is its mirror: its source
is ``ldmatrix``'s destination and the other way round (``copy_traits_sm90.hpp``).

>>> from tensorlayout.gpu.cxx_names import parse_type
>>> str(resolve_copy(parse_type("SM90_U32x1_STSM_N")).dst)
'((_8,_4),_128):((_128,_0),_1)'
"""

from __future__ import annotations

import re

from tensorlayout.cute import Layout, make_layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atom_types import CopyAtom
from tensorlayout.gpu.cxx_names import CxxType, sizeof_bits, static_layout

__all__ = ["COPY_OP_NAMES", "resolve_copy", "universal_copy"]


def _lay(shape: object, stride: object) -> Layout:
    return static_layout(Layout(shape, stride))  # type: ignore[arg-type]


_WARP = _lay(32, 1)
_ONE = _lay(1, 0)


def _rows_src(rows: int) -> Layout:
    """Lanes supplying one 128-bit row address each (the others broadcast, stride 0)."""
    if rows == 32:
        return _lay((32, 128), (128, 1))
    return _lay(((rows, 32 // rows), 128), ((128, 0), 1))


def _ldsm_n_dst(x: int) -> Layout:
    return _lay((32, 32), (32, 1)) if x == 1 else _lay((32, (32, x)), (32, (1, 1024)))


def _ldsm_t_dst(x: int) -> Layout:
    vals, strides = ((16, 2), (1, 128)) if x == 1 else ((16, 2, x), (1, 128, 1024))
    return _lay(((4, 8), vals), ((256, 16), strides))


def _u8_regs(x: int) -> Layout:
    """SM100's 8-bit transposing fragment: ``x`` 32-bit registers of four bytes."""
    vals, strides = ((8, 2, 2), (1, 128, 64)) if x == 4 else ((8, 2, 2, x // 4), (1, 128, 64, 1024))
    return _lay(((4, 8), vals), ((256, 8), strides))


def _u8_ldsm_src(x: int) -> Layout:
    return _lay(((2, 2, 4, 2), 128), ((128, 1024, 256, 0 if x == 8 else 2048), 1))


_ROWS = {1: 8, 2: 16, 4: 32}


def _matrix_ops() -> dict[str, CopyAtom]:
    """Every ``ldmatrix``/``stmatrix`` atom CuTe names, keyed by name."""
    ops: dict[str, CopyAtom] = {}
    for x, rows in _ROWS.items():
        pairs = ((f"SM75_U32x{x}_LDSM_N", f"SM90_U32x{x}_STSM_N", _ldsm_n_dst(x)),
                 (f"SM75_U16x{2 * x}_LDSM_T", f"SM90_U16x{2 * x}_STSM_T", _ldsm_t_dst(x)))
        for ld, st, regs in pairs:
            ops[ld] = CopyAtom(ld, _WARP, _rows_src(rows), regs, regs)
            ops[st] = CopyAtom(st, _WARP, regs, _rows_src(rows), regs)
    for x in (8, 16):
        name = f"SM100_U8x{x}_LDSM_T"
        ops[name] = CopyAtom(name, _WARP, _u8_ldsm_src(x), _u8_regs(x), _u8_regs(x))
    for x, rows in ((4, 8), (8, 16), (16, 32)):
        name = f"SM100_U8x{x}_STSM_T"
        ops[name] = CopyAtom(name, _WARP, _u8_regs(x), _rows_src(rows), _u8_regs(x))
    return ops


_MATRIX = _matrix_ops()

#: Every non-template copy op of this module.
COPY_OP_NAMES: tuple[str, ...] = tuple(_MATRIX)


def _one_thread(name: str, src_bits: int, dst_bits: int) -> CopyAtom:
    src = static_layout(make_layout((1, src_bits)))
    return CopyAtom(name, _ONE, src, static_layout(make_layout((1, dst_bits))), src)


def universal_copy(bits: int) -> CopyAtom:
    """``UniversalCopy<uintN_t>``: one thread moves one ``bits``-bit word.

    >>> str(universal_copy(128).val_layout_src(16))
    '(_1,_8):(_0,_1)'
    """
    if bits not in (8, 16, 32, 64, 128):
        raise LayoutError(f"UniversalCopy moves 8, 16, 32, 64 or 128 bits, got {bits!r}")
    return _one_thread(f"UniversalCopy<uint{bits}_t>", bits, bits)


_CP_ASYNC = re.compile(r"SM80_CP_ASYNC_(CACHEALWAYS|CACHEGLOBAL)(_ZFILL)?")


def _type_bits(t: CxxType, n: int) -> tuple[int, int]:
    """``sizeof_bits`` of the source type and of the destination (defaulting to the source)."""
    if not 1 <= len(t.args) <= n:
        raise LayoutError(f"{t.name} takes <S{', D' if n == 2 else ''}> value types, got {t}")
    bits = [sizeof_bits(str(a)) for a in t.args]
    return bits[0], bits[-1]


def _cp_async(t: CxxType) -> CopyAtom | None:
    m = _CP_ASYNC.fullmatch(t.name)
    if m is None:
        return None
    s, d = _type_bits(t, 2)
    allowed = (128,) if m.group(1) == "CACHEGLOBAL" else (32, 64, 128)
    if s != d or s not in allowed:
        raise LayoutError(f"{t.name} copies {' or '.join(map(str, allowed))}-bit words of equal "
                          f"source and destination size, got {t}")
    return _one_thread(str(t), s, d)


def _universal(t: CxxType) -> CopyAtom | None:
    if t.name == "UniversalCopy":
        s, d = _type_bits(t, 2)
        return _one_thread(str(t), s, d)
    if t.name == "AutoVectorizingCopyWithAssumedAlignment":
        if len(t.args) > 1 or (t.args and not isinstance(t.args[0], int)):
            raise LayoutError(f"AutoVectorizingCopyWithAssumedAlignment takes <MaxVecBits>, got {t}")
        zero = _lay((1, 1), (0, 0))
        return CopyAtom(str(t), _ONE, zero, zero, zero)
    return None


def _matrix(t: CxxType) -> CopyAtom | None:
    atom = _MATRIX.get(t.name)
    if atom is not None and t.args:
        raise LayoutError(f"{t.name} takes no template arguments, got {t}")
    return atom


def resolve_copy(t: CxxType) -> CopyAtom | None:
    """The copy atom ``t`` names if it is one of this module's, else None."""
    return _matrix(t) or _cp_async(t) or _universal(t)
