"""The layout a command names: an XLA shape, a CuTe layout or an Ascend TLA format.

Every notation answers the same questions through one object: its logical shape (a TLA
format's origin shape, a CuTe layout's top-level mode sizes), its physical slots, and the
offsets of any logical indices, the owners of the first slots (:class:`tensorlayout.render.Source`).

>>> t = target_from("(4,8):(8,1)")
>>> t.notation, t.dims, t.slots
('cute', (4, 8), 32)
"""

from __future__ import annotations

import argparse
from functools import cached_property
from typing import TYPE_CHECKING, cast

from tensorlayout._lazy import lazy_modules, lazy_names
from tensorlayout.cli._io import UsageError, read_argument
from tensorlayout.core._frozen import Frozen, set_field
from tensorlayout.core.layout import CoreLayout
from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError
from tensorlayout.lowering import lower, notation_of, parse_xla_or_cute

if TYPE_CHECKING:  # at run time, the CuTe (XLA) names load from `cute` (`xla`) when such a layout comes
    import numpy as np

    from tensorlayout.cute import ComposedLayout, CoordLayout, CountingTensor, Layout, TlaLayout
    from tensorlayout.cute.tla import FORMATS as TLA_FORMATS
    from tensorlayout.render import Source
    from tensorlayout.xla import Shape

__all__ = ["AS_NOTATIONS", "TLA_FORMATS", "Target", "add_target_arguments", "target_from", "target_of"]

#: the notations `show --as` prints a layout in (:mod:`tensorlayout.cli._show_as` converts into them, and
#: :mod:`tensorlayout.cli._triton` says which of them Triton text has)
AS_NOTATIONS = ("xla", "cute", "map", "triton", "cute-tv")
#: ``TLA_FORMATS``, the formats `--tla` accepts, loads from :mod:`tensorlayout.cute.tla` on first use
__getattr__, __dir__ = lazy_names(__name__, {"TLA_FORMATS": ("tensorlayout.cute.tla", "FORMATS")}, __all__)
#: the packages only CuTe layouts, TLA formats and pictures need (an XLA shape loads neither), and
#: XLA's tiling, which only an XLA shape needs
_lazy = lazy_modules({"cute": "tensorlayout.cute", "render": "tensorlayout.render",
                      "xla_tiling": "tensorlayout.xla.tiling"})


class _FormatNames:
    """The TLA formats `--tla` accepts (`VectorLayout` is a vector of `--cols` elements), read
    from :mod:`tensorlayout.cute.tla` only when printed: registering `--tla` loads no CuTe code."""

    def __str__(self) -> str:
        return ", ".join(_lazy("cute").tla.FORMATS)


