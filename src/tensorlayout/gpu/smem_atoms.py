"""GMMA/UMMA shared-memory layout atoms by CuTe's names, ``tile_to_shape`` over them, and the
matrix-descriptor fields a canonical operand tile implies.

An atom is ``Sw<B,M,S> o smem_ptr[bits](unset) o L``: ``L`` is 8 rows of a 16/32/64/128-byte
swizzle width (K-major: rows along MN, the width along K; MN-major: the transpose) in elements
of the value type, the swizzle XORs 16-byte chunks (``Sw<B,4,3>``; UMMA's 128B-base-32B atom
``Sw<2,5,2>`` 32-byte ones) — ``mma_traits_sm90_gmma.hpp``, ``mma_traits_sm100.hpp``.

>>> atom = smem_layout_atom("GMMA::Layout_K_SW128_Atom<half_t>")
>>> str(atom)
'Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)'
>>> str(tile_to_shape(atom, (128, 64)))
'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))'
>>> d = matrix_descriptor(tile_to_shape(atom, (128, 64)), "K", "GMMA", k=16)
>>> d.layout_type, d.leading_byte_offset, d.stride_byte_offset
('B128', 1, 64)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tensorlayout.cute import Layout, _, composition, logical_divide, recast_layout
from tensorlayout.cute import tile_to_shape as _tile_layout
from tensorlayout.cute.int_tuple import IntTuple
from tensorlayout.cute.swizzle import ComposedLayout, SmemPtrFlag, Swizzle
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.cxx_names import parse_type, sizeof_bits, static_layout

__all__ = ["MatrixDescriptor", "matrix_descriptor", "smem_layout_atom", "tile_to_shape"]

#: swizzle name -> (B, M, S, width in bits, rows)
_SWIZZLES = {"INTER": (0, 4, 3, 128, 8), "SW32": (1, 4, 3, 256, 8), "SW64": (2, 4, 3, 512, 8),
             "SW128": (3, 4, 3, 1024, 8), "SW128_32B": (2, 5, 2, 1024, 4)}
_NAME = re.compile(r"(GMMA|UMMA)::Layout_(K|MN)_(INTER|SW32|SW64|SW128|SW128_32B)_Atom(_Bits)?")


def _atom(major: str, swizzle: str, bits: int) -> ComposedLayout:
    b, m, s, width, rows = _SWIZZLES[swizzle]
    if width % bits:
        raise LayoutError(f"a {width}-bit swizzle row does not hold whole {bits}-bit values")
    w = width // bits
    inner = Layout((rows, w), (w, 1)) if major == "K" else Layout((w, rows), (1, w))
    return ComposedLayout(Swizzle(b, m, s), SmemPtrFlag(bits), static_layout(inner))


def smem_layout_atom(name: str) -> ComposedLayout:
    """The atom named as in CuTe: ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>``, the
    ``UMMA::`` aliases, ``..._Atom_Bits`` (1-bit values) and ``UMMA::Layout_MN_SW128_32B_Atom<T>``."""
    t = parse_type(name)
    m = _NAME.fullmatch(t.name)
    if m is None:
        raise LayoutError(f"unknown shared-memory layout atom {name!r}")
    family, major, swizzle, raw = m.groups()
    if swizzle == "SW128_32B" and (family, major) != ("UMMA", "MN"):
        raise LayoutError(f"{t.name}: the 32-byte-base 128B swizzle is UMMA's and MN-major only")
    if bool(raw) == bool(t.args) or len(t.args) > 1:
        raise LayoutError(f"{t.name} takes {'no' if raw else 'one'} value type, got {name!r}")
    return _atom(major, swizzle, 1 if raw else sizeof_bits(str(t.args[0])))


def tile_to_shape(atom: ComposedLayout | Layout, shape: IntTuple) -> ComposedLayout | Layout:
    """CuTe's ``tile_to_shape``: the atom repeated (column-major over the tiles) to ``shape``; a
    composed atom keeps its swizzle and pointer flag."""
    if isinstance(atom, ComposedLayout):
        if not isinstance(atom.inner, Layout):
            raise LayoutError("tile_to_shape: the atom's inner function is a plain layout")
        return ComposedLayout(atom.outer, atom.offset, tile_to_shape(atom.inner, shape))
    if not isinstance(atom, Layout):
        raise LayoutError(f"tile_to_shape takes a layout or a composed layout, got {type(atom).__name__}")
    return static_layout(_tile_layout(atom, shape))


@dataclass(frozen=True)
class MatrixDescriptor:
    """The shared-memory matrix-descriptor fields of an operand tile (16-byte units, as encoded):
    ``layout_type`` by name and code, leading/stride byte offsets, base offset (0 for an aligned
    start) and, for UMMA, the descriptor version (1)."""

    kind: str
    major: str
    layout_type: str
    layout_type_code: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int = 0
    version: int | None = None


_GMMA_TYPES = {(0, 4, 3): ("INTERLEAVE", 0, 1), (1, 4, 3): ("B32", 3, 2), (2, 4, 3): ("B64", 2, 4),
               (3, 4, 3): ("B128", 1, 8)}
_UMMA_TYPES = {(0, 4, 3): ("SWIZZLE_NONE", 0, 1), (1, 4, 3): ("SWIZZLE_32B", 6, 2),
               (2, 4, 3): ("SWIZZLE_64B", 4, 4), (3, 4, 3): ("SWIZZLE_128B", 2, 8),
               (2, 5, 2): ("SWIZZLE_128B_BASE32B", 1, 8)}


def _strides(lay: Layout) -> tuple[int, int, int, int]:
    """``stride<0,0>, stride<0,1>, stride<1,0>, stride<1,1>`` of a ``((a,b),(c,d))`` layout."""
    try:
        (s00, s01), (s10, s11) = lay.stride  # type: ignore[misc]
    except (TypeError, ValueError):
        raise LayoutError(f"not a canonical operand layout: {lay} is not ((a,b),(c,d))") from None
    return int(s00), int(s01), int(s10), int(s11)


def matrix_descriptor(tile: ComposedLayout, major: str, kind: str = "UMMA",
                      k: int | None = None) -> MatrixDescriptor:
    """CuTe's ``make_gmma_desc<major>`` / ``make_umma_desc<major>`` on one MMA's ``(MN, K)``
    operand tile: ``tile``, or its first ``k`` columns (one instruction's K block of a tiled smem
    layout); the fields, or a LayoutError where C++'s static_asserts reject the layout."""
    if kind not in ("GMMA", "UMMA") or major not in ("K", "MN"):
        raise LayoutError(f"kind is GMMA or UMMA and major K or MN, got {kind!r}, {major!r}")
    if not (isinstance(tile, ComposedLayout) and isinstance(tile.outer, Swizzle)
            and isinstance(tile.offset, SmemPtrFlag) and isinstance(tile.inner, Layout)
            and tile.inner.rank() == 2):
        raise LayoutError("a descriptor describes a rank-2 swizzled smem layout 'Sw<..> o smem_ptr o L', "
                          f"got {tile}")
    sw = tile.outer
    inner = tile.inner if k is None else composition(tile.inner, (_, k))
    name, code, w = (_GMMA_TYPES if kind == "GMMA" else _UMMA_TYPES).get(
        (sw.bits, sw.base, sw.shift), ("", -1, 0))
    if not name:
        raise LayoutError(f"{kind} has no layout type for {sw}")
    u128 = recast_layout(inner, tile.offset.bits, 128)
    none = code == 0
    if major == "MN":
        k_atom = 4 if name == "SWIZZLE_128B_BASE32B" else 8
        s00, s01, s10, s11 = _strides(logical_divide(u128, (Layout(w, 1), Layout(k_atom, 1))))
        if (not none and s00 != 1) or s10 != w:
            raise LayoutError(f"not a canonical {kind} MN-major layout: {tile}")
        lbo, sbo = (s11, s01) if none else (s01, s11)
    else:
        if name == "SWIZZLE_128B_BASE32B" or int(u128[0].size()) % 8:
            raise LayoutError(f"not a canonical {kind} K-major layout (MN a multiple of 8 rows of 16 "
                              f"bytes): {tile}")
        s00, s01, s10, _s11 = _strides(logical_divide(u128, (Layout(8, 1), Layout(2, 1))))
        if s00 != w or (not none and s10 != 1):
            raise LayoutError(f"not a canonical {kind} K-major layout: {tile}")
        lbo, sbo = s10, s01
    return MatrixDescriptor(kind, major, name, code, lbo, sbo, 0, 1 if kind == "UMMA" else None)
