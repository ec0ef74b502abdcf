"""HLO modules as XLA and JAX print them: parser and data model.

>>> from tensorlayout.hlo import parse_module
>>> text = "HloModule m\\nENTRY e {\\n p = f32[8] parameter(0)\\n"
>>> m = parse_module(text + " ROOT s = f32[4] slice(p), slice={[0:8:2]}\\n}")
>>> m.entry.root.attributes["slice"][0].stride
2
"""

from tensorlayout.hlo.analysis import (
    epilogue_input_to_output_indexing,
    grouped_output_to_input_indexing,
)
from tensorlayout.hlo.attributes import (
    ConvolutionDimensionNumbers,
    PaddingDimension,
    SliceDimension,
    Window,
    WindowDimension,
    parse_attribute,
    parse_literal,
)
from tensorlayout.hlo.coalescing import OperandCoalescing, coalescing_report
from tensorlayout.hlo.fusion import FusionAdaptor
from tensorlayout.hlo.model import (
    ComputationLayout,
    HloComputation,
    HloGraph,
    HloInstruction,
    HloModule,
)
from tensorlayout.hlo.opcodes import ELEMENTWISE_OPCODES
from tensorlayout.hlo.operand_indexing import (
    HloInstructionIndexing,
    OperandIndexing,
    RuntimeVar,
    group_indexing_maps_by_producers,
)
from tensorlayout.hlo.parser import parse_module
from tensorlayout.hlo.physical import (
    input_to_output_indexing,
    linearized_output_to_input,
    output_to_input_indexing,
    physical_input_to_output_indexing,
    physical_output_to_input_indexing,
)
from tensorlayout.hlo.utilization import operand_utilization

__all__ = [
    "ELEMENTWISE_OPCODES",
    "ComputationLayout",
    "ConvolutionDimensionNumbers",
    "FusionAdaptor",
    "HloComputation",
    "HloGraph",
    "HloInstruction",
    "HloInstructionIndexing",
    "HloModule",
    "OperandCoalescing",
    "OperandIndexing",
    "PaddingDimension",
    "RuntimeVar",
    "SliceDimension",
    "Window",
    "WindowDimension",
    "coalescing_report",
    "epilogue_input_to_output_indexing",
    "group_indexing_maps_by_producers",
    "grouped_output_to_input_indexing",
    "input_to_output_indexing",
    "linearized_output_to_input",
    "operand_utilization",
    "output_to_input_indexing",
    "parse_attribute",
    "parse_literal",
    "parse_module",
    "physical_input_to_output_indexing",
    "physical_output_to_input_indexing",
]
