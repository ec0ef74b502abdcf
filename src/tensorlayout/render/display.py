"""Inline pictures in Jupyter: IPython display hooks for every drawable kind.

``register()`` tells the running IPython shell to show XLA shapes, CuTe/TLA layouts (swizzled
ones included), Triton linear layouts, TV layouts, MMA atoms, TiledMMAs and TiledCopies as
their SVG pictures (``image/svg+xml``), and to keep the text form for what cannot be drawn (a
tuple shape, a picture too large). The lower layers know nothing of pictures: the hooks are
registered from here, by type, with IPython's ``for_type``. Importing
:mod:`tensorlayout.render` inside IPython registers them; ``%load_ext
tensorlayout.render.display`` does it explicitly.

>>> repr_svg("f32[3,5]{1,0:T(2,2)}").count('class="cell"'), repr_svg("(f32[2], f32[3])")
(15, None)
"""

from __future__ import annotations

import sys
from typing import Any

from tensorlayout.errors import TensorLayoutError
from tensorlayout.render._kinds import DRAWERS, LAYOUT_TYPE_NAMES, LAYOUT_TYPES
from tensorlayout.render._pictures import to_svg

__all__ = ["SVG_MIME", "load_ipython_extension", "register", "repr_svg"]

SVG_MIME = "image/svg+xml"


def repr_svg(obj: object) -> str | None:
    """The SVG picture of ``obj``, or None when it has none (IPython then prints its text)."""
    try:
        return to_svg(obj)
    except TensorLayoutError:
        return None


def _shell() -> Any:
    """The running IPython shell, without importing IPython (None outside it)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None


def register(shell: Any = None) -> bool:
    """Register the SVG display hooks with ``shell`` (default: the running IPython shell);
    False when there is none."""
    shell = shell if shell is not None else _shell()
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters[SVG_MIME]
    for kind in (*LAYOUT_TYPES, *(k for k, _ in DRAWERS)):
        formatter.for_type(kind, repr_svg)
    for module, name in LAYOUT_TYPE_NAMES:
        formatter.for_type_by_name(module, name, repr_svg)
    return True


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext tensorlayout.render.display``."""
    register(shell)
