"""The TMA copy of a (swizzled) shared-memory tile from a global tensor: the box and every argument of
``cuTensorMapEncodeTiled``, derived as CuTe's ``make_tma_copy`` does, or a typed error naming the
mode that cannot be a box.

The steps are CuTe's (``copy_traits_sm90_tma.hpp``): invert the shared layout (without its swizzle)
so shared index → tile coordinate; keep its leading modes that step one element of a global mode
(the TMA box; later modes take more boxes); read their global strides, merge neighbours contiguous
in memory up to 256 elements, add the global modes the box does not reach as extent-1 dimensions,
group past rank 5. The driver's rules (``cuda.h``) then apply: box extents <= 256, inner box bytes a
multiple of 16 (and at most the swizzle span), global strides multiples of 16 bytes below 2^40,
innermost global stride one element. Shared layouts swizzle byte addresses (CuTe's ``smem_ptr``
flag): ``Sw<3,4,3>`` is the 128-byte mode.

>>> from tensorlayout.cute import Layout, parse_layout, tile_to_shape
>>> smem = parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))")
>>> tma = make_tma_copy(Layout((1024, 512), (512, 1)), "half_t", smem)
>>> tma.global_dim, tma.global_strides, tma.box_dim, tma.swizzle
((512, 1024), (1024,), (64, 64), 'CU_TENSOR_MAP_SWIZZLE_128B')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tensorlayout.cute import (
    ComposedLayout,
    Int,
    Layout,
    SmemPtrFlag,
    Swizzle,
    coalesce,
    composition,
    right_inverse,
)
from tensorlayout.cute import flatten as flatten_layout
from tensorlayout.cute.basis import CoordLayout, ScaledBasis, decode_layout, encode_layout, make_basis_like
from tensorlayout.cute.layout import get, make_layout
from tensorlayout.errors import LayoutError

__all__ = ["ELEMENT_TYPES", "TmaCopy", "make_tma_copy"]

#: CuTe's element types -> (CUtensorMapDataType, bits) (``to_CUtensorMapDataType``); XLA spellings too.
ELEMENT_TYPES: dict[str, tuple[str, int]] = {
    "int8_t": ("UINT8", 8), "uint8_t": ("UINT8", 8), "float_e4m3_t": ("UINT8", 8),
    "float_e5m2_t": ("UINT8", 8), "uint16_t": ("UINT16", 16), "uint32_t": ("UINT32", 32),
    "int32_t": ("INT32", 32), "uint64_t": ("UINT64", 64), "int64_t": ("INT64", 64),
    "half_t": ("FLOAT16", 16), "float": ("FLOAT32", 32), "double": ("FLOAT64", 64),
    "bfloat16_t": ("BFLOAT16", 16), "tfloat32_t": ("TFLOAT32", 32),
    "s8": ("UINT8", 8), "u8": ("UINT8", 8), "f8e4m3fn": ("UINT8", 8), "f8e5m2": ("UINT8", 8),
    "u16": ("UINT16", 16), "u32": ("UINT32", 32), "s32": ("INT32", 32), "u64": ("UINT64", 64),
    "s64": ("INT64", 64), "f16": ("FLOAT16", 16), "f32": ("FLOAT32", 32), "f64": ("FLOAT64", 64),
    "bf16": ("BFLOAT16", 16),
}
#: ``Swizzle<B,M,S>`` -> CUtensorMapSwizzle, as CuTe's ``get_tma_swizzle_bits`` reads it (byte addresses).
SWIZZLES = {(0, 4, 3): "NONE", (1, 4, 3): "32B", (2, 4, 3): "64B", (3, 4, 3): "128B"}
MAX_BOX, MAX_RANK = 256, 5


@dataclass(frozen=True)
class TmaCopy:
    """The ``cuTensorMapEncodeTiled`` arguments of one TMA copy (dims innermost first), the global
    mode(s) behind each TMA dimension, and how many boxes fill the shared tile."""

    tensor_data_type: str
    tensor_rank: int
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]  # bytes, dimensions 1.. (dimension 0 is one element)
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str
    swizzle: str
    l2_promotion: str
    oob_fill: str
    modes: tuple[tuple[tuple[int, ...], ...], ...]  # per TMA dimension, the global mode paths it spans
    boxes: int
    element_bits: int

    def arguments(self) -> dict[str, Any]:
        """The arguments under the driver's own names."""
        return {"tensorDataType": self.tensor_data_type, "tensorRank": self.tensor_rank,
                "globalDim": list(self.global_dim), "globalStrides": list(self.global_strides),
                "boxDim": list(self.box_dim), "elementStrides": list(self.element_strides),
                "interleave": self.interleave, "swizzle": self.swizzle, "l2Promotion": self.l2_promotion,
                "oobFill": self.oob_fill}

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.arguments().items())


