"""The shared-memory bank model every bank-conflict count uses (CUDA, compute capability 5+).

Shared memory has 32 banks of 4-byte words; word ``w`` lives in bank ``w mod 32``. A warp's
vector access is served in phases (all 32 lanes for accesses up to 4 bytes, 16 lanes for 8
bytes, 8 lanes for 16 bytes); a phase takes as many wavefronts as the most distinct words any
one bank must serve (lanes reading the same word share it).

>>> phase_of(range(4), {0: [0], 1: [32], 2: [1], 3: [0]}).wavefronts
2
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["BANKS", "LANES_PER_PHASE", "WORD_BITS", "Phase", "lanes_per_phase", "phase_of", "words_of"]

BANKS = 32
WORD_BITS = 32
#: Lanes served per phase, by the bytes each lane moves.
LANES_PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


@dataclass(frozen=True)
class Phase:
    """One phase: its lanes, its wavefronts and every bank serving more than one word.

    ``collisions`` lists ``(bank, words, lanes)`` for those banks.
    """

    lanes: tuple[int, ...]
    wavefronts: int
    collisions: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]


def lanes_per_phase(access_bytes: int) -> int:
    """Lanes served together for accesses of ``access_bytes`` per lane (at most 32).

    >>> lanes_per_phase(16), lanes_per_phase(2)
    (8, 32)
    """
    return 32 // max(access_bytes // 4, 1)


def words_of(byte_address: int, access_bytes: int) -> list[int]:
    """The 4-byte words an access of ``access_bytes`` at ``byte_address`` touches.

    >>> words_of(6, 4)
    [1, 2]
    """
    return list(range(byte_address // 4, (byte_address + access_bytes - 1) // 4 + 1))


def phase_of(lanes: Iterable[int], words: Mapping[int, Sequence[int]]) -> Phase:
    """The wavefronts and colliding banks of one phase whose lane ``t`` touches ``words[t]``."""
    lanes = tuple(lanes)
    per_bank: dict[int, dict[int, list[int]]] = {}
    for lane in lanes:
        for w in words[lane]:
            per_bank.setdefault(w % BANKS, {}).setdefault(w, []).append(lane)
    worst = max((len(ws) for ws in per_bank.values()), default=0)
    collisions = tuple((b, tuple(sorted(ws)), tuple(sorted({x for ls in ws.values() for x in ls})))
                       for b, ws in sorted(per_bank.items()) if len(ws) > 1)
    return Phase(lanes, worst, collisions)
