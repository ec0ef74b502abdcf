"""Which TARGET is Triton text, and its layout: a printed `LinearLayout`, or an encoding
(`#ttg.blocked<{...}>`, ...) with `--shape A,B` or inside `tensor<AxBxT, ...>`. Telling Triton
text apart loads no Triton code (:mod:`tensorlayout.cli._triton` has what `show` and `render`
do with it).

>>> import argparse
>>> triton_layout(argparse.Namespace(target="f32[3,5]", tla=None, shape=None)) is None
True
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tensorlayout import triton
from tensorlayout.cli._io import UsageError, positive_ints, read_argument
from tensorlayout.triton._sniff import is_triton_text

if TYPE_CHECKING:  # Triton's modules load when Triton text comes (`show` of a shape needs none)
    from tensorlayout.triton import LinearLayout

__all__ = ["add_shape_argument", "triton_layout"]


def add_shape_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shape", metavar="A,B",
                   help="the tensor shape of a Triton encoding given without tensor<...>, e.g. 16,16")


def _shape(text: str | None) -> list[int] | None:
    return None if text is None else positive_ints(text, "--shape", "dims like 16,16")


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
    return triton.parse_layout(text, _shape(args.shape))
