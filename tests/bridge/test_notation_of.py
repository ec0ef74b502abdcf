""":func:`tensorlayout.lowering.notation_of`: every value of a notation is named from the
dispatch's one table, and the names the command line keys its tables on (a target's
``notation``, ``show --json``'s ``"notation"``) are that answer."""

from __future__ import annotations

import pytest

from tensorlayout.cli._target import target_from
from tensorlayout.core.layout import CoreLayout
from tensorlayout.cute import ComposedLayout, Layout, Swizzle, make_counting_tensor, parse_layout
from tensorlayout.cute.tla import make_format
from tensorlayout.lowering import LOWERINGS, lower, notation_of
from tensorlayout.triton import SwizzledSharedLayout
from tensorlayout.xla import parse_shape

VALUES = [
    (parse_shape("f32[3,5]{1,0:T(2,2)}"), "xla"),
    (parse_shape("(f32[2], s8[3])"), "xla"),
    (Layout((4, 8), (8, 1)), "cute"),
    (ComposedLayout(Swizzle(1, 2, 1), 0, Layout(16, 1)), "cute"),
    (parse_layout("(_4,_8):(_1@0,_1@1)"), "cute"),
    (make_counting_tensor(Layout((2, 3), (1, 2))), "cute"),
    (make_format("zN", 32, 32, "f16"), "tla"),
    (SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout([4, 8]), "triton"),
    (lower("(4,8):(8,1)"), "core"),
    ("(4,8):(8,1)", "text"),
]


@pytest.mark.parametrize("value, name", VALUES, ids=lambda x: x if isinstance(x, str) else None)
def test_each_notation_is_named_by_the_dispatch(value: object, name: str) -> None:
    assert notation_of(value) == name


def test_every_type_the_dispatch_lowers_is_named_and_nothing_else() -> None:
    for cls in LOWERINGS:
        assert any(isinstance(v, cls) for v, _ in VALUES), f"no value of {cls.__name__} is checked"
    assert notation_of(3) is None and notation_of(None) is None and notation_of(b"8:1") is None
    assert notation_of(CoreLayout) is None  # a class, not a value of it


def test_a_subclass_is_named_as_its_notation() -> None:
    class Mine(Layout):
        pass
    assert notation_of(Mine(4, 1)) == "cute"


@pytest.mark.parametrize("text", ["f32[3,5]{1,0:T(2,2)}", "token[]", "(2,3):(1,2)",
                                  "Sw<3,3,3> o _0 o (8,64):(64,1)", "(_4,_8):(_1@0,_1@1)"])
def test_the_command_lines_notation_is_the_dispatchs(text: str) -> None:
    target = target_from(text)
    assert target.notation == notation_of(target.layout)
