"""Choose a layout, with a proof: shared-memory layouts synthesised for given accesses, and the
data path (and cost) of converting between two distributed layouts, as Triton lowers it.
"""

from tensorlayout.design.conversion import SharedRoundTrip, TritonConversion, triton_convert_layout
from tensorlayout.design.conversion_cost import ConversionCost, conversion_cost, tv_linear_layout

__all__: list[str] = ["ConversionCost", "SharedRoundTrip", "TritonConversion", "conversion_cost",
                      "triton_convert_layout", "tv_linear_layout"]
