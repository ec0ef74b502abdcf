"""Every notation into the layout core, in one place: :func:`lower` and the text sniffing.

The one dispatch on notation types. An XLA shape (or layout text), a CuTe layout (plain,
swizzled/composed, TLA), a Triton linear layout or the text of any of them lowers to the
:class:`~tensorlayout.core.layout.CoreLayout` the consumers (conversion, relayout, pictures,
the command line) read. Each notation's own lowering stays in its package
(:func:`tensorlayout.xla.lowering.lower_shape`, :func:`tensorlayout.cute.lowering.lower_layout`,
:func:`tensorlayout.triton.element_layout`); this module only chooses between them, by the
table :data:`LOWERINGS`. A new notation adds one row here.

>>> lower("f32[3,5]{1,0:T(2,2)}").offset((2, 3)), lower("((2,2),(2,3)):((2,12),(1,4))").offset((2, 3))
(17, 17)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute.basis import CoordLayout, CountingTensor
from tensorlayout.cute.layout import Layout
from tensorlayout.cute.lowering import lower_layout
from tensorlayout.cute.swizzle import ComposedLayout
from tensorlayout.cute.swizzle import parse_layout as parse_cute
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton._mlir import is_triton_text
from tensorlayout.triton._mlir import parse_layout as parse_triton
from tensorlayout.triton.bridge import element_layout
from tensorlayout.triton.linear_layout import LinearLayout
from tensorlayout.xla.lowering import lower_shape
from tensorlayout.xla.shape import Shape, parse_shape

__all__ = ["LOWERINGS", "Notation", "as_cute", "is_xla_text", "lower", "lowers", "parse_text",
           "parse_xla_or_cute"]

#: Any value :func:`lower` accepts.
Notation = Shape | Layout | ComposedLayout | TlaLayout | LinearLayout | CoreLayout | str

#: CuTe's only ``[``: the shared-memory pointer flag of a composed layout.
_SMEM_PTR = re.compile(r"smem_ptr\[")


def is_xla_text(text: str) -> bool:
    """True for XLA shape text (it has ``[``, or is ``token``/``opaque``); CuTe text has no ``[``
    outside ``smem_ptr[..]``.

    >>> is_xla_text("bf16[8,128]{1,0:T(8,128)(2,1)}"), is_xla_text("Sw<3,4,3> o smem_ptr[16b](unset) o 8:1")
    (True, False)
    """
    stripped = text.strip()
    return "[" in _SMEM_PTR.sub("", stripped) or stripped.startswith(("token", "opaque"))


def parse_xla_or_cute(text: str) -> Shape | Layout | ComposedLayout | CoordLayout | CountingTensor:
    """XLA shape text as a :class:`~tensorlayout.xla.Shape`, anything else as CuTe's printed text.

    >>> type(parse_xla_or_cute("f32[3,5]{1,0:T(2,2)}")).__name__, str(parse_xla_or_cute(" (4,8):(8,1) "))
    ('Shape', '(4,8):(8,1)')
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected XLA shape or CuTe layout text, but got {type(text).__name__}")
    return parse_shape(text.strip()) if is_xla_text(text) else parse_cute(text.strip())


def parse_text(text: str) -> Shape | Layout | ComposedLayout | CoordLayout | CountingTensor | LinearLayout:
    """Text of any notation: Triton's (an encoding inside ``tensor<…>`` or a printed linear
    layout), else XLA shape text, else CuTe's.

    >>> ll = parse_text("tensor<4x8xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
    ...                 "order = [1, 0]}>>")
    >>> type(ll).__name__, str(lower(ll).name)
    ('LinearLayout', '(4,8):(8,1)')
    """
    if isinstance(text, str) and is_triton_text(text):
        return parse_triton(text)
    return parse_xla_or_cute(text)


def _xla(shape: Shape) -> CoreLayout:
    """An XLA array shape (a tuple or a token holds no array to lay out)."""
    if not shape.is_array:
        raise UnsupportedError(f"{shape} is a {shape.kind} shape, which holds no array elements")
    return lower_shape(shape)


def _coordinates(x: CoordLayout | CountingTensor) -> CoreLayout:
    raise UnsupportedError(f"{x}: its scaled-basis strides give coordinates, not offsets")


def _triton(ll: LinearLayout) -> CoreLayout:
    """A one-to-one Triton layout through the CuTe layout of where each element lives."""
    return lower_layout(element_layout(ll))


def _text(text: str) -> CoreLayout:
    return lower(parse_text(text))


#: Per notation type, its lowering into the core (the first type in an object's MRO wins).
LOWERINGS: dict[type, Callable[[Any], CoreLayout]] = {
    CoreLayout: lambda lay: lay,
    Shape: _xla,
    Layout: lower_layout,
    ComposedLayout: lower_layout,
    TlaLayout: lower_layout,
    LinearLayout: _triton,
    CoordLayout: _coordinates,
    CountingTensor: _coordinates,
    str: _text,
}


def lowers(obj: object) -> bool:
    """Whether ``obj`` is of a notation :func:`lower` takes (its value may still be refused).

    >>> lowers("8:1"), lowers(3)
    (True, False)
    """
    return any(cls in LOWERINGS for cls in type(obj).__mro__)


def lower(obj: object) -> CoreLayout:
    """``obj`` — an XLA shape, a CuTe/TLA/swizzled layout, a Triton linear layout, a core
    layout, or the text of one — as the :class:`~tensorlayout.core.layout.CoreLayout`.

    Pre: ``obj`` is one of :data:`LOWERINGS`' types (else :class:`LayoutError`). Post: the
    result's offsets are the notation's own (differentially tested per notation).

    >>> lower("bf16[16,256]{1,0:T(8,128)(2,1)}").slots, lower(Layout((4, 8), (8, 1))).slots
    (4096, 32)
    """
    for cls in type(obj).__mro__:
        lowering = LOWERINGS.get(cls)
        if lowering is not None:
            return lowering(obj)
    raise LayoutError("expected an XLA shape, a CuTe, TLA or Triton layout, or the text of one, "
                      f"but got {type(obj).__name__}")


def as_cute(x: Any) -> tuple[Layout, tuple[int, ...] | None]:
    """``x`` (CuTe text or layout, TLA layout, Triton :class:`LinearLayout`) as a CuTe layout
    from logical index to offset, and the TLA origin shape (None for the others). A Triton
    layout gives its :func:`~tensorlayout.triton.element_layout`.

    >>> from tensorlayout.triton import SwizzledSharedLayout
    >>> str(as_cute(SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([4, 8]))[0])
    '(4,8):(8,1)'
    """
    if isinstance(x, LinearLayout):
        return element_layout(x), None
    if isinstance(x, TlaLayout):
        return x.layout, tuple(int(n) for n in x.origin_shape)
    if isinstance(x, str):
        return Layout.parse(x), None
    if isinstance(x, Layout):
        return x, None
    raise LayoutError("expected a CuTe, TLA or Triton linear layout (or CuTe text), but got "
                      f"{type(x).__name__}")
