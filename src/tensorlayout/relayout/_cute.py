"""CuTe and TLA layouts as relayout targets, and :func:`as_target` for every notation.

A CuTe layout lowers into the layout core; its per-mode digits are the strided fast path.

>>> t = from_cute("((2,2),(2,3)):((2,12),(1,4))")
>>> t.logical_shape, t.physical_elements, t.tile_elements
((4, 6), 24, 4)
"""

from __future__ import annotations

from dataclasses import replace

from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import Layout, tla
from tensorlayout.cute.swizzle import ComposedLayout
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.lowering import lower, lowers
from tensorlayout.relayout._target import PhysicalTarget
from tensorlayout.xla.shape import Shape

__all__ = ["as_target", "from_cute", "remembered_target", "storable"]


def from_cute(x: Layout | TlaLayout | ComposedLayout | str, *, element_bits: int = 0,
              name: str = "") -> PhysicalTarget:
    """A :class:`PhysicalTarget` for a CuTe layout (domain: its mode sizes) or a TLA layout
    (domain: its origin shape; the rest of each mode is padding)."""
    if isinstance(x, str):
        x = Layout.parse(x)
    if not isinstance(x, (Layout, TlaLayout, ComposedLayout)):
        raise LayoutError(f"expected a CuTe or TLA layout, got {type(x).__name__}")
    core = lower(x)
    if element_bits:
        core = replace(core, element_bits=element_bits)
    return PhysicalTarget.from_layout(storable(replace(core, name=name) if name else core))


def storable(core: CoreLayout) -> CoreLayout:
    """``core`` after checking data can be stored under it (strides >= 0, one slot per element),
    with its tiles as the core sees them (:meth:`~CoreLayout.contiguous_tile`).

    >>> [storable(lower(text)).tile_elements  # the second one's tiles of 4 are not one run each
    ...  for text in ("((2,2),(2,3)):((2,12),(1,4))", "((2,2),(2,3)):((1,24),(4,8))")]
    [4, None]
    """
    name = core.name or "layout"
    if any(d.stride < 0 for d in core.digits if d.extent > 1):
        raise UnsupportedError(f"{name} has a negative stride; a buffer target needs strides >= 0")
    if not core.is_injective():
        raise UnsupportedError(f"{name} maps two coordinates to one offset, so data cannot be stored "
                               "under it")
    return replace(core, tile_elements=core.contiguous_tile())


def as_target(obj: object) -> PhysicalTarget:
    """Accept a :class:`PhysicalTarget`, an XLA :class:`Shape` or shape text, a CuTe, TLA or
    Triton layout (anything :func:`~tensorlayout.lowering.lower` takes).

    >>> as_target("s8[3]{0}").physical_elements
    3
    """
    if isinstance(obj, PhysicalTarget):
        return obj
    if isinstance(obj, str) and obj.strip() in tla.FORMATS:
        raise LayoutError(f"{obj.strip()!r} names a TLA format, which needs a size and an element type: "
                          f"pass tensorlayout.cute.tla.make_format({obj.strip()!r}, rows, cols, dtype)")
    if isinstance(obj, (Shape, str)):  # XLA text; an XLA layout is storable by construction
        return PhysicalTarget.from_xla(obj)
    if lowers(obj):
        return PhysicalTarget.from_layout(storable(lower(obj)))
    to_target = getattr(obj, "to_physical_target", None)
    if callable(to_target):
        target = to_target()
        if isinstance(target, PhysicalTarget):
            return target
    raise UnsupportedError(f"expected a PhysicalTarget, an XLA shape or shape text, "
                           f"but got {type(obj).__name__}")


#: Strided targets of shape texts the relayout functions met (parsing and lowering a text
#: costs far more than a small copy; a text always means the same target). Cleared when full.
_BY_TEXT: dict[str, PhysicalTarget] = {}
MAX_TEXTS = 64


def remembered_target(obj: object) -> PhysicalTarget:
    """:func:`as_target`, remembering the strided targets of texts (only those: they never
    compute their large ``offsets``, so holding them costs little).

    >>> remembered_target("s8[3]{0}") is remembered_target("s8[3]{0}")
    True
    """
    if type(obj) is not str:
        return as_target(obj)
    target = _BY_TEXT.get(obj)
    if target is None:
        target = as_target(obj)
        if target.digits is not None:
            if len(_BY_TEXT) >= MAX_TEXTS:
                _BY_TEXT.clear()
            _BY_TEXT[obj] = target
    return target
