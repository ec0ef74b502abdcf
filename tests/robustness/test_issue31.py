"""Issue 31's smaller items: builtins under ``import *``, typed errors for wrong argument types,
sub-tile padding XLA's ArraySize does not count."""

from __future__ import annotations

import builtins

import pytest

from tensorlayout import cute, triton, xla
from tensorlayout.errors import ArgumentTypeError, LayoutError, TensorLayoutError


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
