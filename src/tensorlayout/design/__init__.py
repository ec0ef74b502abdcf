"""Choose a layout, with a proof: shared-memory layouts synthesised for given accesses, and the
data path (and cost) of converting between two distributed layouts, as Triton lowers it.

>>> from tensorlayout.design import design_smem
>>> design_smem((64, 64), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"]).best.candidate.name
'GMMA::Layout_K_SW128_Atom<half_t>'
"""

from tensorlayout.design._access import DTYPES, Access, parse_access
from tensorlayout.design._candidates import Candidate
from tensorlayout.design._proof import AccessProof, Conflict, prove
from tensorlayout.design.conversion import SharedRoundTrip, TritonConversion, triton_convert_layout
from tensorlayout.design.conversion_cost import ConversionCost, conversion_cost, tv_linear_layout
from tensorlayout.design.smem import SmemAnswer, SmemDesign, design_smem

__all__: list[str] = ["DTYPES", "Access", "AccessProof", "Candidate", "Conflict", "ConversionCost",
                      "SharedRoundTrip", "SmemAnswer", "SmemDesign", "TritonConversion",
                      "conversion_cost", "design_smem", "parse_access", "prove",
                      "triton_convert_layout", "tv_linear_layout"]
