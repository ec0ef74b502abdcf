"""The layout core: the one form every notation lowers into, and the integer math they share.

A layout is a function from logical index to physical offset (:class:`CoreLayout`, a sum of
mixed-radix digits with padding and an optional swizzle post-op). XLA shapes lower through
:func:`tensorlayout.xla.lowering.lower_shape`, CuTe/TLA layouts through
:func:`tensorlayout.cute.lowering.lower_layout`; index math, conversion, relayout, pictures
and indexing maps read the result.

>>> from tensorlayout.xla.lowering import lower_shape
>>> lower_shape("f32[3,5]{1,0:T(2,2)}").offset((2, 3))
17
"""

from tensorlayout.core.layout import MAX_ENUMERATED, CoreLayout, Digit, Merge, XorSwizzle, source_extent

__all__ = ["MAX_ENUMERATED", "CoreLayout", "Digit", "Merge", "XorSwizzle", "source_extent"]
