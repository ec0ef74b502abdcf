"""Checks XLA's HLO parser makes on a whole computation once its instructions are read.

XLA refuses a repeated parameter number, and aborts on a parameter number out of range or on
a static reshape that changes the element count; here each is a ParseError. A rank-0
constant's literal is checked against its type, an operand written with a shape against the
operand's.

>>> from tensorlayout.hlo import parse_module
>>> try:
...     parse_module("HloModule m\\nENTRY e {\\n ROOT p = f32[] parameter(1)\\n}")
... except ParseError as err:
...     print(err.expected)
a parameter number of computation e in [0, 1), each once (not 1)
"""

from __future__ import annotations

import math
import re

from tensorlayout.core.intmath import literal_in_range
from tensorlayout.errors import ParseError
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.xla.shape import UNBOUNDED_SIZE, Shape
from tensorlayout.xla.types import PrimitiveType

__all__ = ["check_operand_shapes", "check_parameter_numbers", "check_reshapes", "check_scalar_constant",
           "check_scalar_literal"]

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_NUMBER = r"(?:-\.[0-9]+|-?[0-9]+(?:\.[0-9]*)?)(?:[eE][+-]?[0-9]+)?|-?inf|-?nan(?:\(0x[0-9a-fA-F]+\))?"
_SCALARS = {
    "float": re.compile(rf"\s*(?:{_NUMBER})\s*"),
    "complex": re.compile(rf"\s*\(\s*(?:{_NUMBER})\s*,\s*(?:{_NUMBER})\s*\)\s*"),
    "signed": re.compile(r"\s*(-?[0-9]+)\s*"),
    "unsigned": re.compile(r"\s*(-?[0-9]+)\s*"),
    "pred": re.compile(r"\s*(?:true|false|-?[0-9]+)\s*"),
}


# the IEEE types with an infinity: (largest binary exponent, significand bits); a literal that
# rounds past the largest finite value is refused (other float types' ranges are not checked)
_IEEE = {"f16": (15, 11), "bf16": (127, 8), "f32": (127, 24), "f64": (1023, 53)}


#: (literal, type name) pairs found good: constants repeat their literals (0, 1, -inf...) often
_CHECKED: set[tuple[str, str]] = set()
_CHECKED_LIMIT = 4096


def check_scalar_literal(text: str, element_type: PrimitiveType) -> None:
    """Raise a ParseError unless ``text`` is one scalar of ``element_type`` as XLA's parser
    reads a rank-0 constant: a number token (``1``, ``-.5``, ``1e5``, ``-inf``, ``nan``), ``(re, im)``
    for complex types, ``true``/``false`` or an integer for pred; integers in the type's range,
    f16/bf16/f32/f64 values that round to a finite value.

    >>> from tensorlayout.xla.types import parse_element_type
    >>> check_scalar_literal("-inf", parse_element_type("f32"))
    """
    scalar = _SCALARS.get(element_type.kind)
    if scalar is None or (text, element_type.name) in _CHECKED:
        return
    m = scalar.fullmatch(_COMMENTS.sub(" ", text))
    if m is None:
        raise ParseError(text, 0, f"one {element_type.name} scalar in the constant")
    if element_type.name in _IEEE and not re.search("inf|nan", text):
        exponent, significand = _IEEE[element_type.name]
        largest = (2 - 2.0 ** (1 - significand)) * 2.0 ** exponent
        if not abs(float(_COMMENTS.sub(" ", text))) < largest + 2.0 ** (exponent - significand):
            raise ParseError(text, 0, f"a value that rounds to a finite {element_type.name}")
    if element_type.kind in ("signed", "unsigned"):
        bits = element_type.bit_width
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if element_type.kind == "signed" else (0, 2 ** bits)
        if not literal_in_range(m.group(1), low, high):
            raise ParseError(text, 0, f"an integer in the range of {element_type.name}")
    if len(_CHECKED) < _CHECKED_LIMIT:
        _CHECKED.add((text, element_type.name))




def check_scalar_constant(text: str, literal: str, shape: Shape, start: int) -> None:
    """The literal of the constant at ``start`` is one scalar of its rank-0 ``shape``."""
    try:
        check_scalar_literal(literal, shape.element_type)
    except ParseError as err:
        at = text.find(literal, start)
        raise ParseError(text, max(at, start), err.expected, repr(literal),
                         context="constant literal") from None


def check_parameter_numbers(text: str, comp_name: str, instructions: list[HloInstruction]) -> None:
    """Parameter numbers are 0..n-1, each once."""
    params = [i for i in instructions if i.opcode == "parameter"]
    seen: set[int] = set()
    for inst in params:
        number = inst.parameter_number
        if number in seen or number is None or number >= len(params):
            raise ParseError(text, inst.offset, f"a parameter number of computation {comp_name} "
                             f"in [0, {len(params)}), each once (not {number})", repr(inst.name))
        seen.add(number)


def check_reshapes(text: str, instructions: list[HloInstruction],
                   by_name: dict[str, HloInstruction]) -> None:
    """Each static one-operand reshape keeps the element count of its operand."""
    for inst in instructions:
        if inst.opcode != "reshape" or len(inst.operand_names) != 1:
            continue
        operand = by_name[inst.operand_names[0]].shape
        sizes = [s.dimensions for s in (inst.shape, operand) if s.is_array]
        if len(sizes) == 2 and UNBOUNDED_SIZE not in sizes[0] + sizes[1] \
                and math.prod(sizes[0]) != math.prod(sizes[1]):
            raise ParseError(text, inst.offset, f"a reshape to {inst.shape} that keeps the "
                             f"{math.prod(sizes[1])} elements of its operand {operand}", repr(inst.name))


def check_operand_shapes(text: str, instructions: list[HloInstruction],
                         by_name: dict[str, HloInstruction]) -> None:
    """An operand written with its shape (``negate(f32[2] p)``) names an instruction of a
    compatible shape (layouts and dynamic sizes aside), as XLA requires."""
    for inst in instructions:
        for name, shape in zip(inst.operand_names, inst.operand_shapes):
            if shape is not None and not shape.compatible(by_name[name].shape):
                at = text.find(name, inst.offset + len(inst.name) + 1)
                raise ParseError(text, at if at >= 0 else inst.offset, f"operand {name} written with the "
                                 f"shape it has ({by_name[name].shape}), not {shape}", repr(name))
