"""SM100 tensor memory: 128 lanes x 512 columns of 32-bit cells per CTA, its copy atoms
(``tcgen05.ld``/``st``: CuTe's ``SM100_TMEM_LOAD_*``/``SM100_TMEM_STORE_*``) and where a UMMA
accumulator sits in it.

A warp reaches only the 32-lane sub-partition ``warp % 4``. A TMEM address is ``lane << 16 |
column``; CuTe's ``ValID`` counts bits, so lane ``l``, column ``c``, bit ``b`` is bit address
``l·2^21 + 32·c + b`` (``TMEM::DP_b`` = 2^21).

A copy op ``SM100_TMEM_LOAD_<dp>dp<b>b<n>x[_16b]`` moves, per lane of ``dp`` (32 or 16) lanes,
``n`` repetitions of ``b`` bits (16x32bx2 reads two 32-bit halves: 64 bits); ``_16b`` reads
16 bits of each of twice as many columns. The register side is the PTX fragment of the shape.

>>> atom = tmem_copy_atom("SM100_TMEM_LOAD_16dp128b1x")
>>> str(atom.dst), tmem_cell(atom, 5, 33)
('((_4,_8),(_32,_2)):((_32,_128),(_1,_1024))', (9, 1, 1))
>>> warp_lanes(5)
range(32, 64)
"""

from __future__ import annotations

import re

import numpy as np

from tensorlayout.cute import Layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atom_types import CopyAtom, MMAAtom
from tensorlayout.gpu.cxx_names import CxxType, static_layout

__all__ = ["COLUMNS", "DP_BITS", "LANES", "TMEM_COPY_NAMES", "accumulator_cell", "resolve_tmem",
           "tmem_cell", "tmem_copy_atom", "tmem_owners", "warp_lanes"]

LANES = 128
COLUMNS = 512
CELL_BITS = 32
SUBPARTITION = 32
DP_BITS = 1 << 21  #: bit-address stride of one lane (``TMEM::DP_b``)

_NAME = re.compile(r"SM100_TMEM_(LOAD|STORE)_(16dp256b|16dp128b|16dp64b|16dp32b|32dp32b)(\d+)x(_16b)?")
#: bits one lane moves per repetition
_WIDTH = {"32dp32b": 32, "16dp32b": 64, "16dp64b": 64, "16dp128b": 128, "16dp256b": 256}


def _lay(shape: object, stride: object) -> Layout:
    return static_layout(Layout(shape, stride))  # type: ignore[arg-type]