def _parts(smem: Any) -> tuple[Layout, Swizzle | None]:
    """The shared layout's plain part and its swizzle (CuTe's ``get_nonswizzle_portion``)."""
    if isinstance(smem, Layout):
        return smem, None
    if (isinstance(smem, ComposedLayout) and isinstance(smem.outer, Swizzle)
            and isinstance(smem.inner, Layout)):
        if not (isinstance(smem.offset, SmemPtrFlag) or smem.offset == 0):
            raise LayoutError(f"{smem}: a TMA tile starts at offset 0 (or a smem_ptr flag)")
        return smem.inner, smem.outer
    raise LayoutError(f"a TMA shared layout is a Layout or Sw<B,M,S> o offset o Layout, got {smem}")


def _swizzle_mode(sw: Swizzle | None) -> str:
    key = (0, 4, 3) if sw is None or sw.bits == 0 else (sw.bits, sw.base, sw.shift)
    if key not in SWIZZLES:
        raise LayoutError(f"{sw}: TMA swizzles 16-byte units by 32, 64 or 128 bytes (Sw<1..3,4,3>)")
    return SWIZZLES[key]


def _box_modes(glayout: Layout, inner: Layout) -> tuple[list[tuple[int, tuple[int, ...]]], int]:
    """``sidx2gmode``: the leading (extent, global mode path) runs of the shared tile that step one
    element of a global mode, and the number of boxes the tile takes."""
    tile = tuple(int(m.size()) for m in inner.modes())
    ident = CoordLayout(glayout.shape, make_basis_like(glayout.shape))
    enc, codec = encode_layout(ident)
    if len(tile) > glayout.rank():
        raise LayoutError(f"the shared tile {inner} has more modes than the global tensor {glayout}")
    cta_v = composition(enc, tuple(make_layout(t) for t in tile))
    sidx = decode_layout(coalesce(composition(cta_v, right_inverse(inner))), codec)
    modes = list(zip(_flat(sidx.shape), _flat(sidx.stride)))
    runs = []
    for size, stride in modes:
        if not (isinstance(stride, ScaledBasis) and stride.value == 1):
            break
        runs.append((int(size), stride.modes))
    if not runs:
        raise LayoutError(f"no TMA box: the shared tile {inner} does not start with a run along one "
                          f"global mode of {glayout} (its first step is {modes[0][1] if modes else '-'})")
    volume = math.prod(s for s, _p in runs)
    return runs, int(inner.size()) // volume


def _flat(t: Any) -> list[Any]:
    return [y for x in t for y in _flat(x)] if isinstance(t, tuple) else [t]


Sub = tuple[int, int, tuple[int, ...]]  # (extent, global stride, global leaf path) of a box sub-mode


def _gmem_runs(glayout: Layout, runs: list[tuple[int, tuple[int, ...]]]) -> list[Sub]:
    """``tile_gstride`` with its bases: (extent, global stride, global leaf path) per flat sub-mode."""
    out = []
    for size, path in runs:
        mode = get(glayout, *path)
        sub = flatten_layout(composition(mode, make_layout(size)))
        leaves = [(int(s), int(d)) for s, d in zip(_flat(sub.shape), _flat(sub.stride))]
        leaf_paths = _leaf_paths(mode.shape, path)
        strides = dict(zip(_flat(mode.stride), leaf_paths)) if len(leaf_paths) > 1 else {}
        for s, d in leaves:
            out.append((s, d, strides.get(d, leaf_paths[0])))
    return out


def _leaf_paths(shape: Any, path: tuple[int, ...]) -> list[tuple[int, ...]]:
    if isinstance(shape, tuple):
        return [p for k, s in enumerate(shape) for p in _leaf_paths(s, (*path, k))]
    return [path]


def _coalesce_256(glayout: Layout, subs: list[Sub]) -> list[list[Sub]]:
    """CuTe's ``coalesce_256``: merge neighbours contiguous in memory while the box stays <= 256;
    only static strides (``_N``) merge, as the C++ decides this at compile time."""
    groups: list[list[Sub]] = []
    for sub in subs:
        s, d, p = sub
        if s == 1:
            continue
        if groups:
            back = groups[-1]
            bs, bd = math.prod(x[0] for x in back), back[0][1]
            static = _static_stride(glayout, back[0][2]) and _static_stride(glayout, p)
            if static and bs * bd == d and bs * s <= MAX_BOX:
                back.append(sub)
                continue
        groups.append([sub])
    return groups


def _static_stride(glayout: Layout, path: tuple[int, ...]) -> bool:
    return type(get(glayout, *path).stride if path else glayout.stride) is Int


