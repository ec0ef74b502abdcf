"""Whether text is Triton's, told without loading the Triton parser (start-up of the CLI).

>>> is_triton_text("tensor<4x8xf16, #shared>"), is_triton_text("(4,8):(8,1)")
(True, False)
"""

from __future__ import annotations

__all__ = ["STARTS", "TYPES", "is_triton_text"]

#: How Triton's tensor types start.
TYPES = ("tensor<", "!ttg.memdesc<")
#: How Triton's text starts: an encoding (or its alias) or a tensor type.
STARTS = ("#", *TYPES)


def is_triton_text(text: str) -> bool:
    """Whether ``text`` is Triton's (an encoding, a tensor type, or a printed linear layout).

    >>> is_triton_text("#ttg.blocked<{order = [0]}>"), is_triton_text("f32[4]{0}")
    (True, False)
    """
    head = text.lstrip()
    return head.startswith(STARTS) or "where out dims are" in text or "(empty layout" in text
