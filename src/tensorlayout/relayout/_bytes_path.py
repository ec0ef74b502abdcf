"""The kernel's order for (4,1) quads of bytes between short logical rows and a transposed
tiling's tile rows (``_kernel_bytes_rows.h``).

``s8[131072,32]{0,1:T(8,128)(4,1)}``: a logical row's 32 bytes are 8 quads, moved as 4-byte
items (``_kernel_path.wider_items``), two in each of 4 tile rows a MiB apart. The kernel's
transpose takes all K quads of 8 logical rows at once when the box's last axes are, in the
order its transposes name them, the tile rows g (the logical rows run on over g), then the
axis contiguous in the source, then the one contiguous in the destination; the other axes
outside, by logical stride (consecutive steps continue the logical array).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlayout.relayout._views import Pair

__all__ = ["QUAD_ROWS_MAX", "quad_part_views", "quad_rows_views", "quads_views"]

QUAD_ROWS_MAX = 512  # quads of a logical row at most (QROWS_MAX in _kernel_bytes_rows.h)
QUAD = 4  # bytes of a quad: the item size of the pair
#: to_physical takes the quad rows' transpose from 8 quads a row (from_physical from 4): with 4,
#: pred[32,32768,2,8]{1,3,2,0:T(4,128)(4,1)} to measured 1.18 -> 2.64x a copy (one thread,
#: alternating, three runs), u8[1048576,16]{0,1:T(8,128)(4,1)} to alike (1.3-1.5 -> 1.3-1.6x).
QUAD_ROWS_MIN_TO = 8


def quad_rows_views(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> Pair | None:
    """The (physical, logical) views of 4-byte quads in the kernel's order for the quad rows'
    transpose (see above), or None when the pair is not one: an axis ``a`` contiguous in the
    buffer (8 items or more), an axis ``b`` contiguous in the array, and ``g`` (if any) over
    which the array's rows run on, 4 to ``QUAD_ROWS_MAX`` quads a row in all.

    >>> b, a = np.zeros(4096, np.uint32), np.zeros(4096, np.uint32)
    >>> pv = as_strided(b, (4, 128, 2), (4096, 4, 512))
    >>> lv = as_strided(a, (4, 128, 2), (8, 32, 4))
    >>> p, q = quad_rows_views(pv, lv, False)
    >>> p.shape, p.strides, q.strides
    ((2, 4, 64, 2), (256, 4096, 4, 512), (2048, 8, 32, 4))
    """
    keep = [k for k in range(pv.ndim) if pv.shape[k] > 1]
    if pv.itemsize != QUAD or len(keep) < 2:
        return None
    shape, ps, ls = pv.shape, pv.strides, lv.strides
    a = next((k for k in keep if ps[k] == QUAD), None)
    b = next((k for k in keep if ls[k] == QUAD and k != a), None)
    if a is None or b is None or shape[a] < 8:
        return None
    g = next((k for k in keep if k not in (a, b) and ls[k] == shape[b] * QUAD), None)
    quads = shape[b] * (1 if g is None else shape[g])
    if not (QUAD_ROWS_MIN_TO if to_physical else 4) <= quads <= QUAD_ROWS_MAX:
        return None
    outer = sorted((k for k in keep if k not in (a, b, g)), key=lambda k: -abs(ls[k]))
    order = [*outer, *([] if g is None else [g]), *((b, a) if to_physical else (a, b))]
    axes = [(shape[k], ps[k], ls[k]) for k in order]
    block = next((n for n in (128, 64, 32, 16, 8) if shape[a] % n == 0 and shape[a] > n), None)
    if not outer and block is not None:  # blocks of rows a outermost: the tasks' pieces cut them
        axes.insert(0, (shape[a] // block, ps[a] * block, ls[a] * block))
        i = len(axes) - (1 if to_physical else 2)
        axes[i] = (block, ps[a], ls[a])
    return (as_strided(pv, tuple(x[0] for x in axes), tuple(x[1] for x in axes)),
            as_strided(lv, tuple(x[0] for x in axes), tuple(x[2] for x in axes)))


QUAD_GROUPS_MIN = 8  # groups of quads at least (transpose_quads in _kernel_bytes.h) ...
QUAD_ROWS_MIN = 16  # ... and rows a on the other side


def quads_views(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> Pair | None:
    """A box of bytes in (4,1) quads against a transposed tiling, in the kernel's loop order
    when it is not already in the order of the fused quad transposes (``transpose_quads`` in
    ``_kernel_bytes.h``): the groups g of quads (4 bytes apart in the buffer), then the rows a
    contiguous in the array, the quad's 4 bytes b (to_physical; from_physical b, then a)
    innermost, the other axes outside by logical stride. None when it is not such a box or
    its last axes already are those (``pv``, ``lv``: the kernel's views).

    >>> b, a = np.zeros(1 << 16, np.uint8), np.zeros(1 << 16, np.uint8)
    >>> pv = as_strided(b, (64, 32, 4), (4, 4096, 1))
    >>> lv = as_strided(a, (64, 32, 4), (512, 1, 128))
    >>> quads_views(pv, lv, True) is None  # already (g, a, b)
    True
    >>> p, q = quads_views(pv.transpose(1, 0, 2), lv.transpose(1, 0, 2), True)
    >>> p.strides, q.strides
    ((4, 4096, 1), (512, 1, 128))
    """
    keep = [k for k in range(pv.ndim) if pv.shape[k] > 1]
    if pv.itemsize != 1 or len(keep) < 3:
        return None
    shape, ps, ls = pv.shape, pv.strides, lv.strides
    b = next((k for k in keep if shape[k] == QUAD and ps[k] == 1), None)
    g = next((k for k in keep if ps[k] == QUAD and shape[k] >= QUAD_GROUPS_MIN), None)
    a = next((k for k in keep if ls[k] == 1 and k not in (b, g) and shape[k] >= QUAD_ROWS_MIN), None)
    if a is None or b is None or g is None:
        return None
    inner = [g, a, b] if to_physical else [g, b, a]
    if keep[-3:] == inner:
        return None
    outer = sorted((k for k in keep if k not in inner), key=lambda k: -abs(ls[k]))
    order = [*outer, *inner]
    return (as_strided(pv, tuple(shape[k] for k in order), tuple(ps[k] for k in order)),
            as_strided(lv, tuple(shape[k] for k in order), tuple(ls[k] for k in order)))


def quad_part_views(pv: np.ndarray, lv: np.ndarray, to_physical: bool) -> Pair | None:
    """A box of the last 1 to 3 rows b of (4,1) quads of bytes against a transposed tiling (a
    ragged sub-tile's), in the order of the fused quad transposes (``quads_to`` and
    ``quads_from_part`` in ``_kernel_bytes.h``): the groups g (4 bytes apart in the buffer),
    then the rows a contiguous in the array and the rows b (to_physical; from_physical b,
    then a), the other axes outside by logical stride; one row gets an axis b of its own.
    None when it is not such a box (the kernel's loops order it: a strided loop, a byte at a
    time, for one row).

    >>> b, a = np.zeros(1 << 16, np.uint8), np.zeros(1 << 16, np.uint8)
    >>> pv = as_strided(b, (64, 32), (4, 4096))
    >>> lv = as_strided(a, (64, 32), (512, 1))
    >>> p, q = quad_part_views(pv, lv, True)
    >>> p.shape, p.strides, q.strides
    ((64, 32, 1), (4, 4096, 1), (512, 1, 0))
    """
    keep = [k for k in range(pv.ndim) if pv.shape[k] > 1]
    if pv.itemsize != 1 or len(keep) < 2:
        return None
    shape, ps, ls = pv.shape, pv.strides, lv.strides
    units = [k for k in keep if ps[k] == 1]
    if len(units) > 1 or (units and shape[units[0]] >= QUAD):
        return None
    b = units[0] if units else None
    least = QUAD_GROUPS_MIN + (0 if to_physical else 1)  # (quads_from_part: 9 groups)
    g = next((k for k in keep if ps[k] == QUAD and shape[k] >= least), None)
    a = next((k for k in keep if ls[k] == 1 and k not in (b, g) and shape[k] >= QUAD_ROWS_MIN), None)
    if a is None or g is None:
        return None
    inner = [k for k in (g, a, b) if k is not None]
    outer = sorted((k for k in keep if k not in inner), key=lambda k: -abs(ls[k]))
    axes = [(shape[k], ps[k], ls[k]) for k in (*outer, g, a)]
    axes.insert(len(axes) - (0 if to_physical else 1), (1, 1, 0) if b is None else (shape[b], ps[b], ls[b]))
    return (as_strided(pv, tuple(x[0] for x in axes), tuple(x[1] for x in axes)),
            as_strided(lv, tuple(x[0] for x in axes), tuple(x[2] for x in axes)))
