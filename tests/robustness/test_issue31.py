"""Issue 31's smaller items: builtins under ``import *``, typed errors for wrong argument types,
sub-tile padding XLA's ArraySize does not count."""

from __future__ import annotations

import builtins
import random

import numpy as np
import pytest

from tensorlayout import cute, hlo, triton, xla
from tensorlayout.errors import ArgumentTypeError, LayoutError, TensorLayoutError
from tensorlayout.xla.show import format_show
from tests.fuzz._cli import run_cli


def test_star_import_of_cute_leaves_the_builtins_alone() -> None:
    namespace: dict[str, object] = {}
    exec("from tensorlayout.cute import *", namespace)
    for name in cute.BUILTIN_NAMES:
        assert name not in namespace and hasattr(builtins, name)
        assert callable(getattr(cute, name))  # still there as cute.<name>
    assert not set(cute.__all__) & (set(dir(builtins)) - {"_"})  # doctest runs set builtins._
    assert cute.sum((2, (3, 4))) == 9 and str(cute.filter(cute.Layout.parse("(2,3):(0,1)"))) == "3:1"


WRONG_TYPES = {  # a public parser or constructor, fed a value of the wrong Python type
    "cute.Layout.parse": lambda: cute.Layout.parse(5),
    "cute.parse_layout": lambda: cute.parse_layout(b"Sw<1,2,3> o 0 o 4:1"),
    "cute.parse_int_tuple": lambda: cute.parse_int_tuple(None),
    "cute.Layout": lambda: cute.Layout("a", 1),
    "cute.Layout float": lambda: cute.Layout((2, 2.5), (1, 2)),
    "cute.make_layout": lambda: cute.make_layout(2.0),
    "xla.parse_shape": lambda: xla.parse_shape(5),
    "xla.parse_layout": lambda: xla.parse_layout(None),
    "xla.tpu.default_layout": lambda: xla.tpu.default_shape("f32", (8, 128), generation=5),
    "triton.parse_layout": lambda: triton.parse_layout(3),
    "triton.LinearLayout.parse": lambda: triton.LinearLayout.parse([1]),
    "hlo.parse_attribute": lambda: hlo.parse_attribute("window", 5),
    "hlo.parse_attribute name": lambda: hlo.parse_attribute(["window"], "{size=2}"),
    "hlo.parse_literal": lambda: hlo.parse_literal(5),
    "hlo.parse_module": lambda: hlo.parse_module(b"HloModule m"),
}


@pytest.mark.parametrize("name", list(WRONG_TYPES))
def test_a_wrong_argument_type_raises_a_typed_type_error(name: str) -> None:
    with pytest.raises(ArgumentTypeError, match=r"expected .*(a str\)|int).*but got|got") as info:
        WRONG_TYPES[name]()
    assert isinstance(info.value, TypeError) and isinstance(info.value, TensorLayoutError)


def test_a_too_deep_tuple_stays_a_layout_error_not_a_type_error() -> None:
    deep: object = 1
    for _ in range(150):
        deep = (deep,)
    with pytest.raises(LayoutError, match="nested at most 100 levels") as info:
        cute.Layout(deep, deep)
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize(("text", "warned"), [
    ("f32[4]{0:T(4)(2,2,2)}", "offsets reach 9, past the 4 elements (16 bytes)"),
    ("pred[10]{0:T(8)(4,1)E(8)}", "offsets reach 28, past the 16 elements (16 bytes)"),
    ("f32[5]{0:T(4)(3)}", None),  # sub-tiles pad to 12 slots, but the offsets stay below 8
    ("bf16[16,256]{1,0:T(8,128)(2,1)}", None),
    ("s4[96,128]{1,0:T(64,128)(8,1)E(4)}", None),
    ("f32[300,300]{1,0:T(8,128)(3,5)}",
     "sub-tiles pad the buffer to 133380 element slots, past the 116736 elements"),
])
def test_subtile_padding_past_xla_array_size_is_warned(text: str, warned: str | None) -> None:
    found = [w for w in xla.layout_warnings(xla.parse_shape(text)) if w.startswith("sub-tiles")]
    if warned is None:
        assert found == []
    else:
        assert len(found) == 1 and warned in found[0] and "assumes sub-tiles add no padding" in found[0]


def test_subtile_warning_matches_the_largest_offset_by_brute_force() -> None:
    rng = random.Random(31)
    for _ in range(300):
        n = rng.randint(1, 40)
        t = rng.choice((2, 4, 8))
        text = f"f32[{n}]{{0:T({t})({rng.randint(1, 5)})}}"
        shape = xla.parse_shape(text)
        allotted = xla.array_size(shape) // 4
        top = int(np.max(xla.linear_indices(shape)))
        assert any(w.startswith("sub-tiles") for w in xla.layout_warnings(shape)) == (top >= allotted), text


def test_show_prints_the_subtile_warning() -> None:
    text = "f32[4]{0:T(4)(2,2,2)}"
    assert "  warning        sub-tiles pad: offsets reach 9" in format_show(xla.parse_shape(text))
    code, out, _ = run_cli(["show", text])
    assert code == 0 and "warning        sub-tiles pad: offsets reach 9, past the 4 elements" in out
    assert "warning" not in run_cli(["show", "bf16[16,256]{1,0:T(8,128)(2,1)}"])[1]
