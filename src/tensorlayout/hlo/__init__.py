"""HLO modules as XLA and JAX print them: parser and data model.

>>> from tensorlayout.hlo import parse_module
>>> text = "HloModule m\\nENTRY e {\\n p = f32[8] parameter(0)\\n"
>>> m = parse_module(text + " ROOT s = f32[4] slice(p), slice={[0:8:2]}\\n}")
>>> m.entry.root.attributes["slice"][0].stride
2
"""

from tensorlayout.hlo.attributes import (
    ConvolutionDimensionNumbers,
    PaddingDimension,
    SliceDimension,
    Window,
    WindowDimension,
    parse_attribute,
    parse_literal,
)
from tensorlayout.hlo.model import ComputationLayout, HloComputation, HloInstruction, HloModule
from tensorlayout.hlo.parser import parse_module

__all__ = [
    "ComputationLayout",
    "ConvolutionDimensionNumbers",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "PaddingDimension",
    "SliceDimension",
    "Window",
    "WindowDimension",
    "parse_attribute",
    "parse_literal",
    "parse_module",
]
