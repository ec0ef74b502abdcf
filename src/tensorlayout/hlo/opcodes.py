"""Opcode groups the analysis and the reference evaluator share, in XLA's own opcode names.

The names are those of ``HLO_OPCODE_LIST`` in XLA's ``hlo_opcode.h`` (what XLA prints and its
parser accepts), e.g. ``count-leading-zeros`` and ``popcnt``.

>>> "count-leading-zeros" in ELEMENTWISE_OPCODES, "clz" in ELEMENTWISE_OPCODES
(True, False)
"""

from __future__ import annotations

__all__ = ["BINARY_ELEMENTWISE_OPCODES", "ELEMENTWISE_OPCODES", "UNARY_ELEMENTWISE_OPCODES"]

#: One-operand elementwise opcodes (XLA's ``HloInstruction::CreateUnary`` ops plus copy and converts).
UNARY_ELEMENTWISE_OPCODES = frozenset({
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitcast-convert", "cbrt", "ceil",
    "convert", "copy", "cosh", "cosine", "count-leading-zeros", "erf", "exponential",
    "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one", "logistic",
    "negate", "not", "popcnt", "real", "reduce-precision", "round-nearest-afz", "round-nearest-even",
    "rsqrt", "sign", "sine", "sinh", "sqrt", "tan", "tanh",
})

#: Two-operand elementwise opcodes (XLA's ``HloInstruction::CreateBinary`` ops).
BINARY_ELEMENTWISE_OPCODES = frozenset({
    "add", "and", "atan2", "compare", "complex", "divide", "maximum", "minimum", "mulhi", "multiply",
    "or", "power", "remainder", "shift-left", "shift-right-arithmetic", "shift-right-logical",
    "stochastic-convert", "subtract", "xor",
})

#: Opcodes XLA treats as elementwise (``HloInstruction::IsElementwise``) plus map / all-reduce,
#: which the indexing analysis treats the same way.
ELEMENTWISE_OPCODES = UNARY_ELEMENTWISE_OPCODES | BINARY_ELEMENTWISE_OPCODES | frozenset({
    "select", "clamp", "map", "all-reduce",
})
