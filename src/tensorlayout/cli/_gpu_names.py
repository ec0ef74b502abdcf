"""Names the GPU options of `show` and `render` share, in a module that imports nothing, so
that registering the options costs no start-up time.

>>> COPY_MMA
'SM80_16x8x16_F16F16F16F16_TN'
"""

from __future__ import annotations

import argparse

__all__ = ["ACCESS_HELP", "COPY_MMA", "add_global_and_access"]

#: the MMA whose A operand a copy atom is laid out as (as in CuTe's SM80 examples)
COPY_MMA = "SM80_16x8x16_F16F16F16F16_TN"
ACCESS_HELP = ("the warp's access: row (128-bit vectors along rows), column (down columns), ldmatrix-x4 "
               f"(SM75_U32x4_LDSM_N) or a copy atom by CuTe's name, laid out as the A operand of {COPY_MMA}")


def add_global_and_access(p: argparse.ArgumentParser) -> None:
    """``--global`` (for ``--coalescing``) and ``--access`` (for ``--banks``), as both commands take them."""
    p.add_argument("--global", dest="global_layout", metavar="LAYOUT",
                   help="with --coalescing: the global tensor's CuTe layout (a Triton tensor defaults "
                        "to row-major)")
    p.add_argument("--access", default="row", metavar="ACCESS", help="with --banks: " + ACCESS_HELP)
