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
from tensorlayout.gpu.coalescing import Coalescing
from tensorlayout.gpu.partition import (
    CopyFit,
    ThrCopy,
    ThrMMA,
    copy_fits,
    get_slice,
    partition_shape_a,
    partition_shape_b,
    partition_shape_c,
)
from tensorlayout.gpu.smem_atoms import MatrixDescriptor, matrix_descriptor, smem_layout_atom
from tensorlayout.gpu.tiled import (
    TiledCopy,
    TiledMMA,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_copy_b,
    make_tiled_copy_c,
    make_tiled_mma,
)
from tensorlayout.gpu.tma import TmaCopy, make_tma_copy
from tensorlayout.gpu.tmem import accumulator_cell, tmem_cell, tmem_owners, warp_lanes
from tensorlayout.gpu.tv import TVLayout, format_owners

__all__ = [
    "COPY_ATOMS", "MMA_ATOMS", "BankReport", "Coalescing", "CopyAtom", "CopyFit", "MMAAtom",
    "MatrixDescriptor", "TVLayout", "ThrCopy", "ThrMMA", "TiledCopy", "TiledMMA", "TmaCopy",
    "accumulator_cell", "bank_conflicts", "copy_atom", "copy_fits", "format_owners",
    "get_slice", "make_tiled_copy", "make_tiled_copy_a", "make_tiled_copy_b", "make_tiled_copy_c",
    "make_tiled_mma", "make_tma_copy", "matrix_descriptor", "mma_atom", "partition_shape_a",
    "partition_shape_b", "partition_shape_c", "sm90_gmma", "smem_layout_atom", "span_conflicts",
    "tmem_cell", "tmem_owners", "triton_bank_conflicts", "universal_copy", "vector_access", "warp_lanes",
]
