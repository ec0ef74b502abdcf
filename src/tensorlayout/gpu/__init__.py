"""tensorlayout.gpu: thread-value layouts, MMA/copy atoms, their tilings and shared-memory banks.

>>> from tensorlayout.gpu import make_tiled_mma, mma_atom
>>> tm = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
>>> tm.tv_c().thread_of(16, 0)
32
"""

from tensorlayout.gpu.atoms import (
    COPY_ATOMS,
    MMA_ATOMS,
    CopyAtom,
    MMAAtom,
    copy_atom,
    mma_atom,
    sm90_gmma,
    universal_copy,
)
from tensorlayout.gpu.banks import (
    BankReport,
    bank_conflicts,
    span_conflicts,
    triton_bank_conflicts,
    vector_access,
)
from tensorlayout.gpu.tiled import (
    TiledCopy,
    TiledMMA,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_copy_b,
    make_tiled_copy_c,
    make_tiled_mma,
)
from tensorlayout.gpu.tv import TVLayout, format_owners

__all__ = [
    "COPY_ATOMS", "MMA_ATOMS", "BankReport", "CopyAtom", "MMAAtom", "TVLayout", "TiledCopy", "TiledMMA",
    "bank_conflicts", "copy_atom", "format_owners", "make_tiled_copy", "make_tiled_copy_a",
    "make_tiled_copy_b", "make_tiled_copy_c", "make_tiled_mma", "mma_atom", "sm90_gmma",
    "span_conflicts", "triton_bank_conflicts", "universal_copy", "vector_access",
]
