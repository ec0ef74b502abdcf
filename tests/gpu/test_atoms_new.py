"""The atoms of today's GPUs checked from their definitions: every TMEM copy op against the PTX
shapes, every UMMA accumulator placement against tensor memory, the rule-built MMA fragments
against PTX's, shared-memory atoms and descriptors against CuTe's canonical forms, and the
typed errors of bad names."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tensorlayout.cli import main
from tensorlayout.cute.swizzle import ComposedLayout
from tensorlayout.errors import LayoutError, ParseError
from tensorlayout.gpu import COPY_ATOMS, MMA_ATOMS, copy_atom, make_tiled_copy, make_tiled_mma, mma_atom
from tensorlayout.gpu.cxx_names import layout_of_type, parse_type, sizeof_bits
from tensorlayout.gpu.mma_async import gmma_names
from tensorlayout.gpu.smem_atoms import matrix_descriptor, smem_layout_atom, tile_to_shape
from tensorlayout.gpu.tmem import (
    TMEM_COPY_NAMES,
    accumulator_cell,
    tmem_cell,
    tmem_copy_atom,
    tmem_owners,
    warp_lanes,
)
from tensorlayout.render import to_svg

_SHAPE = re.compile(r"SM100_TMEM_(LOAD|STORE)_(\d+)dp(\d+)b(\d+)x(_16b)?")


def test_tmem_op_count() -> None:
    assert len(TMEM_COPY_NAMES) == 148  # CuTe's 74 loads and 74 stores


@pytest.mark.parametrize("name", TMEM_COPY_NAMES)
def test_tmem_atom_moves_its_ptx_block(name: str) -> None:
    """Each thread's register bits go to distinct TMEM bits of ``dp`` lanes, filling ``dp``
    lanes x the op's columns exactly once (16 bits of each column for ``_16b``)."""
    m = _SHAPE.fullmatch(name)
    assert m is not None
    dp, bits, reps, half = int(m.group(2)), int(m.group(3)), int(m.group(4)), bool(m.group(5))
    atom = copy_atom(name)
    regs = atom.dst if m.group(1) == "LOAD" else atom.src
    assert (atom.ref == (atom.src if m.group(1) == "LOAD" else atom.dst))
    per_lane = bits * reps * (2 if (dp, bits) == (16, 32) else 1)
    assert int(regs.size()) == 32 * 32 * (per_lane * dp // 1024)  # 32 threads, whole registers
    addr = atom.val_id.offsets()[regs.offsets()]  # type: ignore[union-attr]
    lane, col, bit = addr >> 21, (addr % (1 << 21)) // 32, addr % 32
    assert sorted(set(lane.tolist())) == list(range(dp))
    cols = per_lane // 32 * (2 if half else 1)
    assert sorted(set(col.tolist())) == list(range(cols))
    assert len(set(addr.tolist())) == addr.size == dp * cols * (16 if half else 32)
    if half:
        assert bit.max() < 16
    t, b = 5, int(regs[1].size()) - 1
    assert tmem_cell(atom, t, b) == (int(lane[t + 32 * b]), int(col[t + 32 * b]), int(bit[t + 32 * b]))


def test_tmem_32dp_thread_owns_its_lane() -> None:
    thr, reg = tmem_owners(tmem_copy_atom("SM100_TMEM_LOAD_32dp32b4x"))
    assert thr.shape == (128, 4)
    np.testing.assert_array_equal(thr, np.repeat(np.arange(128)[:, None], 4, axis=1))
    np.testing.assert_array_equal(reg, np.tile(np.arange(4), (128, 1)))


def test_warp_reaches_its_subpartition() -> None:
    assert [warp_lanes(w).start for w in range(8)] == [0, 32, 64, 96, 0, 32, 64, 96]
    thr, _ = tmem_owners(tmem_copy_atom("SM100_TMEM_LOAD_16dp256b1x"))
    for lane in range(128):
        held = thr[lane][thr[lane] >= 0]
        assert (lane % 32 < 16) == bool(held.size)
        assert all(lane in warp_lanes(int(t) // 32) for t in held)


UMMA = "SM100_MMA_F16BF16_{v}SS<half_t,half_t,float,{m},{n},UMMA::Major::K,UMMA::Major::K>"


@pytest.mark.parametrize(("v", "m", "n"), [("", 64, 64), ("", 128, 256), ("", 64, 8), ("2x1SM_", 128, 64),
                                           ("2x1SM_", 256, 256)])
def test_accumulator_fills_tensor_memory_once(v: str, m: int, n: int) -> None:
    atom = mma_atom(UMMA.format(v=v, m=m, n=n))
    cells = {accumulator_cell(atom, i, j) for i in range(m) for j in range(n)}
    assert len(cells) == m * n
    assert all(0 <= lane < 128 and 0 <= col < 512 and b == 0 for _c, lane, col, b in cells)
    if m == 64 and not v:  # the first 16 lanes of each sub-partition
        assert {lane % 32 for _c, lane, _col, _b in cells} == set(range(16))


def test_accumulator_of_half_takes_a_cell_each() -> None:
    """CuTe stores a 16-bit accumulator in 32-bit cells (``tmem_frg``'s ``uint32_t`` storage)."""
    atom = mma_atom("SM100_MMA_F16BF16_SS<half_t,half_t,half_t,128,64,UMMA::Major::K,UMMA::Major::K>")
    assert accumulator_cell(atom, 3, 5) == (0, 3, 5, 0)


def _ptx_a(t: int, v: int, atom_bits: int, m: int, k: int) -> tuple[int, int]:
    """PTX's A fragment of mma.m{m}n8k{k}: thread t, element v of its registers (row, col)."""
    p = max(1, 32 // atom_bits)
    reg, e = divmod(v, p)
    halves = 2 if m == 16 else 1
    row = t // 4 + 8 * (reg % halves)
    col = (t % 4) * p + e + 4 * p * (reg // halves)
    return row, col


@pytest.mark.parametrize("name", [n for n in MMA_ATOMS if n.startswith(("SM75", "SM80", "SM89"))])
def test_mma_sync_a_fragment_is_ptx(name: str) -> None:
    atom = MMA_ATOMS[name]
    m, _n, k = atom.shape_mnk
    tv = atom.tv_a()
    bits = atom.val_bits[1] if atom.val_bits else 0  # type: ignore[index]
    for t in (0, 5, 31):
        for v in range(tv.num_values):
            assert tv.coord(t, v) == _ptx_a(t, v, bits, m, k)


def test_every_gmma_n() -> None:
    names = {n for nn in range(8, 257, 8) for n in gmma_names(nn)}
    assert len([n for n in names if "_RS" in n and "S32" not in n]) == 32 * 3 + 32 * 9
    atom = mma_atom("SM90_64x24x32_S32S8U8_RS_TN_SATURATE")
    assert str(atom.layout_a) == "((_4,_8,_4),(_4,_2,_2)):((_256,_1,_16),(_64,_8,_1024))"
    assert str(mma_atom("SM90_64x8x8_F32TF32TF32_RS_TN").layout_a) == (
        "((_4,_8,_4),(_2,_2)):((_64,_1,_16),(_8,_256))")
    mn = mma_atom("SM90_64x8x16_F32F16F16_SS<GMMA::Major::MN, GMMA::Major::MN>")
    assert mn.name == "SM90_64x8x16_F32F16F16_SS<MN,MN>" and mn.majors == ("MN", "MN")
    assert mma_atom("SM90_64x8x16_F32F16F16_SS<MN,MN>") == mn


BAD_NAMES = {
    "SM90_64x12x16_F32F16F16_SS": "no GMMA atom",
    "SM90_64x40x32_S32S8S8_SS_TN": "no GMMA atom",
    "SM90_64x8x16_F32F16F16_RS<GMMA::Major::MN,GMMA::Major::K>": "K-major",
    "SM100_MMA_F16BF16_SS<half_t,half_t,float,96,64,UMMA::Major::K,UMMA::Major::K>": "instruction shape",
    "SM100_MMA_F16BF16_2x1SM_TS<half_t,half_t,float,128,48,UMMA::Major::K,UMMA::Major::K>": "multiple of 32",
    "SM100_MMA_F16BF16_SS<float,float,float,128,64,UMMA::Major::K,UMMA::Major::K>": "16-bit A and B",
    "SM100_MMA_F16BF16_SS<half_t,half_t,float,128>": "takes <a, b, c, M, N",
    "SM100_MMA_S8_SS<int8_t,int8_t,int32_t,128,24,UMMA::Major::K,UMMA::Major::K>": "multiple of 16",
    "SM80_16x8x16_F32TF32TF32F32_TN": "no MMA atom",
    "SM120_16x8x32_TN<half_t, half_t, float>": "8/6/4-bit floats",
    "SM99_MMA": "unknown MMA atom",
}


@pytest.mark.parametrize(("name", "why"), BAD_NAMES.items())
def test_bad_mma_names(name: str, why: str) -> None:
    with pytest.raises(LayoutError, match=re.escape(why)):
        mma_atom(name)


BAD_COPIES = {
    "SM100_TMEM_LOAD_16dp256b64x": "up to 32", "SM100_TMEM_LOAD_32dp32b3x": "power of two",
    "SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>": "128-bit", "SM90_U32x4_STSM_N<half_t>": "no template",
    "UniversalCopy<foo_t>": "unknown value type", "SM75_U8x4_LDSM_N": "unknown copy atom",
}


@pytest.mark.parametrize(("name", "why"), BAD_COPIES.items())
def test_bad_copy_names(name: str, why: str) -> None:
    with pytest.raises(LayoutError, match=re.escape(why)):
        copy_atom(name)


def test_names_are_typed() -> None:
    with pytest.raises(LayoutError, match="named by a string"):
        mma_atom(3)  # type: ignore[arg-type]
    with pytest.raises(ParseError, match="C\\+\\+ type name"):
        copy_atom("SM75_U32x4_LDSM_N<")


def test_copy_tables_resolve_their_own_names() -> None:
    assert all(copy_atom(n) == a for n, a in COPY_ATOMS.items())


def test_cp_async_tiles_like_universal_copy() -> None:
    thr, val = layout_of_type(parse_type("Layout<Shape<_16,_8>,Stride<_8,_1>>")), layout_of_type(
        parse_type("Layout<Shape<_1,_8>>"))
    a = make_tiled_copy(copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>"), 16, thr, val)
    b = make_tiled_copy(copy_atom("UniversalCopy<uint128_t>"), 16, thr, val)
    assert a.layout_s_tv() == b.layout_s_tv() and a.tiler == b.tiler


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("swz", ["INTER", "SW32", "SW64", "SW128"])
@pytest.mark.parametrize("t", ["half_t", "uint8_t", "float"])
def test_smem_atom_is_one_swizzle_row_block(major: str, swz: str, t: str) -> None:
    """The atom covers 8 rows of the swizzle width in bytes, every offset once; the descriptor of
    its canonical tile reports the swizzle and CuTe's strides."""
    atom = smem_layout_atom(f"GMMA::Layout_{major}_{swz}_Atom<{t}>")
    width = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128}[swz]
    assert isinstance(atom, ComposedLayout)
    assert int(atom.size()) * sizeof_bits(t) == 8 * width * 8
    assert sorted(atom.offsets().tolist()) == list(range(int(atom.size())))
    k_elems = 256 // sizeof_bits(t)  # one MMA's K: 32 bytes
    mn = 64 if major == "K" else 8 * width * 8 // sizeof_bits(t) // 8 * 2
    shape = (mn, max(k_elems, int(atom.inner.shape[1]))) if major == "K" else (mn, k_elems)  # type: ignore[index]
    tiled = tile_to_shape(atom, shape)
    assert isinstance(tiled, ComposedLayout)
    d = matrix_descriptor(tiled, major, "GMMA", k=k_elems)
    assert d.layout_type == {"INTER": "INTERLEAVE", "SW32": "B32", "SW64": "B64", "SW128": "B128"}[swz]
    if major == "K" and swz != "INTER":
        assert (d.leading_byte_offset, d.stride_byte_offset) == (1, width * 8 // 16)


def test_descriptor_rejects_non_canonical() -> None:
    atom = smem_layout_atom("UMMA::Layout_K_SW128_Atom<half_t>")
    with pytest.raises(LayoutError, match="not a canonical UMMA MN-major"):
        matrix_descriptor(tile_to_shape(atom, (64, 64)), "MN", "UMMA", k=16)  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match="SW128_32B"):
        smem_layout_atom("GMMA::Layout_K_SW128_32B_Atom<half_t>")


def test_tmem_picture() -> None:
    svg = to_svg(tmem_copy_atom("SM100_TMEM_LOAD_32dp32b8x"))
    assert svg.count('class="cell"') == 128 * 8 and 'data-thread="97"' in svg
    with pytest.raises(LayoutError, match="tensor-memory copy"):
        to_svg(copy_atom("SM75_U32x4_LDSM_N"))


def test_tmem_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--copy", "SM100_TMEM_LOAD_16dp128b2x", "-o", str(tmp_path / "t.svg")]) == 0
    assert (tmp_path / "t.svg").read_text().count('data-thread="127"') == 4
    assert main(["render", "--copy", "SM100_TMEM_LOAD_16dp128b2x", "-o", str(tmp_path / "t.tex")]) != 0
    assert "UnsupportedError: tensor-memory pictures are SVG" in capsys.readouterr().err


def test_tiled_mma_over_umma() -> None:
    atom = mma_atom("SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,128,UMMA::Major::K,UMMA::Major::K>")
    tm = make_tiled_mma(atom)
    assert tm.tile_size() == (256, 128, 16)
    assert str(tm.thr_layout_vmnk) == "(_2,_1,_1,_1):(_1,_0,_0,_0)"
