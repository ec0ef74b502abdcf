"""What the copy engine derives from a target and reuses (kernel tasks, direct relayout plans),
remembered outside the target: a :class:`TargetMemo` per kind of result, owned by the module
that computes it, so a :class:`~tensorlayout.relayout._target.PhysicalTarget` holds no mutable
state of the engine's. Entries are kept per target object, weakly (they go with the target),
and a few per target (the oldest table is emptied when full: a few stride patterns per target
are plenty).

>>> from tensorlayout.relayout._target import PhysicalTarget
>>> memo: TargetMemo[int, str] = TargetMemo(limit=2)
>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> memo.get(t, 1, lambda: "made"), memo.get(t, 1, lambda: "again")
('made', 'made')
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from tensorlayout.relayout._target import PhysicalTarget

__all__ = ["TargetMemo"]

K = TypeVar("K")
V = TypeVar("V")


class TargetMemo(Generic[K, V]):
    """Values computed from a target and a key, remembered per target (at most ``limit`` keys
    each; the target's table is emptied when it is full).

    >>> memo: TargetMemo[str, int] = TargetMemo()
    >>> t = PhysicalTarget.from_xla("s8[4]{0}")
    >>> memo.get(t, "n", lambda: 4) + memo.get(t, "n", lambda: 0)
    8
    """

    __slots__ = ("_limit", "_tables")

    def __init__(self, limit: int = 16) -> None:
        self._limit = limit
        self._tables: weakref.WeakKeyDictionary[PhysicalTarget, dict[K, V]] = weakref.WeakKeyDictionary()

    def get(self, target: PhysicalTarget, key: K, make: Callable[[], V]) -> V:
        """The value remembered for ``target`` and ``key``, else ``make()`` remembered."""
        table = self._tables.get(target)
        if table is None:
            table = self._tables[target] = {}
        elif key in table:
            return table[key]
        value = make()
        if len(table) >= self._limit:
            table.clear()
        table[key] = value
        return value
