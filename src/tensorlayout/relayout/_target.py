"""``PhysicalTarget``: the small protocol the relayout engine and the pictures work on.

A target says, for every logical element of an array, at which element offset of a 1-D
physical buffer it lives. Two descriptions can back it:

* ``offsets`` — the offset of every logical element in logical C order (always available;
  computed lazily, since it is large);
* ``digits`` — the fast, strided description: per logical dim, its coordinate written in a
  mixed radix (major digit first) and the physical stride of each digit. Every XLA tiled
  layout without ``*`` whose later tiles divide the earlier ones has one; so do CuTe layouts
  whose modes are per logical dim. The engine turns digits into numpy strided views and
  copies, instead of gathering with ``offsets``.

A target is a thin wrapper: its one field is the layout's form, a core layout (every notation
reaches it through :func:`tensorlayout.lowering.lower`, :meth:`PhysicalTarget.from_layout`) or
a :class:`OffsetTable` table of explicit offsets (:meth:`PhysicalTarget.from_offsets`); every
other attribute is read off that form, and what the engine derives from it (digits, offsets,
copy plan) is a cached property.

>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> t.logical_shape, t.physical_elements, t.tile_elements, t.offsets.reshape(3, 5)[2].tolist()
((3, 5), 24, 4, [12, 13, 16, 17, 20])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from tensorlayout.core.intmath import prod
from tensorlayout.core.layout import CoreLayout, Digit
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.lowering import lower
from tensorlayout.relayout._plan import Plan, build_plan, has_views
from tensorlayout.xla.shape import Shape, parse_shape

__all__ = ["Digit", "OffsetTable", "PhysicalTarget", "SmallCalls"]


class SmallCalls(list[object]):
    """A target's remembered calls kept in the C kernel (see ``relayout._call``): a pickled or
    deep-copied target starts without them (the kernel's objects do not pickle).

    >>> import pickle
    >>> pickle.loads(pickle.dumps(SmallCalls([1])))
    []
    """

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return SmallCalls, ()


@dataclass(frozen=True, eq=False, slots=True)
class OffsetTable:
    """A layout given by the offset of every logical element (C order), for layouts no notation
    describes; it answers the attributes a target reads, under the core's names.

    >>> OffsetTable((2,), np.array([1, 0]), 2).offsets().tolist()
    [1, 0]
    """

    shape: tuple[int, ...]
    table: np.ndarray
    slots: int
    element_bits: int = 0
    tile_elements: int | None = None
    tile_ids: np.ndarray | None = None
    subtile_elements: int | None = None
    name: str = ""
    packed_bits: int = 0
    signed: bool = False

    def offsets(self) -> np.ndarray:
        """The offsets, logical C order."""
        return self.table


@dataclass(frozen=True, eq=False)
class PhysicalTarget:
    """Where each logical element of an array lives in a 1-D physical buffer: a thin wrapper
    over the layout's ``form`` (a :class:`~tensorlayout.core.layout.CoreLayout` or a
    :class:`OffsetTable` table) and a ``name``.

    Read off the form: ``logical_shape``; ``physical_elements`` (the form's slots, padding
    included); ``element_bits`` (0 = unknown, any numpy dtype accepted); ``packed_bits``
    (bits per element when sub-byte elements are packed, ``E(4)``: 4, else 0); ``signed``;
    ``tile_elements`` (slots per tile, tile index = offset // tile_elements, for pictures);
    ``tile_ids`` (an explicit tile per logical element, C order); ``subtile_elements``.
    Derived and cached: ``digits`` (the strided description, see the module doc),
    ``leading_digits``, ``offsets``, ``plan`` and ``fast_path``.

    >>> PhysicalTarget.from_offsets((2, 2), [0, 2, 1, 3]).digits is None
    True
    """

    form: CoreLayout | OffsetTable = field(repr=False)
    name: str = ""
    # Caches, fresh in every copy (dataclasses.replace must not carry plans to another target):
    _calls: dict[tuple | None, Any] = field(default_factory=dict, init=False, repr=False)  # see _call
    _small_calls: SmallCalls = field(default_factory=lambda: SmallCalls(), init=False, repr=False)
    #: per source target: its one-pass relayouts into this one (``_call.Direct``)
    _direct: dict[Any, Any] = field(default_factory=dict, init=False, repr=False)

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def from_layout(cls, layout: CoreLayout) -> PhysicalTarget:
        """The target of a core layout: strided digits when each dim's digits form a mixed
        radix, else its offsets.

        >>> from tensorlayout.lowering import lower
        >>> PhysicalTarget.from_layout(lower("f32[3,5]{1,0:T(2,2)}")).physical_elements
        24
        """
        return cls(layout, layout.name)

    @classmethod
    def from_xla(cls, shape: Shape | str) -> PhysicalTarget:
        """The target of an XLA array shape with a layout (text or :class:`Shape`).

        >>> t = PhysicalTarget.from_xla("bf16[16,256]{1,0:T(8,128)(2,1)}")
        >>> [(d.extent, d.stride) for d in t.digits[0]]
        [(2, 2048), (4, 256), (2, 1)]
        """
        if isinstance(shape, str):
            shape = parse_shape(shape)
        if not isinstance(shape, Shape):
            raise LayoutError(f"expected an XLA shape, but got {type(shape).__name__}")
        if not shape.is_array:
            raise UnsupportedError(f"relayout needs an array shape, but got {shape.kind} {shape}")
        return cls.from_layout(lower(shape))

    @classmethod
    def from_offsets(cls, logical_shape: Sequence[int], offsets: np.ndarray | Sequence[int], *,
                     physical_elements: int | None = None, element_bits: int = 0,
                     tile_elements: int | None = None, tile_ids: np.ndarray | None = None,
                     subtile_elements: int | None = None, name: str = "") -> PhysicalTarget:
        """A target from explicit offsets (logical C order), for layouts no notation describes.

        ``physical_elements`` defaults to ``max(offsets) + 1``. Offsets must be distinct and
        non-negative (a relayout target is injective).

        >>> PhysicalTarget.from_offsets((2, 3), [0, 2, 4, 1, 3, 5]).physical_elements
        6
        """
        shape = tuple(int(d) for d in logical_shape)
        offs = np.asarray(offsets, dtype=np.int64).reshape(-1)
        n = prod(shape)
        if offs.size != n:
            raise LayoutError(f"expected {n} offsets for logical shape {shape}, but got {offs.size}")
        if n and offs.min() < 0:
            raise LayoutError("offsets must be non-negative")
        size = int(offs.max()) + 1 if n else 0
        if physical_elements is None:
            physical_elements = size
        elif physical_elements < size:
            raise LayoutError(f"offset {size - 1} does not fit in {physical_elements} physical elements")
        if n and np.unique(offs).size != n:
            raise LayoutError("offsets are not distinct: two logical elements share a physical slot")
        ids = None if tile_ids is None else np.asarray(tile_ids, dtype=np.int64).reshape(-1)
        if ids is not None and ids.size != n:
            raise LayoutError(f"expected {n} tile ids, but got {ids.size}")
        offs.setflags(write=False)
        return cls(OffsetTable(shape, offs, int(physical_elements), element_bits, tile_elements, ids,
                          subtile_elements, name), name)

    @classmethod
    def from_digits(cls, logical_shape: Sequence[int],
                    digits: Sequence[Sequence[tuple[int, int] | Digit]], *,
                    physical_elements: int | None = None, element_bits: int = 0,
                    tile_elements: int | None = None, name: str = "") -> PhysicalTarget:
        """A strided target: per logical dim, ``(size, stride)`` digits, major first.

        This is a CuTe layout whose mode ``d`` has shape ``(size_k, …, size_0)`` and stride
        ``(stride_k, …, stride_0)`` (CuTe lists minor first); the top digit may overhang the
        dim (padding). The caller guarantees distinct offsets.

        >>> t = PhysicalTarget.from_digits((4, 8), [[(2, 8), (2, 4)], [(2, 16), (4, 1)]])
        >>> t.offsets.reshape(4, 8)[1].tolist()
        [4, 5, 6, 7, 20, 21, 22, 23]
        """
        shape = tuple(int(d) for d in logical_shape)
        if len(digits) != len(shape):
            raise LayoutError(f"expected digits for {len(shape)} dims, but got {len(digits)}")
        modes = []
        for n, ds in zip(shape, digits, strict=True):
            pairs = [(d.extent, d.stride) if isinstance(d, Digit) else (int(d[0]), int(d[1])) for d in ds]
            if not pairs or any(s < 1 or st < 0 for s, st in pairs):
                raise LayoutError(f"bad digits {pairs}: need at least one, sizes >= 1, strides >= 0")
            if prod(s for s, _ in pairs) < n:
                raise LayoutError(f"digits {pairs} cover fewer than the {n} elements of the dim")
            modes.append(pairs[::-1])  # given major first; the core lists a dim's modes minor first
        core = CoreLayout.from_modes(shape, modes, physical_elements, element_bits=element_bits,
                                     tile_elements=tile_elements, name=name)
        return cls.from_layout(core)

    # -- read off the form ------------------------------------------------------------------
    @property
    def layout(self) -> CoreLayout | None:
        """The core layout, None for explicit offsets."""
        return self.form if isinstance(self.form, CoreLayout) else None

    @property
    def logical_shape(self) -> tuple[int, ...]:
        """The array's dims."""
        return self.form.shape

    @property
    def physical_elements(self) -> int:
        """Element slots of the buffer, padding included (the form's ``slots``)."""
        return self.form.slots

    @property
    def element_bits(self) -> int:
        """Bits per element as stored (0: unknown)."""
        return self.form.element_bits

    @property
    def packed_bits(self) -> int:
        """Bits per element when sub-byte elements are packed, else 0."""
        return self.form.packed_bits

    @property
    def signed(self) -> bool:
        """Unpacked sub-byte values sign-extend."""
        return self.form.signed

    @property
    def tile_elements(self) -> int | None:
        """Slots per tile when each tile is one run (pictures)."""
        return self.form.tile_elements

    @property
    def subtile_elements(self) -> int | None:
        """Slots per innermost sub-tile (the red boxes of the seed's Figure 2)."""
        return self.form.subtile_elements

    @property
    def tile_ids(self) -> np.ndarray | None:
        """An explicit tile per logical element (C order), for listed targets that give one."""
        return self.form.tile_ids if isinstance(self.form, OffsetTable) else None

    # -- derived, cached ------------------------------------------------------------------
    @cached_property
    def _radix(self) -> tuple[tuple[tuple[Digit, ...], ...], tuple[tuple[Digit, ...], ...]] | None:
        lay = self.layout
        if lay is None or not lay.elements or lay.post is not None or lay.base:
            return None
        return lay.per_dim_digits()

    @property
    def digits(self) -> tuple[tuple[Digit, ...], ...] | None:
        """Per logical dim its digits as a mixed radix, major first; None without one."""
        return None if self._radix is None else self._radix[0]

    @property
    def leading_digits(self) -> tuple[tuple[Digit, ...], ...]:
        """The same for the size-1 dims a tile prepends."""
        return () if self._radix is None else self._radix[1]

    @cached_property
    def offsets(self) -> np.ndarray:
        """Physical element offset of every logical element, logical C order (int64)."""
        return np.asarray(self.form.offsets(), dtype=np.int64).reshape(-1)

    @cached_property
    def plan(self) -> Plan:
        """The copy plan of a strided target (see ``_plan``)."""
        return build_plan(self)

    @cached_property
    def fast_path(self) -> bool:
        """The target copies through strided views (else a gather with offsets)."""
        return self.digits is not None and self.size > 0 and has_views(self)

    @property
    def size(self) -> int:
        """Number of logical elements."""
        return prod(self.logical_shape)

    @property
    def buffer_bytes(self) -> int | None:
        """Bytes of the physical buffer when the element width is known."""
        if self.packed_bits:
            return (self.physical_elements * self.packed_bits + 7) // 8
        return self.physical_elements * self.element_bits // 8 if self.element_bits else None

    def __str__(self) -> str:
        return self.name or f"target{list(self.logical_shape)} in {self.physical_elements} slots"
