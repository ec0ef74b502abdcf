"""Depth guard: expressions nested deeper than Python's recursion limit fail with an IndexingError.

Every expression algorithm recurses over the tree, so a sum of thousands of terms (or text
with thousands of parentheses) would otherwise escape as a bare ``RecursionError``.

>>> from tensorlayout.indexing.expr import var
>>> deep = var(0)
>>> for _ in range(5000):
...     deep = deep * 2 + 1
>>> str(deep)
Traceback (most recent call last):
...
tensorlayout.errors.IndexingError: expression is nested too deeply (more levels than Python's recursion limit)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from tensorlayout.errors import IndexingError

__all__ = ["TOO_DEEP", "guarded"]

F = TypeVar("F", bound=Callable[..., object])

TOO_DEEP = "expression is nested too deeply (more levels than Python's recursion limit)"


def guarded(fn: F) -> F:
    """Wrap a public entry point so a RecursionError becomes an :class:`IndexingError`."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return fn(*args, **kwargs)
        except RecursionError:
            raise IndexingError(TOO_DEEP) from None

    return wrapper  # type: ignore[return-value]
