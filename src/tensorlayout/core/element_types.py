"""Element types, shared by every notation: names (XLA's ``PrimitiveType`` spelling), bit widths,
byte widths and whether an element is sub-byte (packed several to a byte with ``E(n)``).

>>> F32.bit_width, F32.byte_width, S4.is_sub_byte, parse_element_type("bf16").name
(32, 4, True, 'bf16')
"""

from __future__ import annotations

from tensorlayout.core._frozen import Frozen, set_field
from tensorlayout.core.intmath import ceil_div
from tensorlayout.errors import LayoutError

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


class PrimitiveType(Frozen):
    """One XLA element type, e.g. ``f32`` (enum value 11, 32 bits)."""

    __slots__ = __match_args__ = ("name", "enum", "bits", "kind", "exponent_bits", "mantissa_bits")
    name: str
    enum: int
    bits: int  # 0 for non-array types (token, opaque, tuple)
    kind: str  # "pred", "signed", "unsigned", "float", "complex", "token", "opaque", "tuple"
    exponent_bits: int
    mantissa_bits: int

    def __init__(self, name: str, enum: int, bits: int, kind: str, exponent_bits: int = 0,
                 mantissa_bits: int = 0) -> None:
        set_field(self, "name", name)
        set_field(self, "enum", enum)
        set_field(self, "bits", bits)
        set_field(self, "kind", kind)
        set_field(self, "exponent_bits", exponent_bits)
        set_field(self, "mantissa_bits", mantissa_bits)

    def __eq__(self, other: object) -> bool:  # (written out: shapes, and so their types, are hashed per call)
        if other.__class__ is self.__class__:
            assert isinstance(other, PrimitiveType)
            return (self.name, self.enum, self.bits, self.kind, self.exponent_bits, self.mantissa_bits) == (
                other.name, other.enum, other.bits, other.kind, other.exponent_bits, other.mantissa_bits)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.enum, self.bits, self.kind, self.exponent_bits, self.mantissa_bits))

    def __str__(self) -> str:
        return self.name

    @property
    def bit_width(self) -> int:
        """XLA ``BitWidth``: pred is 1 bit, s4 is 4, f32 is 32."""
        return self.bits

    @property
    def byte_width(self) -> int:
        """XLA ``ByteWidth``: ceil(bits / 8); pred and sub-byte types take one byte."""
        return ceil_div(self.bits, 8)

    @property
    def is_array(self) -> bool:
        """``IsArrayType``: pred, integer, floating-point or complex (not token, opaque, tuple)."""
        return self.kind in ("pred", "signed", "unsigned", "float", "complex")

    @property
    def is_integral(self) -> bool:
        """``IsIntegralType``: a signed or unsigned integer type (not pred)."""
        return self.kind in ("signed", "unsigned")

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "unsigned"

    @property
    def is_float(self) -> bool:
        """``IsFloatingPointType``: a real floating-point type (not complex)."""
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        """``IsComplexType``: c64 or c128."""
        return self.kind == "complex"

    @property
    def is_sub_byte(self) -> bool:
        """``IsSubByteNonPredType``: an array type other than pred with fewer than 8 bits."""
        return self.is_array and self.kind != "pred" and self.bits < 8

    @property
    def significand_width(self) -> int:
        """Mantissa bits plus the implicit leading one (floats only)."""
        return self.mantissa_bits + 1 if self.is_float else 0


def _table() -> dict[str, PrimitiveType]:
    rows: list[PrimitiveType] = [PrimitiveType("pred", 1, 1, "pred")]
    for bits, s_enum, u_enum in ((1, 30, 31), (2, 26, 27), (4, 21, 22), (8, 2, 6),
                                 (16, 3, 7), (32, 4, 8), (64, 5, 9)):
        rows.append(PrimitiveType(f"s{bits}", s_enum, bits, "signed"))
        rows.append(PrimitiveType(f"u{bits}", u_enum, bits, "unsigned"))
    floats = (
        ("f16", 10, 16, 5, 10), ("bf16", 16, 16, 8, 7), ("f32", 11, 32, 8, 23),
        ("f64", 12, 64, 11, 52), ("f8e5m2", 19, 8, 5, 2), ("f8e4m3", 28, 8, 4, 3),
        ("f8e4m3fn", 20, 8, 4, 3), ("f8e4m3b11fnuz", 23, 8, 4, 3), ("f8e3m4", 29, 8, 3, 4),
        ("f8e5m2fnuz", 24, 8, 5, 2), ("f8e4m3fnuz", 25, 8, 4, 3), ("f8e8m0fnu", 33, 8, 8, 0),
        ("f4e2m1fn", 32, 4, 2, 1),
    )
    rows += [PrimitiveType(n, e, b, "float", x, m) for n, e, b, x, m in floats]
    rows += [PrimitiveType("c64", 15, 64, "complex", 8, 23),
             PrimitiveType("c128", 18, 128, "complex", 11, 52),
             PrimitiveType("token", 17, 0, "token"),
             PrimitiveType("opaque", 14, 0, "opaque"),
             PrimitiveType("tuple", 13, 0, "tuple")]
    return {t.name: t for t in rows}


ELEMENT_TYPES: dict[str, PrimitiveType] = _table()
F32 = ELEMENT_TYPES["f32"]
S4 = ELEMENT_TYPES["s4"]


def parse_element_type(name: str) -> PrimitiveType:
    """The element type named ``name`` (case-sensitive, as XLA: ``F32`` is rejected)."""
    try:
        return ELEMENT_TYPES[name]
    except KeyError:
        raise LayoutError(f"expected an XLA element type name, but got {name!r}") from None


def element_type(value: str | PrimitiveType) -> PrimitiveType:
    """Accept a type or its name."""
    if isinstance(value, PrimitiveType):
        return value
    if not isinstance(value, str):
        raise LayoutError(f"expected an element type or its name, but got {type(value).__name__}")
    return parse_element_type(value)


# (max_exponent, min_exponent) as std::numeric_limits reports them, where they differ from
# the IEEE-style rule max = 2^(e-1), min = 3 - 2^(e-1) (finite-only and "nuz" formats).
_EXPONENT_RANGE = {
    "f8e4m3fn": (9, -5),
    "f8e4m3fnuz": (8, -6),
    "f8e5m2fnuz": (16, -14),
    "f8e4m3b11fnuz": (5, -9),
    "f8e8m0fnu": (128, -126),
    "f4e2m1fn": (3, 1),
}


def exponent_width(t: PrimitiveType) -> int:
    """Exponent bits of a floating-point type (``primitive_util::ExponentWidth``)."""
    _require_float(t)
    return t.exponent_bits


def significand_width(t: PrimitiveType) -> int:
    """Mantissa bits plus the implicit leading one (``SignificandWidth``)."""
    _require_float(t)
    return t.significand_width


def overflow_exponent(t: PrimitiveType) -> int:
    """``OverflowExponent``: one more than the largest finite binary exponent."""
    _require_float(t)
    return _EXPONENT_RANGE.get(t.name, (2 ** (t.exponent_bits - 1), 0))[0]


def underflow_exponent(t: PrimitiveType) -> int:
    """``UnderflowExponent``: one more than the smallest normal binary exponent."""
    _require_float(t)
    return _EXPONENT_RANGE.get(t.name, (0, 3 - 2 ** (t.exponent_bits - 1)))[1]


def _require_float(t: PrimitiveType) -> None:
    if not (t.is_float or t.is_complex):
        raise LayoutError(f"expected a floating-point type, but got {t.name}")
