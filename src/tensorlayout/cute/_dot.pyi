"""Stub of the optional C extension ``_dot.c``: the inner product of a natural coordinate."""

from collections.abc import Callable
from typing import Any

MAX_DEPTH: int

def make_dot(static_int: type[int], /) -> Callable[[Any, Any, Any], int | None]: ...
