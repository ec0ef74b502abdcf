"""`--window`: the part of a layout's logical index space that `show` prints.

A window is one half-open range per dimension, written like numpy slices separated by
commas: `--window 0:8,100:116` (rows 0-7, columns 100-115); `5` is one index, `:` or a
missing trailing part the whole dimension.

>>> parse_window("0:8,100:116", (16, 256))
(range(0, 8), range(100, 116))
>>> parse_window("1", (4, 8)), default_window((16, 256))
((range(1, 2), range(0, 8)), (range(0, 16), range(0, 256)))
>>> default_window((64, 64, 8, 128)), default_window((100000,))
((range(0, 1), range(0, 1), range(0, 8), range(0, 128)), (range(0, 32),))
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.cli._io import UsageError
from tensorlayout.core.intmath import prod

__all__ = ["MAX_CELLS", "MAX_ROWS", "Window", "default_window", "parse_window", "window_text"]

#: Layouts with at most this many elements are shown whole by default.
MAX_CELLS = 4096
#: Beyond that, the default window keeps this many rows of the first slice.
MAX_ROWS = 32

Window = tuple[range, ...]


def _part(text: str, n: int, dim: int) -> range:
    start, sep, stop = text.strip().partition(":")
    try:
        lo = int(start) if start.strip() else 0
        hi = (int(stop) if stop.strip() else n) if sep else lo + 1
    except ValueError:
        raise UsageError(f"expected a window part like 'a:b', 'a' or ':' for dimension {dim}, "
                         f"but got {text.strip()!r}") from None
    if not 0 <= lo < hi <= n:
        raise UsageError(f"window part {text.strip()!r} is empty or outside dimension {dim} "
                         f"of size {n}")
    return range(lo, hi)


def parse_window(text: str, dims: Sequence[int]) -> Window:
    """One range per dimension of `dims` from `text` (see the module docstring)."""
    parts = text.split(",") if text.strip() else []
    if len(parts) > len(dims):
        raise UsageError(f"a window of {len(parts)} parts for a layout of rank {len(dims)}")
    parts += [":"] * (len(dims) - len(parts))
    return tuple(_part(p, n, d) for d, (p, n) in enumerate(zip(parts, dims, strict=True)))


def default_window(dims: Sequence[int]) -> Window:
    """The whole layout when it is small; else the first `MAX_ROWS` rows of its first slice
    (the columns are cut to the screen width when printed), or of a vector."""
    if prod(dims) <= MAX_CELLS:
        return tuple(range(n) for n in dims)
    if len(dims) == 1:
        return (range(MAX_ROWS),)
    lead = tuple(range(min(n, 1)) for n in dims[:-2])
    return (*lead, range(min(dims[-2], MAX_ROWS)), range(dims[-1]))


def window_text(window: Window) -> str:
    """`[0:8,100:116]`, the way `--window` takes it."""
    return "[" + ",".join(f"{r.start}:{r.stop}" for r in window) + "]"
