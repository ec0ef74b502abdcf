"""Layout validation (``LayoutUtil::ValidateLayoutForShape``) with readable reasons.

``problems`` and ``validate_layout`` apply exactly the rules XLA's validator applies
(:mod:`tensorlayout.xla.advice` adds checks XLA does not make but a user may want).

>>> from tensorlayout.xla.shape import parse_shape
>>> problems(parse_shape("f32[2,3]{0,0}"))
['layout minor_to_major field has duplicate values: {0,0}']
>>> validate_layout(parse_shape("f32[2,3]{0,1:T(8,128)}"))
"""

from __future__ import annotations

from tensorlayout.errors import LayoutError
from tensorlayout.xla.shape import Shape, problems

__all__ = ["problems", "validate_layout"]


def validate_layout(shape: Shape, *, allow_missing_layouts: bool = False) -> None:
    """Raise :class:`LayoutError` with the first problem, if any."""
    found = problems(shape, allow_missing_layouts=allow_missing_layouts)
    if found:
        raise LayoutError(found[0])
