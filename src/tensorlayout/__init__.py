"""tensorlayout: where does element (i, j, ...) of a tensor live?

Pillars, one subpackage each: :mod:`tensorlayout.xla` (XLA shapes, tiled layouts),
:mod:`tensorlayout.cute` (CuTe / CATLASS TLA layout algebra), :mod:`tensorlayout.indexing`
(XLA indexing maps and their simplifier) and :mod:`tensorlayout.hlo` (HLO modules and
their indexing analysis). :mod:`tensorlayout.convert`, :mod:`tensorlayout.relayout` and
:mod:`tensorlayout.render` bridge them.
"""

from tensorlayout.errors import (
    AlgebraError,
    HloError,
    IndexingError,
    LayoutError,
    ParseError,
    TensorLayoutError,
    UnsupportedError,
    ValidationError,
)

__version__ = "0.1.0"

__all__ = [
    "AlgebraError",
    "HloError",
    "IndexingError",
    "LayoutError",
    "ParseError",
    "TensorLayoutError",
    "UnsupportedError",
    "ValidationError",
    "__version__",
]
