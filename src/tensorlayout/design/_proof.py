"""The proof that a layout serves an access: every instruction of the access over the whole tile, its
phases under the bank model (:mod:`tensorlayout.core.banks`), and the first conflicting pair of
threads where one phase needs more than one wavefront.

Byte addresses come from :meth:`Candidate.byte_offsets` (the swizzle on bytes); a bank is
``byte address / 4 mod 32``; a phase takes as many wavefronts as the most distinct 4-byte words
one bank serves.

>>> from tensorlayout.design._access import parse_access
>>> from tensorlayout.design._candidates import Candidate
>>> acc = parse_access("SM75_U32x4_LDSM_N", "read", (64, 64), 16, "K")
>>> prove(acc, Candidate("K", "plain", 0, 128, 0, (64, 64), 16)).conflict.pair
(0, 1)
>>> prove(acc, Candidate("K", "atom", 3, 128, 0, (64, 64), 16)).wavefronts_per_instruction
4
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensorlayout.core.banks import BANKS, LANES_PER_PHASE, phase_of
from tensorlayout.cute import Layout
from tensorlayout.design._access import Access, tma_box
from tensorlayout.design._candidates import Candidate
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.smem_atoms import matrix_descriptor
from tensorlayout.gpu.tma import make_tma_copy

__all__ = ["AccessProof", "Conflict", "prove", "short"]

#: Access names longer than this are cut in text (a Triton layout); JSON keeps them whole.
SHORT = 40


def short(name: str) -> str:
    """``name`` cut to :data:`SHORT` characters for a text report.

    >>> short("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1]}>")
    '#ttg.blocked<{sizePerThread = [1, 8],...'
    """
    return name if len(name) <= SHORT else name[:SHORT - 3] + "..."


@dataclass(frozen=True)
class Conflict:
    """Two threads of one phase whose different 4-byte words sit in the same bank."""

    access: str
    instruction: int
    phase: int
    wavefronts: int
    bank: int
    pair: tuple[int, int]
    coords: tuple[tuple[int, int], tuple[int, int]]
    byte_addresses: tuple[int, int]

    def __str__(self) -> str:
        (a, b), (ca, cb), (xa, xb) = self.pair, self.coords, self.byte_addresses
        return (f"{short(self.access)}: threads {a} and {b} (elements {ca} and {cb}, bytes {xa} and {xb}) "
                f"both hit bank {self.bank} in phase {self.phase} of instruction {self.instruction}: "
                f"{self.wavefronts}-way")


@dataclass(frozen=True)
class AccessProof:
    """One access on one layout: its vector, phases and wavefronts per instruction (the worst over
    the tile), the first bank of each lane in each phase of instruction 0, and why it fails if it
    does (``conflict`` or ``failure``)."""

    access: str
    role: str
    vector_bytes: int
    lanes_per_phase: int
    instructions: int
    phases_per_instruction: int
    wavefronts_per_instruction: int
    banks: tuple[tuple[int, ...], ...]
    conflict: Conflict | None = None
    failure: str = ""
    #: ``(phase, thread, mn, k, byte address)`` of every element instruction 0 moves
    cells: tuple[tuple[int, int, int, int, int], ...] = ()

    @property
    def ok(self) -> bool:
        return self.conflict is None and not self.failure

    def to_dict(self) -> dict[str, object]:
        keys = ("access", "role", "vector_bytes", "lanes_per_phase", "instructions", "phases_per_instruction",
                "wavefronts_per_instruction", "failure")
        d = {k: getattr(self, k) for k in keys}
        d["banks"] = [list(b) for b in self.banks]
        d["conflict"] = None if self.conflict is None else {
            "instruction": self.conflict.instruction, "phase": self.conflict.phase,
            "wavefronts": self.conflict.wavefronts, "bank": self.conflict.bank,
            "threads": list(self.conflict.pair),
            "elements": [list(c) for c in self.conflict.coords],
            "byte_addresses": list(self.conflict.byte_addresses)}
        return d


def _failed(access: Access, why: str) -> AccessProof:
    return AccessProof(access.name, access.role, 0, 0, 0, 0, 0, (), None, why)


def _instructions(access: Access, table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte addresses ``(I, L, v)``, coordinates ``(I, L, v, 2)`` and thread ids ``(I, L)`` of every
    instruction (translation of the footprint, warp, vector group) over the tile."""
    tile, (a, b) = table.shape, access.footprint
    if tile[0] % a or tile[1] % b:
        raise LayoutError(f"{access.name} covers {a}x{b} elements at a time, which does not tile "
                          f"the {tile[0]}x{tile[1]} tile")
    dm, dk = np.meshgrid(np.arange(0, tile[0], a), np.arange(0, tile[1], b), indexing="ij")
    shifts = np.stack([dm.ravel(), dk.ravel()], axis=-1)
    coords = access.coords[None] + shifts[:, None, None, :]  # (R, T, V, 2)
    r, t, v = coords.shape[:3]
    lanes, vec = min(t, 32), access.vector
    shape = (r, t // lanes, lanes, v // vec, vec)
    coords = coords.reshape(*shape, 2).transpose(0, 1, 3, 2, 4, 5).reshape(-1, lanes, vec, 2)
    addr = table[coords[..., 0], coords[..., 1]]
    thread = np.broadcast_to(np.arange(t).reshape(1, t // lanes, 1, lanes), (r, t // lanes, v // vec, lanes))
    return addr, coords, thread.reshape(-1, lanes)


def _vector_failure(access: Access, addr: np.ndarray, coords: np.ndarray, thread: np.ndarray,
                    ebytes: int) -> str:
    """Why some lane's values are not one aligned vector (empty when all are)."""
    vb = access.vector * ebytes
    good = (addr == addr[..., :1] + ebytes * np.arange(access.vector)).all(-1) & (addr[..., 0] % vb == 0)
    if good.all():
        return ""
    i, lane = (int(x) for x in np.argwhere(~good)[0])
    return (f"{short(access.name)}: thread {int(thread[i, lane])}'s {access.vector} values "
            f"{[tuple(c) for c in coords[i, lane].tolist()][:4]}... sit at bytes "
            f"{addr[i, lane].tolist()[:4]}..., "
            f"not one aligned {vb}-byte vector")


def _words(start: np.ndarray, vb: int) -> np.ndarray:
    """``(..., nw)``: the 4-byte words a ``vb``-byte access at each start touches."""
    return start[..., None] // 4 + np.arange(max(vb // 4, 1))


def _wavefronts(words: np.ndarray) -> np.ndarray:
    """Wavefronts of each phase ``words[p, n]``: the most distinct words any bank serves."""
    w = np.sort(words, axis=1)
    first = np.ones_like(w, dtype=bool)
    first[:, 1:] = w[:, 1:] != w[:, :-1]
    counts = np.zeros((w.shape[0], BANKS), dtype=np.int64)
    rows = np.broadcast_to(np.arange(w.shape[0])[:, None], w.shape)
    np.add.at(counts, (rows[first], (w % BANKS)[first]), 1)
    return counts.max(axis=1)


def _conflict(access: Access, i: int, p: int, lanes: np.ndarray, words: np.ndarray, addr: np.ndarray,
              coords: np.ndarray, thread: np.ndarray) -> Conflict:
    """The first pair of lanes of phase ``p`` of instruction ``i`` with different words in one bank."""
    ph = phase_of(lanes.tolist(), {int(lane): words[k].tolist() for k, lane in enumerate(lanes)})
    owner: dict[int, tuple[int, int]] = {}
    for k, lane in enumerate(lanes):
        for w in words[k].tolist():
            bank = w % BANKS
            if bank in owner and owner[bank][1] != w:
                first = owner[bank][0]
                pair = (int(thread[i, first]), int(thread[i, lane]))
                cs = (tuple(coords[i, first, 0].tolist()), tuple(coords[i, lane, 0].tolist()))
                return Conflict(access.name, i, p, ph.wavefronts, bank, pair, cs,
                                (int(addr[i, first, 0]), int(addr[i, lane, 0])))
            owner.setdefault(bank, (int(lane), w))
    raise AssertionError("a phase of more than one wavefront has two words in one bank")


def prove_threads(access: Access, cand: Candidate) -> AccessProof:
    """The proof for an access issued by threads (or modelled so) on ``cand``."""
    table = cand.byte_offsets()
    addr, coords, thread = _instructions(access, table)
    why = _vector_failure(access, addr, coords, thread, cand.element_bytes)
    if why:
        return _failed(access, why)
    vb = access.vector * cand.element_bytes
    lanes = addr.shape[1]
    lpp = min(LANES_PER_PHASE.get(vb, 32), lanes)
    words = _words(addr[..., 0], vb)  # (I, L, nw)
    n_i, n_p = words.shape[0], lanes // lpp
    per_phase = words.reshape(n_i * n_p, lpp * words.shape[2])
    wave = _wavefronts(per_phase).reshape(n_i, n_p)
    banks = tuple(tuple(int(x) for x in (words[0, p * lpp:(p + 1) * lpp, 0] % BANKS)) for p in range(n_p))
    conflict = None
    if (wave > 1).any():
        i, p = (int(x) for x in np.argwhere(wave > 1)[0])
        sl = slice(p * lpp, (p + 1) * lpp)
        conflict = _conflict(access, i, p, np.arange(lanes)[sl], words[i, sl], addr, coords, thread)
    worst = int(wave.sum(axis=1).max())
    lane = np.repeat(np.arange(lanes), access.vector)
    first = np.stack([lane // lpp, thread[0][lane], coords[0, ..., 0].ravel(), coords[0, ..., 1].ravel(),
                      addr[0].ravel()], axis=-1)
    cells = tuple(tuple(row) for row in first.tolist())
    return AccessProof(access.name, access.role, vb, lpp, n_i, n_p, worst, banks, conflict, "", cells)


def _descriptor_failure(access: Access, cand: Candidate) -> str:
    """Why ``cand`` cannot be read through a GMMA/UMMA matrix descriptor (empty when it can)."""
    if cand.base != "atom":
        return (f"{access.name} reads through a matrix descriptor: the layout must tile a "
                f"{access.name}::Layout_{cand.major}_*_Atom, and {cand.name} does not")
    tile = cand.cute_layout()
    try:
        matrix_descriptor(tile, cand.major, access.name, k=32 // cand.element_bytes)  # type: ignore[arg-type]
    except LayoutError as err:
        return f"{access.name}: {err}"
    return ""


def _tma_inner(access: Access, cand: Candidate, ctype: str) -> tuple[int, str]:
    """The inner box extent (elements) TMA writes ``cand`` with, or the reason it cannot."""
    if cand.base == "padded":
        return 0, "TMA writes a dense box: rows padded apart are not a TMA destination"
    m, k = cand.tile
    glayout = Layout((m, k), (k, 1)) if cand.major == "K" else Layout((m, k), (1, m))
    smem = cand.cute_layout()
    try:
        tma = make_tma_copy(glayout, ctype, smem)
    except LayoutError as err:
        return 0, f"TMA: {err}"
    return int(tma.box_dim[0]), ""


def prove(access: Access, cand: Candidate) -> AccessProof:
    """The proof of ``access`` on ``cand``: conflict-free and at its widest vector, or why not.

    TMA's widest box row is ``min(128 B, the contiguous extent)``; GMMA/UMMA reads need a layout a
    matrix descriptor describes."""
    if access.unit in ("gmma", "umma"):
        why = _descriptor_failure(access, cand)
        return _failed(access, why) if why else prove_threads(access, cand)
    if access.unit == "tma":
        inner, why = _tma_inner(access, cand, cand.ctype)
        if why:
            return _failed(access, why)
        widest = min(128, cand.tile[cand.contig] * cand.element_bytes)
        if inner * cand.element_bytes < widest:
            return _failed(access, f"TMA: the box rows are {inner * cand.element_bytes} B, narrower than the "
                                   f"widest {widest} B the tile allows")
        box = tma_box(access.name, access.role, cand.element_bits, cand.major, inner, 8)
        return prove_threads(box, cand)
    return prove_threads(access, cand)