def _regs(shape: str, n: int, w: int) -> Layout:
    """(thread, bit) -> bit of the ``dp x w`` block (lane-major rows of ``w`` bits)."""
    if shape == "32dp32b":
        return _lay((32, w), (w, 1))
    if shape == "16dp32b":  # lanes 0-15 take the first half of each row, 16-31 the second
        return _lay(((16, 2), w // 2), ((w, w // 2), 1))
    if shape == "16dp64b":  # t = t0 + 2 t1 + 4 t2: lane t2 + 8 t0, 32-bit half t1
        return _lay(((2, 2, 8), 32 if n == 1 else (32, n)), ((8 * w, 32, w), 1 if n == 1 else (1, 64)))
    per = 32 if shape == "16dp128b" else 64  # four threads share a lane, ``per`` bits each
    vals: tuple[int, ...] = (per, 2) if n == 1 else (per, 2, n)
    strides = (1, 8 * w) if n == 1 else (1, 8 * w, 4 * per)
    return _lay(((4, 8), vals), ((per, w), strides))


def _build(op: str, shape: str, n: int, half: bool) -> CopyAtom:
    dp, w = int(shape[:2]), _WIDTH[shape] * n
    val_id = (_lay(((16, 2 * w // 32), dp), ((1, 32), DP_BITS)) if half
              else _lay((w, dp), (1, DP_BITS)))
    tmem, regs = _lay((32, dp * w), (0, 1)), _regs(shape, n, w)
    name = f"SM100_TMEM_{op}_{shape}{n}x{'_16b' if half else ''}"
    if op == "LOAD":
        return CopyAtom(name, _lay(32, 1), tmem, regs, tmem, val_id)
    return CopyAtom(name, _lay(32, 1), regs, tmem, tmem, val_id)


def _max_reps(shape: str) -> int:
    return min(128, 8192 // _WIDTH[shape])


#: Every TMEM copy op CuTe defines.
TMEM_COPY_NAMES: tuple[str, ...] = tuple(
    f"SM100_TMEM_{op}_{shape}{1 << i}x{h}" for op in ("LOAD", "STORE") for shape in _WIDTH
    for i in range(_max_reps(shape).bit_length()) for h in ("", "_16b"))


def resolve_tmem(t: CxxType) -> CopyAtom | None:
    """The TMEM copy atom ``t`` names, else None (a LayoutError for a repetition count that
    does not exist)."""
    m = _NAME.fullmatch(t.name)
    if m is None:
        return None
    op, shape, reps, half = m.group(1), m.group(2), int(m.group(3)), bool(m.group(4))
    if t.args or reps < 1 or reps & (reps - 1) or reps > _max_reps(shape):
        raise LayoutError(f"{t}: the repetition count of {shape} is a power of two up to "
                          f"{_max_reps(shape)}, with no template arguments")
    return _build(op, shape, reps, half)


def tmem_copy_atom(name: str) -> CopyAtom:
    """The TMEM copy atom of CuTe's name (``SM100_TMEM_LOAD_32dp32b8x``)."""
    atom = resolve_tmem(CxxType(name)) if isinstance(name, str) else None
    if atom is None:
        raise LayoutError(f"not a TMEM copy atom: {name!r}")
    return atom


def warp_lanes(warp: int) -> range:
    """The 32 lanes warp ``warp`` of a CTA may load or store: sub-partition ``warp % 4``."""
    if not isinstance(warp, int) or isinstance(warp, bool) or warp < 0:
        raise LayoutError(f"a warp index is a non-negative int, got {warp!r}")
    base = SUBPARTITION * (warp % 4)
    return range(base, base + SUBPARTITION)


def tmem_cell(atom: CopyAtom, thread: int, bit: int) -> tuple[int, int, int]:
    """``(lane, column, bit)`` in tensor memory of register bit ``bit`` of ``thread`` (0..31) for
    a TMEM copy atom, relative to the copy's base address (the warp's sub-partition base lane)."""
    if atom.val_id is None:
        raise LayoutError(f"{atom.name} is not a tensor-memory copy (it has no ValID)")
    regs = atom.dst if atom.op.startswith("SM100_TMEM_LOAD") else atom.src
    if not (0 <= thread < 32 and 0 <= bit < int(regs[1].size())):
        raise LayoutError(f"(thread {thread}, bit {bit}) is outside 32 threads x {regs[1].size()} "
                          f"register bits of {atom.name}")
    addr = int(atom.val_id(int(regs(thread, bit))))
    return addr // DP_BITS, (addr % DP_BITS) // CELL_BITS, addr % CELL_BITS


def accumulator_cell(atom: MMAAtom, m: int, n: int) -> tuple[int, int, int, int]:
    """``(cta, lane, column, bit)`` where a UMMA accumulator element ``(m, n)`` sits in tensor
    memory (CuTe's ``tmem_frg``: M = 128 per CTA uses every lane; M = 64 the first 16 lanes of
    each sub-partition; two-CTA M = 128 puts the second half of N in lanes 64-127). Every element,
    16-bit ones too, takes one 32-bit cell (``tmem_frg``'s default ``uint32_t`` storage).

    >>> from tensorlayout.gpu.atoms import mma_atom
    >>> a = mma_atom("SM100_MMA_F16BF16_SS<half_t,half_t,float,64,64,UMMA::Major::K,UMMA::Major::K>")
    >>> accumulator_cell(a, 17, 3)
    (0, 33, 3, 0)
    """
    if atom.val_bits is None or not atom.op.startswith("SM100_MMA"):
        raise LayoutError(f"{atom.name} is not a UMMA atom: its accumulator is not in tensor memory")
    mm, nn, _k = atom.shape_mnk
    if not (0 <= m < mm and 0 <= n < nn):
        raise LayoutError(f"({m}, {n}) is outside the {mm}x{nn} accumulator of {atom.name}")
    ctas = int(atom.thr_id.size())
    rows = mm // ctas
    cta, r = divmod(m, rows)
    lane, col = r, n
    if rows == 64 and ctas == 1:
        lane = r % 16 + SUBPARTITION * (r // 16)
    elif rows == 64:
        lane, col = r + 64 * (n // (nn // 2)), n % (nn // 2)
    return cta, lane, col, 0  # one 32-bit cell per element (CuTe's storage type), value in the low bits


def tmem_owners(atom: CopyAtom, warps: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """``(thread[128, C], register[128, C])``: which thread of ``warps`` warps (each at the base
    of its own sub-partition, ``warp % 4``) moves each TMEM cell of the ``C`` columns a TMEM copy
    atom touches, and in which of its 32-bit registers; -1 where none (the first holder by
    thread, then register, where several do).

    >>> thr, reg = tmem_owners(tmem_copy_atom("SM100_TMEM_LOAD_32dp32b1x"))
    >>> thr.shape, int(thr[33, 0]), int(reg[33, 0])
    ((128, 1), 33, 0)
    """
    if atom.val_id is None:
        raise LayoutError(f"{atom.name} is not a tensor-memory copy (it has no ValID)")
    if not isinstance(warps, int) or isinstance(warps, bool) or not 1 <= warps <= 4:
        raise LayoutError(f"a TMEM picture has 1 to 4 warps (one per sub-partition), got {warps!r}")
    regs = atom.dst if atom.op.startswith("SM100_TMEM_LOAD") else atom.src
    nbits = int(regs[1].size())
    table = regs.offsets().reshape(nbits, 32).T[:, ::16]  # [thread, bit] at every 16-bit half
    addr = atom.val_id.offsets()[table]
    lane, col = addr // DP_BITS, (addr % DP_BITS) // CELL_BITS
    cols = int(col.max()) + 1
    thread = np.full((LANES, cols), -1, dtype=np.int64)
    reg = np.full((LANES, cols), -1, dtype=np.int64)
    t_idx, b_idx = np.meshgrid(np.arange(32), np.arange(0, nbits, 16) // CELL_BITS, indexing="ij")
    flat = [a.ravel()[::-1] for a in (t_idx, b_idx, lane, col)]
    for w in reversed(range(warps)):  # later writes win: the first holder is written last
        base = SUBPARTITION * (w % 4)
        for t, r, ln, c in zip(*flat):
            thread[base + ln, c], reg[base + ln, c] = SUBPARTITION * w + t, r
    return thread, reg
