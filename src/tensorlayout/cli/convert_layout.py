"""``tensorlayout convert-layout SRC DST --shape 32x64 --dtype f16``: what Triton 3.9 does on
Hopper (``cuda:90``) for ``ttg.convert_layout`` from SRC to DST, before compiling.

SRC and DST are Triton layout text (``#ttg.blocked<{...}>``, ``#ttg.nvidia_mma<{...}>``,
``#ttg.dot_op<{...}>``, ``#ttg.slice<{...}>``, ``#ttg.linear<{...}>``, alias lines first if the
text uses them, or ``tensor<32x64xf16, ...>`` which also gives the shape), a printed
``LinearLayout``, or a CuTe TV layout ``(threads,values):(...)`` onto the column-major M x N
tile. Prints the data path (nothing, a register permutation, warp shuffles, or shared
memory), and through shared memory the swizzled scratch layout Triton synthesises (its
``vector``/``bank``/``segment``/``reps`` bases as tensor coordinates), the instructions of
each side, the rounds, the scratch bytes, the bank conflicts and the PTX instructions per
thread. ``--svg FILE`` draws source -> shared -> destination.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import UsageError, read_argument, write_output
from tensorlayout.cute import Layout
from tensorlayout.cute.swizzle import parse_layout as parse_cute
from tensorlayout.design import ConversionCost, conversion_cost, tv_linear_layout
from tensorlayout.design.conversion import ELEMENT_BITS, TritonConversion
from tensorlayout.render._conversion import conversion_svg
from tensorlayout.triton import LinearLayout
from tensorlayout.triton._mlir import is_triton_text, parse_layout

__all__ = ["explain", "register", "run"]

_PATHS = {
    "none": "nothing to do: both layouts put every element in the same thread and register",
    "registers": "a register permutation inside each thread (free: no instruction)",
    "shuffles": "warp shuffles: the data stays inside each warp",
    "shared": "a round trip through shared memory: the data crosses warps (or too many lane/register swaps)",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert-layout", help=HELP["convert-layout"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src", metavar="SRC", help="the source layout (Triton text)")
    p.add_argument("dst", metavar="DST", help="the destination layout (Triton text)")
    p.add_argument("--shape", metavar="MxN", help="the tensor shape, e.g. 32x64 (or 32,64)")
    p.add_argument("--dtype", default="f16",
                   help=f"element type (default f16; {', '.join(sorted(ELEMENT_BITS))})")
    p.add_argument("--num-warps", type=int, metavar="N", help="warps per CTA (default: the layouts')")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--svg", metavar="FILE", help="also draw source -> shared -> destination as SVG")
    p.set_defaults(func=run)


def _shape(text: str | None) -> list[int] | None:
    if text is None:
        return None
    parts = re.split(r"[x,]", text.strip())
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise UsageError(f"--shape takes positive dims like 32x64, but got {text!r}")
    return [int(p) for p in parts]


def _coords(ll: Any, name: str) -> str:
    vals = [f"({','.join(map(str, v))})" for v in dict(ll.bases)[name]]
    return " ".join(vals) if vals else "-"


def _side(op: str, side: Any) -> str:
    return f"{op} ({side.vector_bits} bits a thread), {side.per_round} per thread per round"


def explain(cost: ConversionCost) -> list[str]:
    """The text lines printed for one conversion."""
    c: TritonConversion = cost.conversion
    dims = "x".join(str(n) for _, n in c.src.out_dims)
    out = [f"convert_layout of a {dims} tensor of {c.bitwidth}-bit elements, "
           f"{c.src.get_in_dim_size('warp')} warps (Triton 3.9, cuda:90)",
           f"path: {_PATHS[c.path]}"]
    if c.shared is not None:
        sh = c.shared
        out += [f"scratch: {sh.scratch_bytes} bytes, {sh.rounds} round(s) of store, bar.sync, load",
                f"store: {_side(sh.store_op, sh.store)}",
                f"load:  {_side(sh.load_op, sh.load)}",
                "swizzled scratch layout (each basis as a tensor coordinate):"]
        out += [f"  {n:<8}{_coords(sh.layout, n)}" for n in sh.layout.get_in_dim_names()]
        waves = ", ".join(f"{k} {v}" for k, v in cost.wavefronts.items()) or "-"
        out += [f"bank conflicts: Triton's score read {sh.bank_conflicts[0]}, write {sh.bank_conflicts[1]}; "
                f"worst wavefronts per ld/st phase: {waves}",
                f"bytes through shared memory (CTA): {cost.bytes_through_shared}"]
    elif c.path == "shuffles":
        out.append(f"mixed register/lane transpositions: {c.mixed_transpositions}")
    ops = ", ".join(f"{op} x{n}" for op, n in c.ptx_op_counts.items()) or "none"
    out += [f"PTX per thread: {ops}", f"free: {'yes' if cost.free else 'no'}"]
    return out


def _layout(text: str, shape: list[int] | None) -> LinearLayout:
    """Triton text, or a CuTe TV layout (which needs ``--shape``)."""
    if is_triton_text(text):
        return parse_layout(text, shape)
    tv = parse_cute(text)
    if not isinstance(tv, Layout):
        raise UsageError(f"a CuTe TV layout is a plain layout (threads, values), got {text!r}")
    if shape is None:
        raise UsageError("a CuTe TV layout needs --shape (the M x N tile it maps onto)")
    return tv_linear_layout(tv, shape)


def run(args: argparse.Namespace) -> int:
    shape = _shape(args.shape)
    src = _layout(read_argument(args.src, "SRC"), shape)
    dst = _layout(read_argument(args.dst, "DST"), shape)
    dims = [n for _, n in src.out_dims]
    cost = conversion_cost(src, dst, dims, args.dtype, args.num_warps)
    if args.svg:
        write_output(args.svg, conversion_svg(cost.conversion))
    if args.json:
        out = cost.as_dict()
        if cost.conversion.shared is not None:
            ll = cost.conversion.shared.layout
            out["swizzle"] = {n: [list(v) for v in vs] for n, vs in ll.bases}
        print(json.dumps({"shape": dims, "bits": cost.conversion.bitwidth, **out}))
    else:
        print("\n".join(explain(cost)))
    return 0
