"""MMA and copy atoms looked up by CuTe's C++ names: thread-value layouts of one instruction.

The layouts follow CuTe's ``MMA_Traits`` and ``Copy_Traits``: ``(thread, value) -> m + M·k`` of
the atom's ``A`` (M x K), ``B`` (N x K) and ``C`` (M x N) tiles; copy layouts count **bits**,
and :meth:`CopyAtom.val_layout_src` re-expresses them in elements as ``Copy_Atom<Op, T>`` does.
Names are C++ type spellings, template arguments included where CuTe's op has them
(``SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>``,
``SM80_CP_ASYNC_CACHEALWAYS<uint128_t>``); each family is built by its rule (``mma_sync``,
``mma_async``, ``copy_ops``, ``tmem``).

>>> atom = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
>>> str(atom.layout_c), atom.tv_c().coord(5, 3)
('((_4,_8),(_2,_2)):((_32,_1),(_16,_8))', (9, 3))
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from tensorlayout.errors import LayoutError
from tensorlayout.gpu.atom_types import CopyAtom, MMAAtom
from tensorlayout.gpu.copy_ops import COPY_OP_NAMES, resolve_copy, universal_copy
from tensorlayout.gpu.cxx_names import CxxType, parse_type
from tensorlayout.gpu.mma_async import gmma_names, resolve_mma_async
from tensorlayout.gpu.mma_sync import MMA_SYNC_NAMES, resolve_mma_sync
from tensorlayout.gpu.tmem import resolve_tmem

__all__ = ["COPY_ATOMS", "MMA_ATOMS", "CopyAtom", "MMAAtom", "copy_atom", "mma_atom", "sm90_gmma",
           "universal_copy"]

_A = TypeVar("_A")

_MMA_RESOLVERS: tuple[Callable[[CxxType], MMAAtom | None], ...] = (resolve_mma_sync, resolve_mma_async)
_COPY_RESOLVERS: tuple[Callable[[CxxType], CopyAtom | None], ...] = (resolve_copy, resolve_tmem)


def _resolve(name: str, resolvers: tuple[Callable[[CxxType], _A | None], ...], what: str) -> _A:
    t = parse_type(name)
    for resolve in resolvers:
        atom = resolve(t)
        if atom is not None:
            return atom
    raise LayoutError(f"unknown {what} {name!r}")


def _named(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise LayoutError(f"an {what} is named by a string, got {type(name).__name__}")
    return name


@lru_cache(maxsize=4096)
def _mma(name: str) -> MMAAtom:
    return _resolve(name, _MMA_RESOLVERS, "MMA atom")


@lru_cache(maxsize=4096)
def _copy(name: str) -> CopyAtom:
    return _resolve(name, _COPY_RESOLVERS, "copy atom")


def mma_atom(name: str) -> MMAAtom:
    """The MMA atom named as in CuTe (``SM80_16x8x16_F32F16F16F32_TN``,
    ``SM90_64x128x16_F32F16F16_SS<GMMA::Major::MN,GMMA::Major::K>``, ``SM100_MMA_S8_SS<int8_t,
    int8_t,int32_t,128,256,UMMA::Major::K,UMMA::Major::K>``, ``MMA_Traits<SM100_MMA_F8F6F4_SS, ...>``).

    >>> mma_atom("SM90_64x128x16_F32F16F16_SS").shape_mnk
    (64, 128, 16)
    """
    return _mma(_named(name, "MMA atom"))


def copy_atom(name: str) -> CopyAtom:
    """The copy atom named as in CuTe (``SM75_U32x4_LDSM_N``, ``UniversalCopy<uint128_t>``,
    ``SM100_TMEM_LOAD_16dp128b2x``).

    >>> str(copy_atom("SM75_U32x1_LDSM_N").src)
    '((_8,_4),_128):((_128,_0),_1)'
    """
    return _copy(_named(name, "copy atom"))


def sm90_gmma(n: int, types: str = "F32F16F16", a_source: str = "SS") -> MMAAtom:
    """``wgmma.mma_async`` m64nNk16 for 16-bit inputs: A from smem (``SS``) or registers (``RS``).

    >>> str(sm90_gmma(64).layout_c)
    '((_4,_8,_4),(_2,_2,_8)):((_128,_1,_16),(_64,_8,_512))'
    """
    if not (isinstance(n, int) and 8 <= n <= 256 and n % 8 == 0):
        raise LayoutError(f"wgmma m64nNk16 needs N a multiple of 8 in 8..256, got {n!r}")
    if a_source not in ("SS", "RS"):
        raise LayoutError(f"a_source must be 'SS' (A in smem) or 'RS' (A in registers), got {a_source!r}")
    return mma_atom(f"SM90_64x{n}x16_{types}_{a_source}")


#: The non-template MMA atoms: every ``mma.sync`` one and the 16-bit GMMA ones of the common N.
MMA_ATOMS: dict[str, MMAAtom] = {
    name: mma_atom(name) for name in (*MMA_SYNC_NAMES, "SM70_8x8x4_F16F16F16F16_TN", "SM61_DP4A",
                                      *(g for n in (8, 16, 32, 64, 96, 128, 192, 256)
                                        for g in gmma_names(n) if "x16_" in g))}

#: The non-template copy atoms and the common ``UniversalCopy`` widths.
COPY_ATOMS: dict[str, CopyAtom] = {
    **{name: copy_atom(name) for name in COPY_OP_NAMES},
    **{a.name: a for a in (universal_copy(b) for b in (8, 16, 32, 64, 128))},
}
