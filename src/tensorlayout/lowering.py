"""Every notation into the layout core, in one place: :func:`lower` and the text sniffing.

The one dispatch on notation types. An XLA shape (or layout text), a CuTe layout (plain,
swizzled/composed, TLA), a Triton linear layout or the text of any of them lowers to the
:class:`~tensorlayout.core.layout.CoreLayout` the consumers (conversion, relayout, pictures,
the command line) read. Each notation's own lowering stays in its package
(:func:`tensorlayout.xla.lowering.lower_shape`, :func:`tensorlayout.cute.lowering.lower_layout`,
:func:`tensorlayout.triton.element_layout`); this module only chooses between them, by the
table ``_NOTATIONS`` (:data:`LOWERINGS` keyed by the types); a new notation adds one row
there. The same table names each value's notation (:func:`notation_of`), so that consumers
showing a notation's own facts key their tables on that name instead of matching on types.
A notation's modules load when a value or text of it first comes.

>>> lower("f32[3,5]{1,0:T(2,2)}").offset((2, 3)), lower("((2,2),(2,3)):((2,12),(1,4))").offset((2, 3))
(17, 17)
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from functools import reduce
from importlib import import_module
from typing import TYPE_CHECKING, Any

from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton._sniff import is_triton_text

if TYPE_CHECKING:  # the notations as mypy sees them; at run time each loads when a value of it comes
    from tensorlayout.core.layout import CoreLayout
    from tensorlayout.cute.basis import CoordLayout, CountingTensor
    from tensorlayout.cute.layout import Layout
    from tensorlayout.cute.swizzle import ComposedLayout
    from tensorlayout.cute.tla import TlaLayout
    from tensorlayout.triton.linear_layout import LinearLayout
    from tensorlayout.xla.shape import Shape

    #: Any value :func:`lower` accepts.
    Notation = Shape | Layout | ComposedLayout | TlaLayout | LinearLayout | CoreLayout | str
    #: Per notation type, its lowering into the core (made on first use from ``_NOTATIONS``).
    LOWERINGS: dict[type, Callable[[Any], CoreLayout]]

__all__ = ["LOWERINGS", "Notation", "as_cute", "is_xla_text", "lower", "lowers", "notation_of", "parse_text",
           "parse_xla_or_cute"]

#: CuTe's only ``[``: the shared-memory pointer flag of a composed layout.
_SMEM_PTR = re.compile(r"smem_ptr\[")


def _load(module: str, name: str) -> Any:
    """``module.name``, importing ``module`` on first use (a notation loads only when used)."""
    return getattr(import_module(module), name)


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
    if is_xla_text(text):
        return _load("tensorlayout.xla.shape", "parse_shape")(text.strip())
    return _load("tensorlayout.cute.swizzle", "parse_layout")(text.strip())


def parse_text(text: str) -> Shape | Layout | ComposedLayout | CoordLayout | CountingTensor | LinearLayout:
    """Text of any notation: Triton's (an encoding inside ``tensor<…>`` or a printed linear
    layout), else XLA shape text, else CuTe's.

    >>> ll = parse_text("tensor<4x8xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
    ...                 "order = [1, 0]}>>")
    >>> type(ll).__name__, str(lower(ll).name)
    ('LinearLayout', '(4,8):(8,1)')
    """
    if isinstance(text, str) and is_triton_text(text):
        return _load("tensorlayout.triton._mlir", "parse_layout")(text)
    return parse_xla_or_cute(text)


def _xla(shape: Shape) -> CoreLayout:
    """An XLA array shape (a tuple or a token holds no array to lay out)."""
    if not shape.is_array:
        raise UnsupportedError(f"{shape} is a {shape.kind} shape, which holds no array elements")
    return _load("tensorlayout.xla.lowering", "lower_shape")(shape)


def _coordinates(x: CoordLayout | CountingTensor) -> CoreLayout:
    raise UnsupportedError(f"{x}: its scaled-basis strides give coordinates, not offsets")


def _triton(ll: LinearLayout) -> CoreLayout:
    """A one-to-one Triton layout through the CuTe layout of where each element lives."""
    return _lower_layout(_load("tensorlayout.triton.bridge", "element_layout")(ll))


def _text(text: str) -> CoreLayout:
    return lower(parse_text(text))


def _lower_layout(lay: Layout | ComposedLayout | TlaLayout) -> CoreLayout:
    """A CuTe layout (plain, swizzled or TLA) through CuTe's own lowering."""
    return _load("tensorlayout.cute.lowering", "lower_layout")(lay)


def _core(lay: CoreLayout) -> CoreLayout:
    return lay


#: Per notation type, by ``(module, class)``: the notation's name (what :func:`notation_of`
#: answers, the key the consumers' own tables use) and its lowering into the core. The first
#: type in an object's MRO wins. Keyed by name, so that a notation's modules load only when a
#: value of it comes; :data:`LOWERINGS` is the lowerings keyed by the types. The only place
#: that knows which class belongs to which notation.
_NOTATIONS: dict[tuple[str, str], tuple[str, Callable[[Any], CoreLayout]]] = {
    ("tensorlayout.core.layout", "CoreLayout"): ("core", _core),
    ("tensorlayout.xla.shape", "Shape"): ("xla", _xla),
    ("tensorlayout.cute.layout", "Layout"): ("cute", _lower_layout),
    ("tensorlayout.cute.swizzle", "ComposedLayout"): ("cute", _lower_layout),
    ("tensorlayout.cute.tla", "TlaLayout"): ("tla", _lower_layout),
    ("tensorlayout.triton.linear_layout", "LinearLayout"): ("triton", _triton),
    ("tensorlayout.cute.basis", "CoordLayout"): ("cute", _coordinates),
    ("tensorlayout.cute.basis", "CountingTensor"): ("cute", _coordinates),
    ("builtins", "str"): ("text", _text),
}


