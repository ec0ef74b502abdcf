"""tensorlayout: where does element (i, j, ...) of a tensor live?

Pillars, one subpackage each: :mod:`tensorlayout.xla` (XLA shapes, tiled layouts),
:mod:`tensorlayout.cute` (CuTe / CATLASS TLA layout algebra), :mod:`tensorlayout.indexing`
(XLA indexing maps and their simplifier) and :mod:`tensorlayout.hlo` (HLO modules and
their indexing analysis). :mod:`tensorlayout.convert`, :mod:`tensorlayout.relayout` and
:mod:`tensorlayout.render` bridge them.
"""

from importlib import import_module
from typing import Any

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

#: the subpackages, loaded on first attribute access (``tensorlayout.cute.Layout`` works after a
#: bare ``import tensorlayout``, which itself imports only the error classes)
_SUBPACKAGES = ("convert", "core", "cute", "design", "explore", "gpu", "hlo", "indexing", "jax", "relayout",
                "render", "tiling", "triton", "xla")


def __getattr__(name: str) -> Any:
    """``tensorlayout.<subpackage>`` imported on first use."""
    if name not in _SUBPACKAGES:
        raise AttributeError(f"module 'tensorlayout' has no attribute {name!r}")
    return import_module(f"tensorlayout.{name}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBPACKAGES})
