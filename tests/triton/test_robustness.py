"""No junk input crashes tensorlayout.triton with a non-library exception."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlayout import triton as tt
from tensorlayout.errors import TensorLayoutError

LL = tt.LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0]]), ("warp", []), ("block", [])],
                                ["dim0", "dim1"])
JUNK = st.sampled_from([
    None, 0, -1, 3, 2**40, "x", "", [1, 2], [[1]], [[0, 1], [1, 0]], (1, 2), 1.5, True, [1.5, 2], [-2, 4],
    [0, 1], [1, 0, 2], [3, 3], {"lane": 1}, [("lane", [[1]])], [("lane", [[2**40]])], ["dim0"], [[]],
    [("lane", None)], [("lane", [None])], LL, tt.BlockedLayout([1], [32], [1], [0]), b"ab",
    "\n - lane=1 -> (1)\nwhere out dims are: [dim0 (size 2)]", " - lane=1 -> (\n", [("a", [[1]]), ("a", [])],
])

API: dict[str, tuple[Callable[..., Any], int]] = {
    "from_bases": (tt.LinearLayout.from_bases, 2),
    "from_bases4": (lambda a, b, c, d: tt.LinearLayout.from_bases(a, b, c, d), 4),
    "parse": (tt.LinearLayout.parse, 1),
    "identity_1d": (tt.LinearLayout.identity_1d, 3),
    "zeros_1d": (tt.LinearLayout.zeros_1d, 4),
    "apply": (LL.apply, 1),
    "compose": (lambda x: LL.compose(x), 1),
    "mul": (lambda x: LL * x, 1),
    "invert_and_compose": (lambda x: LL.invert_and_compose(x), 1),
    "transpose_outs": (LL.transpose_outs, 1),
    "reshape_outs": (LL.reshape_outs, 1),
    "blocked": (lambda a, b, c, d, s: tt.BlockedLayout(a, b, c, d).to_linear_layout(s), 5),
    "blocked_cga": (lambda a, s: tt.BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0], a).to_linear_layout(s), 2),
    "mma": (lambda a, b, c, s: tt.NVMMADistributedLayout(a, b, c).to_linear_layout(s), 4),
    "dot": (lambda a, b, c, s: tt.DotOperandLayout(a, b, c).to_linear_layout(s), 4),
    "swizzled": (lambda a, b, c, d, s: tt.SwizzledSharedLayout(a, b, c, d).to_linear_layout(s), 5),
    "nvmma": (lambda a, b, c, d, s: tt.NVMMASharedLayout(a, b, c, d).to_linear_layout(s), 5),
    "to_linear_layout": (tt.to_linear_layout, 2),
    "to_cute": (tt.to_cute, 2),
    "from_cute": (tt.from_cute, 3),
    "views": (lambda x, y: (tt.get_distributed_view(x, y), tt.get_shared_view(x, y)), 2),
    "bank_conflicts": (tt.bank_conflicts, 3),
    "hardware_bank_conflicts": (tt.hardware_bank_conflicts, 3),
}


@pytest.mark.parametrize("name", sorted(API))
@given(args=st.lists(JUNK, min_size=5, max_size=5))
def test_junk_raises_library_errors(name: str, args: list[Any]) -> None:
    fn, arity = API[name]
    with contextlib.suppress(TensorLayoutError):
        fn(*args[:arity])
