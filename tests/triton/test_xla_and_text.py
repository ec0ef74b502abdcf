"""Triton <-> XLA where they meet (brute force from the definitions, both directions), and
Triton's MLIR encoding text read into the encodings, on the command line too."""

from __future__ import annotations

import contextlib
import itertools
import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tensorlayout.cli import main
from tensorlayout.convert import cute_to_xla, to_indexing_map
from tensorlayout.cute import ComposedLayout, Layout, Swizzle
from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError, UnsupportedError
from tensorlayout.triton import (
    BlockedLayout,
    DotOperandLayout,
    LinearLayout,
    NVMMADistributedLayout,
    NVMMASharedLayout,
    SwizzledSharedLayout,
    element_layout,
    from_xla,
    shared_layout,
)
from tensorlayout.triton._mlir import parse_layout
from tensorlayout.xla import Shape, linear_indices, parse_shape

from ..bridge.strategies import xla_shapes

MMA = NVMMADistributedLayout([2, 0], [2, 1], [16, 8])


def _points(ll: LinearLayout) -> list[dict[str, int]]:
    names = ll.get_in_dim_names()
    return [dict(zip(names, p)) for p in itertools.product(*(range(ll.get_in_dim_size(n)) for n in names))]


def _flat(ll: LinearLayout, point: dict[str, int]) -> int:
    """The point's index with the in dims flattened, the first fastest."""
    index, scale = 0, 1
    for name in ll.get_in_dim_names():
        index += point[name] * scale
        scale *= ll.get_in_dim_size(name)
    return index


def _cute_offsets(layout: object, shape: list[int]) -> np.ndarray:
    """The layout at every index, C order (a rank-1 layout takes a plain integer)."""
    points = itertools.product(*(range(n) for n in shape))
    return np.array([layout(p[0] if len(p) == 1 else (p or 0)) for p in points])  # type: ignore[operator]


@pytest.mark.parametrize("ll", [
    BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0]).to_linear_layout([16, 16]),
    BlockedLayout([2, 1], [4, 8], [1, 2], [0, 1]).to_linear_layout([8, 16]),
    MMA.to_linear_layout([32, 8]),
    DotOperandLayout(0, MMA, 2).to_linear_layout([32, 16]),
    SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout([16, 8]),
    NVMMASharedLayout(0, 16).to_linear_layout([8, 16]),
], ids=["blocked", "blocked-col", "mma", "dot-a", "shared-col", "nvmma-unswizzled"])
def test_element_layout_is_where_each_element_lives(ll: LinearLayout) -> None:
    cute = element_layout(ll)
    for point in _points(ll):
        elem = tuple(ll.apply(point).values())
        assert cute(elem) == _flat(ll, point)
    # and as XLA (every one here but the dot operand, whose bit order no XLA tile chain has)
    shape = ll.get_out_dim_sizes()
    try:
        xla = cute_to_xla(cute, "f16")
    except UnsupportedError:
        assert ll.get_in_dim_size("register") == 8  # the dot operand's A fragment
        return
    assert np.array_equal(linear_indices(xla), _cute_offsets(cute, shape))


@pytest.mark.parametrize("ll", [
    BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0]).to_linear_layout([16, 16]),
    SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout([16, 8]),
    NVMMASharedLayout(0, 16).to_linear_layout([8, 16]),
], ids=["blocked", "shared-col", "nvmma-unswizzled"])
def test_bridges_take_a_triton_layout_directly(ll: LinearLayout) -> None:
    """``cute_to_xla`` and ``to_indexing_map`` read a Triton layout as its element layout."""
    cute = element_layout(ll)
    assert cute_to_xla(ll, "f16") == cute_to_xla(cute, "f16")
    imap = to_indexing_map(ll)
    for elem in itertools.product(*(range(n) for n in ll.get_out_dim_sizes())):
        assert imap.evaluate(elem) == (cute(elem),)


def test_bridges_refuse_a_swizzled_triton_layout_with_the_reason() -> None:
    ll = NVMMASharedLayout(128, 16).to_linear_layout([8, 64])
    with pytest.raises(UnsupportedError, match="XOR"):
        cute_to_xla(ll, "f16")
    with pytest.raises(UnsupportedError, match="XOR"):
        to_indexing_map(ll)


@pytest.mark.parametrize("ll, why", [
    (SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear_layout([8, 8]), "XOR"),
    (NVMMASharedLayout(128, 16).to_linear_layout([8, 64]), "XOR"),
    (MMA.to_linear_layout([8, 8]), "several points"),
    (LinearLayout.from_bases([("register", [[1]])], ["dim0"], [4], require_surjective=False), "held nowhere"),
])
def test_no_element_layout_says_why(ll: LinearLayout, why: str) -> None:
    with pytest.raises(UnsupportedError, match=why):
        element_layout(ll)


