"""XLA's HLO indexing maps: affine expressions, domains, the text format and the simplifier.

Public names follow XLA's C++ names in Python spelling (``ComposeIndexingMaps`` ->
``compose_indexing_maps``, ``ParseSymbolicExpr`` -> ``parse_symbolic_expr``...).

>>> from tensorlayout.indexing import IndexingMap, verify_equivalent
>>> m = IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
>>> s = m.simplify()
>>> print(s)
(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
>>> verify_equivalent(m, s).equivalent
True
"""

from tensorlayout.indexing.canonical import canonicalize, largest_known_divisor
from tensorlayout.indexing.compose import compose, compose_indexing_maps
from tensorlayout.indexing.expr import Expr, compare, const, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap
from tensorlayout.indexing.parse import (
    SymbolicMap,
    parse_expr,
    parse_indexing_map,
    parse_symbolic_expr,
    parse_symbolic_expr_and_advance,
    parse_symbolic_map,
    parse_symbolic_map_and_advance,
)
from tensorlayout.indexing.ranges import RangeEvaluator
from tensorlayout.indexing.simplify import (
    ExprSimplifier,
    SimplifyPointDimensions,
    clear_caches,
    simplify,
    simplify_with_status,
)
from tensorlayout.indexing.transforms import (
    convert_range_variables_to_dimensions,
    get_used_parameters,
)
from tensorlayout.indexing.variables import (
    Variable,
    VariableKind,
    dim_vars_from_gpu_grid,
    to_variable_name,
    to_variable_type,
)
from tensorlayout.indexing.verify import VerifyResult, verify_equivalent

__all__ = [
    "Expr",
    "ExprSimplifier",
    "IndexingMap",
    "Interval",
    "RangeEvaluator",
    "SimplifyPointDimensions",
    "SymbolicMap",
    "Variable",
    "VariableKind",
    "VerifyResult",
    "canonicalize",
    "clear_caches",
    "compare",
    "compose",
    "compose_indexing_maps",
    "const",
    "convert_range_variables_to_dimensions",
    "dim_vars_from_gpu_grid",
    "get_used_parameters",
    "largest_known_divisor",
    "parse_expr",
    "parse_indexing_map",
    "parse_symbolic_expr",
    "parse_symbolic_expr_and_advance",
    "parse_symbolic_map",
    "parse_symbolic_map_and_advance",
    "simplify",
    "simplify_with_status",
    "to_variable_name",
    "to_variable_type",
    "var",
    "verify_equivalent",
]
