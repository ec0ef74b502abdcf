"""Telling the notations' texts apart: XLA shape text has ``[``; CuTe text has none but in its
pointer flag ``smem_ptr[16b](unset)``.

>>> is_xla_text("f32[3]"), str(parse_target("(4,8):(8,1)"))
(True, '(4,8):(8,1)')
"""

from __future__ import annotations

import re

from tensorlayout import cute
from tensorlayout.errors import LayoutError
from tensorlayout.xla import Shape, parse_shape

__all__ = ["is_xla_text", "parse_target"]


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


def parse_target(text: str) -> (Shape | cute.Layout | cute.ComposedLayout | cute.CoordLayout
                                | cute.CountingTensor):
    """XLA shape text as a :class:`Shape`, anything else as a CuTe :class:`~tensorlayout.cute.Layout`.

    >>> type(parse_target("f32[3,5]{1,0:T(2,2)}")).__name__, str(parse_target(" (4,8):(8,1) "))
    ('Shape', '(4,8):(8,1)')
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected XLA shape or CuTe layout text, but got {type(text).__name__}")
    return parse_shape(text.strip()) if is_xla_text(text) else cute.parse_layout(text.strip())


# ---------------------------------------------------------------- XLA → CuTe
