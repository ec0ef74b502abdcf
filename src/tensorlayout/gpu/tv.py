"""Thread-value (TV) layouts: ``(thread, value) -> (m, n)`` of an ``M x N`` tile, as CuTe uses them.

A TV layout is a rank-2 CuTe layout whose mode 0 is the thread and mode 1 the value; its
result is the column-major index ``m + M·n`` of an element of the tile (CuTe's convention for
``MMA_Traits::CLayout`` and ``TiledMMA::get_layoutC_TV``).

>>> tv = TVLayout.parse("((4,8),(2,2)):((32,1),(16,8))", (16, 8))
>>> tv.coord(5, 3), tv.thread_of(9, 3), tv.value_of(9, 3)
((9, 3), 5, 3)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tensorlayout.cute import Layout, composition, make_layout, right_inverse, size
from tensorlayout.cute.int_tuple import is_int
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.cxx_names import plain_layout
from tensorlayout.lowering import lower

__all__ = ["TVLayout", "check_tile", "format_owners", "offset_range"]

_SCAN_CHUNK = 1 << 18  # (thread, value) pairs evaluated at a time when looking for a holder


def offset_range(layout: Layout) -> tuple[int, int]:
    """The smallest and largest offset ``layout`` reaches, from its modes (each mode at its
    first or last index), without enumerating it.

    >>> offset_range(Layout((4, (2, 3)), (2, (-1, 8))))
    (-1, 22)
    """
    low = high = 0
    for extent, stride in layout.flat_modes():
        reach = (extent - 1) * stride if extent > 0 else 0
        low, high = low + min(0, reach), high + max(0, reach)
    return low, high


def check_tile(tile: tuple[int, ...]) -> tuple[int, int]:
    """``tile`` as ``(M, N)``, two positive ints, else a :class:`LayoutError`."""
    if (not isinstance(tile, tuple) or len(tile) != 2
            or not all(is_int(x) and x > 0 for x in tile)):
        raise LayoutError(f"a TV layout's tile must be two positive ints (M, N), got {tile!r}")
    return tile[0], tile[1]


@dataclass(frozen=True)
class TVLayout:
    """A CuTe TV layout ``(thread, value) -> m + M·n`` over the ``tile = (M, N)``.

    >>> TVLayout.parse("(32,2):(2,1)", (8, 8)).table()[3].tolist()
    [6, 7]
    """

    layout: Layout
    tile: tuple[int, int]
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.layout, Layout) or self.layout.rank() != 2:
            raise LayoutError(f"a TV layout is a rank-2 CuTe layout (thread, value), got {self.layout}")
        m, n = check_tile(self.tile)
        low, high = offset_range(self.layout)
        if self.layout.size() and (low < 0 or high >= m * n):
            raise LayoutError(f"TV layout {self.layout} reaches index {high if low >= 0 else low}, "
                              f"outside the {m}x{n} tile (indices 0..{m * n - 1})")

    @staticmethod
    def parse(text: str, tile: tuple[int, int], name: str = "") -> TVLayout:
        """Read CuTe's printed ``(T...),(V...)`` layout text over ``tile``."""
        return TVLayout(Layout.parse(text), tile, name)

    def __str__(self) -> str:
        return str(self.layout)

    @property
    def num_threads(self) -> int:
        return int(size(self.layout[0]))

    @property
    def num_values(self) -> int:
        return int(size(self.layout[1]))

    def _check_tv(self, t: int, v: int) -> None:
        if not (is_int(t) and is_int(v)):
            raise LayoutError(f"a (thread, value) pair is two ints, got ({t!r}, {v!r})")
        if not (0 <= t < self.num_threads and 0 <= v < self.num_values):
            raise LayoutError(f"(thread {t}, value {v}) is outside {self.num_threads} threads x "
                              f"{self.num_values} values of {self.layout}")

    @cached_property
    def _fast(self) -> Layout:
        """The layout with plain ints, for evaluation (static ``_N`` ints take the slow path)."""
        return plain_layout(self.layout)

    def index(self, t: int, v: int) -> int:
        """The column-major tile index ``m + M·n`` of thread ``t``'s value ``v``."""
        self._check_tv(t, v)
        return int(self._fast(t, v))

    def coord(self, t: int, v: int) -> tuple[int, int]:
        """The ``(m, n)`` tile coordinate of thread ``t``'s value ``v``."""
        idx = self.index(t, v)
        return idx % self.tile[0], idx // self.tile[0]

    def table(self) -> np.ndarray:
        """``table[t, v]``: the tile index of every (thread, value), shape ``(threads, values)``."""
        return self.layout.offsets().reshape(self.num_values, self.num_threads).T

    def owners(self, m: int, n: int) -> list[tuple[int, int]]:
        """Every ``(thread, value)`` that holds element ``(m, n)``, by ``t + T·v``."""
        self._check_mn(m, n)
        return list(self._holders(m + self.tile[0] * n))

    def _holders(self, index: int) -> Iterator[tuple[int, int]]:
        """The ``(thread, value)`` pairs at tile ``index``, by ``t + T·v``, found a chunk of
        pairs at a time (a tiled SS MMA holds 10^8 of them; the first is usually near)."""
        core, threads, total = lower(self.layout), self.num_threads, int(self.layout.size())
        for start in range(0, total, _SCAN_CHUNK):
            flat = np.arange(start, min(total, start + _SCAN_CHUNK), dtype=np.int64)
            rows = np.stack([flat % threads, flat // threads], axis=1)
            for i in flat[core.offsets_at(rows) == index]:
                yield int(i) % threads, int(i) // threads

    def _check_mn(self, m: int, n: int) -> None:
        if not (is_int(m) and is_int(n)):
            raise LayoutError(f"a tile coordinate (m, n) is two ints, got ({m!r}, {n!r})")
        if not (0 <= m < self.tile[0] and 0 <= n < self.tile[1]):
            raise LayoutError(f"({m}, {n}) is outside the {self.tile[0]}x{self.tile[1]} tile")

    def _owner(self, m: int, n: int) -> tuple[int, int]:
        self._check_mn(m, n)
        found = next(self._holders(m + self.tile[0] * n), None)
        if found is None:
            raise LayoutError(f"no (thread, value) of {self.layout} holds element ({m}, {n})")
        return found

    def thread_of(self, m: int, n: int) -> int:
        """The thread holding ``(m, n)`` (the first by ``t + T·v`` when several do, as CuTe's
        ``right_inverse`` picks thread 0 of a broadcast)."""
        return self._owner(m, n)[0]

    def value_of(self, m: int, n: int) -> int:
        """The value index of ``(m, n)`` in the thread :meth:`thread_of` names."""
        return self._owner(m, n)[1]

    def ownership(self) -> tuple[np.ndarray, np.ndarray]:
        """``(thread[M, N], value[M, N])``: the first owner of each element, ``-1`` where none."""
        m, n = self.tile
        flat = self.layout.offsets()
        first = np.full(m * n, -1, dtype=np.int64)
        order = np.arange(flat.size, dtype=np.int64)[::-1]
        first[flat[::-1]] = order  # the last write is the smallest t + T·v
        thr = np.where(first >= 0, first % self.num_threads, -1).reshape(n, m).T
        val = np.where(first >= 0, first // self.num_threads, -1).reshape(n, m).T
        return thr, val

    def counts(self) -> np.ndarray:
        """``counts[m, n]``: how many (thread, value) pairs hold each element."""
        m, n = self.tile
        return np.bincount(self.layout.offsets(), minlength=m * n).reshape(n, m).T

    def is_bijective(self) -> bool:
        """Whether every element of the tile is held by exactly one (thread, value)."""
        return bool((self.counts() == 1).all())

    def inverse(self) -> Layout:
        """CuTe's ``right_inverse(tv).with_shape(M, N)``: ``(m, n) -> t + T·v`` (bijective only).

        >>> str(TVLayout.parse("(4,2):(2,1)", (2, 4)).inverse())
        '(2,4):(4,1)'
        """
        if not self.is_bijective():
            raise LayoutError(f"{self.layout} does not hold each element of the {self.tile[0]}x"
                              f"{self.tile[1]} tile exactly once, so it has no inverse")
        return composition(right_inverse(self.layout), make_layout(self.tile))


def format_owners(tv: TVLayout) -> str:
    """The ``M x N`` tile as text, each element ``T<thread>V<value>`` of its first holder (``.``
    where none), rows and columns numbered: the ownership table CuTe's ``print_latex`` draws.

    >>> print(format_owners(TVLayout.parse("(4,2):(2,1)", (2, 4))))
           0    1    2    3
     0  T0V0 T1V0 T2V0 T3V0
     1  T0V1 T1V1 T2V1 T3V1
    """
    if not isinstance(tv, TVLayout):
        raise LayoutError(f"format_owners takes a TVLayout, got {type(tv).__name__}")
    thr, val = tv.ownership()
    cells = [[f"T{t}V{v}" if t >= 0 else "." for t, v in zip(tr, vr)] for tr, vr in zip(thr, val)]
    width = max(len(c) for row in cells for c in row)
    lead = len(str(tv.tile[0] - 1)) + 1
    head = " " * lead + " " + " ".join(f"{n:>{width}}" for n in range(tv.tile[1]))
    rows = [f"{m:>{lead}} " + " ".join(f"{c:>{width}}" for c in row) for m, row in enumerate(cells)]
    return "\n".join([head, *rows])
