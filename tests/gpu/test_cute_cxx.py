"""Differential test against CuTe's C++ itself: ``cute_tv_print.cpp`` prints the TV layouts of
atoms, TiledMMAs and TiledCopies; each line must equal what tensorlayout.gpu computes.

The program is built host-only from the ``nvidia-cutlass`` wheel's headers with ``g++`` (CUDA's
include dirs on the path) or ``nvcc``, cached by source hash; the build takes minutes on a busy
machine, so it only runs when the binary is cached or ``TENSORLAYOUT_BUILD_CUTE=1``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tensorlayout.cute import Layout, make_layout
from tensorlayout.gpu import (
    TiledCopy,
    TiledMMA,
    copy_atom,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_copy_b,
    make_tiled_copy_c,
    make_tiled_mma,
    mma_atom,
    universal_copy,
)
from tests.cute.cpp_oracle import CUDA_INCLUDES, cute_include

SRC = Path(__file__).with_name("cute_tv_print.cpp")
CUDA_INC = [Path(d) for d in CUDA_INCLUDES]


def _build_command(src: Path, inc: Path, out: Path) -> list[str] | None:
    if shutil.which("g++") and (CUDA_INC[0] / "cuda_runtime_api.h").exists():
        extra = [f"-I{p}" for p in CUDA_INC if p.exists()]
        return ["g++", "-std=c++17", "-O0", "-w", f"-I{inc}", *extra, str(src), "-o", str(out)]
    if shutil.which("nvcc"):
        return ["nvcc", "-std=c++17", f"-I{inc}", "-x", "cu", str(src), "-o", str(out)]
    return None


def run_cute_program(src: Path) -> str:
    """Build the CuTe program ``src`` host-only (cached by source hash; built only when cached
    or ``TENSORLAYOUT_BUILD_CUTE=1``, else the test skips) and return what it prints."""
    inc = cute_include()
    if inc is None:
        pytest.skip("nvidia-cutlass (CuTe headers) is not installed")
    key = hashlib.sha256(src.read_bytes() + str(inc).encode()).hexdigest()[:16]
    exe = Path(tempfile.gettempdir()) / "tensorlayout-cute-cxx" / key / src.stem
    if not exe.exists():
        if os.environ.get("TENSORLAYOUT_BUILD_CUTE") != "1":
            pytest.skip("CuTe C++ program not built; set TENSORLAYOUT_BUILD_CUTE=1 (takes minutes)")
        cmd = _build_command(src, inc, exe)
        if cmd is None:
            pytest.skip("no g++ with CUDA headers and no nvcc")
        exe.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(cmd, check=True, capture_output=True, timeout=1200)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.fixture(scope="module")
def cute_lines() -> dict[tuple[str, str], str]:
    out = run_cute_program(SRC)
    return {(p[0], p[1]): p[2] for p in (line.split("|") for line in out.splitlines())}


def _plain(text: str) -> str:
    return re.sub(r"_(?=-?\d)", "", text)


SM80 = ["SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32BF16BF16F32_TN",
        "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32TF32TF32F32_TN",
        "SM80_16x8x16_S32S8S8S32_TN"]
SM90 = ["SM90_64x8x16_F32F16F16_SS", "SM90_64x16x16_F32F16F16_SS", "SM90_64x64x16_F32F16F16_SS",
        "SM90_64x128x16_F32F16F16_SS", "SM90_64x256x16_F32F16F16_SS", "SM90_64x64x16_F32F16F16_RS",
        "SM90_64x128x16_F16F16F16_RS"]
LDSM = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "SM75_U16x2_LDSM_T",
        "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T"]

def MMA80() -> TiledMMA:
    return make_tiled_mma(mma_atom(SM80[1]), (2, 2, 1))


# the same TiledMMAs / TiledCopies as cute_tv_print.cpp's main()
TILED: dict[str, Callable[[], TiledMMA]] = {
    "t221": lambda: make_tiled_mma(mma_atom(SM80[0]), (2, 2, 1)),
    "t221s": lambda: make_tiled_mma(mma_atom(SM80[0]), Layout((2, 2, 1), (2, 1, 0))),
    "t141": lambda: make_tiled_mma(mma_atom(SM80[4]), (1, 4, 1)),
    "t212p": lambda: make_tiled_mma(mma_atom(SM80[1]), (2, 1, 2), (32, 32, 32)),
    "t411perm": lambda: make_tiled_mma(mma_atom(SM80[0]), (4, 1, 1),
                                       (Layout(64, 1), Layout((4, 2), (1, 8)), 16)),
    "t222": lambda: make_tiled_mma(mma_atom(SM80[0]), (2, 2, 2)),
    "t112": lambda: make_tiled_mma(mma_atom(SM80[0]), (1, 1, 2)),
    "t321": lambda: make_tiled_mma(mma_atom(SM80[0]), (3, 2, 1)),
    "t90_311rs": lambda: make_tiled_mma(mma_atom("SM90_64x32x16_F32F16F16_RS"), (3, 1, 1)),
    "t90_211": lambda: make_tiled_mma(mma_atom(SM90[2]), (2, 1, 1)),
    "t90_121rs": lambda: make_tiled_mma(mma_atom("SM90_64x16x16_F32F16F16_RS"), (1, 2, 1)),
}
COPIES: dict[str, Callable[[], TiledCopy]] = {
    "tc_u128": lambda: make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)),
                                       make_layout((1, 8))),
    "tc_u32": lambda: make_tiled_copy(universal_copy(32), 16, make_layout((32, 4)), make_layout((2, 2))),
    "tcA_x4": lambda: make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, MMA80()),
    "tcB_x2": lambda: make_tiled_copy_b(copy_atom("SM75_U32x2_LDSM_N"), 16, MMA80()),
    "tcB_x4T": lambda: make_tiled_copy_b(copy_atom("SM75_U16x8_LDSM_T"), 16,
                                         make_tiled_mma(mma_atom(SM80[1]), (2, 2, 1), (32, 32, 16))),
    "tcA_1": lambda: make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, make_tiled_mma(mma_atom(SM80[1]))),
    "tcC_u32": lambda: make_tiled_copy_c(universal_copy(32), 16, MMA80()),
}


@pytest.mark.parametrize("name", SM80 + SM90)
def test_mma_atoms_match_cute(cute_lines: dict[tuple[str, str], str], name: str) -> None:
    atom = mma_atom(name)
    assert _plain(cute_lines[name, "Shape_MNK"]) == "(" + ",".join(map(str, atom.shape_mnk)) + ")"
    assert cute_lines[name, "ThrID"] == str(atom.thr_id)
    for part in "ABC":
        assert cute_lines[name, part] == str(getattr(atom, f"layout_{part.lower()}"))


@pytest.mark.parametrize("name", sorted(TILED))
def test_tiled_mma_matches_cute(cute_lines: dict[tuple[str, str], str], name: str) -> None:
    tm = TILED[name]()
    assert _plain(cute_lines[name, "tile"]) == "(" + ",".join(map(str, tm.tile_size())) + ")"
    assert cute_lines[name, "tiled_A"] == str(tm.layout_a_tv())
    assert cute_lines[name, "tiled_B"] == str(tm.layout_b_tv())
    assert cute_lines[name, "tiled_C"] == str(tm.layout_c_tv())


@pytest.mark.parametrize("name", LDSM)
def test_ldmatrix_matches_cute(cute_lines: dict[tuple[str, str], str], name: str) -> None:
    atom = copy_atom(name)
    assert cute_lines[name, "Src"] == str(atom.src)
    assert cute_lines[name, "Dst"] == str(atom.dst)
    assert cute_lines[name, "SrcHalf"] == str(atom.val_layout_src(16))
    assert cute_lines[name, "DstHalf"] == str(atom.val_layout_dst(16))


@pytest.mark.parametrize("name", sorted(COPIES))
def test_tiled_copy_matches_cute(cute_lines: dict[tuple[str, str], str], name: str) -> None:
    tc = COPIES[name]()
    assert _plain(cute_lines[name, "tiler"]) == "(" + ",".join(map(str, tc.tiler)) + ")"
    assert cute_lines[name, "tiled_S"] == str(tc.layout_s_tv())
    assert cute_lines[name, "tiled_D"] == str(tc.layout_d_tv())
