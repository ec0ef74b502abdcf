"""`tensorlayout render TARGET -o OUT`: draw a layout as SVG, an HTML page, TikZ, PNG or PDF."""

from __future__ import annotations

import argparse
from pathlib import Path

from tensorlayout import render
from tensorlayout.cli import _banks, _gpu_names, _triton, _triton_text
from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import (
    STDIO,
    UsageError,
    binary_stdout,
    positive_ints,
    read_argument,
    write_binary,
    write_output,
)
from tensorlayout.cli._target import add_target_arguments, target_of
from tensorlayout.cli._window import Window, parse_window
from tensorlayout.cute import Layout, parse_layout, size
from tensorlayout.cute.tla import element_bits
from tensorlayout.errors import UnsupportedError
from tensorlayout.gpu import TVLayout
from tensorlayout.gpu.atoms import CopyAtom, copy_atom, mma_atom
from tensorlayout.gpu.banks import shared_core
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA, make_tiled_copy_a, make_tiled_mma
from tensorlayout.gpu.tmem import tmem_owners
from tensorlayout.triton import LinearLayout

__all__ = ["DESCRIPTION", "FORMATS", "register", "run"]

#: picture formats by file suffix
_SUFFIXES = {".svg": "svg", ".html": "html", ".htm": "html", ".tex": "tikz", ".png": "png", ".pdf": "pdf"}
FORMATS = ("svg", "html", "tikz", "png", "pdf")
_COPY_MMA = _gpu_names.COPY_MMA

