"""CuTe classes the fresh differential runs found (issue 15), and the answers that now match C++.

right_inverse with tied strides: CuTe's ``right_inverse`` visits the coalesced modes in the
order ``detail::SortByKey`` gives them, and that sort (``exchange_sort`` in cute/int_tuple.hpp)
is not stable: for strides (3, 3, 1) it yields modes 2, 1, 0. The fold then takes the later
of two equal-stride modes first, so C++ answers ``(2,4,3):(3,3,1)`` with ``(3,4):(8,2)``
(12 elements) where a stable order answers ``(3,2):(8,1)`` (6 elements). Both are right inverses by the
definition (``L(R(i)) = i``); C++'s is the reference, so ours visits the modes in exchange_sort's
order too (``cute.inverses``). Found in 1 of 3,000 random cases against C++ (seed 100), in 14
of the 4,205 right inverses of the 84,000-case pycute run (seed 160; C++ confirmed all 14), and
in 8 of 145 right inverses of layouts built with repeated strides.
"""

from __future__ import annotations

import numpy as np
import pytest

from tensorlayout import cute
from tensorlayout.cute import Layout
from tests.cute import cpp_oracle

needs_cpp = pytest.mark.skipif(not cpp_oracle.available(), reason="needs g++ and the nvidia-cutlass headers")

# (layout, C++'s right_inverse, as the C++ oracle printed it without the `_`)
TIED_STRIDES = [
    ("(2,4,3):(3,3,1)", "(3,4):(8,2)"),
    ("(2,2,4):(4,4,1)", "(4,2):(4,2)"),
    ("(4,2,2):(2,2,1)", "(2,2):(8,4)"),
    ("(3,4,2):(2,2,1)", "(2,4):(12,3)"),
    ("(3,3,4):(1,1,0)", "3:3"),
    ("(2,3,3):(1,1,0)", "3:2"),
    ("(2,2,4,2):(1,4,1,0)", "(4,2):(4,2)"),
    ("((4,3,4),(4,2)):((1,1,16),(0,0))", "3:4"),
    ("((4,4,1),1,2):((2,2,8),24,1)", "(2,4):(16,4)"),
]


def exchange_sort_order(keys: list[int]) -> list[int]:
    """The positions of ``keys`` in the order CuTe's exchange_sort leaves them (not stable)."""
    items = list(enumerate(keys))
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if items[j][1] < items[i][1]:
                items[i], items[j] = items[j], items[i]
    return [k for k, _key in items]


def cpp_right_inverse(layout: Layout) -> Layout:
    """C++'s right_inverse step by step (cute/layout.hpp), with exchange_sort's mode order."""
    flat = cute.coalesce(layout).flat_modes()
    shapes, strides = [s for s, _d in flat], [d for _s, d in flat]
    prefix = [int(np.prod(shapes[:k])) for k in range(len(shapes))]
    out_shape, out_stride, curr = [1], [0], 1
    for k in exchange_sort_order(strides):
        if strides[k] == curr:
            out_shape.append(shapes[k])
            out_stride.append(prefix[k])
            curr = shapes[k] * strides[k]
    return cute.coalesce(Layout(tuple(out_shape), tuple(out_stride)))


@pytest.mark.parametrize(("text", "cpp"), TIED_STRIDES)
def test_exchange_sort_order_explains_cpp(text: str, cpp: str) -> None:
    assert str(cpp_right_inverse(Layout.parse(text))) == cpp


def test_exchange_sort_is_not_stable() -> None:
    assert exchange_sort_order([3, 3, 1]) == [2, 1, 0]
    assert exchange_sort_order([1, 4, 1, 0]) == [3, 2, 0, 1]


@pytest.mark.parametrize(("text", "cpp"), TIED_STRIDES)
def test_both_answers_are_right_inverses(text: str, cpp: str) -> None:
    layout = Layout.parse(text)
    for r in (Layout.parse(cpp), cute.right_inverse(layout)):
        assert np.array_equal(np.asarray(layout(np.asarray(r.offsets()))), np.arange(r.size()))


@needs_cpp
def test_cpp_answers_as_recorded() -> None:
    cases = [("right_inverse", (Layout.parse(text),)) for text, _cpp in TIED_STRIDES]
    answers = cpp_oracle.run(cases)
    assert [a.replace("_", "") if a else a for a in answers] == [cpp for _text, cpp in TIED_STRIDES]


@pytest.mark.parametrize(("text", "cpp"), TIED_STRIDES)
def test_right_inverse_with_tied_strides_matches_cpp(text: str, cpp: str) -> None:
    assert str(cute.right_inverse(Layout.parse(text))) == cpp
