"""XLA's ``tiling_util``: small predicates the tiling emitters share.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n a = f32[2] parameter(0)\\n b = s32[2] parameter(1)\\n"
...                  " ROOT t = (f32[2], s32[2]) tuple(a, b)\\n}")
>>> roots = m.entry.root.operands
>>> is_same_shape_multi_output_fusion(roots)
False
>>> is_same_shape_multi_output_fusion(roots, ignore_element_type=True)
True
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.hlo import HloInstruction

__all__ = ["is_same_shape_multi_output_fusion"]


def is_same_shape_multi_output_fusion(roots: Sequence[HloInstruction], **equal_options: bool) -> bool:
    """``IsSameShapeMultiOutputFusion``: several roots, all of the first one's shape.

    ``equal_options`` are ``Shape.equal``'s (``ignore_element_type=True`` is XLA's
    ``Shape::Equal().IgnoreElementType()``).
    """
    if len(roots) < 2:
        return False
    first = roots[0].shape
    return all(r.shape.equal(first, **equal_options) for r in roots[1:])
