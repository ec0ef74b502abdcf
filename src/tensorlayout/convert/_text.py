"""Telling the notations' texts apart, as the one dispatch does it (:mod:`tensorlayout.lowering`):
XLA shape text has ``[``; CuTe text has none but in its pointer flag ``smem_ptr[16b](unset)``.

>>> is_xla_text("f32[3]"), str(parse_target("(4,8):(8,1)"))
(True, '(4,8):(8,1)')
"""

from __future__ import annotations

from tensorlayout.lowering import is_xla_text
from tensorlayout.lowering import parse_xla_or_cute as parse_target

__all__ = ["is_xla_text", "parse_target"]
