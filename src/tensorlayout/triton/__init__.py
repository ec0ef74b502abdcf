"""tensorlayout.triton: Triton's linear layouts (``LinearLayout``) and the encodings that lower to them.

>>> from tensorlayout.triton import LinearLayout
>>> L = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [2, 0]])], ["dim0", "dim1"])
>>> L.apply({"register": 1, "lane": 3})
{'dim0': 3, 'dim1': 1}
"""

from tensorlayout.triton._mlir import parse_layout
from tensorlayout.triton.banks import BankReport, bank_conflicts, hardware_bank_conflicts
from tensorlayout.triton.bridge import element_layout, from_cute, from_xla, shared_layout, to_cute
from tensorlayout.triton.encodings import (
    BlockedLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    SliceLayout,
    SwizzledSharedLayout,
    to_linear_layout,
)
from tensorlayout.triton.encodings_amd import AMDMFMALayout, AMDWMMALayout
from tensorlayout.triton.encodings_shared import NVMMASharedLayout, PaddedSharedLayout, SharedLinearLayout
from tensorlayout.triton.encodings_tmem import TensorMemoryLayout, TensorMemoryScalesLayout
from tensorlayout.triton.layout_utils import (
    ColumnAction,
    action_remove_broadcasted_regs,
    reshape_layout,
    square_sublayout_is_identity,
    supremum,
    transpose_linear_layout,
    zeros_like,
)
from tensorlayout.triton.linear_layout import LinearLayout
from tensorlayout.triton.view import get_distributed_view, get_shared_view

__all__ = [
    "AMDMFMALayout",
    "AMDWMMALayout",
    "BankReport",
    "BlockedLayout",
    "ColumnAction",
    "DotOperandLayout",
    "LinearLayout",
    "NVMMADistributedLayout",
    "NVMMASharedLayout",
    "PaddedSharedLayout",
    "SharedLinearLayout",
    "SliceLayout",
    "SwizzledSharedLayout",
    "TensorMemoryLayout",
    "TensorMemoryScalesLayout",
    "action_remove_broadcasted_regs",
    "bank_conflicts",
    "element_layout",
    "from_cute",
    "from_xla",
    "get_distributed_view",
    "get_shared_view",
    "hardware_bank_conflicts",
    "parse_layout",
    "reshape_layout",
    "shared_layout",
    "square_sublayout_is_identity",
    "supremum",
    "to_cute",
    "to_linear_layout",
    "transpose_linear_layout",
    "zeros_like",
]