DESCRIPTION = """\
Draw a layout: the logical grid colored by tile, thick lines between tiles, each cell's
offset, and the memory-order strip beneath (padding white), wrapped so that each strip row
lies in one tile; the HTML page adds a hover read-out of index, offset, tile and in-tile
index (of every picture kind: a GPU picture's cell reads out its thread, value, warp, bank,
phase, lane, ... as drawn). Rank 1 draws one row; rank > 2 stacks the slices (one row per index of all but the
last dim). Past 64 rows or columns the picture stops at a tile boundary (or after one whole
tile, up to 256) and the strip after at most 2048 slots, so any size works; --window A:B,C:D
draws any other part.

TARGET is an XLA shape ('f32[3,5]{1,0:T(2,2)}'), a CuTe layout
('((4,2),(4,3)):((4,16),(1,32))'), Triton text (a printed LinearLayout, or an encoding such as
'#ttg.blocked<{...}>' with --shape A,B or inside 'tensor<AxBxT, ...>': drawn with the thread
and register holding each element, or a shared layout's offsets), or '-' to read it from
stdin; --tla FORMAT --rows R --cols C [--dtype T] names an Ascend TLA format instead.

The picture format follows the suffix of OUT: .svg, .html, .tex (TikZ, as CuTe's print_latex
prints it), .png or .pdf (these two need the optional extra: pip install
'tensorlayout[png]'); '-o -' writes to stdout, SVG unless --format says otherwise.

GPU pictures: --mma ATOM draws an MMA atom's A, B and C panels (each cell T#/V#, colored by
thread, thick lines around each warp, rows and columns numbered); --warps M,N,K tiles the atom
as CuTe's TiledMMA (AtomLayoutMNK: a 2x2-warp SM80 MMA is --warps 2,2,1) and --tile M,N,K
permutes it to that tile (CuTe's PermutationMNK). --copy ATOM draws a copy atom's source and
destination (tiled as the A operand of the SM80 m16n8k16 f16 MMA, with --warps and --tile as
for --mma; a tensor-memory atom, SM100_TMEM_LOAD/STORE_*, as TMEM's 128 lanes x the columns it
touches, each cell's thread and register, coloured by warp); --banks BITS draws TARGET as a
shared-memory tile (a CuTe layout, swizzled ones included) with each cell's bank and warp 0's
--access: every phase and lane numbered, conflicts in red, a legend with each phase's
wavefronts (--access row: 128-bit vectors along rows, the default; column: down columns;
ldmatrix-x4; or a copy atom by name). A plain swizzled layout is coloured by swizzle chunk.
--tma SMEM draws TARGET as the global tensor of a TMA copy into shared layout
SMEM (elements of --dtype): each box outlined and numbered in the order the copy issues them,
box 0's cells with their shared-memory offsets after the swizzle. --coalescing draws warp 0's
first request of TARGET (a Triton distributed layout, or a CuTe thread-value layout with --global
LAYOUT) on the global tensor, each element's lane and value, coloured by 32-byte sector, with the
report of show --coalescing beneath. With --mma or --copy, --thread T [--operand a|b|c|s|d]
draws only what thread T owns (its partition of an identity tensor), each cell its value index.

examples:
  tensorlayout render 'f32[4,8]{1,0:T(2,4)(2,1)}' -o fig2.html
  tensorlayout render 'bf16[16,256]{1,0:T(8,128)(2,1)}' --window 0:8,128:256 -o tile.svg
  tensorlayout render --tla zN --rows 8 --cols 12 -o - > zn.svg
  tensorlayout render --mma SM80_16x8x16_F32F16F16F32_TN -o mma.svg
  tensorlayout render --mma SM80_16x8x16_F32F16F16F32_TN -o mma.tex     # for a paper
  tensorlayout render --mma SM80_16x8x16_F16F16F16F16_TN --warps 2,2,1 --tile 32,32,16 -o mma.html
  tensorlayout render --copy SM100_TMEM_LOAD_32dp32b8x -o tmem.svg
  tensorlayout render '(8,8):(1,8)' -o layout.pdf
  tensorlayout render 'Sw<3,3,3> o _0 o (_8,_64):(_64,_1)' --banks 16 -o smem.svg
  tensorlayout render '(16,64):(64,1)' --banks 16 --access ldmatrix-x4 -o ldsm.html
  tensorlayout render '(64,256):(256,1)' --dtype f16 \
      --tma 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_2),(_64,_2)):((_64,_512),(_1,_1024))' -o tma.svg
  tensorlayout render --mma SM80_16x8x16_F32F16F16F32_TN --thread 5 --operand a -o thr5.svg
  tensorlayout render '(32,8):(8,1)' --coalescing --global '(8,32):(32,1)' --dtype f16 -o coal.svg
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help=HELP["render"],
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target_arguments(p)
    _triton_text.add_shape_argument(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; its suffix (.svg .html .tex .png .pdf) chooses the format; "
                        "'-' is stdout")
    p.add_argument("--format", choices=FORMATS,
                   help="the picture format (default: from the suffix of OUT; svg for stdout)")
    p.add_argument("--scale", type=float, default=1.0, help="PNG pixels per SVG unit (default 1)")
    gpu = p.add_mutually_exclusive_group()
    gpu.add_argument("--mma", metavar="ATOM", help="an MMA atom by CuTe's name")
    gpu.add_argument("--copy", metavar="ATOM", help="a copy atom by CuTe's name")
    gpu.add_argument("--tma", metavar="SMEM",
                     help="TARGET as a 2-D global CuTe layout copied by TMA into shared layout SMEM "
                          "(elements of --dtype): the boxes in issue order, box 0 with its shared offsets")
    gpu.add_argument("--coalescing", action="store_true",
                     help="TARGET (a Triton distributed layout, or a CuTe thread-value layout with --global) "
                          "as warp 0's first request on the global tensor, by 32-byte sector, for --dtype")
    gpu.add_argument("--banks", metavar="BITS", type=int,
                     help="TARGET as shared memory of BITS-bit elements, with banks (not TikZ)")
    p.add_argument("--thread", metavar="T", type=int,
                   help="with --mma or --copy: only what thread T owns (its partition of an identity "
                        "tensor), each cell its value index")
    p.add_argument("--operand", choices=("a", "b", "c", "s", "d"),
                   help="with --thread: the MMA's A, B or C (default c) or the copy's S or D (default s)")
    _gpu_names.add_global_and_access(p)
    p.add_argument("--warps", metavar="M,N,K",
                   help="with --mma or --copy: atoms (warps, for SM80's warp-wide MMAs) along M, N and K "
                        "(CuTe's AtomLayoutMNK; default 1,1,1)")
    p.add_argument("--tile", metavar="M,N,K",
                   help="with --mma or --copy: the TiledMMA's tile, CuTe's PermutationMNK sizes "
                        "(default: the atoms' own)")
    p.add_argument("--window", metavar="A:B,C:D",
                   help="draw this part of the index space: one numpy-style range per dimension, "
                        "e.g. 0:8,128:256 (--mma: M,N,K ranges; --copy, --banks: M,N)")
    p.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output == STDIO:
        return "svg"
    suffix = Path(args.output).suffix.lower()
    if suffix not in _SUFFIXES:
        raise UnsupportedError(f"cannot tell the picture format of {args.output!r}: use a name "
                               f"ending in {' '.join(_SUFFIXES)}, or --format")
    return _SUFFIXES[suffix]


def _window(args: argparse.Namespace, dims: tuple[int, ...]) -> Window | None:
    return parse_window(args.window, dims) if args.window else None


def _triple(text: str | None, flag: str) -> tuple[int, int, int] | None:
    """``M,N,K`` (K defaults to 1) as positive ints."""
    if text is None:
        return None
    parts = positive_ints(text, flag, "M,N,K like 2,2,1")
    if len(parts) == 2:
        parts.append(1)
    if len(parts) != 3:
        raise UsageError(f"{flag} takes three positive numbers M,N,K like 2,2,1, but got {text!r}")
    return parts[0], parts[1], parts[2]


def _tiled_mma(args: argparse.Namespace, name: str) -> TiledMMA:
    """MMA atom ``name`` tiled by --warps and permuted to --tile."""
    warps = _triple(args.warps, "--warps") or (1, 1, 1)
    tile = _triple(args.tile, "--tile")
    return make_tiled_mma(mma_atom(name), warps, tile if tile is not None else (None, None, None))


def _tiling_text(args: argparse.Namespace) -> str:
    """`` warps 2x2x1 tile 32x32x16`` as the arguments ask, else nothing."""
    return "".join(f" {word} {'x'.join(map(str, t))}" for word, t in
                   (("warps", _triple(args.warps, "--warps")), ("tile", _triple(args.tile, "--tile"))) if t)


def _gpu_object(args: argparse.Namespace) -> tuple[object, tuple[int, ...], str]:
    """The MMA or copy the arguments name, the dims a window ranges over, and its title."""
    if args.mma:
        tm = _tiled_mma(args, args.mma)
        return tm, tm.tile_size(), f"{args.mma}{_tiling_text(args)}: {'x'.join(map(str, tm.tile_size()))}"
    atom = copy_atom(args.copy)
    if atom.val_id is not None:  # a tensor-memory copy: TMEM lanes x columns, by warp
        if args.warps or args.tile:
            raise UsageError("--warps and --tile tile a TiledMMA; a tensor-memory copy has none")
        return atom, tmem_owners(atom)[0].shape, f"{args.copy}: TMEM lanes x columns, 4 warps"
    # --copy, laid out as the A operand of the SM80 m16n8k16 f16 MMA, as CuTe's examples do
    tc = make_tiled_copy_a(atom, 16, _tiled_mma(args, _COPY_MMA))
    return tc, tc.tv_s().tile, f"{args.copy} as the A operand of {_COPY_MMA}{_tiling_text(args)}"


def _banks_svg(args: argparse.Namespace) -> str:
    """TARGET as a shared tile with its banks and the conflicts of a row or column access."""
    if args.target is None:
        raise UnsupportedError("--banks draws TARGET, a CuTe shared-memory layout: give one")
    smem = read_argument(args.target, "a shared-memory layout")
    tile = shared_core(smem).shape
    if len(tile) != 2:
        raise UnsupportedError(f"--banks draws a 2-D tile, but {smem} has rank {len(tile)}")
    access, what = _banks.access_of((tile[0], tile[1]), args.banks, args.access)
    return render.shared_banks_svg(smem, args.banks, access, window=_window(args, tile), access_name=what)


def _tma_svg(args: argparse.Namespace) -> str:
    """TARGET as the global tensor of a TMA copy into --tma's shared layout."""
    if args.target is None:
        raise UnsupportedError("--tma draws TARGET, the global tensor's CuTe layout: give one")
    glay = parse_layout(read_argument(args.target, "a global CuTe layout"))
    if not isinstance(glay, Layout) or glay.rank() != 2:
        raise UnsupportedError(f"--tma draws a 2-D plain CuTe global layout (shape:stride), "
                               f"got {args.target!r}")
    smem = parse_layout(args.tma)
    dims = (int(size(glay[0])), int(size(glay[1])))
    return render.tma_boxes_svg((glay, args.dtype, smem), window=_window(args, dims))


