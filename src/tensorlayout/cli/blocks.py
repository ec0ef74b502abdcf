"""``tensorlayout blocks BLOCK ARRAY DTYPE``: is a Pallas TPU ``BlockSpec`` block shape legal?

BLOCK and ARRAY are comma-separated dims (``None`` for a squeezed block dim), DTYPE a JAX or
XLA element type (``bfloat16``/``bf16``, ``int8``/``s8``…). Prints the verdict of the Pallas
TPU lowering's rules (legal, legal with padding, illegal: which dim breaks which rule), the
block's bytes and its VMEM bytes in Mosaic's native tiles (an estimate), and the nearest
legal block shapes. Exits 1 when the block is illegal.
"""

from __future__ import annotations

import argparse
import json

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import UsageError
from tensorlayout.jax.blocks import BlockCheck, check_block_spec
from tensorlayout.xla.padding import binary_bytes
from tensorlayout.xla.tpu import GENERATIONS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("blocks", help=HELP["blocks"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("block", help="block shape, e.g. 8,128 or None,8,128")
    p.add_argument("array", help="array shape, e.g. 64,256")
    p.add_argument("dtype", help="element type, e.g. bfloat16 or bf16")
    p.add_argument("--tpu", metavar="GEN", default=None, help=f"TPU generation ({', '.join(GENERATIONS)})")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _dims(text: str, squeezable: bool) -> list[int | None]:
    out: list[int | None] = []
    for part in text.replace("(", "").replace(")", "").split(","):
        part = part.strip()
        if squeezable and part in ("None", "_"):
            out.append(None)
        elif part.isdigit():
            out.append(int(part))
        elif part:
            raise UsageError(f"expected comma-separated dims{' or None' if squeezable else ''}, "
                             f"but got {text!r}")
    return out


def _shape(dims: tuple[int | None, ...] | tuple[int, ...]) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in dims) + ")"


def check_text(r: BlockCheck) -> str:
    """The text printed for one check."""
    out = [f"block {_shape(r.block_shape)} over {r.dtype}[{','.join(map(str, r.array_shape))}]: {r.verdict}"]
    out += [f"  dim {b.dimension}: {b.message} (rule '{b.rule}')" if b.dimension is not None
            else f"  {b.message} (rule '{b.rule}')" for b in r.broken]
    out.append(f"  block {binary_bytes(r.block_bytes)}, VMEM {binary_bytes(r.vmem_bytes)} in "
               f"{_shape(r.vmem_tile)} tiles (estimate; x2 when double-buffered)")
    if r.nearest:
        out.append("  nearest legal: " + ", ".join(_shape(n) for n in r.nearest))
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    array = [d for d in _dims(args.array, False) if d is not None]
    r = check_block_spec(_dims(args.block, True), array, args.dtype, tpu=args.tpu)
    print(json.dumps(r.as_dict(), indent=1) if args.json else check_text(r))
    return 1 if r.verdict == "illegal" else 0
