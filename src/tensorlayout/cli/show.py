"""`tensorlayout show TARGET`: where each element of a layout lives.

TARGET is an XLA shape (`'f32[3,5]{1,0:T(2,2)}'`), a CuTe layout
(`'((4,2),(4,3)):((4,16),(1,32))'`), `-` (read it from stdin) or, with
`--tla zN --rows R --cols C --dtype T`, an Ascend TLA format.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable

from tensorlayout._lazy import lazy_modules
from tensorlayout.cli import _gpu_names, _grid, _triton_text
from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import UsageError
from tensorlayout.cli._target import AS_NOTATIONS, Target, add_target_arguments, target_of
from tensorlayout.cli._window import Window, default_window, parse_window, window_text
from tensorlayout.errors import TensorLayoutError
from tensorlayout.lowering import notation_of

__all__ = ["DESCRIPTION", "register", "run"]

#: modules only some uses of `show` need, loaded when used: showing a shape imports none of them
#: but XLA's own (`xla_show`), and a CuTe layout none of XLA's
_LAZY = {"extra": "tensorlayout.cli._show_extra", "show_as": "tensorlayout.cli._show_as",
         "facts": "tensorlayout.cli._facts", "locate": "tensorlayout.cli._locate", "json": "json",
         "cute": "tensorlayout.cute", "padding": "tensorlayout.xla.padding", "tpu": "tensorlayout.xla.tpu",
         "xla_show": "tensorlayout.xla.show"}
_lazy = lazy_modules(_LAZY)


def _json(value: object) -> str:
    """``value`` as one line of JSON (the `--json` output)."""
    return str(_lazy("json").dumps(value))


DESCRIPTION = """\
Where does each element of a layout live? Prints the offset of every element of a window
of the layout (the whole layout when it has at most 4096 elements, else the first 32 rows
of its first slice, cut to the screen width) and, for XLA shapes, the memory order.

TARGET is an XLA shape ('f32[3,5]{1,0:T(2,2)}'), a CuTe layout
('((4,2),(4,3)):((4,16),(1,32))'), Triton text (a printed LinearLayout, or an encoding such
as '#ttg.blocked<{...}>' with --shape A,B or inside 'tensor<AxBxT, ...>'), or '-' to read it
from stdin; --tla FORMAT --rows R --cols C [--dtype T] names an Ascend TLA format instead.
Triton text prints the layout, its facts and Triton's own picture (who holds each element,
or each offset's element; up to 16384 points); --as cute/xla gives where each element lives
in that notation.

examples:
  tensorlayout show 'f32[3,5]{1,0:T(2,2)}' --index 2,3     # offset 17
  tensorlayout show 'f32[3,5]{1,0:T(2,2)}' --offset 9      # padding
  tensorlayout show 'bf16[16,256]{1,0:T(8,128)(2,1)}' --window 0:4,120:136
  tensorlayout show --tla zN --rows 40 --cols 72 --as xla
  tensorlayout show '#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>' \
      --shape 8,8 --as xla
  tensorlayout show 'Sw<3,3,3> o _0 o (16,64):(64,1)' --banks 16 --access ldmatrix-x4
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help=HELP["show"],
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target_arguments(p)
    p.add_argument("--index", metavar="I", action="append",
                   help="print the offset of the element at logical index I, e.g. 2,3 (repeatable)")
    p.add_argument("--offset", metavar="K", type=int, action="append",
                   help="print which element lives at offset K, or that it is padding (repeatable)")
    p.add_argument("--window", metavar="A:B,C:D",
                   help="print this part of the index space: one numpy-style range per "
                        "dimension, e.g. 0:8,100:116; a missing part is the whole dimension")
    p.add_argument("--max-width", type=int, metavar="N",
                   help="cut grid and memory-order lines to N characters (default: the terminal "
                        "width, else 120; 0: no limit)")
    p.add_argument("--json", action="store_true", help="print the facts as one JSON object")
    p.add_argument("--tpu", metavar="GEN", nargs="?", const="v5e",
                   help="give an XLA shape without tiles the layout a TPU of generation GEN "
                        "chooses (v5e, v6e; default v5e)")
    p.add_argument("--as", dest="as_", choices=AS_NOTATIONS,
                   help="print the layout in another notation instead (cute-tv: a Triton distributed "
                        "layout as CuTe's (thread, value) -> element layout); refused, with the reason, "
                        "where the notation cannot say where the elements live")
    p.add_argument("--coalescing", action="store_true",
                   help="for a Triton distributed layout, or a CuTe thread-value layout with --global: "
                        "the widest vector each thread can use and the 32-byte sectors of each warp "
                        "request, for elements of --dtype")
    _gpu_names.add_global_and_access(p)
    p.add_argument("--banks", metavar="BITS", type=int,
                   help="TARGET as a 2-D shared-memory tile (CuTe layout, swizzled ones too) of BITS-bit "
                        "elements: the bank conflicts of warp 0's --access, phase by phase")
    p.add_argument("--hw-view", action="store_true",
                   help="Triton text: print Triton's picture from the hardware's point of view (each "
                        "thread's or offset's element), as triton-tensor-layout --use-hw-view does")
    _triton_text.add_shape_argument(p)
    p.set_defaults(func=run)


