"""A swizzled scalar (rank 0) draws without colouring by swizzle chunk; found by the fuzz campaign
(``render.formats``) after the chunk colouring was added."""

from __future__ import annotations

import pytest

from tensorlayout.errors import LayoutError
from tensorlayout.render import to_svg


def test_a_swizzled_scalar_draws_one_cell() -> None:
    assert to_svg("Sw<3,3,3> o 0 o ():()").count("class='cell'") + \
        to_svg("Sw<3,3,3> o 0 o ():()").count('class="cell"') >= 1


def test_a_window_on_a_scalar_and_an_offset_past_int64_are_typed_errors() -> None:
    with pytest.raises(LayoutError, match="a window of 2 ranges for a layout of rank 0"):
        to_svg("Sw<3,2,-62> o 0 o ():()", window=(range(0, 3), range(1, 4)))
    with pytest.raises(LayoutError, match="past int64"):
        to_svg("Sw<3,2,-62> o 0 o ():()")
