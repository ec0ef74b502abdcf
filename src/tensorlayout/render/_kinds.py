"""Which drawer draws which kind of object: the one table :func:`~tensorlayout.render.to_svg`,
the TikZ output and the Jupyter display hooks read.

Layout notations (XLA shapes, CuTe, swizzled and TLA layouts, relayout targets) draw as the
grid-and-strip picture; GPU thread-value objects and Triton linear layouts have drawers of
their own, each taking ``(obj, title=..., window=...)``.

>>> from tensorlayout.gpu import mma_atom
>>> drawer(mma_atom("SM80_16x8x8_F16F16F16F16_TN")).__name__, drawer("f32[4]")
('tiled_mma_svg', None)
"""

from __future__ import annotations

from collections.abc import Callable

from tensorlayout.cute import ComposedLayout, CoordLayout, CountingTensor, Layout, TlaLayout
from tensorlayout.design import SmemAnswer, SmemDesign
from tensorlayout.gpu.atoms import CopyAtom, MMAAtom
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.render._design import design_svg
from tensorlayout.render._triton import linear_layout_svg
from tensorlayout.render._tv import tiled_copy_svg, tiled_mma_svg, tmem_svg, tv_svg
from tensorlayout.triton import LinearLayout
from tensorlayout.xla import Shape

__all__ = ["DRAWERS", "LAYOUT_TYPES", "LAYOUT_TYPE_NAMES", "drawer"]

Drawer = Callable[..., str]

#: Objects with a drawer of their own (the first matching type wins).
DRAWERS: tuple[tuple[type, Drawer], ...] = (
    (TiledMMA, tiled_mma_svg),
    (MMAAtom, tiled_mma_svg),
    (TiledCopy, tiled_copy_svg),
    (CopyAtom, tmem_svg),
    (TVLayout, tv_svg),
    (LinearLayout, linear_layout_svg),
    (SmemDesign, design_svg), (SmemAnswer, design_svg),
)

#: Layout notations drawn as the grid of offsets and the memory strip.
LAYOUT_TYPES: tuple[type, ...] = (Shape, Layout, ComposedLayout, TlaLayout, CoordLayout, CountingTensor)
#: Layouts of higher layers, named by (module, class) so pictures need not import them.
LAYOUT_TYPE_NAMES: tuple[tuple[str, str], ...] = (("tensorlayout.relayout._target", "PhysicalTarget"),)


def drawer(obj: object) -> Drawer | None:
    """The drawer of ``obj``'s kind, None for a layout notation (or text)."""
    return next((draw for kind, draw in DRAWERS if isinstance(obj, kind)), None)
