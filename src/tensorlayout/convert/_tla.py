"""TLA (Ascend) formats in XLA notation.

>>> str(tla_to_xla("zZ", 40, 72, "f16"))
'f16[40,72]{1,0:T(16,16)}'
"""

from __future__ import annotations

from tensorlayout.convert._search import cute_to_xla
from tensorlayout.cute import tla
from tensorlayout.errors import UnsupportedError
from tensorlayout.xla import Shape
from tensorlayout.xla.types import ELEMENT_TYPES

__all__ = ["tla_to_xla"]


_DTYPE_NAMES = {"half": "f16", "float": "f32", "float16": "f16", "float32": "f32", "fp16": "f16",
                "fp32": "f32", "bfloat16": "bf16", "int8": "s8", "uint8": "u8", "int4": "s4",
                "int16": "s16", "int32": "s32"}
_BITS_NAMES = {1: "u1", 2: "u2", 4: "s4", 8: "s8", 16: "f16", 32: "f32", 64: "f64"}


def _xla_type_name(dtype: str | int) -> str:
    """The XLA element type of a TLA ``dtype``: an XLA name, a C name or a bit width."""
    if isinstance(dtype, str) and dtype in ELEMENT_TYPES:
        return dtype
    if isinstance(dtype, str) and dtype.lower() in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype.lower()]
    bits = tla.element_bits(dtype)  # validates the name or width
    if bits not in _BITS_NAMES:
        raise UnsupportedError(f"XLA has no {bits}-bit element type for TLA dtype {dtype!r}")
    return _BITS_NAMES[bits]


def tla_to_xla(tag: str, rows: int, cols: int, dtype: str | int = "f16") -> Shape:
    """A TLA format (``zZ``, ``nN``, ``RowMajor`` …) in XLA notation, or why it cannot be written so.

    ``dtype`` is an XLA type name (``f16``), a C name (``half``) or a bit width; 4-bit types
    get ``E(4)`` since the fractal formats pack them. zN (row-major fractals arranged
    column-major) needs a transposing ``(16,1)`` sub-tile:

    >>> str(tla_to_xla("zZ", 40, 72, "f16")), str(tla_to_xla("zN", 40, 72, "f16"))
    ('f16[40,72]{1,0:T(16,16)}', 'f16[40,72]{0,1:T(16,16)(16,1)}')
    """
    t = tla.make_format(tag, rows, cols, dtype)
    try:
        return cute_to_xla(t, _xla_type_name(dtype))
    except UnsupportedError as err:
        raise UnsupportedError(f"TLA {tag} {rows}x{cols}: {err}") from None
