"""tensorlayout.triton: Triton's linear layouts (``LinearLayout``) and the encodings that lower to them.

>>> from tensorlayout.triton import LinearLayout
>>> L = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [2, 0]])], ["dim0", "dim1"])
>>> L.apply({"register": 1, "lane": 3})
{'dim0': 3, 'dim1': 1}
"""

from typing import TYPE_CHECKING

from tensorlayout._lazy import lazy_names

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
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

#: name -> (module, attribute; None: the module itself): where each public name lives
_LAZY: dict[str, tuple[str, str | None]] = {
    "parse_layout": ("tensorlayout.triton._mlir", "parse_layout"),
    "BankReport": ("tensorlayout.triton.banks", "BankReport"),
    "bank_conflicts": ("tensorlayout.triton.banks", "bank_conflicts"),
    "hardware_bank_conflicts": ("tensorlayout.triton.banks", "hardware_bank_conflicts"),
    "element_layout": ("tensorlayout.triton.bridge", "element_layout"),
    "from_cute": ("tensorlayout.triton.bridge", "from_cute"),
    "from_xla": ("tensorlayout.triton.bridge", "from_xla"),
    "shared_layout": ("tensorlayout.triton.bridge", "shared_layout"),
    "to_cute": ("tensorlayout.triton.bridge", "to_cute"),
    "BlockedLayout": ("tensorlayout.triton.encodings", "BlockedLayout"),
    "DotOperandLayout": ("tensorlayout.triton.encodings", "DotOperandLayout"),
    "NVMMADistributedLayout": ("tensorlayout.triton.encodings", "NVMMADistributedLayout"),
    "SliceLayout": ("tensorlayout.triton.encodings", "SliceLayout"),
    "SwizzledSharedLayout": ("tensorlayout.triton.encodings", "SwizzledSharedLayout"),
    "to_linear_layout": ("tensorlayout.triton.encodings", "to_linear_layout"),
    "AMDMFMALayout": ("tensorlayout.triton.encodings_amd", "AMDMFMALayout"),
    "AMDWMMALayout": ("tensorlayout.triton.encodings_amd", "AMDWMMALayout"),
    "NVMMASharedLayout": ("tensorlayout.triton.encodings_shared", "NVMMASharedLayout"),
    "PaddedSharedLayout": ("tensorlayout.triton.encodings_shared", "PaddedSharedLayout"),
    "SharedLinearLayout": ("tensorlayout.triton.encodings_shared", "SharedLinearLayout"),
    "TensorMemoryLayout": ("tensorlayout.triton.encodings_tmem", "TensorMemoryLayout"),
    "TensorMemoryScalesLayout": ("tensorlayout.triton.encodings_tmem", "TensorMemoryScalesLayout"),
    "ColumnAction": ("tensorlayout.triton.layout_utils", "ColumnAction"),
    "action_remove_broadcasted_regs": ("tensorlayout.triton.layout_utils", "action_remove_broadcasted_regs"),
    "reshape_layout": ("tensorlayout.triton.layout_utils", "reshape_layout"),
    "square_sublayout_is_identity": ("tensorlayout.triton.layout_utils", "square_sublayout_is_identity"),
    "supremum": ("tensorlayout.triton.layout_utils", "supremum"),
    "transpose_linear_layout": ("tensorlayout.triton.layout_utils", "transpose_linear_layout"),
    "zeros_like": ("tensorlayout.triton.layout_utils", "zeros_like"),
    "LinearLayout": ("tensorlayout.triton.linear_layout", "LinearLayout"),
    "get_distributed_view": ("tensorlayout.triton.view", "get_distributed_view"),
    "get_shared_view": ("tensorlayout.triton.view", "get_shared_view"),
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
