"""The value classes written out for start-up behave as the frozen dataclasses they replaced: the
small ones (:class:`tensorlayout.core._frozen.Frozen`) compare, hash, print, pickle and refuse
assignment as a ``@dataclass(frozen=True, slots=True)`` with the same fields does, and Shape,
Layout and CoreLayout (still dataclasses, their methods written out) keep ``replace``/``fields``
and the fields their equality ignores."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
from typing import Any

import pytest

from tensorlayout.core.digits import Digit, Merge, XorSwizzle
from tensorlayout.core.element_types import ELEMENT_TYPES, PrimitiveType
from tensorlayout.core.layout import CoreLayout
from tensorlayout.xla.layout import SplitConfig, Tile, parse_layout
from tensorlayout.xla.lowering import lower_shape
from tensorlayout.xla.shape import Shape, parse_shape


def _twin(cls: type) -> Any:
    """A frozen dataclass with ``cls``'s name and fields: what ``cls`` was before."""
    twin = dataclasses.make_dataclass(cls.__name__, list(cls.__match_args__), frozen=True, slots=True)
    twin.__qualname__ = cls.__qualname__
    return twin


def _values(rng: random.Random) -> list[object]:
    """Field values of several kinds (ints, tuples, None, strings, nested values)."""
    return [rng.randint(-3, 9), (rng.randint(0, 4), rng.randint(0, 4)), None, "f32", Digit(0, 1, 2, 3)]


#: Each Frozen class and a way to build it from field values (Tile checks its sizes).
FROZEN: dict[type, Any] = {
    Digit: None, Merge: None, XorSwizzle: None, PrimitiveType: None, SplitConfig: None,
    Tile: lambda rng: ((rng.randint(0, 9), rng.randint(1, 9)),),
}


@pytest.mark.parametrize("cls", list(FROZEN), ids=lambda c: c.__name__)
def test_frozen_values_behave_as_their_dataclass(cls: type) -> None:
    rng = random.Random(8)
    twin = _twin(cls)
    n = len(cls.__match_args__)
    for _ in range(200):
        make = FROZEN[cls]
        fields = make(rng) if make else tuple(rng.choice(_values(rng)) for _ in range(n))
        other = make(rng) if make else tuple(rng.choice(_values(rng)) for _ in range(n))
        a, b, ta, tb = cls(*fields), cls(*other), twin(*fields), twin(*other)
        assert repr(a) == repr(ta)
        assert (a == b) == (ta == tb) and (a != b) == (ta != tb)
        assert hash(a) == hash(ta) and a == cls(*fields)
        assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a and copy.copy(a) == a
        assert a != ta and a != fields  # another class, or a bare tuple, is never equal
        match a:
            case cls(x):  # type: ignore[misc]
                assert x == fields[0]
    name = cls.__match_args__[0]
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
        setattr(a, name, 1)
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{name}'"):
        delattr(a, name)


def test_element_types_and_tiles_keep_their_checks_and_identity() -> None:
    assert ELEMENT_TYPES["f32"] == PrimitiveType("f32", 11, 32, "float", 8, 23)
    assert str(Tile((8, 128))) == "(8,128)" and len(Tile((8, 128))) == 2
    with pytest.raises(Exception, match="expected tile sizes >= 0"):
        Tile((8, -1))
    with pytest.raises(dataclasses.FrozenInstanceError, match="'dims'"):
        Tile((8,)).dims = (4,)  # type: ignore[misc]


def test_shape_layout_and_core_stay_dataclasses() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)M(8)}")
    assert dataclasses.is_dataclass(shape) and dataclasses.replace(shape, dimensions=(4, 5)) == parse_shape(
        "f32[4,5]{1,0:T(2,2)M(8)}")
    assert [f.name for f in dataclasses.fields(Shape)][:2] == ["element_type", "dimensions"]
    layout = shape.layout
    assert layout is not None
    plain = dataclasses.replace(layout, dynamic_shape_metadata_prefix_bytes=0)
    assert layout == plain and hash(layout) == hash(plain) and str(plain) == "{1,0:T(2,2)}"  # M ignored
    assert layout != parse_layout("{1,0:T(2,4)}") and layout.replace(tiles=()) == parse_layout("{1,0}")
    core = lower_shape("f32[3,5]{1,0:T(2,2)}")
    renamed = dataclasses.replace(core, name="other")
    assert core == renamed and hash(core) == hash(renamed) and core != dataclasses.replace(core, base=1)
    twin = dataclasses.make_dataclass("CoreLayout", [f.name for f in dataclasses.fields(CoreLayout)])
    assert repr(core) == repr(twin(**{f.name: getattr(core, f.name) for f in dataclasses.fields(CoreLayout)}))
    assert pickle.loads(pickle.dumps(core)) == core and copy.deepcopy(shape) == shape
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'layout'"):
        shape.layout = None  # type: ignore[misc]
    assert shape != "f32[3,5]{1,0:T(2,2)M(8)}" and shape.__eq__(3) is NotImplemented
