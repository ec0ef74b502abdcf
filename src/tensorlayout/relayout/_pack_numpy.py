"""Sub-byte packed targets (``E(4)``, ``E(2)``, ``E(1)``) without the ``_pack`` kernel: one
byte per slot through the copy engine, then the slots packed ``8 // bits`` to a byte with
numpy, the first in the low bits.

>>> import numpy as np
>>> from tensorlayout.relayout._target import PhysicalTarget
>>> t = PhysicalTarget.from_xla("s4[4]{0:E(4)}")
>>> buf = np.zeros(2, np.uint8)
>>> pack(np.array([1, -2, 3, 4], np.int8), t, 0, buf)
>>> buf.tolist(), unpack(buf, t).tolist()
([225, 67], [1, -2, 3, 4])
"""

from __future__ import annotations

import numpy as np

from tensorlayout.relayout._buffers import allocate
from tensorlayout.relayout._copy import copy_in
from tensorlayout.relayout._target import PhysicalTarget

__all__ = ["pack", "unpack"]


def pack(a: np.ndarray, t: PhysicalTarget, pad_value: int, result: np.ndarray) -> None:
    """Write the logical integer array ``a`` into the packed 1-D ``result`` (``uint8``, the
    target's ``buffer_bytes``): one byte per slot through the copy engine (the low byte of
    each value), then ``8 // bits`` slots per byte, lowest bits first."""
    bits = t.packed_bits
    mask = (1 << bits) - 1
    per = 8 // bits
    slots = allocate((-(-t.physical_elements // per) * per,), np.dtype(np.uint8), t)
    arr = np.asarray(a)
    low = arr.view(np.uint8) if arr.dtype.itemsize == 1 else arr.astype(np.uint8)  # modular
    pad = pad_value & mask
    copy_in(low, slots[: t.physical_elements], t, pad)
    slots[t.physical_elements:] = 0
    n = t.buffer_bytes or 0
    if bits == 1:
        np.bitwise_and(slots, 1, out=slots)
        result[...] = np.packbits(slots, bitorder="little")[:n]
        return
    lanes = slots.reshape(-1, per)
    packed = np.bitwise_and(lanes[:, 0], mask)
    for k in range(1, per):
        lane = lanes[:, k] if k == per - 1 else np.bitwise_and(lanes[:, k], mask)
        packed |= lane << np.uint8(k * bits)  # the top lane's high bits shift out
    result[...] = packed[:n]


def unpack(b: np.ndarray, t: PhysicalTarget) -> np.ndarray:
    """The slots of the packed 1-D buffer ``b`` (bytes, checked by the caller), one byte
    each, sign-extended for signed types."""
    bits = t.packed_bits
    per = 8 // bits
    raw = b.view(np.uint8)
    if bits == 1:
        codes = np.unpackbits(raw, bitorder="little")
    else:
        codes = allocate((raw.size * per,), np.dtype(np.uint8), t)
        for k in range(per):
            np.bitwise_and(raw >> np.uint8(k * bits), (1 << bits) - 1, out=codes[k::per])
    codes = codes[: t.physical_elements]
    if t.signed:  # (v ^ half) - half sign-extends a bits-wide value
        half = np.int8(1 << (bits - 1)) if bits < 8 else np.int8(0)
        signed = codes.view(np.int8)
        signed ^= half
        signed -= half
        return signed
    return codes