class Target(Frozen):
    """A layout named on the command line, whatever its notation (an immutable value; what it
    computes is cached in its ``__dict__``)."""

    __match_args__ = ("notation", "layout", "text", "tla_format")
    notation: str  # "xla", "cute" or "tla"
    layout: Shape | Layout | TlaLayout | ComposedLayout | CoordLayout | CountingTensor
    text: str
    tla_format: tuple[str, int, int, str] | None  # (name, rows, cols, dtype) of --tla

    def __init__(self, notation: str, layout: Shape | Layout | TlaLayout | ComposedLayout | CoordLayout
                 | CountingTensor, text: str, tla_format: tuple[str, int, int, str] | None = None) -> None:
        set_field(self, "notation", notation)
        set_field(self, "layout", layout)
        set_field(self, "text", text)
        set_field(self, "tla_format", tla_format)

    @property
    def has_grid(self) -> bool:
        """False for XLA tuples, tokens and dynamic shapes: no single array of offsets."""
        if self.notation != "xla":
            return True
        shape = cast("Shape", self.layout)
        return shape.is_array and not shape.is_dynamic

    @cached_property
    def dims(self) -> tuple[int, ...]:
        """The logical shape: XLA dimensions, TLA origin shape, CuTe top-level mode sizes."""
        if not self.has_grid:  # an XLA tuple, token or dynamic shape: its own dims, no offsets
            return tuple(getattr(self.layout, "dimensions", ()))
        cute = _lazy("cute") if self.notation == "cute" else None
        if cute is not None and isinstance(self.layout, (cute.CoordLayout, cute.CountingTensor)):
            lay = self.layout.layout if isinstance(self.layout, cute.CountingTensor) else self.layout
            if not isinstance(lay.shape, tuple):
                return (lay.size(),)
            return tuple(int(cute.size(m)) for m in lay.shape)
        return self.core.shape

    @cached_property
    def slots(self) -> int:
        """Physical slots: XLA's allocated elements (padding included), else the cosize."""
        if self.notation == "xla":
            return int(_lazy("xla_tiling").allocated_elements(self.layout))
        return self.core.slots

    @cached_property
    def core(self) -> CoreLayout:
        """The layout in the one core form every notation lowers into."""
        return lower(self.layout)

    @cached_property
    def source(self) -> Source:
        """Offsets of given indices and owners of the first slots, without listing them all."""
        return _lazy("render").source_of(self.layout)

    def owners(self, n: int) -> np.ndarray:
        """For slots ``0 … n-1``, the C-order position of the element stored there (-1: padding).
        An XLA shape answers from its core form, as its :attr:`source` would (whose checks are for
        pictures): showing a shape loads no picture code."""
        return self.core.owners(n) if self.notation == "xla" else self.source.owners(n)


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    """TARGET and the `--tla FORMAT --rows R --cols C --dtype T` alternative."""
    p.add_argument("target", nargs="?",
                   help="XLA shape text ('f32[3,5]{1,0:T(2,2)}'), CuTe layout text "
                        "('((4,2),(4,3)):((4,16),(1,32))'), Triton text (a printed "
                        "LinearLayout or an encoding, see above), or '-' to read it from stdin")
    tla = p.add_argument("--tla", metavar="FORMAT",
                         help="an Ascend TLA format instead of TARGET: %(formats)s")
    vars(tla)["formats"] = _FormatNames()  # argparse fills %(name)s from the action's attributes
    p.add_argument("--rows", type=int, help="rows of the TLA matrix")
    p.add_argument("--cols", type=int, help="columns of the TLA matrix")
    p.add_argument("--dtype", default="f16", help="element type of the TLA matrix (default f16)")


def _format_name(text: str) -> str:
    """A TLA format name in its canonical spelling (`zn` -> `zN`)."""
    name = next((f for f in _lazy("cute").tla.FORMATS if f.lower() == text.strip().lower()), None)
    if name is None:
        raise LayoutError(f"unknown TLA format {text!r}; expected one of {_FormatNames()}")
    return name


def _tla_hint(text: str) -> str | None:
    name = next((f for f in _lazy("cute").tla.FORMATS if f.lower() == text.lower()), None)
    if name is None:
        return None
    return (f"{text!r} names a TLA format, not a layout: use --tla {name} --rows R --cols C "
            f"[--dtype T] (in Python: tensorlayout.cute.tla.make_format({name!r}, rows, cols, dtype))")


def target_from(text: str) -> Target:
    """The XLA shape or CuTe layout written as `text`; a TLA format name gets a hint."""
    try:
        layout = parse_xla_or_cute(text)  # (convert.parse_target)
    except ParseError:
        hint = _tla_hint(text.strip())
        if hint is not None:
            raise LayoutError(hint) from None
        raise
    return Target(notation_of(layout) or "cute", layout, str(layout))


def target_of(args: argparse.Namespace, missing: type[TensorLayoutError] = UsageError) -> Target:
    """The target the arguments name (TARGET, `-` for stdin, or `--tla`); a missing TARGET,
    `--rows` or `--cols` raises `missing` (the kind each command's tests pin today)."""
    if not args.target and not args.tla:
        raise missing("expected a TARGET (XLA shape or CuTe layout text, or '-' for stdin) "
                               "or --tla FORMAT --rows R --cols C")
    if args.tla is None:
        for flag in ("rows", "cols"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag} describes a TLA matrix: it needs --tla FORMAT")
        return target_from(read_argument(args.target, "a TARGET (XLA shape or CuTe layout) or --tla FORMAT"))
    if args.target:
        raise UsageError("give either a TARGET or --tla FORMAT, not both")
    name = _format_name(args.tla)
    if args.rows is None or args.cols is None:
        raise missing(f"a TLA format needs --rows R and --cols C (--tla {name})")
    tla = _lazy("cute").tla.make_format(name, args.rows, args.cols, args.dtype)
    return Target("tla", tla, f"{name} {args.rows}x{args.cols} {args.dtype}: {tla}",
                  (name, args.rows, args.cols, args.dtype))
