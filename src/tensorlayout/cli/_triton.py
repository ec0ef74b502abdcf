"""Triton text on the command line (`show`, `render`): a printed `LinearLayout`, an encoding
(`#ttg.blocked<{...}>`, ...) with `--shape A,B` or inside `tensor<AxBxT, ...>`.

>>> import argparse
>>> args = argparse.Namespace(target="tensor<2x4xf16, #ttg.blocked<{sizePerThread = [1, 1], "
...     "threadsPerWarp = [2, 4], warpsPerCTA = [1, 1], order = [1, 0]}>>", tla=None, shape=None)
>>> print(show_text(triton_layout(args), None).splitlines()[-2])
[[T0:0, T1:0, T2:0, T3:0]
"""

from __future__ import annotations

import argparse

from tensorlayout import convert
from tensorlayout.cli._io import UsageError, read_argument
from tensorlayout.errors import UnsupportedError
from tensorlayout.render._triton import is_distributed, is_shared
from tensorlayout.triton import LinearLayout, element_layout, get_distributed_view, get_shared_view
from tensorlayout.triton._mlir import is_triton_text, parse_layout

__all__ = ["NOTATIONS", "SHOWN_POINTS", "add_shape_argument", "converted", "picture_dims", "show_text",
           "triton_layout"]

#: what `show --as` turns a Triton layout into
NOTATIONS = ("cute", "xla")
#: `show` prints Triton's picture of a layout up to this many points (a 128x128 tile).
SHOWN_POINTS = 1 << 14


def add_shape_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shape", metavar="A,B",
                   help="the tensor shape of a Triton encoding given without tensor<...>, e.g. 16,16")


def _shape(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        dims = [int(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"--shape takes dims like 16,16, but got {text!r}") from None
    if not dims or any(d <= 0 for d in dims):
        raise UsageError(f"--shape takes positive dims like 16,16, but got {text!r}")
    return dims


def triton_layout(args: argparse.Namespace) -> LinearLayout | None:
    """The Triton layout TARGET names, or None when TARGET is not Triton text (a TARGET read
    from stdin is kept in ``args.target`` for the other notations)."""
    if args.tla or not args.target:
        return None  # nothing to read: the other notations' checks say what is missing
    text = read_argument(args.target, "a TARGET")
    args.target = text
    if not is_triton_text(text):
        if args.shape is not None:
            raise UsageError("--shape gives the tensor shape of a Triton encoding; TARGET is not one")
        return None
    return parse_layout(text, _shape(args.shape))


def picture_dims(ll: LinearLayout) -> tuple[int, ...]:
    """The dims a picture window of ``ll`` ranges over: rows x columns of a distributed
    layout's tensor, the out dims of a shared one."""
    sizes = ll.get_out_dim_sizes()
    if is_shared(ll) or len(sizes) <= 1:
        return tuple(sizes) if sizes else (1,)
    rows = 1
    for n in sizes[:-1]:
        rows *= n
    return rows, sizes[-1]


def converted(ll: LinearLayout, notation: str, element: str) -> str:
    """``ll`` as CuTe (element -> index of the point holding it) or as an XLA shape."""
    try:
        cute = element_layout(ll)
    except UnsupportedError as err:
        raise UnsupportedError(f"no {'XLA' if notation == 'xla' else 'CuTe'} layout places the elements "
                               f"of this Triton layout: {err}") from None
    return str(cute) if notation == "cute" else str(convert.cute_to_xla(cute, element))


def show_text(ll: LinearLayout, header: str | None) -> str:
    """The layout as Triton prints it, a line of facts, and Triton's picture of it."""
    ins = ", ".join(f"{n} {ll.get_in_dim_size(n)}" for n in ll.get_in_dim_names())
    outs = ", ".join(f"{n} {s}" for n, s in ll.out_dims)
    lines = [*([header] if header else []), str(ll).strip("\n"),
             f"in dims {ins} -> out dims {outs}; injective {ll.is_injective()}, "
             f"surjective {ll.is_surjective()}", ""]
    points = max(ll.get_total_in_dim_size(), ll.get_total_out_dim_size())
    if points > SHOWN_POINTS:
        lines.append(f"(Triton's picture of {points} points is left out past {SHOWN_POINTS}: "
                     "`tensorlayout render` draws a window of it)")
    elif is_distributed(ll) and {"register", "lane", "warp", "block"} <= set(ll.get_in_dim_names()):
        lines.append(get_distributed_view(ll).rstrip("\n"))
    elif is_shared(ll) and {"offset", "block"} <= set(ll.get_in_dim_names()):
        lines.append(get_shared_view(ll).rstrip("\n"))
    return "\n".join(lines)
