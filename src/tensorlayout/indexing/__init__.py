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
from tensorlayout.indexing.expr import Expr, compare, const, install_printer, var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.map import IndexingMap
from tensorlayout.indexing.parse import (
    ParsedOperandIndexing,
    SymbolicMap,
    indexing_map_from_symbolic_map,
    parse_expr,
    parse_indexing_map,
    parse_instruction_indexing,
    parse_symbolic_expr,
    parse_symbolic_expr_and_advance,
    parse_symbolic_map,
    parse_symbolic_map_and_advance,
)
from tensorlayout.indexing.printer import expr_to_string
from tensorlayout.indexing.ranges import RangeEvaluator, compute_result_ranges
from tensorlayout.indexing.simplify import (
    ExprSimplifier,
    SimplifyPointDimensions,
    cached_simplification,
    clear_caches,
    simplify,
    simplify_with_status,
)
from tensorlayout.indexing.transforms import (
    convert_range_variables_to_dimensions,
    get_used_parameters,
    remove_unused,
    rescale_symbols,
)
from tensorlayout.indexing.variables import (
    Variable,
    VariableKind,
    dim_vars_from_gpu_grid,
    to_variable_name,
    to_variable_type,
)
from tensorlayout.indexing.verify import VerifyResult, verify_equivalent

# Expr lives below the printer that its __str__ delegates to; the package installs it once, here.
install_printer(expr_to_string)

__all__ = [
    "Expr",
    "ExprSimplifier",
    "IndexingMap",
    "Interval",
    "ParsedOperandIndexing",
    "RangeEvaluator",
    "SimplifyPointDimensions",
    "SymbolicMap",
    "Variable",
    "VariableKind",
    "VerifyResult",
    "cached_simplification",
    "canonicalize",
    "clear_caches",
    "compare",
    "compose",
    "compose_indexing_maps",
    "compute_result_ranges",
    "const",
    "convert_range_variables_to_dimensions",
    "dim_vars_from_gpu_grid",
    "expr_to_string",
    "get_used_parameters",
    "indexing_map_from_symbolic_map",
    "largest_known_divisor",
    "parse_expr",
    "parse_indexing_map",
    "parse_instruction_indexing",
    "parse_symbolic_expr",
    "parse_symbolic_expr_and_advance",
    "parse_symbolic_map",
    "parse_symbolic_map_and_advance",
    "remove_unused",
    "rescale_symbols",
    "simplify",
    "simplify_with_status",
    "to_variable_name",
    "to_variable_type",
    "var",
    "verify_equivalent",
]
