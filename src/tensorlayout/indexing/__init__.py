"""XLA's HLO indexing maps: affine expressions, domains, the text format and the simplifier.

>>> from tensorlayout.indexing import IndexingMap, verify_equivalent
>>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
>>> s = m.simplify()
>>> print(s)
(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
>>> verify_equivalent(m, s).equivalent
True
"""

from tensorlayout.indexing.canonical import canonicalize, largest_known_divisor
from tensorlayout.indexing.compose import compose
from tensorlayout.indexing.expr import Expr, compare, const, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap, Variable
from tensorlayout.indexing.parse import SymbolicMap, parse_expr, parse_indexing_map
from tensorlayout.indexing.ranges import RangeEvaluator
from tensorlayout.indexing.simplify import (
    ExprSimplifier,
    get_used_parameters,
    simplify,
    simplify_with_status,
)
from tensorlayout.indexing.verify import VerifyResult, verify_equivalent

__all__ = [
    "Expr",
    "ExprSimplifier",
    "IndexingMap",
    "Interval",
    "RangeEvaluator",
    "SymbolicMap",
    "Variable",
    "VerifyResult",
    "canonicalize",
    "compare",
    "compose",
    "const",
    "get_used_parameters",
    "largest_known_divisor",
    "parse_expr",
    "parse_indexing_map",
    "simplify",
    "simplify_with_status",
    "var",
    "verify_equivalent",
]
