"""The accesses a shared-memory layout is designed for, as warp instructions over the tile.

An access is what one instruction of one warp touches: lane ``t`` moves values ``0..v-1`` of a
group as one vector. Its ``coords[t, j]`` are ``(mn, k)`` coordinates of a footprint of the
``(MN, K)`` tile; the whole tile is covered by translating the footprint. The spellings read:

* ``cp.async 16B`` (also 4B, 8B), ``SM80_CP_ASYNC_CACHEALWAYS<uint128_t>``, ``UniversalCopy<uint128_t>``
  written: a cooperative TiledCopy, threads along the contiguous dimension (CUTLASS's SM80 configs);
* ``SM75_U32x4_LDSM_N`` and the other ``ldmatrix``/``stmatrix`` atoms, and ``UniversalCopy<..>``
  read: ``make_tiled_copy_A`` of the atom with the element type's SM80 ``mma.sync``;
* ``SM80_16x8x16_F32F16F16F32_TN:A`` (or ``:B``): that MMA operand's TV layout, vectorised where
  its values run along the contiguous dimension;
* a Triton distributed layout (``#ttg.blocked<{...}>``, ``#ttg.dot_op<{...}>``, ``#ttg.linear<{...}>``)
  over the tile: thread ``32·warp + lane``, value ``register``, vectorised as an operand;
* ``TMA`` (a box written by the tensor-memory accelerator) and ``GMMA``/``UMMA`` (the core
  matrices of ``wgmma``/``tcgen05.mma`` reads): their footprints depend on the layout chosen.

>>> a = parse_access("cp.async 16B", "write", (128, 32), 16, "K")
>>> a.footprint, a.vector, a.coords[1, 0].tolist(), a.coords[4, 0].tolist()
((32, 32), 8, [0, 8], [1, 0])
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tensorlayout.cute import Layout, make_layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atom_types import CopyAtom
from tensorlayout.gpu.atoms import copy_atom, mma_atom
from tensorlayout.gpu.tiled import TiledCopy, make_tiled_copy, make_tiled_copy_a, make_tiled_mma
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.triton._mlir import is_triton_text
from tensorlayout.triton._mlir import parse_layout as parse_triton

__all__ = ["DTYPES", "Access", "AccessSpec", "dtype_bits", "parse_access"]

#: Element types: name -> (bits, CuTe's C++ type, Triton's element name).
DTYPES: dict[str, tuple[int, str, str]] = {
    "f16": (16, "half_t", "f16"), "bf16": (16, "bfloat16_t", "bf16"), "tf32": (32, "tfloat32_t", "f32"),
    "f32": (32, "float", "f32"), "s8": (8, "int8_t", "i8"), "i8": (8, "int8_t", "i8"),
    "u8": (8, "uint8_t", "i8"), "f8e4m3": (8, "float_e4m3_t", "f8E4M3FN"),
    "f8e5m2": (8, "float_e5m2_t", "f8E5M2"), "f64": (64, "double", "f64"),
}
#: The SM80 ``mma.sync`` whose operand tiling an ``ldmatrix``/``stmatrix`` read or write follows, by bits.
_MMA_FOR_BITS = {16: "SM80_16x8x16_F32F16F16F32_TN", 32: "SM80_16x8x8_F32TF32TF32F32_TN",
                 8: "SM80_16x8x32_S32S8S8S32_TN", 64: "SM80_8x8x4_F64F64F64F64_TN"}
#: Unit kinds: a warp of threads, a TMA box, the core matrices an MMA reads from a descriptor.
UNITS = ("thread", "tma", "gmma", "umma")


def dtype_bits(dtype: str) -> int:
    """The bits of an element type named as in :data:`DTYPES`.

    >>> dtype_bits("bf16")
    16
    """
    if dtype not in DTYPES:
        raise LayoutError(f"unknown element type {dtype!r}; known: {', '.join(DTYPES)}")
    return DTYPES[dtype][0]


@dataclass(frozen=True, eq=False)
class Access:
    """One access: ``coords[thread, value] = (mn, k)`` over a ``footprint`` of the tile, lanes moving
    ``vector`` consecutive values at a time; ``unit`` says what issues it (:data:`UNITS`)."""

    name: str
    role: str
    unit: str
    footprint: tuple[int, int]
    coords: np.ndarray = field(repr=False)
    vector: int

    @property
    def threads(self) -> int:
        return int(self.coords.shape[0])


#: What a caller may pass for an access: a spelling, a TiledCopy (its smem side) or a TV layout.
AccessSpec = str | TiledCopy | TVLayout


def _coords_of(tv: TVLayout) -> np.ndarray:
    idx = tv.table()
    return np.stack([idx % tv.tile[0], idx // tv.tile[0]], axis=-1).astype(np.int64)


def _natural_vector(coords: np.ndarray, bits: int, dim: int) -> int:
    """The widest run (a power of two, at most 128 bits) in which every lane's consecutive values
    step one element along ``dim`` from an aligned start."""
    values = coords.shape[1]
    best = 1
    v = 2
    while v * bits <= 128 and values % v == 0:
        groups = coords.reshape(coords.shape[0], values // v, v, 2)
        step = np.zeros(2, dtype=np.int64)
        step[dim] = 1
        expect = groups[:, :, :1, :] + np.arange(v)[None, None, :, None] * step
        if not ((groups == expect).all() and (groups[:, :, 0, dim] % v == 0).all()):
            break
        best, v = v, 2 * v
    return best


def from_tv(name: str, role: str, tv: TVLayout, bits: int, major: str) -> Access:
    """An access from a TV layout over a footprint of the tile, vectorised where it runs along
    the contiguous dimension of ``major``."""
    coords = _coords_of(tv)
    return Access(name, role, "thread", tv.tile, coords, _natural_vector(coords, bits, _contig(major)))


def _contig(major: str) -> int:
    """The tile dimension that is contiguous: ``K`` (dim 1) or ``MN`` (dim 0)."""
    return 1 if major == "K" else 0


def cooperative(name: str, role: str, atom: CopyAtom, tile: tuple[int, int], bits: int, major: str,
                vector_bits: int, threads: int) -> Access:
    """A CUTLASS-style gmem<->smem TiledCopy: ``threads`` threads, each a ``vector_bits`` vector along
    the contiguous dimension, threads along it first."""
    c = _contig(major)
    vec = vector_bits // bits
    if vec < 1 or vector_bits % bits or tile[c] % vec:
        raise LayoutError(f"{name}: {vector_bits}-bit vectors of {bits}-bit elements do not tile the "
                          f"contiguous extent {tile[c]} of the {tile[0]}x{tile[1]} tile")
    along = min(tile[c] // vec, threads)
    across = max(1, min(threads // along, tile[1 - c]))
    if major == "K":
        thr, val = Layout((across, along), (along, 1)), make_layout((1, vec))
    else:
        thr, val = Layout((along, across), (1, along)), make_layout((vec, 1))
    tc = make_tiled_copy(atom, bits, thr, val)
    tv = tc.tv_d() if role == "write" else tc.tv_s()
    return Access(name, role, "thread", tv.tile, _coords_of(tv), vec)


def core_matrices(name: str, role: str, unit: str, bits: int, major: str) -> Access:
    """The 8 rows of 16 bytes of one core matrix per phase, as ``wgmma``/``tcgen05.mma`` read them:
    K-major rows along MN, MN-major rows along K."""
    vec = 128 // bits
    t, v = np.meshgrid(np.arange(8), np.arange(vec), indexing="ij")
    coords = np.stack([t, v] if major == "K" else [v, t], axis=-1).astype(np.int64)
    return Access(name, role, unit, (8, vec) if major == "K" else (vec, 8), coords, vec)


def tma_box(name: str, role: str, bits: int, major: str, inner: int, rows: int) -> Access:
    """A TMA box of ``inner`` contiguous elements by ``rows``, modelled as 16-byte chunks written in
    the box's order, eight to a phase (the bank model's 16-byte phases)."""
    vec = 128 // bits
    per_row = max(inner // vec, 1)
    lanes = np.arange(per_row * rows)
    row, col = lanes // per_row, (lanes % per_row) * vec
    base = np.stack([row, col] if major == "K" else [col, row], axis=-1)
    step = np.array([0, 1] if major == "K" else [1, 0])
    coords = base[:, None, :] + np.arange(vec)[None, :, None] * step
    return Access(name, role, "tma", (rows, inner) if major == "K" else (inner, rows),
                  coords.astype(np.int64), vec)


_CP_ASYNC = re.compile(r"cp\.async\s*(4|8|16)\s*B", re.IGNORECASE)
_OPERAND = re.compile(r"(SM\w+):([AB])")


def _mma_tiled(name: str, role: str, atom: CopyAtom, bits: int, major: str) -> Access:
    mma = _MMA_FOR_BITS.get(bits)
    if mma is None:
        raise LayoutError(f"{name}: no SM80 mma.sync tiles {bits}-bit operands")
    tc = make_tiled_copy_a(atom, bits, make_tiled_mma(mma_atom(mma)))
    return from_tv(name, role, tc.tv_d() if role == "write" else tc.tv_s(), bits, major)


def _copy_spec(spec: str, role: str, tile: tuple[int, int], bits: int, major: str,
               threads: int) -> Access | None:
    m = _CP_ASYNC.fullmatch(spec.strip())
    if m:
        vb = 8 * int(m.group(1))
        atom = copy_atom(f"SM80_CP_ASYNC_CACHEALWAYS<uint{vb}_t>")
        return cooperative(spec, role, atom, tile, bits, major, vb, threads)
    if "LDSM" in spec or "STSM" in spec:
        return _mma_tiled(spec, role, copy_atom(spec), bits, major)
    if spec.startswith(("SM80_CP_ASYNC", "UniversalCopy")):
        atom = copy_atom(spec)
        vb = int(atom.val_layout_src(1).size())
        if role == "read" and spec.startswith("UniversalCopy"):
            return _mma_tiled(spec, role, atom, bits, major)
        return cooperative(spec, role, atom, tile, bits, major, vb, threads)
    return None


def _operand_spec(spec: str, role: str, bits: int, major: str) -> Access | None:
    m = _OPERAND.fullmatch(spec.strip())
    if m is None:
        return None
    atom = mma_atom(m.group(1))
    return from_tv(spec, role, atom.tv_a() if m.group(2) == "A" else atom.tv_b(), bits, major)


def _descriptor_spec(spec: str, role: str, bits: int, major: str) -> Access | None:
    unit = spec.strip().lower()
    if unit not in ("gmma", "umma"):
        return None
    if role != "read":
        raise LayoutError(f"{spec} reads shared memory; it cannot be a write")
    return core_matrices(spec.strip().upper(), role, unit, bits, major)


def _tma_spec(spec: str, role: str, bits: int, major: str) -> Access | None:
    if spec.strip().lower() != "tma":
        return None
    return tma_box("TMA", role, bits, major, 128 // bits, 8)  # the box is set by the layout chosen


def _triton_spec(spec: str, role: str, tile: tuple[int, int], bits: int, major: str) -> Access | None:
    """A Triton distributed layout over the tile: ``coords[32·warp + lane, register]``."""
    if not is_triton_text(spec):
        return None
    ll = parse_triton(spec, list(tile))
    sizes = dict(ll.get_in_dims())
    if ll.get_out_dim_sizes() != list(tile) or sizes.get("block", 1) != 1 or "register" not in sizes:
        raise LayoutError(f"{spec}: a distributed layout of one CTA over the {tile[0]}x{tile[1]} tile is "
                          f"needed, got in dims {sizes} over {ll.get_out_dim_sizes()}")
    warps, lanes, regs = sizes.get("warp", 1), sizes.get("lane", 1), sizes["register"]
    t = np.arange(warps * lanes)[:, None]
    out = ll.apply_batch({"register": np.arange(regs)[None, :], "lane": t % lanes, "warp": t // lanes,
                          "block": 0})
    coords = np.stack(np.broadcast_arrays(out["dim0"], out["dim1"]), axis=-1).astype(np.int64)
    return Access(spec, role, "thread", tile, coords, _natural_vector(coords, bits, _contig(major)))


_SpecRule = Callable[[str, str, tuple[int, int], int, str, int], "Access | None"]
#: The spellings read, tried in order (each returns None when the text is not its kind).
_RULES: tuple[_SpecRule, ...] = (
    lambda s, r, t, b, m, n: _tma_spec(s, r, b, m),
    lambda s, r, t, b, m, n: _descriptor_spec(s, r, b, m),
    lambda s, r, t, b, m, n: _operand_spec(s, r, b, m),
    lambda s, r, t, b, m, n: _triton_spec(s, r, t, b, m),
    _copy_spec,
)


def parse_access(spec: AccessSpec, role: str, tile: tuple[int, int], bits: int, major: str,
                 threads: int = 128) -> Access:
    """The access ``spec`` names (module docstring), as a ``role`` (``"write"`` or ``"read"``) of a
    ``major``-major tile of ``bits``-bit elements."""
    if role not in ("write", "read") or major not in ("K", "MN"):
        raise LayoutError(f"role is 'write' or 'read' and major 'K' or 'MN', got {role!r}, {major!r}")
    if isinstance(spec, TiledCopy):
        side = spec.tv_d() if role == "write" else spec.tv_s()
        return from_tv(str(spec.atom.name), role, side, bits, major)
    if isinstance(spec, TVLayout):
        return from_tv(spec.name or str(spec), role, spec, bits, major)
    if not isinstance(spec, str):
        raise LayoutError(f"an access is a name, a TiledCopy or a TVLayout, got {type(spec).__name__}")
    for rule in _RULES:
        found = rule(spec, role, tile, bits, major, threads)
        if found is not None:
            return found
    raise LayoutError(f"unknown access {spec!r}: expected 'cp.async 16B', a copy atom (SM75_U32x4_LDSM_N, "
                      "UniversalCopy<uint128_t>, ...), an MMA operand (SM80_16x8x16_F32F16F16F32_TN:A), "
                      "a Triton layout (#ttg.blocked<{...}>), TMA, GMMA or UMMA")
