"""Stub of the optional C extension ``_dot.c``: the inner product of a natural coordinate and
the well-formedness check of a user-built layout."""

from collections.abc import Callable
from typing import Any

MAX_DEPTH: int

def make_dot(static_int: type[int], /) -> Callable[[Any, Any, Any], int | None]: ...
def make_well_formed(static_int: type[int], /) -> Callable[[Any, Any], bool]: ...
