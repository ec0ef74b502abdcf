"""Bridges between the three notations: XLA tiled layouts, CuTe/TLA layouts, indexing maps.

All three answer one question (where does element (i, j, …) live?), so each can be rewritten
in the others where the target notation can express it; where it cannot, a
:class:`~tensorlayout.errors.UnsupportedError` says why. Offsets are in elements (an ``E(4)``
layout packs two per byte, but element ``k`` is still offset ``k``); memory spaces (``S(n)``)
and tail padding (``L(n)``) do not move elements, so the CuTe and map forms drop them.

>>> from tensorlayout.xla import parse_shape
>>> str(xla_to_cute(parse_shape("f32[3,5]{1,0:T(2,2)}")))
'((2,2),(2,3)):((2,12),(1,4))'
>>> str(cute_to_xla("((2,2),(2,3)):((2,12),(1,4))", dims=(3, 5)))
'f32[3,5]{1,0:T(2,2)}'
>>> print(to_indexing_map(parse_shape("f32[3,5]{1,0:T(2,2)}")))
(d0, d1) -> ((d0 mod 2) * 2 + (d0 / 2) * 12 + (d1 / 2) * 4 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensorlayout._lazy import lazy_names

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
    from tensorlayout.convert._search import cute_to_xla
    from tensorlayout.convert._text import is_xla_text, parse_target
    from tensorlayout.convert._tla import tla_to_xla
    from tensorlayout.convert._xla_cute import to_indexing_map, xla_to_cute

__all__ = ["cute_to_xla", "is_xla_text", "parse_target", "tla_to_xla", "to_indexing_map",
           "xla_to_cute"]

#: name -> (module, attribute; None: the module itself): where each public name lives
_LAZY: dict[str, tuple[str, str | None]] = {
    "cute_to_xla": ("tensorlayout.convert._search", "cute_to_xla"),
    "is_xla_text": ("tensorlayout.convert._text", "is_xla_text"),
    "parse_target": ("tensorlayout.convert._text", "parse_target"),
    "tla_to_xla": ("tensorlayout.convert._tla", "tla_to_xla"),
    "to_indexing_map": ("tensorlayout.convert._xla_cute", "to_indexing_map"),
    "xla_to_cute": ("tensorlayout.convert._xla_cute", "xla_to_cute"),
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
