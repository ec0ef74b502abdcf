"""``tensorlayout design smem``: choose a shared-memory layout for given accesses, with a proof.

The tile is ``MNxK`` of ``--dtype`` elements, ``--major K`` (K contiguous) or ``MN``. Each
``--write``/``--read`` names an access: ``'cp.async 16B'`` (a 128-thread TiledCopy along the
contiguous dimension), a copy atom (``SM75_U32x4_LDSM_N``, ``SM75_U16x8_LDSM_T``,
``SM90_U32x4_STSM_N``, ``UniversalCopy<uint128_t>``; ``ldmatrix``/``stmatrix`` and reads tile as
the SM80 ``mma.sync`` operand), an MMA operand (``SM80_16x8x16_F32F16F16F32_TN:A``), ``TMA``,
``GMMA`` or ``UMMA``. The answer is the smallest layout on which every access is conflict-free at
its widest vector, in CuTe text, C++ and DSL, Triton, with the GMMA atom's name; then the proof
(per access: vector, lanes per phase, instructions, wavefronts per instruction, the bank of each
lane in each phase), and why each smaller candidate fails (the first conflicting pair of threads).
Swizzles act on byte addresses. ``--json`` prints every candidate with its proof.
"""

from __future__ import annotations

import argparse
import json

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import UsageError
from tensorlayout.design import DTYPES, design_smem
from tensorlayout.design.smem import SmemDesign
from tensorlayout.render import design_svg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("design", help=HELP["design"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("smem",), help="what to design: smem (a shared-memory layout)")
    p.add_argument("--tile", required=True, metavar="MNxK", help="the tile, e.g. 128x32")
    p.add_argument("--dtype", required=True, choices=tuple(DTYPES), help="the element type")
    p.add_argument("--major", choices=("K", "MN"), default="K", help="the contiguous dimension (default K)")
    p.add_argument("--write", action="append", default=[], metavar="ACCESS", help="a write (repeatable)")
    p.add_argument("--read", action="append", default=[], metavar="ACCESS", help="a read (repeatable)")
    p.add_argument("--threads", type=int, default=128, help="threads of a cp.async TiledCopy (default 128)")
    p.add_argument("--svg", metavar="FILE", help="also draw the chosen layout, phases coloured, to FILE")
    p.add_argument("--json", action="store_true", help="print JSON (every candidate and its proof)")
    p.set_defaults(func=run)


def _tile(text: str) -> tuple[int, int]:
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise UsageError(f"--tile wants MNxK (two positive integers, e.g. 128x32), got {text!r}")
    return int(parts[0]), int(parts[1])


def run(args: argparse.Namespace) -> int:
    if not args.write and not args.read:
        raise UsageError("design smem needs at least one --write or --read")
    design: SmemDesign = design_smem(_tile(args.tile), args.dtype, writes=args.write, reads=args.read,
                                     major=args.major, threads=args.threads)
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(design_svg(design))
    print(json.dumps(design.to_dict(), indent=1) if args.json else str(design))
    return 0