@pytest.mark.parametrize("text", ["f32[16,256]{1,0:T(8,128)}", "bf16[16,256]{1,0:T(8,128)(2,1)}",
                                  "f16[8,4]{0,1}", "f32[4,8,2]{0,2,1:T(2,2)}",
                                  "s8[32,128]{1,0:T(32,128)(4,1)}", "f32[1]{0}"])
def test_from_xla_places_every_element_where_xla_does(text: str) -> None:
    shape = parse_shape(text)
    ll = from_xla(shape)
    dims = tuple(shape.dimensions)
    offsets = linear_indices(shape).reshape(dims) if dims else linear_indices(shape)
    for off in range(ll.get_in_dim_size("offset")):
        elem = tuple(ll.apply({"offset": off, "block": 0}).values())
        assert offsets[elem] == off
    assert str(cute_to_xla(element_layout(ll), "f32", dims=dims)) and \
        np.array_equal(_cute_offsets(element_layout(ll), list(dims)).reshape(-1), offsets.reshape(-1))


@settings(max_examples=80, deadline=None)
@given(xla_shapes(max_rank=3, max_dim=16))
def test_from_xla_of_random_shapes(shape: Shape) -> None:
    dims = list(shape.dimensions)
    assume(all(n > 0 and n & (n - 1) == 0 for n in dims))
    try:
        offsets = linear_indices(shape)
    except TensorLayoutError:
        assume(False)
        return
    try:
        ll = from_xla(shape)
    except UnsupportedError as err:
        assert "padding" in str(err) or "XOR" in str(err)  # padded slots, or a non-power-of-two tile
        return
    back = np.zeros(len(offsets), dtype=np.int64)
    for off in range(ll.get_in_dim_size("offset")):
        elem = tuple(ll.apply({"offset": off, "block": 0}).values())
        back[off] = np.ravel_multi_index(elem, dims) if dims else 0
    assert np.array_equal(back[offsets], np.arange(len(offsets)))


@pytest.mark.parametrize("text", ["f32[6,8]{1,0}", "f32[8,6]{1,0:T(8,128)}"])
def test_from_xla_refusals(text: str) -> None:
    with pytest.raises(UnsupportedError, match=r"powers of two|padding"):
        from_xla(text)


# ---------------------------------------------------------------- MLIR text

ENCODINGS = [
    ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]}>",
     BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0]), [32, 32]),
    ("#triton_gpu.blocked<{sizePerThread = [2, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], "
     "order = [0, 1], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>",
     BlockedLayout([2, 1], [4, 8], [1, 4], [0, 1]), [16, 64]),
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>",
     NVMMADistributedLayout([2, 0], [2, 2], [16, 8]), [64, 32]),
    ("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
     NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16]), [64, 64]),
    ("#ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
     "warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>",
     DotOperandLayout(1, NVMMADistributedLayout([2, 0], [2, 2], [16, 8]), 2), [32, 32]),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
     SwizzledSharedLayout(8, 1, 8, [1, 0]), [64, 64]),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
     NVMMASharedLayout(128, 16), [64, 64]),
]


@pytest.mark.parametrize("text, enc, shape", ENCODINGS, ids=[e[0].split("<")[0] for e in ENCODINGS])
def test_mlir_encodings_read_as_the_encodings(text: str, enc: object, shape: list[int]) -> None:
    expected = enc.to_linear_layout(shape)  # type: ignore[attr-defined]
    assert parse_layout(text, shape) == expected
    tensor = f"tensor<{'x'.join(map(str, shape))}xf16, {text}>"
    assert parse_layout(tensor) == expected


def test_linear_encoding_and_printed_layouts() -> None:
    ll = BlockedLayout([1, 2], [4, 8], [1, 1], [1, 0]).to_linear_layout([4, 16])
    attrs = ", ".join(f"{name} = {vecs}" for name, vecs in ll.bases)
    assert parse_layout(f"#ttg.linear<{{{attrs}}}>", [4, 16]) == ll
    assert parse_layout(str(ll)) == ll


