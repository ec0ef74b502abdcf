"""The newer Gluon encodings as text: Triton 3.9's IR spellings read by ``parse_layout`` (checked
against layouts built from the same arguments), and shown by ``tensorlayout show``."""

from __future__ import annotations

import pytest

from tensorlayout.cli import main
from tensorlayout.errors import TensorLayoutError
from tensorlayout.triton import (
    AMDMFMALayout,
    AMDWMMALayout,
    BlockedLayout,
    DotOperandLayout,
    LinearLayout,
    PaddedSharedLayout,
    SharedLinearLayout,
    SliceLayout,
    TensorMemoryLayout,
    TensorMemoryScalesLayout,
    parse_layout,
)
from tensorlayout.triton._mlir import KINDS, parse_encoding

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [1, 2], "
           "order = [0, 1]}>")

#: text as Triton 3.9 prints it -> (the layout built from Gluon's arguments, the shape)
PRINTED = {
    f"tensor<64xf16, #ttg.slice<{{dim = 1, parent = {BLOCKED}}}>>":
        (SliceLayout(1, BlockedLayout([1, 4], [2, 16], [1, 2], [0, 1])), [64]),
    "tensor<2x8xf16, #ttg.shared_linear<{offset = [[1, 0], [0, 2], [0, 4]], block = [[0, 1]]}, "
    "alignment = 16>>":
        (SharedLinearLayout([[1, 0], [0, 2], [0, 4]], [[0, 1]], 16), [2, 8]),
    "tensor<64x64xf16, #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 16], "
    "isTransposed = true, tilesPerWarp = [2, 1]}>>":
        (AMDMFMALayout(3, [32, 32, 16], True, [2, 4], 32, [2, 1]), [64, 64]),
    "tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], "
    "instrShape = [32, 32, 8], isTransposed = true}>, kWidth = 4}>>":
        (DotOperandLayout(0, AMDMFMALayout(3, [32, 32, 8], True, [2, 2]), 4), [64, 64]),
    "tensor<64x64xf16, #ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {register = [[1, 0]]}, "
    "CGALayout = [[0, 1]], instrShape = [16, 16, 32]}>>":
        (AMDWMMALayout(3, True, [], [[1, 0]], [16, 16, 32], [[0, 1]]), [64, 64]),
    "!ttg.memdesc<256x128xf16, #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2, "
    "CGALayout = [[1, 0]], twoCTAs = true>, #ttng.tensor_memory, mutable>":
        (TensorMemoryLayout([128, 64], 2, [[1, 0]], True), [256, 128]),
    "!ttg.memdesc<256x4xi8, #ttng.tensor_memory_scales_encoding<CGALayout = [[1, 0]]>, #ttng.tensor_memory, "
    "mutable>": (TensorMemoryScalesLayout([[1, 0]]), [256, 4]),
}


@pytest.mark.parametrize("text", list(PRINTED))
def test_printed_text_reads_back(text: str) -> None:
    layout, shape = PRINTED[text]
    assert parse_layout(text) == layout.to_linear_layout(shape)


def test_padded_shared_reads_both_forms() -> None:
    """The identity form names order and shape; the explicit one its offset and block bases."""
    for text, expected in (
        ("#ttg.padded_shared<[128:+4, 512:+8] {order = [0, 1], shape = [64, 64]}>",
         PaddedSharedLayout.with_identity_for([[128, 4], [512, 8]], [64, 64], [0, 1])),
        ("#ttg.padded_shared<[2:+2] {offset = [[2], [1]], block = []}>",
         PaddedSharedLayout([[2, 2]], [[2], [1]], [], [4])),
    ):
        (kind, attrs, _), _ = parse_encoding(text)
        assert KINDS[kind](attrs, [64, 64] if "order" in attrs else [4]) == expected
    with pytest.raises(TensorLayoutError, match="no linear layout"):
        parse_layout("#ttg.padded_shared<[2:+2] {offset = [[2], [1]], block = []}>", [4])


def test_show_prints_triton_text(capsys: pytest.CaptureFixture[str]) -> None:
    text = next(iter(PRINTED))
    assert main(["show", text]) == 0
    out = capsys.readouterr().out
    expected = str(PRINTED[text][0].to_linear_layout([64])).strip("\n")
    assert out.startswith(expected)
    assert main(["show", "#ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1>",
                 "--shape", "64,64"]) == 0
    out = capsys.readouterr().out
    layout = LinearLayout.parse(out.split("\nin dims")[0])
    assert layout == TensorMemoryLayout([64, 64], 1).to_linear_layout([64, 64])
    assert "in dims row 128, col 64" in out