def _coalescing_svg(args: argparse.Namespace) -> str:
    """--coalescing: TARGET's first warp request over the --global tensor, as show --coalescing reads it."""
    glay = None
    if args.global_layout is not None:
        parsed = parse_layout(args.global_layout)
        if not isinstance(parsed, Layout) or parsed.rank() != 2:
            raise UsageError(f"--global takes a 2-D plain CuTe layout shape:stride, "
                             f"got {args.global_layout!r}")
        glay = parsed
    ll = _triton_text.triton_layout(args)
    if ll is not None:
        source: LinearLayout | TVLayout = ll
    else:
        tv = target_of(args, missing=UnsupportedError).layout
        if not isinstance(tv, Layout) or glay is None:
            raise UsageError("--coalescing reads a Triton distributed layout, or a CuTe thread-value "
                             "layout (thread, value) -> m + M*n with --global giving the M x N tensor")
        source = TVLayout(tv, (int(size(glay[0])), int(size(glay[1]))))
    whole = render.global_of(source, glay)
    dims = tuple(int(size(whole[k])) for k in range(whole.rank()))
    return render.coalescing_svg(source, glay, element_bits(args.dtype), window=_window(args, dims))


def _layout(args: argparse.Namespace) -> tuple[object, tuple[int, ...]]:
    """The layout TARGET (or --tla) names and the dims a window ranges over."""
    ll = _triton_text.triton_layout(args)
    if ll is not None:
        return ll, _triton.picture_dims(ll)
    target = target_of(args, missing=UnsupportedError)
    if args.window and not target.has_grid:
        raise UsageError(f"{target.text} is not one static array: --window needs one")
    return target.layout, target.dims if target.has_grid else ()


