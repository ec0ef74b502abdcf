"""Opcode groups the analysis and the reference evaluator share, in XLA's own opcode names.

The names are those of ``HLO_OPCODE_LIST`` in XLA's ``hlo_opcode.h`` (what XLA prints and its
parser accepts), e.g. ``count-leading-zeros`` and ``popcnt``.

>>> "count-leading-zeros" in ELEMENTWISE_OPCODES, "clz" in ELEMENTWISE_OPCODES
(True, False)
"""

from __future__ import annotations

__all__ = [
    "ASYNC_OPCODES",
    "BINARY_ELEMENTWISE_OPCODES",
    "ELEMENTWISE_OPCODES",
    "UNARY_ELEMENTWISE_OPCODES",
    "XLA_OPCODES",
    "XLA_OPCODE_ARITY",
    "async_shorthand",
]

#: Every opcode XLA's HLO text parser accepts (``HLO_OPCODE_LIST`` of ``hlo_opcode.h``).
XLA_OPCODES = frozenset({
    "abs", "acos", "acosh", "add", "add-dependency", "after-all", "all-gather", "all-gather-done",
    "all-gather-start", "all-reduce", "all-reduce-done", "all-reduce-start", "all-to-all", "and",
    "asin", "asinh", "async-done", "async-start", "async-update", "atan", "atan2", "atanh",
    "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast", "bitcast-convert",
    "broadcast", "call", "cbrt", "ceil", "cholesky", "clamp", "count-leading-zeros",
    "collective-broadcast", "collective-permute", "collective-permute-done",
    "collective-permute-start", "collective-reduce", "compare", "complex", "concatenate",
    "conditional", "constant", "convert", "convolution", "copy", "copy-done", "copy-start",
    "cosine", "cosh", "custom-call", "divide", "domain", "dot", "dynamic-reshape", "dynamic-slice",
    "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "fft", "floor", "fusion",
    "gather", "get-dimension-size", "get-tuple-element", "imag", "infeed", "iota", "is-finite",
    "log", "log-plus-one", "logistic", "map", "maximum", "minimum", "mulhi", "multiply", "negate",
    "not", "opt-barrier", "or", "outfeed", "pad", "parameter", "partition-id", "popcnt", "power",
    "ragged-all-to-all", "ragged-dot", "real", "recv", "recv-done", "reduce", "reduce-precision",
    "reduce-scatter", "reduce-window", "remainder", "replica-id", "reshape", "reverse", "rng",
    "rng-bit-generator", "rng-get-and-update-state", "round-nearest-afz", "round-nearest-even",
    "rsqrt", "scaled-dot", "scan", "scatter", "select", "select-and-scatter", "send", "send-done",
    "set-dimension-size", "shift-left", "shift-right-arithmetic", "shift-right-logical", "shuffle",
    "sign", "sine", "sinh", "slice", "sort", "sqrt", "stochastic-convert", "subtract", "tan",
    "tanh", "topk", "transpose", "triangular-solve", "tuple", "while", "xor",
})

#: Operand counts of the fixed-arity opcodes (the arity column of ``HLO_OPCODE_LIST``).
XLA_OPCODE_ARITY = {
    "abs": 1, "acos": 1, "acosh": 1, "add": 2, "add-dependency": 2, "all-gather-done": 1,
    "all-reduce-done": 1, "and": 2, "asin": 1, "asinh": 1, "async-done": 1, "atan": 1, "atan2": 2,
    "atanh": 1, "batch-norm-grad": 5, "batch-norm-inference": 5, "batch-norm-training": 3,
    "bitcast": 1, "bitcast-convert": 1, "broadcast": 1, "cbrt": 1, "ceil": 1, "cholesky": 1,
    "clamp": 3, "count-leading-zeros": 1, "collective-permute-done": 1, "compare": 2, "complex": 2,
    "constant": 0, "convert": 1, "copy": 1, "copy-done": 1, "copy-start": 1, "cosine": 1, "cosh": 1,
    "divide": 2, "domain": 1, "dot": 2, "erf": 1, "exponential": 1, "exponential-minus-one": 1,
    "fft": 1, "floor": 1, "gather": 2, "get-dimension-size": 1, "get-tuple-element": 1, "imag": 1,
    "infeed": 1, "iota": 0, "is-finite": 1, "log": 1, "log-plus-one": 1, "logistic": 1,
    "maximum": 2, "minimum": 2, "mulhi": 2, "multiply": 2, "negate": 1, "not": 1, "opt-barrier": 1,
    "or": 2, "outfeed": 2, "pad": 2, "parameter": 0, "partition-id": 0, "popcnt": 1, "power": 2,
    "ragged-all-to-all": 6, "ragged-dot": 3, "real": 1, "recv": 1, "recv-done": 1,
    "reduce-precision": 1, "remainder": 2, "replica-id": 0, "reshape": 1, "reverse": 1,
    "rng-bit-generator": 1, "rng-get-and-update-state": 0, "round-nearest-afz": 1,
    "round-nearest-even": 1, "rsqrt": 1, "scaled-dot": 4, "select": 3, "select-and-scatter": 3,
    "send": 2, "send-done": 1, "set-dimension-size": 2, "shift-left": 2,
    "shift-right-arithmetic": 2, "shift-right-logical": 2, "shuffle": 1, "sign": 1, "sine": 1,
    "sinh": 1, "slice": 1, "sqrt": 1, "stochastic-convert": 2, "subtract": 2, "tan": 1, "tanh": 1,
    "topk": 1, "transpose": 1, "triangular-solve": 2, "while": 1, "xor": 2,
}

#: The generic async opcodes the shorthand forms (``slice-start``, ``call-done``…) stand for.
ASYNC_OPCODES = frozenset({"async-start", "async-update", "async-done"})


def async_shorthand(opcode: str) -> tuple[str, str] | None:
    """``(wrapped opcode, async opcode)`` when ``opcode`` is XLA's shorthand for an async op.

    ``slice-start`` is ``async-start`` wrapping a ``slice``; opcodes that are themselves XLA
    opcodes (``copy-start``, ``all-reduce-done``…) are not shorthand.

    >>> async_shorthand("slice-start"), async_shorthand("copy-start"), async_shorthand("clz-done")
    (('slice', 'async-start'), None, None)
    """
    if opcode in XLA_OPCODES:
        return None
    for suffix in ("-start", "-update", "-done"):
        if opcode.endswith(suffix):
            wrapped = opcode[: -len(suffix)]
            if wrapped in XLA_OPCODES and wrapped not in ASYNC_OPCODES:
                return wrapped, "async" + suffix
    return None

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
