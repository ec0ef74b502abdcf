"""Names the GPU options of `show` and `render` share, in a module that imports nothing, so
that registering the options costs no start-up time.

>>> COPY_MMA
'SM80_16x8x16_F16F16F16F16_TN'
"""

from __future__ import annotations

__all__ = ["ACCESS_HELP", "COPY_MMA"]

#: the MMA whose A operand a copy atom is laid out as (as in CuTe's SM80 examples)
COPY_MMA = "SM80_16x8x16_F16F16F16F16_TN"
ACCESS_HELP = ("the warp's access: row (128-bit vectors along rows), column (down columns), ldmatrix-x4 "
               f"(SM75_U32x4_LDSM_N) or a copy atom by CuTe's name, laid out as the A operand of {COPY_MMA}")
