"""The layout core: the one form every notation lowers into, and what the notations share.

A layout is a function from logical index to physical offset (:class:`CoreLayout`, a sum of
mixed-radix digits with padding and an optional swizzle post-op); it answers its own
questions (``offsets``, ``index_of``, ``owners``, ``is_dense``, ``is_injective``,
``tile_split``, ``contiguous_tile``). Every notation reaches it through the one dispatch,
:func:`tensorlayout.lowering.lower` (XLA shapes through
:func:`tensorlayout.xla.lowering.lower_shape`, CuTe/TLA layouts through
:func:`tensorlayout.cute.lowering.lower_layout`, Triton layouts through CuTe's); conversion,
relayout, pictures and indexing maps read the result. Element types
(:mod:`tensorlayout.core.element_types`) and integer math (:mod:`tensorlayout.core.intmath`)
live here too, so that no notation reads another.

>>> from tensorlayout.xla.lowering import lower_shape
>>> lower_shape("f32[3,5]{1,0:T(2,2)}").offset((2, 3))
17
"""

from tensorlayout.core.layout import MAX_ENUMERATED, CoreLayout, Digit, Merge, XorSwizzle, source_extent

__all__ = ["MAX_ENUMERATED", "CoreLayout", "Digit", "Merge", "XorSwizzle", "source_extent"]
