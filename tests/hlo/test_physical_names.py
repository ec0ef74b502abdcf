"""The physical-layout entry points have names of their own; the old names stay as aliases."""

from __future__ import annotations

import tensorlayout.hlo as hlo
from tensorlayout.hlo import analysis, physical


def test_physical_entry_points_have_distinct_names_and_old_aliases() -> None:
    assert physical.output_to_input_indexing is physical.physical_output_to_input_indexing
    assert physical.input_to_output_indexing is physical.physical_input_to_output_indexing
    assert hlo.output_to_input_indexing is physical.physical_output_to_input_indexing
    assert physical.physical_output_to_input_indexing.__name__ == "physical_output_to_input_indexing"
    assert analysis.output_to_input_indexing is not physical.physical_output_to_input_indexing
    assert {"physical_output_to_input_indexing", "physical_input_to_output_indexing"} <= set(hlo.__all__)


def test_physical_option_reorders_dims_by_layout() -> None:
    m = hlo.parse_module("HloModule m\nENTRY e {\n p = f32[2,3]{0,1} parameter(0)\n"
                         " ROOT n = f32[2,3]{1,0} negate(p)\n}")
    logical = str(physical.physical_output_to_input_indexing(m.entry.root))
    phys = str(physical.physical_output_to_input_indexing(m.entry.root, physical=True))
    assert logical == str(analysis.output_to_input_indexing(m.entry.root))
    assert "-> (d1, d0)" in phys and "-> (d0, d1)" in logical
