"""Bad input to tensorlayout.gpu and its pictures gives a typed library error, never a crash."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tensorlayout.cute import Layout
from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu import (
    bank_conflicts,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_mma,
    mma_atom,
    sm90_gmma,
    triton_bank_conflicts,
    universal_copy,
    vector_access,
)
from tensorlayout.gpu.tv import TVLayout
from tensorlayout.render._tv import shared_banks_svg, tiled_copy_svg, tiled_mma_svg, tv_svg

ATOM = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
BAD: dict[str, Callable[[], Any]] = {
    "tile float": lambda: TVLayout(Layout((32, 2), (2, 1)), (8.0, 8)),  # type: ignore[arg-type]
    "layout text": lambda: TVLayout("(32,2):(2,1)", (8, 8)),  # type: ignore[arg-type]
    "thr text": lambda: make_tiled_mma(ATOM, "abc"),  # type: ignore[arg-type]
    "thr zero": lambda: make_tiled_mma(ATOM, (0, 1, 1)),
    "thr negative": lambda: make_tiled_mma(ATOM, (-1, 1, 1)),
    "access None": lambda: bank_conflicts("(8,8):(8,1)", 16, None),  # type: ignore[arg-type]
    "smem rank 1": lambda: bank_conflicts("64:1", 16, vector_access((8, 8), 16, 128)),
    "warp outside": lambda: bank_conflicts("(8,64):(64,1)", 16, vector_access((8, 64), 16, 128), warp=3),
    "vector uneven": lambda: vector_access((8, 60), 16, 128),
    "vector along": lambda: vector_access((8, 64), 16, 128, "diagonal"),
    "vector tile": lambda: vector_access((8,), 16, 128),  # type: ignore[arg-type]
    "copy bits 0": lambda: make_tiled_copy(universal_copy(128), 0, Layout(32, 1), Layout(8, 1)),
    "copy too few vals": lambda: make_tiled_copy(universal_copy(128), 3, Layout((32, 1), (1, 0)),
                                                 Layout((1, 8), (0, 1))),
    "copy_a of an atom": lambda: make_tiled_copy_a(universal_copy(32), 16, ATOM),  # type: ignore[arg-type]
    "svg of text": lambda: tiled_mma_svg("SM80"),  # type: ignore[arg-type]
    "copy svg of text": lambda: tiled_copy_svg("SM80"),  # type: ignore[arg-type]
    "tv svg of None": lambda: tv_svg(None),  # type: ignore[arg-type]
    "bank svg bits": lambda: shared_banks_svg("(8,8):(8,1)", 7),
    "triton non-pow2": lambda: triton_bank_conflicts("(6,8):(8,1)", 32, vector_access((6, 8), 32, 128)),
    "triton bits": lambda: triton_bank_conflicts("(8,8):(8,1)", 5, vector_access((8, 8), 16, 128)),
    "gmma N": lambda: sm90_gmma(12),
    "owners text": lambda: ATOM.tv_c().owners("a", 0),  # type: ignore[arg-type]
    "thread_of None": lambda: ATOM.tv_c().thread_of(None, 0),  # type: ignore[arg-type]
    "coord float": lambda: ATOM.tv_c().coord(1.5, 0),  # type: ignore[arg-type]
}


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"TiledCopy uses too few vals|"
            r"Triton's bank count needs a|"
            r"a TV layout is a rank-2|"
            r"a TV layout's tile must be|"
            r"a TiledMMA needs at least|"
            r"a \(thread, value\) pair is|"
            r"a layout shape: expected an|"
            r"a shared-memory tile for a|"
            r"a tile coordinate \(m, n\) is|"
            r"a value type has a positive|"
            r"cannot lay 128-bit vectors|"
            r"element_bits must be a|"
            r"make_tiled_copy_a/b/c need|"
            r"shape \(-1,1,1\) has a|"
            r"the access is a TVLayout|"
            r"tiled_copy_svg draws a|"
            r"tiled_mma_svg draws a|"
            r"tv_svg draws a TVLayout,|"
            r"warp 3 is outside the|"
            r"wgmma m64nNk16 needs N a")


@pytest.mark.parametrize("name", sorted(BAD))
def test_typed_error(name: str) -> None:
    with pytest.raises(TensorLayoutError, match=MESSAGES):
        BAD[name]()
