"""XLA element types (``PrimitiveType``): the core's element types under XLA's module name.

The table lives in :mod:`tensorlayout.core.element_types`, which every notation shares.

>>> F32.bit_width, F32.byte_width, S4.is_sub_byte, parse_element_type("bf16").name
(32, 4, True, 'bf16')
"""

from tensorlayout.core.element_types import (
    ELEMENT_TYPES,
    F32,
    S4,
    PrimitiveType,
    element_type,
    exponent_width,
    overflow_exponent,
    parse_element_type,
    significand_width,
    underflow_exponent,
)

__all__ = [
    "ELEMENT_TYPES",
    "F32",
    "S4",
    "PrimitiveType",
    "element_type",
    "exponent_width",
    "overflow_exponent",
    "parse_element_type",
    "significand_width",
    "underflow_exponent",
]
