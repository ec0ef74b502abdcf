"""Checked relayout calls, kept on the target so that a repeated call costs little more than
its copy.

``to_physical`` and ``from_physical`` run their checks (shape, dtype width, pad value,
buffer size, thread cap) once per target and key, and remember the checked call in the
target's ``_calls`` under that key: the array's dtype, strides and shape, the thread cap,
and the pad value (``to_physical``; plain ints only, as ``-0.0 == 0`` but fills
differently) or the ``out`` array's strides (``from_physical``). A key fixes every check
and the copy plan, so a call with an equal key reuses the :class:`ToPhysical` /
:class:`FromPhysical` made for the first; what a key does not fix (``out``'s size, dtype
and flags, alignment, overlap) is checked on every call. A call whose copy is one kernel
call is also kept in the kernel, in the target's ``_small_calls`` (``_copy.small_call``):
the public functions first ask the kernel, which runs a repeated call in C — the lookup, the
checks, the allocation (through ``_copy.allocate``) and the copy — or hands it to this path.

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget, SmallCalls
>>> t = PhysicalTarget.from_xla("f32[3,5]{1,0:T(2,2)}")
>>> call = ToPhysical(t, np.dtype(np.float32), t.physical_elements, -1, None)
>>> call(np.arange(15, dtype=np.float32).reshape(3, 5), None)[:8].tolist()
[0.0, 1.0, 5.0, 6.0, 2.0, 3.0, 7.0, 8.0]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorlayout.errors import LayoutError
from tensorlayout.relayout._buffers import allocate, out_buffer, out_view
from tensorlayout.relayout._copy import Prepared, PreparedDirect, copy_in, copy_out
from tensorlayout.relayout._direct import is_direct
from tensorlayout.relayout._pack_numpy import pack, unpack
from tensorlayout.relayout._pack_path import from_physical_packed, to_physical_packed
from tensorlayout.relayout._target import PhysicalTarget, SmallCalls

__all__ = ["Direct", "DirectCall", "FromPhysical", "ToPhysical", "apart", "direct_pair", "remember"]

MAX_CALLS = 64  # remembered calls per target (cleared when full)


def apart(x: np.ndarray, y: np.ndarray) -> bool:
    """``x`` and ``y`` share no memory: two arrays owning their data are apart, else ask numpy."""
    return (x is not y and x.flags.owndata and y.flags.owndata) or not np.may_share_memory(x, y)


def remember(t: PhysicalTarget | Direct, key: tuple | None, call: ToPhysical | FromPhysical | DirectCall,
             small: object | None = None) -> None:
    """Keep ``call`` under ``key`` (None: not at all), and its kernel ``small`` call if any."""
    if key is not None:
        if len(t._calls) >= MAX_CALLS:
            t._calls.clear()
            t._small_calls.clear()
        t._calls[key] = call
        if small is not None:
            t._small_calls.append(small)


@dataclass(frozen=True, slots=True, eq=False)
class ToPhysical:
    """A checked ``to_physical`` under ``target``: buffer of ``elements`` ``dtype`` entries,
    padding ``pad``; ``copy``: the strided copy (None: packed or offsets targets)."""

    target: PhysicalTarget
    dtype: np.dtype
    elements: int
    pad: int | float | complex
    threads: int | None
    copy: Prepared | None = None

    def __call__(self, a: np.ndarray, out: np.ndarray | None, buf: np.ndarray | None = None) -> np.ndarray:
        """The buffer of ``a``: ``out`` if given; ``buf``: ``out`` already checked, or new."""
        if buf is None:
            buf = out_buffer(out, self.elements, self.dtype, self.target)
        copy = self.copy
        if copy is not None and (out is None or apart(a, buf)):
            copy.run(a, buf, self.pad, self.threads)
        elif self.target.packed_bits:
            if to_physical_packed(a, self.target, self.pad, buf, self.threads) is None:
                assert isinstance(self.pad, int)  # checked_pad: a packed pad value is an int
                pack(a, self.target, self.pad, buf)
        else:  # offsets targets, or out overlapping a
            copy_in(a, buf, self.target, self.pad, self.threads)
        return buf if out is None else out


@dataclass(frozen=True, slots=True, eq=False)
class FromPhysical:
    """A checked ``from_physical`` under ``target`` into a ``dtype`` array; ``flatten``: the
    buffer is first made 1-D and contiguous; ``copy``: the strided copy (None: packed or
    offsets targets)."""

    target: PhysicalTarget
    dtype: np.dtype
    flatten: bool
    threads: int | None
    copy: Prepared | None = None

    def __call__(self, b: np.ndarray, out: np.ndarray | None, result: np.ndarray | None = None
                 ) -> np.ndarray:
        """The logical array in ``b``: ``out`` if given; ``result``: ``out`` already checked, or new."""
        if self.flatten:
            b = np.ascontiguousarray(b).reshape(-1)
        if result is None:
            result = self.result(out)
        copy = self.copy
        if copy is not None and (out is None or apart(result, b)):
            copy.run(result, b, None, self.threads)
        elif self.target.packed_bits:
            if from_physical_packed(b, self.target, result, self.threads) is None:
                copy_out(unpack(b, self.target), result, self.target, self.threads)
        else:  # offsets targets, or out overlapping b
            copy_out(b, result, self.target, self.threads)
        return result if out is None or isinstance(out, np.ndarray) else out  # the caller's array

    def result(self, out: object) -> np.ndarray:
        """``out`` (a view of it, if another framework's array: ``out_view``), checked, or a new
        array for the result."""
        t = self.target
        if out is None:
            return allocate(t.logical_shape, self.dtype, t)
        if not isinstance(out, np.ndarray):
            out = out_view(out, t)
        if out.shape != t.logical_shape or out.dtype != self.dtype or not out.flags.writeable:
            raise LayoutError(f"{t}: out must be a writeable array of shape {t.logical_shape} and "
                              f"dtype {self.dtype}")
        return out


@dataclass(eq=False, slots=True)
class Direct:
    """The one-pass relayouts from one target into another (``dst._direct[src]``), remembered
    as a target's calls are: checked calls per key in ``_calls``, the kernel's small calls in
    ``_small_calls`` (the kernel's ``to_physical_small`` takes this in place of a target).
    ``name``: the destination's, for errors.

    >>> Direct("s8[4]{0}")._calls
    {}
    """

    name: str
    _calls: dict[tuple | None, Any] = field(default_factory=dict)  # DirectCall
    _small_calls: SmallCalls = field(default_factory=SmallCalls)

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[type, tuple[str]]:
        """A pickled or deep-copied pair starts afresh (its calls are remade on first use)."""
        return Direct, (self.name,)


def direct_pair(src: PhysicalTarget, dst: PhysicalTarget) -> Direct | None:
    """The remembered one-pass relayouts from ``src`` into ``dst`` (``dst._direct``, at most
    ``MAX_CALLS`` sources), or None when ``relayout`` takes two passes between them (not
    remembered: ``is_direct``'s switches may change).

    >>> t = PhysicalTarget.from_xla("s8[4]{0}")
    >>> direct_pair(t, t) is direct_pair(t, t)
    True
    """
    pair = dst._direct.get(src)
    if pair is None and is_direct(src, dst):
        if len(dst._direct) >= MAX_CALLS:
            dst._direct.clear()
        pair = dst._direct[src] = Direct(str(dst))
    return pair


@dataclass(frozen=True, slots=True, eq=False)
class DirectCall:
    """A checked one-pass ``relayout`` into a buffer of ``elements`` ``dtype`` entries,
    padding ``pad``; ``copy``: the prepared copy between 1-D contiguous buffers."""

    dst: PhysicalTarget
    dtype: np.dtype
    elements: int
    pad: int | float | complex
    threads: int | None
    copy: PreparedDirect

    def __call__(self, data: np.ndarray, out: np.ndarray | None, buf: np.ndarray | None = None) -> np.ndarray:
        """The buffer of ``data`` (the source buffer, any shape): ``out`` if given; ``buf``:
        ``out`` already checked, or new."""
        if buf is None:
            buf = out_buffer(out, self.elements, self.dtype, self.dst)
        flat = np.ascontiguousarray(data).reshape(-1)
        if not apart(flat, buf):  # before the padding overwrites it
            flat = flat.copy()
        self.copy.run(flat, buf, self.pad, self.threads)
        return buf if out is None else out
