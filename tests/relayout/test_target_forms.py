"""Every form of a target — text, ``Shape``, CuTe ``Layout``, TLA format — reaches the one
remembered target of its value (issue 30 item 2), so repeated calls keep their checked call
and plan; the targets themselves are thin wrappers over the core layout."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout.convert import xla_to_cute
from tensorlayout.cute import Layout
from tensorlayout.cute.tla import TlaLayout, make_format
from tensorlayout.errors import UnsupportedError
from tensorlayout.lowering import lower
from tensorlayout.relayout import PhysicalTarget, _cute, as_target, from_cute, from_physical, to_physical
from tensorlayout.relayout._cute import remembered_target
from tensorlayout.xla import parse_shape

TEXT = "f32[16,256]{1,0:T(8,128)}"


def test_equal_values_and_their_texts_share_one_target() -> None:
    for table in (_cute._BY_ID, _cute._BY_VALUE, _cute._BY_CORE):  # (so none fills up, and is emptied,
        table.clear()  # halfway: how many targets the earlier tests left depends on hypothesis' draws)
    t = remembered_target(TEXT)
    assert remembered_target(parse_shape(TEXT)) is t
    assert remembered_target(parse_shape(TEXT)) is t  # another equal Shape object
    lay = xla_to_cute(TEXT)
    assert remembered_target(lay) is remembered_target(Layout.parse(str(lay)))
    fmt = make_format("zN", 32, 32, "f16")
    assert remembered_target(fmt) is remembered_target(make_format("zN", 32, 32, "f16"))


def test_a_width_left_out_of_equality_still_keys_the_target() -> None:
    fmt = make_format("zN", 32, 32, "s16")
    bare = TlaLayout(fmt.layout, fmt.origin_shape)  # equal as TLA layouts, no element width
    assert fmt == bare
    assert remembered_target(fmt).element_bits == 16 and remembered_target(bare).element_bits == 0


@pytest.mark.parametrize("form", [TEXT, parse_shape(TEXT), xla_to_cute(TEXT)], ids=["text", "Shape", "CuTe"])
def test_repeated_calls_keep_their_checked_call(form: object) -> None:
    a = np.arange(16 * 256, dtype=np.float32).reshape(16, 256)
    buf = to_physical(a, form)
    t = remembered_target(form)
    calls = dict(t._calls)
    assert calls and (to_physical(a, form) == buf).all() and t._calls.keys() == calls.keys()
    assert (from_physical(buf, form) == a).all()


def test_targets_read_everything_off_their_core_layout() -> None:
    t = as_target(TEXT)
    core = lower(TEXT)
    assert t.layout == core and t.logical_shape == core.shape and t.physical_elements == core.slots
    assert t.tile_elements == core.tile_elements and t.digits is not None
    assert t.plan is t.plan and t.offsets is t.offsets and t.fast_path
    listed = PhysicalTarget.from_offsets((2, 2), [3, 1, 2, 0], tile_ids=[0, 0, 1, 1])
    assert listed.layout is None and listed.digits is None and listed.tile_ids.tolist() == [0, 0, 1, 1]


def test_layouts_that_cannot_store_data_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="maps two coordinates to one offset"):
        from_cute("(2,2):(0,1)")
    with pytest.raises(UnsupportedError, match="negative stride"):
        as_target(Layout(4, -1))