#: The types of ``Notation`` besides ``str``, in its order.
_NOTATION_TYPES = (("tensorlayout.xla.shape", "Shape"), ("tensorlayout.cute.layout", "Layout"),
                   ("tensorlayout.cute.swizzle", "ComposedLayout"), ("tensorlayout.cute.tla", "TlaLayout"),
                   ("tensorlayout.triton.linear_layout", "LinearLayout"),
                   ("tensorlayout.core.layout", "CoreLayout"))


def _row(obj: object) -> tuple[str, Callable[[Any], CoreLayout]] | None:
    """The row of ``obj``'s notation in ``_NOTATIONS``, None if it has none."""
    for cls in type(obj).__mro__:
        row = _NOTATIONS.get((cls.__module__, cls.__qualname__))
        if row is not None:
            return row
    return None


def notation_of(obj: object) -> str | None:
    """The notation ``obj`` is written in, as the consumers key their tables: ``xla`` (a
    :class:`~tensorlayout.xla.Shape`), ``cute`` (a plain, composed/swizzled or scaled-basis CuTe
    layout), ``tla`` (a TLA format), ``triton`` (a linear layout), ``core`` (a
    :class:`~tensorlayout.core.layout.CoreLayout`), ``text`` (a ``str``, read by :func:`lower`);
    None for a value of no notation. Answers from the same table :func:`lower` dispatches on,
    without loading any notation.

    >>> from tensorlayout.cute import Layout
    >>> notation_of(Layout((4, 8), (8, 1))), notation_of("8:1"), notation_of(3)
    ('cute', 'text', None)
    """
    row = _row(obj)
    return None if row is None else row[0]


def __getattr__(name: str) -> Any:
    """:data:`LOWERINGS` (every notation's types, so it loads them all) and ``Notation``, made
    on first use."""
    if name == "LOWERINGS":
        return {_load(module, cls): lowering for (module, cls), (_, lowering) in _NOTATIONS.items()}
    if name == "Notation":
        return reduce(operator.or_, [*(_load(module, cls) for module, cls in _NOTATION_TYPES), str])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def lowers(obj: object) -> bool:
    """Whether ``obj`` is of a notation :func:`lower` takes (its value may still be refused).

    >>> lowers("8:1"), lowers(3)
    (True, False)
    """
    return _row(obj) is not None


def lower(obj: object) -> CoreLayout:
    """``obj`` — an XLA shape, a CuTe/TLA/swizzled layout, a Triton linear layout, a core
    layout, or the text of one — as the :class:`~tensorlayout.core.layout.CoreLayout`.

    Pre: ``obj`` is one of :data:`LOWERINGS`' types (else :class:`LayoutError`). Post: the
    result's offsets are the notation's own (differentially tested per notation).

    >>> from tensorlayout.cute import Layout
    >>> lower("bf16[16,256]{1,0:T(8,128)(2,1)}").slots, lower(Layout((4, 8), (8, 1))).slots
    (4096, 32)
    """
    row = _row(obj)
    if row is not None:
        return row[1](obj)
    raise LayoutError("expected an XLA shape, a CuTe, TLA or Triton layout, or the text of one, "
                      f"but got {type(obj).__name__}")


def _triton_as_cute(ll: LinearLayout) -> tuple[Layout, None]:
    return _load("tensorlayout.triton.bridge", "element_layout")(ll), None


def _tla_as_cute(tla: TlaLayout) -> tuple[Layout, tuple[int, ...]]:
    return tla.layout, tuple(int(n) for n in tla.origin_shape)


def _text_as_cute(text: str) -> tuple[Layout, None]:
    return _load("tensorlayout.cute.layout", "Layout").parse(text), None


def _plain_cute(lay: object) -> tuple[Layout, None] | None:
    """A plain CuTe layout as itself; None for a composed or scaled-basis one."""
    return (lay, None) if isinstance(lay, _load("tensorlayout.cute.layout", "Layout")) else None


#: Per notation (:func:`notation_of`), its CuTe layout and TLA origin shape (None: it has none).
_AS_CUTE: dict[str | None, Callable[[Any], tuple[Layout, tuple[int, ...] | None] | None]] = {
    "triton": _triton_as_cute, "tla": _tla_as_cute, "text": _text_as_cute, "cute": _plain_cute}


def as_cute(x: Any) -> tuple[Layout, tuple[int, ...] | None]:
    """``x`` (CuTe text or layout, TLA layout, Triton :class:`LinearLayout`) as a CuTe layout
    from logical index to offset, and the TLA origin shape (None for the others). A Triton
    layout gives its :func:`~tensorlayout.triton.element_layout`.

    >>> from tensorlayout.triton import SwizzledSharedLayout
    >>> str(as_cute(SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear_layout([4, 8]))[0])
    '(4,8):(8,1)'
    """
    rule = _AS_CUTE.get(notation_of(x))
    found = None if rule is None else rule(x)
    if found is None:
        raise LayoutError("expected a CuTe, TLA or Triton linear layout (or CuTe text), but got "
                          f"{type(x).__name__}")
    return found
