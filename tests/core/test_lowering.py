"""The one dispatch, :func:`tensorlayout.lowering.lower`: every notation and its text reaches the
same core layout its own lowering gives, and consumers that take a notation through it agree
(a CuTe layout drawn directly and as a relayout target draws the same tiles)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import ComposedLayout, Layout, Swizzle
from tensorlayout.cute.lowering import lower_layout
from tensorlayout.cute.tla import make_format
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.lowering import LOWERINGS, lower, lowers, parse_text
from tensorlayout.relayout import as_target, from_cute, to_physical
from tensorlayout.render import picture, source_of
from tensorlayout.triton import SwizzledSharedLayout, element_layout
from tensorlayout.xla import parse_shape
from tensorlayout.xla.lowering import lower_shape

TRITON_TEXT = ("tensor<4x8xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
               "order = [0, 1]}>>")


@pytest.mark.parametrize("obj, own", [
    ("f32[3,5]{1,0:T(2,2)}", lambda: lower_shape("f32[3,5]{1,0:T(2,2)}")),
    (parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}"), lambda: lower_shape("bf16[16,256]{1,0:T(8,128)(2,1)}")),
    ("((2,2),(2,3)):((1,24),(4,8))", lambda: lower_layout(Layout.parse("((2,2),(2,3)):((1,24),(4,8))"))),
    (ComposedLayout(Swizzle(1, 2, 1), 0, Layout(16, 1)),
     lambda: lower_layout(ComposedLayout(Swizzle(1, 2, 1), 0, Layout(16, 1)))),
    (make_format("zN", 32, 32, "f16"), lambda: lower_layout(make_format("zN", 32, 32, "f16"))),
    (SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout([4, 8]),
     lambda: lower_layout(element_layout(SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout([4, 8])))),
    (TRITON_TEXT, lambda: lower_layout(element_layout(parse_text(TRITON_TEXT)))),  # type: ignore[arg-type]
])
def test_lower_is_each_notations_own_lowering(obj: object, own: object) -> None:
    got = lower(obj)
    want = own()  # type: ignore[operator]
    assert got == want and got.offsets().tolist() == want.offsets().tolist()
    assert lower(got) is got and lowers(obj)


def test_unknown_values_are_refused_with_a_typed_error() -> None:
    with pytest.raises(LayoutError, match="expected an XLA shape, a CuTe, TLA or Triton layout"):
        lower(3.5)
    with pytest.raises(UnsupportedError, match="coordinates, not offsets"):
        lower("(2,3):(_1@0,_1@1)")
    assert not lowers(b"f32[3]") and all(isinstance(t, type) for t in LOWERINGS)


def test_subclasses_lower_by_their_base() -> None:
    class Named(str):
        pass

    assert lower(Named("s8[4]{0}")) == lower("s8[4]{0}")


def _tiles(obj: object) -> tuple[list[int], list[int], tuple[int, ...] | None, int | None]:
    pic = picture(source_of(obj))
    return [c.tile for c in pic.cells], list(pic.slot_tiles), pic.split, pic.tile_elements


@pytest.mark.parametrize("text", [
    "((2,2),(2,3)):((1,24),(4,8))",  # issue 31: tiles of 4 that are not one run each
    "((2,2),(2,3)):((2,12),(1,4))",
    "((4,2),(4,3)):((4,16),(1,32))",
    "(4,8):(8,1)",
    "((2,4),(8,2)):((8,16),(1,64))",
])
def test_a_layout_and_its_relayout_target_draw_the_same_tiles(text: str) -> None:
    lay = Layout.parse(text)
    assert _tiles(lay) == _tiles(from_cute(lay)) == _tiles(as_target(lay))
    tiles = _tiles(lay)[0]
    assert max(tiles) + 1 == len(set(tiles))  # tile ids count the tiles, no gaps


def test_random_cute_layouts_agree_between_picture_target_and_core() -> None:
    rng = random.Random(31)
    for _ in range(40):
        modes = [[(rng.choice([1, 2, 3, 4]), 0) for _ in range(rng.randint(1, 2))] for _ in range(2)]
        stride = 1
        order = [(k, j) for k, m in enumerate(modes) for j in range(len(m))]
        rng.shuffle(order)
        for k, j in order:  # a random compact order: injective, strides >= 0
            modes[k][j] = (modes[k][j][0], stride)
            stride *= modes[k][j][0]
        core = CoreLayout.from_modes([int(np.prod([e for e, _ in m])) for m in modes], modes)
        shape = tuple(tuple(e for e, _ in m) for m in modes)
        strides = tuple(tuple(s for _, s in m) for m in modes)
        lay = Layout(shape, strides)
        assert lower(lay).offsets().tolist() == core.offsets().tolist()
        assert _tiles(lay) == _tiles(from_cute(lay))
        a = np.arange(core.elements, dtype=np.int32).reshape(core.shape)
        buf = to_physical(a, lay)
        assert buf[core.offsets()].tolist() == a.reshape(-1).tolist()