def _xla_header(target: Target) -> list[str]:
    """The summary lines `format_show` prints above its grid, and what the grid shows."""
    lines = [*_lazy("xla_show").format_summary(target.layout).splitlines(), ""]
    rank = len(target.dims)
    if rank == 1:
        lines.append("offset of each element (one row, columns = dim 0):")
    elif rank > 1:
        lines.append(f"offset of each element (rows = dim {rank - 2}, columns = dim {rank - 1}):")
    return lines


def _cute_header(target: Target) -> list[str]:
    """The text and CuTe's facts of the layout (a TLA format's shape:stride)."""
    facts = _lazy("facts").own_facts(target)
    return [target.text, f"size {facts['size']}, cosize {facts['cosize']}, rank {facts['rank']}, "
                         f"depth {facts['depth']}, coalesced {facts['coalesced']}"]


def _xla_footer(target: Target, window: Window, max_width: int) -> list[str]:
    """The memory order of the first slots, when the window starts at slot 0."""
    if target.slots and all(r.start == 0 for r in window):
        return ["", *_grid.memory_order_lines(target, max_width)]  # the first slots: the window's
    return []


def _tla_footer(target: Target, window: Window, max_width: int) -> list[str]:
    """Where a TLA format pads its origin shape."""
    assert isinstance(target.layout, _lazy("cute").TlaLayout)
    padded = [int(m.size()) for m in target.layout.layout.modes()]
    if target.slots > 0 and padded != list(target.dims):
        return [f"(the origin shape ({','.join(map(str, target.dims))}) of a "
                f"{'x'.join(map(str, padded))} layout: the other slots are padding)"]
    return []


#: Per notation (:func:`tensorlayout.lowering.notation_of`), the lines above its grid (any other:
#: CuTe's) and below it (any other: none).
_HEADERS: dict[str | None, Callable[[Target], list[str]]] = {"xla": _xla_header}
_FOOTERS: dict[str | None, Callable[[Target, Window, int], list[str]]] = {"xla": _xla_footer,
                                                                         "tla": _tla_footer}


def _header(target: Target, window: Window) -> list[str]:
    lines = _HEADERS.get(notation_of(target.layout), _cute_header)(target)
    if any(r.stop - r.start != n for r, n in zip(window, target.dims, strict=True)):  # len() overflows
        lines.append(f"window {window_text(window)} of [{','.join(map(str, target.dims))}] "
                     "(--window picks another part)")
    return lines


def _text(target: Target, window: Window | None, max_width: int) -> str:
    if window is None:  # an XLA tuple, token or dynamic shape: no grid
        return str(_lazy("xla_show").format_show(target.layout))
    footer = _FOOTERS.get(notation_of(target.layout))
    lines = _header(target, window) + _grid.grid_lines(target, window, max_width)
    return "\n".join(lines + (footer(target, window, max_width) if footer else []))


def _window(target: Target, args: argparse.Namespace) -> Window | None:
    if not target.has_grid:
        if args.window:
            raise UsageError(f"{target.text} is not one static array: --window needs one")
        return None
    return parse_window(args.window, target.dims) if args.window else default_window(target.dims)


def run(args: argparse.Namespace) -> int:
    if args.banks is not None:
        return int(_lazy("extra").show_banks(args))
    if args.access != "row":
        raise UsageError("--access names the warp access of --banks")
    ll = _triton_text.triton_layout(args)
    if args.coalescing:
        return int(_lazy("extra").show_coalescing(ll, args))
    if args.global_layout is not None:
        raise UsageError("--global gives the global tensor of --coalescing")
    if ll is not None:
        return int(_lazy("extra").show_triton(ll, args))
    if args.hw_view:
        raise UsageError("--hw-view is Triton's hardware view of Triton text; TARGET is not Triton text")
    target = target_of(args, missing=TensorLayoutError)
    if target.notation == "cute" and isinstance(target.layout, (_lazy("cute").CoordLayout,
                                                                _lazy("cute").CountingTensor)):
        return int(_lazy("extra").show_coords(target, args))
    if args.tpu is not None and notation_of(target.layout) == "xla":
        generation = _lazy("tpu").canonical_generation(args.tpu)
        shape = _lazy("padding").tpu_shape(target.layout, generation=generation)
        target = Target("xla", shape, str(shape))
    if args.as_:
        if args.index or args.offset or args.window:
            raise UsageError("--as prints the layout in another notation: it takes no "
                             "--index, --offset or --window")
        text = _lazy("show_as").converted(target, args.as_)
        print(_json({**_lazy("facts").head(target), "as": args.as_, "text": text}) if args.json else text)
        return 0
    if args.index or args.offset:
        if args.window:
            raise UsageError("--window chooses what the grid shows: it does not go with --index/--offset")
        lines, records = _lazy("locate").lookups(target, args.index, args.offset)
        print(_json({**_lazy("facts").head(target), "lookups": records}) if args.json else "\n".join(lines))
        return 0
    window = _window(target, args)
    if args.json:
        print(_json(_lazy("facts").describe(target, window)))
        return 0
    width = args.max_width if args.max_width is not None else shutil.get_terminal_size((120, 24)).columns
    print(_text(target, window, width))
    return 0
