"""The pieces of XLA's layout annotations that the common readers (:mod:`tensorlayout.xla.layout`)
and the rare ones (:mod:`tensorlayout.xla.layout_ops`) share: INT tokens, the words for a missing
parenthesis, and split configs. Both modules import this one; neither imports the other at run time.

>>> read_xla_int(Cursor("7")), str(SplitConfig(0, (4, 8)))
(7, '(0:4,8)')
"""

from __future__ import annotations

from tensorlayout._cursor import Cursor
from tensorlayout.core._frozen import Frozen, set_field
from tensorlayout.core.intmath import INT64_MIN, UINT64_LIMIT, wrap_int64

__all__ = ["SplitConfig", "read_xla_int"]

# XLA's parser records a missing parenthesis in an annotation and reads on (``S(28}`` is
# ``S(28)``, a bare ``M`` is dropped); tensorlayout refuses it, with these words.
_OPEN = "'(' after the annotation name"
_CLOSE = "')' to end the annotation"


def read_xla_int(cur: Cursor, what: str = "an integer") -> int:
    """An XLA INT token: values in [2^63, 2^64) bit-cast to int64; others outside int64 are errors.

    >>> read_xla_int(Cursor("18446744073709551615"))
    -1
    """
    start = cur.pos
    value = cur.integer(what)
    if value >= UINT64_LIMIT or value < INT64_MIN:
        raise cur.error(f"{what} that fits in 64 bits", at=start)
    return wrap_int64(value)


class SplitConfig(Frozen):
    """``SC(dimension:split_indices)``; ``dimension`` is a *physical* dim (0 = most major)."""

    __slots__ = __match_args__ = ("dimension", "split_indices")
    dimension: int
    split_indices: tuple[int, ...]

    def __init__(self, dimension: int, split_indices: tuple[int, ...]) -> None:
        set_field(self, "dimension", dimension)
        set_field(self, "split_indices", split_indices)

    def __str__(self) -> str:
        return f"({self.dimension}:{','.join(map(str, self.split_indices))})"
