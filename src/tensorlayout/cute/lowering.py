"""CuTe and TLA layouts lowered into the layout core.

Logical dim ``k`` is top-level mode ``k`` (its size, or a TLA layout's origin extent, which
may be smaller: the rest of the mode is padding). The mode's coordinate splits
colexicographically into its flat sub-modes: sub-mode ``j`` of shape ``s_j`` is the digit
``(x // (s_0 ⋯ s_{j-1})) mod s_j`` with the sub-mode's stride. A swizzled
:class:`~tensorlayout.cute.swizzle.ComposedLayout` adds its offset first and its swizzle as
the post-op.

>>> from tensorlayout.cute.layout import Layout
>>> lay = lower_layout(Layout.parse("((2,2),(2,3)):((2,12),(1,4))"))
>>> [(d.source, d.block, d.extent, d.stride) for d in lay.digits]
[(0, 1, 2, 2), (0, 2, 2, 12), (1, 1, 2, 1), (1, 2, 3, 4)]
>>> lay.offset((2, 3)), lay.size
(17, 24)
"""

from __future__ import annotations

from tensorlayout.core.layout import CoreLayout, Digit, Merge, XorSwizzle
from tensorlayout.cute.basis import CoordLayout, CountingTensor
from tensorlayout.cute.int_tuple import IntTuple
from tensorlayout.cute.layout import Layout
from tensorlayout.cute.swizzle import ComposedLayout, SmemPtrFlag, Swizzle, parse_layout
from tensorlayout.cute.tla import TlaLayout
from tensorlayout.errors import LayoutError, UnsupportedError

__all__ = ["from_core", "lower_layout", "mode_digits"]


def mode_digits(layout: Layout) -> tuple[Digit, ...]:
    """The digits of every top-level mode, each mode's least significant first.

    >>> from tensorlayout.cute.layout import Layout
    >>> [(d.block, d.extent, d.stride) for d in mode_digits(Layout.parse("(4,(2,3)):(1,(8,4))"))]
    [(1, 4, 1), (1, 2, 8), (2, 3, 4)]
    """
    modes = [[(int(s), int(d)) for s, d in mode.flat_modes()] for mode in layout.modes()]
    return CoreLayout.from_modes([0] * len(modes), modes, size=0).digits


def lower_layout(x: Layout | TlaLayout | ComposedLayout | str, *, element_bits: int = 0) -> CoreLayout:
    """The :class:`~tensorlayout.core.layout.CoreLayout` of a CuTe, TLA or swizzled layout.

    ``size`` is the cosize (one past the largest offset), at least the swizzle's span. Text is
    read as CuTe prints it, composed layouts included (``Sw<3,3,3> o _0 o (_8,_64):(_64,_1)``).

    >>> lay = lower_layout(ComposedLayout(Swizzle(1, 2, 1), 0, Layout(16, 1)))
    >>> lay.offset((9,)), str(lay.post)
    (13, 'Sw<1,2,1>')
    """
    if isinstance(x, str):
        parsed = parse_layout(x)
        if isinstance(parsed, (CoordLayout, CountingTensor)):
            raise UnsupportedError(f"{parsed}: its scaled-basis strides give coordinates, not offsets")
        x = parsed
    base, post, name = 0, None, str(x)
    if isinstance(x, ComposedLayout):
        if not isinstance(x.outer, Swizzle) or not isinstance(x.inner, Layout):
            raise UnsupportedError(f"{x}: the layout core takes a Swizzle over a plain layout "
                                   "(Sw<B,M,S> o offset o L), not a composition of layouts")
        if isinstance(x.offset, tuple):
            raise UnsupportedError(f"{x}: a tuple offset has no 1-D value")
        base = 0 if isinstance(x.offset, SmemPtrFlag) else int(x.offset)  # a pointer flag adds 0
        post = XorSwizzle(x.outer.bits, x.outer.base, x.outer.shift)
        x = x.inner
    if isinstance(x, TlaLayout):
        layout, logical = x.layout, tuple(int(n) for n in x.origin_shape)
        element_bits = element_bits or (x.element_bits if x.element_bits >= 8 else 0)
    elif isinstance(x, Layout):
        layout, logical = x, tuple(int(m.size()) for m in x.modes())
    else:
        raise LayoutError(f"expected a CuTe, TLA or composed layout, but got {type(x).__name__}")
    digits = mode_digits(layout)
    size = base + 1 + sum((d.extent - 1) * d.stride for d in digits if d.stride > 0)
    if post is not None:
        span = 1 << (post.bits + post.base + max(0, post.shift))
        size = -(-size // span) * span
    return CoreLayout(logical, digits, size, base=base, post=post, element_bits=element_bits,
                      name=name)


def from_core(core: CoreLayout) -> Layout:
    """The hierarchical CuTe layout of a core layout over its padded domain.

    Mode ``k`` is logical dim ``k``; its sub-modes are the dim's digits, least significant
    first, the top one counting whole tiles (so it covers the padding). Raises
    :class:`UnsupportedError` saying why when a dim's digits are not a mixed radix of it.

    >>> str(from_core(lower_layout("((2,2),(2,3)):((2,12),(1,4))")))
    '((2,2),(2,3)):((2,12),(1,4))'
    """
    if core.post is not None or core.base:
        raise UnsupportedError(f"{core.name or 'the layout'} has a swizzle or base offset; "
                               "a plain CuTe layout cannot express it")
    both = core.per_dim_digits()
    if both is None:
        raise UnsupportedError(_why_not_mixed_radix(core))
    shapes: list[IntTuple] = []
    strides: list[IntTuple] = []
    for digits in both[0]:
        ds = digits[::-1]
        shapes.append(ds[0].extent if len(ds) == 1 else tuple(d.extent for d in ds))
        strides.append(ds[0].stride if len(ds) == 1 else tuple(d.stride for d in ds))
    return Layout(tuple(shapes), tuple(strides))


def _why_not_mixed_radix(core: CoreLayout) -> str:
    """Say which construct keeps a dim's digits from being a mixed radix."""
    for d in core.simple_digits():
        if isinstance(d.source, Merge) and len(d.source.parts) > 1:
            dims = sorted({p.source for p in d.source.parts if isinstance(p.source, int)})
            return (f"{core.name}: a tile combines dims {dims} with '*'; a CuTe layout maps each "
                    "mode separately and cannot express the merged padding")
        if isinstance(d.source, Merge):
            return (f"{core.name}: a tile size does not divide the extent an earlier tile gave a dim, "
                    "so padding sits inside a tile and the dim's digits do not form a mixed radix; "
                    "a CuTe layout cannot express that")
    return f"{core.name}: a dim is split into digits that do not nest"
