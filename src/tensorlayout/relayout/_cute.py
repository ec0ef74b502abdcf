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


#: Strided targets the relayout functions met, by the value that named them (a text, a
#: Shape, a CuTe/TLA/Triton layout) and by their lowered core layout, so that equal values —
#: and different notations of one layout — share one target with its checked calls and plans
#: (naming a target costs far more than a small copy). Only strided targets are kept: they
#: never compute their large ``offsets``, so holding them costs little. Each table is cleared
#: when full.
_BY_VALUE: dict[object, PhysicalTarget] = {}
_BY_CORE: dict[tuple[CoreLayout, str], PhysicalTarget] = {}
#: The same by the identity of the object last passed (a strong reference keeps its id
#: unique), which spares hashing a Shape or a layout on every call.
_BY_ID: dict[int, tuple[object, PhysicalTarget]] = {}
MAX_TEXTS = 64


def remembered_target(obj: object) -> PhysicalTarget:
    """:func:`as_target`, remembering strided targets by value and by lowered layout.

    Pre: ``obj`` is anything :func:`as_target` takes. Post: the same target as
    ``as_target(obj)`` describes; for a strided one, the one object every equal value (and
    every notation lowering to the same named core layout) gets while it is remembered.

    >>> from tensorlayout.xla import parse_shape
    >>> remembered_target("s8[3]{0}") is remembered_target(parse_shape("s8[3]{0}"))
    True
    """
    hit = _BY_ID.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if isinstance(obj, PhysicalTarget):
        return obj
    key = _value_key(obj)
    target = None if key is None else _BY_VALUE.get(key)
    if target is None:
        target = as_target(obj)
        if target.digits is None:
            return target
        target = _bounded(_BY_CORE).setdefault((target.form, target.name), target)
        if key is not None:
            _bounded(_BY_VALUE)[key] = target
    _bounded(_BY_ID)[id(obj)] = (obj, target)
    return target


def _value_key(obj: object) -> object | None:
    """What names the same target as ``obj`` does: its type, its value and its element width
    (a TLA layout's equality leaves the width out); None when it does not hash."""
    key = (type(obj), obj, getattr(obj, "element_bits", None))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _bounded(table: dict) -> dict:
    """``table``, emptied first when it holds :data:`MAX_TEXTS` entries."""
    if len(table) >= MAX_TEXTS:
        table.clear()
    return table