@pytest.mark.parametrize("text, error, where", [
    ("#blocked", ParseError, "alias"), ("#ttg.blocked<{order = [1, 0}>", ParseError, "column 28"),
    ("#ttg.blocked<{order = [1, 0]}>", LayoutError, "needs the attributes"),
    ("#ttg.amd_mfma<{versionMajor = 2}>", UnsupportedError, "not read"),
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0], "
     "CTAsPerCGA = [2]}>", UnsupportedError, "several CTAs"),
    ("tensor<4x4xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
     ParseError, "'>'"),
])
def test_mlir_errors_are_typed(text: str, error: type, where: str) -> None:
    with pytest.raises(error, match=where):
        parse_layout(text, [4, 4])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="#ttg.blocked<{}>[]=, 0123456789xtensorf", max_size=60))
def test_junk_text_raises_only_library_errors(text: str) -> None:
    with contextlib.suppress(TensorLayoutError):
        parse_layout(text, [4, 4])


def test_cli_show_and_render_triton_text(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    blocked = ("tensor<4x16xf16, #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], "
               "warpsPerCTA = [1, 1], order = [1, 0]}>>")
    assert main(["show", blocked]) == 0
    out = capsys.readouterr().out
    ll = parse_layout(blocked)
    assert out.startswith(str(ll).strip("\n")) and ll.get_distributed_view().rstrip("\n") in out
    assert main(["show", blocked, "--as", "xla"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "f16[4,16]{1,0}", "(offsets: index of the point holding each element, register + 2 * (lane + 32 * "
        "(warp + 1 * block)); element type from the tensor type)"]
    shared = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>"
    assert main(["show", shared, "--shape", "8,8", "--as", "xla"]) == 2
    assert "no XLA layout places the elements" in capsys.readouterr().err
    assert main(["show", "f16[8,8]{0,1:T(2,2)}", "--as", "triton"]) == 0
    assert LinearLayout.parse(capsys.readouterr().out) == from_xla("f16[8,8]{0,1:T(2,2)}")
    assert main(["show", "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", "--as", "triton"]) == 0
    assert LinearLayout.parse(capsys.readouterr().out) == NVMMASharedLayout(128, 16).to_linear_layout([8, 64])
    assert main(["show", "(4,4):(1,4)", "--as", "triton"]) == 0
    assert LinearLayout.parse(capsys.readouterr().out) == from_xla("f32[4,4]{0,1}")
    for holes in ("(4,4):(1,8)", "(4,4):(0,1)", "(3,4):(1,3)"):
        assert main(["show", holes, "--as", "triton"]) == 2
        assert "has no Triton layout" in capsys.readouterr().err
    for args in ([blocked, "-o", "-"], [shared, "--shape", "8,8", "-o", "-"],
                 [shared, "--shape", "8,8", "--format", "tikz", "-o", "-"]):
        assert main(["render", *args]) == 0
        assert 'class="cell"' in capsys.readouterr().out or args[-3] == "tikz"
    assert main(["show", shared]) == 2
    assert "needs a tensor shape" in capsys.readouterr().err


def test_random_blocked_layouts_round_trip_through_xla() -> None:
    rng = random.Random(7)
    for _ in range(30):
        spt = [1 << rng.randint(0, 2) for _ in range(2)]
        tpw = [1 << rng.randint(0, 5)]
        tpw.append(32 // tpw[0])
        wpc = [1 << rng.randint(0, 2)]
        wpc.append(1 << rng.randint(0, 1))
        shape = [spt[d] * tpw[d] * wpc[d] for d in range(2)]
        ll = BlockedLayout(spt, tpw, wpc, rng.choice([[1, 0], [0, 1]])).to_linear_layout(shape)
        cute = element_layout(ll)
        xla = cute_to_xla(cute, "f32")
        assert np.array_equal(linear_indices(xla), _cute_offsets(cute, shape))


def test_swizzled_cute_layouts_are_triton_shared_layouts() -> None:
    """Every offset of shared_layout(Sw<B,M,S> o 0 o L) holds the element CuTe's own composed
    layout puts there (random swizzles over row- and column-major power-of-two tiles)."""
    rng = random.Random(11)
    for _ in range(40):
        rows, cols = 1 << rng.randint(1, 4), 1 << rng.randint(1, 5)
        base = Layout((rows, cols), (cols, 1)) if rng.random() < 0.5 else Layout((rows, cols), (1, rows))
        span = (rows * cols).bit_length() - 1
        b, m = rng.randint(0, 3), rng.randint(0, 3)
        s = rng.randint(b, max(b, span - m - b)) if span - m - b >= b else b
        if m + b + s > span or (b and s < b):
            continue
        composed = ComposedLayout(Swizzle(b, m, s), 0, base)
        ll = shared_layout(composed)
        for off in range(rows * cols):
            i, j = ll.apply({"offset": off, "block": 0}).values()
            assert composed((i, j)) == off
