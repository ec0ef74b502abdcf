"""Shared-memory layout synthesis: the layouts of an ``(MN, K)`` tile on which every given write and
read is conflict-free at its widest vector, smallest first, each with its proof.

Candidates are the unswizzled rows, CuTe's GMMA/UMMA atoms ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,
SW128}_Atom`` tiled over the tile (``tile_to_shape``) and ``Sw<B,M,S>`` on byte addresses over
plain rows; where none works, rows padded apart. A candidate passes when, for every access, each
instruction over the whole tile moves whole aligned vectors and each phase takes one wavefront
(the bank model of :mod:`tensorlayout.core.banks`); TMA must write its widest box rows and
GMMA/UMMA must read through a matrix descriptor. Each smaller candidate that fails says why: the
first conflicting pair of threads, or the rule it breaks.

>>> d = design_smem((128, 32), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
>>> d.best.candidate.name
'GMMA::Layout_K_SW64_Atom<half_t>'
>>> d.best.candidate.cute_text()
'Sw<2,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_32,_1)):((_32,_256),(_1,_0))'
>>> str(d.rejected[0].first_failure()).split(":")[0]
'SM75_U32x4_LDSM_N'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tensorlayout.design._access import DTYPES, Access, AccessSpec, dtype_bits, parse_access
from tensorlayout.design._candidates import Candidate, candidates, padded_candidates
from tensorlayout.design._proof import AccessProof, Conflict, prove, short
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.tv import check_tile

__all__ = ["SmemAnswer", "SmemDesign", "design_smem"]

#: Refused candidates the text report lists (the JSON form has them all).
REFUSED_SHOWN = 6


@dataclass(frozen=True)
class SmemAnswer:
    """One candidate layout and the proof of each access on it."""

    candidate: Candidate
    proofs: tuple[AccessProof, ...]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.proofs)

    def first_failure(self) -> Conflict | str | None:
        """The first conflicting pair of threads, or the first rule broken (None when it passes)."""
        for p in self.proofs:
            if not p.ok:
                return p.conflict or p.failure
        return None

    def to_dict(self) -> dict[str, object]:
        c = self.candidate
        fail = self.first_failure()
        return {"name": c.name, "atom_bytes": c.atom_bytes, "allocated_bytes": c.allocated_bytes,
                "swizzle_bytes": str(c.swizzle), "cute": c.cute_text(), "cute_cpp": c.cute_cpp(),
                "cute_dsl": c.cute_dsl(), "triton": list(c.triton()),
                "atom": c.atom_name, "k_first": c.k_first,
                "umma_atom": c.atom_name.replace("GMMA::", "UMMA::", 1) if c.atom_name else None,
                "ok": self.ok,
                "why_not": None if fail is None else str(fail),
                "proofs": [p.to_dict() for p in self.proofs]}


@dataclass(frozen=True)
class SmemDesign:
    """The answer of :func:`design_smem`: ``layouts`` (every passing candidate, smallest first) and
    ``rejected`` (every failing one, with its reason)."""

    tile: tuple[int, int]
    dtype: str
    major: str
    accesses: tuple[str, ...]
    layouts: tuple[SmemAnswer, ...]
    rejected: tuple[SmemAnswer, ...]

    @property
    def best(self) -> SmemAnswer:
        """The smallest passing layout (a LayoutError when none passes)."""
        if not self.layouts:
            why = self.rejected[-1].first_failure()
            raise LayoutError(f"no layout of the {self.tile[0]}x{self.tile[1]} {self.dtype} tile serves "
                              f"{', '.join(self.accesses)} conflict-free: {why}")
        return self.layouts[0]

    def to_dict(self) -> dict[str, object]:
        return {"tile": list(self.tile), "dtype": self.dtype, "major": self.major,
                "accesses": list(self.accesses), "units": "bytes: swizzles act on byte addresses; bank = "
                "byte address / 4 mod 32",
                "layouts": [a.to_dict() for a in self.layouts],
                "rejected": [a.to_dict() for a in self.rejected]}

    def __str__(self) -> str:
        return "\n".join(format_design(self))


def _proof_line(p: AccessProof) -> str:
    phases = " | ".join(" ".join(str(b) for b in ph) for ph in p.banks[:2])
    more = f" | ... ({len(p.banks)} phases)" if len(p.banks) > 2 else ""
    if not p.ok and p.failure:
        return f"  {p.role:<5} {short(p.access):<20} {p.failure}"
    return (f"  {p.role:<5} {short(p.access):<20} {p.vector_bytes:>3} B {p.lanes_per_phase:>2} lanes/phase "
            f"{p.instructions:>4} instr  {p.wavefronts_per_instruction} wavefronts/"
            f"{p.phases_per_instruction} phases  banks: {phases}{more}")


def format_design(d: SmemDesign) -> list[str]:
    """The text report: the chosen layout in every spelling, its proof, the smaller ones refused."""
    out = [f"shared layout for a {d.tile[0]}x{d.tile[1]} {d.dtype} tile, {d.major}-major: "
           + "; ".join(short(a) for a in d.accesses)]
    if not d.layouts:
        out.append("no candidate is conflict-free")
    for ans in d.layouts[:1]:
        c = ans.candidate
        out += [f"chosen: {c.name} ({c.atom_bytes}-byte atom, {c.allocated_bytes} bytes)",
                f"  CuTe     {c.cute_text()}", f"  C++      {c.cute_cpp()}", f"  CuTe DSL {c.cute_dsl()}"]
        out += [f"  Triton   {t}" for t in c.triton()]
        out.append("proof (byte addresses, Sw on bytes; bank = byte/4 mod 32; first bank of each lane, "
                   "instruction 0):")
        out += [_proof_line(p) for p in ans.proofs]
    if len(d.layouts) > 1:
        out.append("also conflict-free: " + ", ".join(a.candidate.name for a in d.layouts[1:]))
    first = d.layouts[0].candidate.atom_bytes if d.layouts else None
    smaller = [a for a in d.rejected if first is None or a.candidate.atom_bytes <= first]
    if smaller:
        out.append("refused (smaller or as small):")
    out += [f"  {a.candidate.name}: {a.first_failure()}" for a in smaller[:REFUSED_SHOWN]]
    if len(smaller) > REFUSED_SHOWN:
        out.append(f"  ... and {len(smaller) - REFUSED_SHOWN} more (--json lists every one)")
    return out


def _answers(accesses: Sequence[Access], cands: Sequence[Candidate]) -> list[SmemAnswer]:
    return [SmemAnswer(c, tuple(prove(a, c) for a in accesses)) for c in cands]


def design_smem(tile: tuple[int, int], dtype: str, writes: Sequence[AccessSpec] = (),
                reads: Sequence[AccessSpec] = (), major: str = "K", threads: int = 128) -> SmemDesign:
    """The shared layouts of an ``(MN, K)`` tile of ``dtype`` that serve ``writes`` and ``reads``
    conflict-free at their widest vectors, smallest first (module docstring).

    >>> d = design_smem((64, 64), "f16", writes=["TMA"], reads=["GMMA"])
    >>> d.best.candidate.name
    'GMMA::Layout_K_SW128_Atom<half_t>'
    >>> d.best.candidate.triton()[0]
    '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>'
    """
    tile = check_tile(tile)
    bits = dtype_bits(dtype)
    if not writes and not reads:
        raise LayoutError("design_smem needs at least one write or read")
    if not isinstance(threads, int) or threads < 1:
        raise LayoutError(f"threads must be a positive int, got {threads!r}")
    accesses = [parse_access(s, "write", tile, bits, major, threads) for s in writes]
    accesses += [parse_access(s, "read", tile, bits, major, threads) for s in reads]
    ctype = DTYPES[dtype][1]
    found = _answers(accesses, candidates(tile, bits, major, ctype))
    if not any(a.ok for a in found):
        found += _answers(accesses, padded_candidates(tile, bits, major, ctype))
    names = tuple(f"{a.role} {a.name}" for a in accesses)
    return SmemDesign(tile, dtype, major, names, tuple(a for a in found if a.ok),
                      tuple(a for a in found if not a.ok))