def _check_flags(args: argparse.Namespace) -> None:
    """Flags that belong to one kind of picture."""
    if (args.warps or args.tile) and not (args.mma or args.copy):
        raise UsageError("--warps and --tile tile the TiledMMA of --mma or --copy")
    if args.access != "row" and args.banks is None:
        raise UsageError("--access names the warp access of --banks")


def _as(kind: str, svg: str, args: argparse.Namespace) -> str | bytes:
    """An SVG picture in format ``kind`` (the HTML page has the hover read-out of its cells)."""
    if kind == "tikz":
        raise UnsupportedError("--banks, --tma, --coalescing and --thread pictures are SVG, HTML, PNG or "
                               "PDF, not TikZ")
    if kind == "html":
        return render.svg_page(svg)
    return svg if kind == "svg" else render.convert_svg(svg, kind, args.scale)


def _picture(args: argparse.Namespace, kind: str) -> str | bytes:
    """The picture in format ``kind``."""
    _check_flags(args)
    if args.banks is not None or args.tma is not None or args.coalescing:
        svg = _banks_svg(args) if args.banks is not None else \
            _tma_svg(args) if args.tma is not None else _coalescing_svg(args)
        return _as(kind, svg, args)
    if args.thread is not None or args.operand is not None:
        return _partition(args, kind)
    obj, dims, title = _gpu_object(args) if args.mma or args.copy else (*_layout(args), "")
    window = _window(args, dims)
    if kind == "html":
        return render.to_html(obj, window=window, title=title)
    if kind == "tikz":
        if isinstance(obj, CopyAtom):
            raise UnsupportedError("tensor-memory pictures are SVG (or PNG/PDF), not TikZ")
        return render.to_tikz(obj, window=window, title=title)
    svg = render.to_svg(obj, window=window, title=title)
    return svg if kind == "svg" else render.convert_svg(svg, kind, args.scale)


def _partition(args: argparse.Namespace, kind: str) -> str | bytes:
    """--thread T: what thread T owns of the --mma's or --copy's operand."""
    if args.thread is None or not (args.mma or args.copy):
        raise UsageError("--thread T (and --operand) draw what thread T owns of an --mma or a --copy")
    obj = _gpu_object(args)[0]
    if not isinstance(obj, (TiledMMA, TiledCopy)):
        raise UnsupportedError("--thread draws a TiledMMA's or TiledCopy's partition; a tensor-memory "
                               "copy has none here")
    operand = args.operand or ("c" if args.mma else "s")
    dims = render.thread_coords(obj, args.thread, operand)[0]
    return _as(kind, render.partition_svg(obj, args.thread, operand, window=_window(args, dims)), args)


def _write(path: str, data: str | bytes) -> None:
    if isinstance(data, str):
        write_output(path, data)
    else:
        write_binary(path, data)


def run(args: argparse.Namespace) -> int:
    kind = _format(args)
    if kind in render.RASTER_FORMATS and args.output == STDIO:
        binary_stdout()  # a text-only stdout is refused before drawing (a PNG can take seconds)
    _write(args.output, _picture(args, kind))
    return 0
