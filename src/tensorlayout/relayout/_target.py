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

The CuTe side plugs in through :meth:`PhysicalTarget.from_offsets` (any layout) or
:meth:`PhysicalTarget.from_digits` (hierarchical per-dim modes, fast).

>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> t.logical_shape, t.physical_elements, t.tile_elements, t.offsets.reshape(3, 5)[2].tolist()
((3, 5), 24, 4, [12, 13, 16, 17, 20])
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorlayout.errors import LayoutError, TensorLayoutError, UnsupportedError
from tensorlayout.xla.layout import COMBINE_DIMENSION
from tensorlayout.xla.shape import Shape, parse_shape
from tensorlayout.xla.tiling import allocated_elements, linear_indices, tiling_plan

__all__ = ["Digit", "PhysicalTarget", "as_target"]


@dataclass(frozen=True, slots=True)
class Digit:
    """One mixed-radix digit of a logical coordinate: ``size`` values, physical ``stride``.

    For a logical dim with digits ``d0, d1, …, dk`` (major first) the coordinate is
    ``x = Σ v_j · block_j`` with ``block_j = size_{j+1} ⋯ size_k``; the top digit ``d0``
    may cover more than the dim (padding) and the lower digits are exact.
    """

    size: int
    stride: int


@dataclass(frozen=True, eq=False)
class PhysicalTarget:
    """Where each logical element of an array lives in a 1-D physical buffer.

    ``logical_shape``: the array's dims; ``physical_elements``: element slots of the buffer
    (padding included); ``element_bits``: bits per element as stored (0 = unknown, any
    numpy dtype accepted); ``packed_bits``: bits per element in the buffer when sub-byte
    elements are packed (``E(4)``: 4), else 0; ``signed``: sign-extend unpacked sub-byte
    values; ``digits``: optional strided description (see the module doc); ``tile_elements``:
    slots per tile (tile index = offset // tile_elements) for pictures; ``tile_ids``: an
    explicit tile index per logical element (C order) that overrides it;
    ``subtile_elements``: slots per innermost sub-tile (the red boxes of the seed's Figure 2);
    ``name``: text.

    >>> PhysicalTarget.from_offsets((2, 2), [0, 2, 1, 3]).digits is None
    True
    """

    logical_shape: tuple[int, ...]
    physical_elements: int
    element_bits: int = 0
    packed_bits: int = 0
    signed: bool = False
    digits: tuple[tuple[Digit, ...], ...] | None = None
    leading_digits: tuple[tuple[Digit, ...], ...] = ()
    tile_elements: int | None = None
    tile_ids: np.ndarray | None = None
    subtile_elements: int | None = None
    name: str = ""
    _offsets_fn: Callable[[], np.ndarray] | None = field(default=None, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)  # offsets, copy plans

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def from_xla(cls, shape: Shape | str) -> PhysicalTarget:
        """The target of an XLA array shape with a layout (text or :class:`Shape`).

        >>> PhysicalTarget.from_xla("bf16[16,256]{1,0:T(8,128)(2,1)}").digits[0]
        (Digit(size=2, stride=2048), Digit(size=4, stride=256), Digit(size=2, stride=1))
        """
        if isinstance(shape, str):
            shape = parse_shape(shape)
        if not isinstance(shape, Shape):
            raise LayoutError(f"expected an XLA shape, but got {type(shape).__name__}")
        if not shape.is_array:
            raise UnsupportedError(f"relayout needs an array shape, but got {shape.kind} {shape}")
        plan = tiling_plan(shape)  # validates: array, layout, static dims
        layout = shape.layout
        assert layout is not None
        elements = allocated_elements(shape)
        align = layout.tail_padding_alignment_in_elements
        if layout.tiles and align > 1:
            elements = -(-elements // align) * align
        et = shape.element_type
        packed = layout.element_size_in_bits if et.is_sub_byte else 0
        if packed and packed != et.bits:
            raise UnsupportedError(f"{shape.to_string(True)}: E({packed}) for {et.name} "
                                   f"({et.bits} bits) is not supported")
        sizes = [int(np.prod([t for t in tile.dims if t != COMBINE_DIMENSION], dtype=np.int64))
                 for tile in layout.tiles]
        tile_elements = sizes[0] if sizes else None
        subtile = sizes[-1] if len(sizes) > 1 and sizes[-1] > 1 else None
        both = _xla_digits(shape, plan)
        return cls(
            logical_shape=tuple(shape.dimensions),
            physical_elements=elements,
            element_bits=8 * et.byte_width,
            packed_bits=packed,
            signed=et.kind == "signed",
            digits=None if both is None else both[0],
            leading_digits=() if both is None else both[1],
            tile_elements=tile_elements,
            subtile_elements=subtile,
            name=shape.to_string(True),
            _offsets_fn=lambda: linear_indices(shape),
        )

    @classmethod
    def from_offsets(cls, logical_shape: Sequence[int], offsets: np.ndarray | Sequence[int], *,
                     physical_elements: int | None = None, element_bits: int = 0,
                     tile_elements: int | None = None, tile_ids: np.ndarray | None = None,
                     subtile_elements: int | None = None, name: str = "") -> PhysicalTarget:
        """A target from explicit offsets (logical C order) — the hook for CuTe/TLA layouts.

        ``physical_elements`` defaults to ``max(offsets) + 1``. Offsets must be distinct and
        non-negative (a relayout target is injective).

        >>> PhysicalTarget.from_offsets((2, 3), [0, 2, 4, 1, 3, 5]).physical_elements
        6
        """
        shape = tuple(int(d) for d in logical_shape)
        offs = np.asarray(offsets, dtype=np.int64).reshape(-1)
        n = int(np.prod(shape, dtype=np.int64))
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
        return cls(shape, int(physical_elements), element_bits, tile_elements=tile_elements,
                   tile_ids=ids, subtile_elements=subtile_elements, name=name,
                   _offsets_fn=lambda: offs)

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
        dd = tuple(tuple(Digit(*d) if not isinstance(d, Digit) else d for d in ds) for ds in digits)
        for n, ds in zip(shape, dd, strict=True):
            if not ds or any(d.size < 1 or d.stride < 0 for d in ds):
                raise LayoutError(f"bad digits {ds}: need at least one, sizes >= 1, strides >= 0")
            if int(np.prod([d.size for d in ds], dtype=np.int64)) < n:
                raise LayoutError(f"digits {ds} cover fewer than the {n} elements of the dim")
        if physical_elements is None:
            physical_elements = 1 + sum((d.size - 1) * d.stride for ds in dd for d in ds)
        target = cls(shape, int(physical_elements), element_bits, digits=dd,
                     tile_elements=tile_elements, name=name)
        object.__setattr__(target, "_offsets_fn", lambda: _digit_offsets(shape, dd))
        return target

    # -- derived --------------------------------------------------------------------------
    @property
    def offsets(self) -> np.ndarray:
        """Physical element offset of every logical element, logical C order (int64, cached)."""
        if "offsets" not in self._cache:
            if self._offsets_fn is None:
                raise LayoutError("target has neither offsets nor digits")
            self._cache["offsets"] = np.asarray(self._offsets_fn(), dtype=np.int64).reshape(-1)
        offsets: np.ndarray = self._cache["offsets"]
        return offsets

    @property
    def size(self) -> int:
        """Number of logical elements."""
        return int(np.prod(self.logical_shape, dtype=np.int64))

    @property
    def buffer_bytes(self) -> int | None:
        """Bytes of the physical buffer when the element width is known."""
        if self.packed_bits:
            return (self.physical_elements * self.packed_bits + 7) // 8
        return self.physical_elements * self.element_bits // 8 if self.element_bits else None

    def __str__(self) -> str:
        return self.name or f"target{list(self.logical_shape)} in {self.physical_elements} slots"


def as_target(obj: object) -> PhysicalTarget:
    """Accept a :class:`PhysicalTarget`, an XLA :class:`Shape` or shape text, a CuTe or TLA layout.

    >>> as_target("s8[3]{0}").physical_elements
    3
    """
    if isinstance(obj, PhysicalTarget):
        return obj
    if isinstance(obj, (Shape, str)):
        return PhysicalTarget.from_xla(obj)
    from tensorlayout.relayout._cute import to_target_or_none  # CuTe / TLA layouts
    cute_target = to_target_or_none(obj)
    if cute_target is not None:
        return cute_target
    to_target = getattr(obj, "to_physical_target", None)
    if callable(to_target):
        target = to_target()
        if isinstance(target, PhysicalTarget):
            return target
    raise UnsupportedError(f"expected a PhysicalTarget, an XLA shape or shape text, "
                           f"but got {type(obj).__name__}")


def _digit_offsets(shape: tuple[int, ...], digits: tuple[tuple[Digit, ...], ...]) -> np.ndarray:
    out = np.zeros(shape, dtype=np.int64)
    for axis, (n, ds) in enumerate(zip(shape, digits, strict=True)):
        x = np.arange(n, dtype=np.int64)
        off = np.zeros(n, dtype=np.int64)
        for j in range(len(ds) - 1, -1, -1):
            x, v = np.divmod(x, ds[j].size) if j else (x, x)
            off += v * ds[j].stride
        view = [1] * len(shape)
        view[axis] = n
        out += off.reshape(view)
    return out.reshape(-1)


# -- XLA tiling → digits ------------------------------------------------------------------
# A node is one dim of the tiled shape: (logical dim, block, size, top). Its index is
# x // block for the top node of a logical dim (padded), else (x // block) % size.
_Node = tuple[int, int, int, bool]
_DigitsPair = tuple[tuple[tuple[Digit, ...], ...], tuple[tuple[Digit, ...], ...]]


def _xla_digits(shape: Shape, plan: object) -> _DigitsPair | None:
    """Digits of an XLA tiled layout, or None when the layout has no strided description."""
    try:
        return _xla_digits_or_raise(shape, plan)
    except (_NoDigits, TensorLayoutError):
        return None


class _NoDigits(Exception):
    pass


def _xla_digits_or_raise(shape: Shape, plan: object) -> _DigitsPair | None:
    from tensorlayout.xla.tiling import TilingPlan

    assert isinstance(plan, TilingPlan)
    if shape.elements_in() == 0:
        return None
    rank = shape.rank
    nodes: list[_Node] = [(d, 1, shape.dimensions[d], True) for d in plan.physical_order]
    pseudo = 0  # missing major dims of a long tile: logical dims of size 1, numbered -1, -2 …
    for step in plan.steps:
        tile = step.tile
        if COMBINE_DIMENSION in tile:
            raise _NoDigits
        while len(nodes) < len(tile):
            pseudo += 1
            nodes.insert(0, (-pseudo, 1, 1, True))
        head, tail = nodes[: len(nodes) - len(tile)], nodes[len(nodes) - len(tile):]
        tops: list[_Node] = []
        subs: list[_Node] = []
        for (ld, block, size, top), t in zip(tail, tile, strict=True):
            if top:
                tops.append((ld, block * t, -(-size // t), True))
            elif size % t:
                raise _NoDigits  # padding inside a lower digit: not a mixed radix any more
            else:
                tops.append((ld, block * t, size // t, False))
            subs.append((ld, block, t, False))
        nodes = head + tops + subs
        if tuple(n[2] for n in nodes) != step.output_dims:
            raise _NoDigits
    sizes = [n[2] for n in nodes]
    strides = [0] * len(nodes)
    acc = 1
    for k in range(len(nodes) - 1, -1, -1):
        strides[k] = acc
        acc *= sizes[k]
    per_dim: dict[int, list[tuple[int, int, int, bool]]] = {}
    for (ld, block, size, top), stride in zip(nodes, strides, strict=True):
        if size == 1 and not top:
            continue
        per_dim.setdefault(ld, []).append((block, size, stride, top))
    # Pseudo dims (-1, -2, …) are logical dims of size 1 the engine prepends to the array.
    out: list[tuple[Digit, ...]] = []
    for d in [*range(-pseudo, 0), *range(rank)]:
        ds = sorted(per_dim.get(d, []), key=lambda n: (-n[0], not n[3]))
        if not ds or not ds[0][3]:
            raise _NoDigits
        for (b_hi, _, _, _), (b_lo, s_lo, _, _) in itertools.pairwise(ds):
            if b_hi != b_lo * s_lo:
                raise _NoDigits
        if ds[-1][0] != 1:
            raise _NoDigits
        out.append(tuple(Digit(s, st) for _, s, st, _ in ds))
    return tuple(out[pseudo:]), tuple(out[:pseudo])
