"""Draw the pictures of docs/pictures.md into docs/img/ with the command line itself.

Run from the repository root: ``python docs/img/make_pictures.py``. The test
tests/cli/test_docs_pictures.py draws each again and compares, so the pictures on the site
stay what `tensorlayout render` draws.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tensorlayout.cli import main

HERE = Path(__file__).resolve().parent
BLOCKED = ("tensor<16x32xf16, #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], "
           "warpsPerCTA = [2, 2], order = [1, 0]}>>")

#: file name -> the arguments of `tensorlayout render` (without -o)
PICTURES: dict[str, tuple[str, ...]] = {
    "xla-tiled.svg": ("f32[4,8]{1,0:T(2,4)(2,1)}",),
    "swizzle-chunks.svg": ("Sw<3,3,3> o _0 o (8,64):(64,1)",),
    "mma-2x2-warps.svg": ("--mma", "SM80_16x8x8_F16F16F16F16_TN", "--warps", "2,2,1"),
    "banks-ldmatrix-plain.svg": ("(16,32):(32,1)", "--banks", "16", "--access", "ldmatrix-x4"),
    "banks-ldmatrix-swizzled.svg": ("Sw<2,3,3> o _0 o (16,32):(32,1)", "--banks", "16", "--access",
                                    "ldmatrix-x4"),
    "triton-blocked.svg": (BLOCKED,),
}


def draw(name: str, out: Path) -> None:
    """Draw picture ``name`` of :data:`PICTURES` into ``out``."""
    code = main(["render", *PICTURES[name], "-o", str(out)])
    if code:
        raise SystemExit(f"render {name} failed with exit code {code}")


if __name__ == "__main__":
    for picture in PICTURES:
        draw(picture, HERE / picture)
        print(f"wrote docs/img/{picture}", file=sys.stderr)
