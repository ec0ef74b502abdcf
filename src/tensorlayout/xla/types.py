"""XLA element types (``PrimitiveType``): the core's element types under XLA's module name.

The table lives in :mod:`tensorlayout.core.element_types`, which every notation shares; this module
re-exports exactly its public names.

>>> F32.bit_width, F32.byte_width, S4.is_sub_byte, parse_element_type("bf16").name
(32, 4, True, 'bf16')
"""

from tensorlayout.core import element_types as _core
from tensorlayout.core.element_types import *  # noqa: F403  (the core's public names, re-exported)

__all__ = list(_core.__all__)
