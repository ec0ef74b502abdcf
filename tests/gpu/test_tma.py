"""TMA copies: every element of the box lands where the shared layout says (the driver's model of a
tiled TMA load, brute force), CuTe's ``construct_tma_gbasis``/``fill_tma_gmem_shape_stride`` on the
host, and a typed error naming the mode for every rule a pair breaks."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from tensorlayout.cute import ComposedLayout, Int, Layout, Swizzle, parse_layout, tile_to_shape
from tensorlayout.cute.basis import ScaledBasis
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.tma import ELEMENT_TYPES, SWIZZLES, TmaCopy, make_tma_copy
from tests.cute import cpp_oracle
from tests.gpu import cute_cpp

SW_BYTES = {v: k for k, v in SWIZZLES.items()}


def _smem_atom(major: str, swizzle: int, bits: int) -> str:
    """CuTe's GMMA shared-memory atoms in elements: K-major rows of ``swizzle`` bytes (16 for INTER),
    MN-major the transpose."""
    b = {16: 0, 32: 1, 64: 2, 128: 3}[swizzle]
    width = max(swizzle, 16) * 8 // bits
    inner = f"(_8,_{width}):(_{width},_1)" if major == "K" else f"(_{width},_8):(_1,_{width})"
    return f"Sw<{b},4,3> o smem_ptr[{bits}b](unset) o {inner}"


CASES: list[tuple[str, str, str]] = []
for (element, bits), major, swz in itertools.product((("half_t", 16), ("float", 32), ("uint8_t", 8)), "KM",
                                                     (16, 32, 64, 128)):
    atom = parse_layout(_smem_atom(major, swz, bits))
    tile = (64, 128) if major == "K" else (128, 64)
    assert isinstance(atom, ComposedLayout) and isinstance(atom.inner, Layout)
    smem = ComposedLayout(atom.outer, atom.offset, tile_to_shape(atom.inner, tile))
    g = "(512,1024):(1024,_1)" if major == "K" else "(512,1024):(_1,512)"
    CASES.append((g, element, str(smem)))
CASES += [
    ("(16,1024,512):(524288,512,_1)", "float", "(_4,_32,_32):(_1024,_32,_1)"),
    ("(1024,512):(512,_1)", "half_t", "(_128,_64):(_64,_1)"),
    ("(1024,512):(_1,1024)", "half_t", "(_64,_128):(_1,_64)"),
    ("((8,128),512):((_1,4096),8)", "half_t", "((_8,_16),_64):((_1,_512),_8)"),
    ("(4,8,1024):(_1,_4,_32)", "half_t", "(_4,_8,_16):(_1,_4,_32)"),
    ("(4,8,1024):(_1,4,32)", "float", "(_4,_8,_16):(_1,_4,_32)"),
    ("(2,3,4,5,6,64):(23040,7680,1920,384,64,_1)", "half_t",
     "(_2,_3,_4,_5,_6,_64):(_23040,_7680,_1920,_384,_64,_1)"),
]


def _tma_model(tma: TmaCopy) -> dict[int, int]:
    """The driver's tiled load of box 0: TMA coordinate x (innermost first) reads global element
    ``sum x_i · stride_i`` and writes it at the box's linear position (elements, before the swizzle)."""
    strides = (1, *(s * 8 // tma.element_bits for s in tma.global_strides))
    out = {}
    for x in itertools.product(*(range(b) for b in reversed(tma.box_dim))):
        x = x[::-1]
        pos = sum(xi * math.prod(tma.box_dim[:i]) for i, xi in enumerate(x))
        out[sum(xi * si for xi, si in zip(x, strides))] = pos
    return out


def _swizzle_of(tma: TmaCopy) -> Swizzle | None:
    key = SW_BYTES[tma.swizzle.removeprefix("CU_TENSOR_MAP_SWIZZLE_")]
    return None if key[0] == 0 else Swizzle(*key)


@pytest.mark.parametrize(("glayout", "element", "smem"), CASES)
def test_every_box_element_lands_where_the_shared_layout_says(glayout: str, element: str, smem: str) -> None:
    g, s = Layout.parse(glayout), parse_layout(smem)
    tma = make_tma_copy(g, element, s)
    inner = s.inner if isinstance(s, ComposedLayout) else s
    assert isinstance(inner, Layout)
    bytes_ = tma.element_bits // 8
    model = _tma_model(tma)  # global element offset -> box position
    sw_tma, sw_smem = _swizzle_of(tma), s.outer if isinstance(s, ComposedLayout) else None
    tile = tuple(int(m.size()) for m in inner.modes())
    hits = 0
    for crd in itertools.product(*(range(t) for t in tile)):
        pos = model.get(int(g(*crd)))
        if pos is None:  # outside box 0: a later box's
            continue
        want = int(inner(*crd)) * bytes_
        got = pos * bytes_
        if sw_smem is not None:
            want = sw_smem(want)
        if sw_tma is not None:
            got = sw_tma(got)
        assert got == want, (crd, got, want)
        hits += 1
    assert hits == math.prod(tma.box_dim) and tma.boxes * hits == math.prod(tile)
    assert tma.tensor_rank == len(tma.global_dim) == len(tma.box_dim) <= 5
    assert all(b <= 256 for b in tma.box_dim) and tma.box_dim[0] * bytes_ % 16 == 0
    assert all(st % 16 == 0 for st in tma.global_strides)


def _cpp_tuple(t: Any, make: str, static: bool) -> str:
    if isinstance(t, tuple):
        return f"{make}(" + ",".join(_cpp_tuple(x, make, static) for x in t) + ")"
    return f"Int<{int(t)}>{{}}" if static or type(t) is Int else str(int(t))


def _cpp_layout(lay: Layout, static: bool = True) -> str:
    """Static extents; strides static where written ``_N`` (or everywhere when ``static``)."""
    return (f"make_layout({_cpp_tuple(lay.shape, 'make_shape', True)}, "
            f"{_cpp_tuple(lay.stride, 'make_stride', static)})")


def _cpp_smem(text: str, bits: int) -> str:
    s = parse_layout(text)
    if isinstance(s, ComposedLayout):
        sw = s.outer
        return (f"make_composed_layout(Swizzle<{sw.bits},{sw.base},{sw.shift}>{{}}, "
                f"smem_ptr_flag_bits<{bits}>{{}}, {_cpp_layout(s.inner)})")  # type: ignore[arg-type]
    return _cpp_layout(s)  # type: ignore[arg-type]


def _cpp_case(glayout: str, element: str, smem: str) -> str:
    bits = ELEMENT_TYPES[element][1]
    g = _cpp_layout(Layout.parse(glayout), False)
    return (f"{{ auto g = make_tensor(make_gmem_ptr(({element}*)nullptr), {g});"
            f" auto s = {_cpp_smem(smem, bits)};"
            " auto v = make_identity_layout(shape(g)).compose(product_each(shape(s)));"
            f" auto b = detail::construct_tma_gbasis<{element}>(g, get_nonswizzle_portion(s), v);"
            " cute::array<uint64_t,5> sh = {1,1,1,1,1}; cute::array<uint64_t,5> st = {0,0,0,0,0};"
            " detail::fill_tma_gmem_shape_stride(g, stride(b), sh, st);"
            " print(b); printf(\" \"); for (int i = 0; i < 5; ++i) printf(\"%lu,%lu;\", (unsigned long)sh[i],"
            " (unsigned long)st[i]); printf(\"\\n\"); }")


@pytest.mark.skipif(not cpp_oracle.available(), reason="needs g++ and the nvidia-cutlass headers")
def test_boxes_and_global_arguments_agree_with_cute() -> None:
    answers = cute_cpp.run([_cpp_case(*c) for c in CASES])
    assert len(answers) == len(CASES)
    for (glayout, element, smem), line in zip(CASES, answers):
        basis_text, arrays = line.split(" ")
        basis = parse_layout(basis_text)
        tma = make_tma_copy(Layout.parse(glayout), element, parse_layout(smem))
        modes = basis.modes() if hasattr(basis, "modes") else None
        shape = basis.shape if isinstance(basis.shape, tuple) else (basis.shape,)  # type: ignore[union-attr]
        stride = basis.stride if isinstance(basis.shape, tuple) else (basis.stride,)  # type: ignore[union-attr]
        assert modes is None or modes
        assert tma.box_dim == tuple(math.prod(_flat(s)) for s in shape), (glayout, smem, line)
        assert tma.modes == tuple(tuple(d.modes for d in _flat(st) if isinstance(d, ScaledBasis))
                                  for st in stride), (glayout, smem, line)
        pairs = [tuple(int(v) for v in p.split(",")) for p in arrays.rstrip(";").split(";")][:tma.tensor_rank]
        assert tma.global_dim == tuple(p[0] for p in pairs)
        assert tma.global_strides == tuple(p[1] * tma.element_bits // 8 for p in pairs[1:])


def _flat(t: Any) -> list[Any]:
    return [y for x in t for y in _flat(x)] if isinstance(t, tuple) else [t]


G = "(1024,512):(512,_1)"


@pytest.mark.parametrize(("glayout", "element", "smem", "message"), [
    (G, "half_t", "(_128,_64):(_1,_128)", r"inner dimension \(global mode 0\) has global stride 512"),
    ("(1000,500):(500,_1)", "half_t", "(_64,_64):(_64,_1)",
     r"TMA dimension 1 \(global mode 0\) has a stride of 1000 bytes"),
    (G, "half_t", "Sw<3,4,3> o smem_ptr[16b](unset) o (_128,_128):(_128,_1)",
     r"inner dimension \(global mode 1\) is 256 bytes, more than the 128B swizzle span"),
    (G, "half_t", "(_8,_512):(_512,_1)", r"the TMA box is 512 along dimension 0 \(global mode 1\)"),
    (G, "half_t", "(_64,_4):(_4,_1)", r"inner dimension \(global mode 1\) is 8 bytes"),
    (G, "half_t", "Sw<3,3,3> o _0 o (_64,_64):(_64,_1)", r"Sw<3,3,3>: TMA swizzles"),
    (G, "half_t", "(_64,_64):(_128,_2)", r"no TMA box: the shared tile .* does not start"),
    (G, "bool", "(_64,_64):(_64,_1)", r"unknown TMA element type 'bool'"),
])
def test_pairs_that_cannot_be_one_tma_copy_name_the_mode(glayout: str, element: str, smem: str,
                                                         message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        make_tma_copy(Layout.parse(glayout), element, parse_layout(smem))


def test_multicast_splits_the_outer_box_dimension() -> None:
    g = Layout.parse("(1024,512):(512,_1)")
    assert make_tma_copy(g, "half_t", parse_layout("(_128,_64):(_64,_1)"), 4).box_dim == (64, 32)
    assert make_tma_copy(g, "half_t", parse_layout("(_2,_64):(_64,_1)"), 4).box_dim == (32, 1)
    with pytest.raises(LayoutError, match="multicast CTAs do not split"):
        make_tma_copy(g, "half_t", parse_layout("(_3,_64):(_64,_1)"), 2)