def _fill(glayout: Layout, paths: tuple[tuple[int, ...], ...]) -> tuple[int, int]:
    """``fill_tma_gmem_shape_stride``: one TMA dimension's global extent and stride (elements)."""
    shape, stride = 1, 0
    for p in paths:
        leaf = get(glayout, *p)
        s_j, d_j = int(leaf.size()), int(leaf.stride)
        old, stride = stride, math.gcd(stride, d_j)
        shape = (shape - 1) * (old // stride) + (s_j - 1) * (d_j // stride) + 1 if stride else s_j
    return shape, stride


def make_tma_copy(global_layout: Layout, element: str, smem_layout: Any, num_multicast: int = 1) -> TmaCopy:
    """The TMA copy of ``smem_layout`` (the CTA tile, one mode per global mode) from a tensor laid
    out as ``global_layout`` (in elements of ``element``, a CuTe type name such as ``half_t``)."""
    if element not in ELEMENT_TYPES:
        raise LayoutError(f"unknown TMA element type {element!r}; known: {', '.join(ELEMENT_TYPES)}")
    if not isinstance(global_layout, Layout):
        raise LayoutError(f"the global tensor is a Layout, got {type(global_layout).__name__}")
    dtype, bits = ELEMENT_TYPES[element]
    inner, sw = _parts(smem_layout)
    swizzle = _swizzle_mode(sw)
    runs, boxes = _box_modes(global_layout, inner)
    merged = _coalesce_256(global_layout, _gmem_runs(global_layout, runs))
    groups = [tuple(p for _s, _d, p in g) for g in merged]
    box = [math.prod(s for s, _d, _p in g) for g in merged]
    used = {p for g in groups for p in g}
    for p in _leaf_paths(global_layout.shape, ()):
        leaf = get(global_layout, *p) if p else global_layout
        if p not in used and int(leaf.size()) != 1 and int(leaf.stride) != 0:  # type: ignore[arg-type]
            groups.append((p,))
            box.append(1)
    if len(groups) > MAX_RANK:  # CuTe groups the trailing modes into the fifth
        groups = groups[:MAX_RANK - 1] + [tuple(p for g in groups[MAX_RANK - 1:] for p in g)]
        box = box[:MAX_RANK - 1] + [math.prod(box[MAX_RANK - 1:])]
    dims_strides = [_fill(global_layout, g) for g in groups]
    _check(global_layout, groups, dims_strides, box, bits, swizzle)
    box = _multicast(box, num_multicast)
    return TmaCopy(f"CU_TENSOR_MAP_DATA_TYPE_{dtype}", len(groups), tuple(d for d, _s in dims_strides),
                   tuple(s * bits // 8 for _d, s in dims_strides[1:]), tuple(box), (1,) * len(groups),
                   "CU_TENSOR_MAP_INTERLEAVE_NONE", f"CU_TENSOR_MAP_SWIZZLE_{swizzle}",
                   "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
                   tuple(groups), boxes, bits)


def _name(paths: tuple[tuple[int, ...], ...]) -> str:
    return " and ".join("global mode " + ".".join(map(str, p)) for p in paths)


def _check(glayout: Layout, groups: list[tuple[tuple[int, ...], ...]], dims: list[tuple[int, int]],
           box: list[int], bits: int, swizzle: str) -> None:
    """The driver's rules on the derived arguments; each failure names its mode."""
    if dims[0][1] != 1:
        raise LayoutError(f"the TMA box's inner dimension ({_name(groups[0])}) has global stride "
                          f"{dims[0][1]}, not 1: the shared tile is not major in the global tensor's "
                          f"contiguous mode ({glayout})")
    for i, ((extent, stride), paths) in enumerate(zip(dims, groups)):
        if not 1 <= extent <= 1 << 32:
            raise LayoutError(f"TMA dimension {i} ({_name(paths)}) has extent {extent}: outside [1, 2^32]")
        if i and (stride * bits // 8 % 16 or stride * bits // 8 >= 1 << 40):
            raise LayoutError(f"TMA dimension {i} ({_name(paths)}) has a stride of {stride * bits // 8} "
                              "bytes: TMA needs a multiple of 16 below 2^40")
    for i, (b, paths) in enumerate(zip(box, groups)):
        if b > MAX_BOX:
            raise LayoutError(f"the TMA box is {b} along dimension {i} ({_name(paths)}): at most {MAX_BOX}")
    inner_bytes = box[0] * bits // 8
    if inner_bytes % 16:
        raise LayoutError(f"the TMA box's inner dimension ({_name(groups[0])}) is {inner_bytes} bytes: "
                          "a multiple of 16 is needed")
    span = {"NONE": None, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    if span is not None and inner_bytes > span:
        raise LayoutError(f"the TMA box's inner dimension ({_name(groups[0])}) is {inner_bytes} bytes, "
                          f"more than the {swizzle} swizzle span")


def _multicast(box: list[int], multicast: int) -> list[int]:
    """CuTe's truncation of the box for ``multicast`` CTAs, outermost dimension first."""
    out = list(box)
    i = len(out) - 1
    while multicast > 1 and i >= 0:
        if out[i] % multicast and multicast % out[i]:
            raise LayoutError(f"{multicast} multicast CTAs do not split the TMA box {box} along "
                              f"dimension {i}")
        out[i], multicast = -(-out[i] // multicast), -(-multicast // out[i])
        i -= 1
    return out
