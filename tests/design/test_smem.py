"""design_smem: its proofs checked from the bank definition and against the package's bank model,
its spellings by value, its CLI and picture, and typed errors on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tensorlayout.cli import main
from tensorlayout.cute import ComposedLayout, Layout, Swizzle
from tensorlayout.design import Candidate, SmemDesign, design_smem, parse_access
from tensorlayout.errors import LayoutError
from tensorlayout.gpu import (
    TVLayout,
    bank_conflicts,
    copy_atom,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_mma,
    mma_atom,
)
from tensorlayout.gpu.smem_atoms import smem_layout_atom
from tensorlayout.render import design_svg, to_svg
from tensorlayout.triton import hardware_bank_conflicts
from tensorlayout.triton import parse_layout as parse_triton

CASES = [
    ((128, 32), "f16", "K", ["cp.async 16B"], ["SM75_U32x4_LDSM_N"]),
    ((64, 64), "bf16", "MN", ["cp.async 16B"], ["SM75_U16x8_LDSM_T"]),
    ((64, 32), "f32", "K", ["cp.async 8B"], ["SM80_16x8x8_F32TF32TF32F32_TN:A"]),
    ((64, 64), "f16", "K", ["SM90_U32x4_STSM_N"], ["UMMA"]),
    ((128, 64), "s8", "K", ["TMA"], ["SM75_U32x4_LDSM_N"]),
]


def _words(start: int, vb: int) -> set[int]:
    return set(range(start // 4, (start + max(vb, 4) - 1) // 4 + 1))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}-{c[2]}-{c[4][0]}")
def test_refusals_name_a_real_conflicting_pair(case: tuple) -> None:
    """Every first conflicting pair: the two threads' elements sit at the stated byte addresses,
    and some word of each lies in the stated bank, the words different."""
    tile, dtype, major, writes, reads = case
    d = design_smem(tile, dtype, writes=writes, reads=reads, major=major)
    assert d.layouts and all(a.ok for a in d.layouts)
    checked = 0
    for ans in d.rejected:
        table = ans.candidate.byte_offsets()
        for p in ans.proofs:
            c = p.conflict
            if c is None:
                continue
            for (m, k), addr in zip(c.coords, c.byte_addresses):
                assert table[m, k] == addr
            wa, wb = (_words(a, p.vector_bytes) for a in c.byte_addresses)
            ba, bb = {w for w in wa if w % 32 == c.bank}, {w for w in wb if w % 32 == c.bank}
            assert ba and bb and ba != bb and c.wavefronts > 1
            checked += 1
    assert checked


def _ldsm_tv(bits: int, name: str) -> object:
    mma = {16: "SM80_16x8x16_F32F16F16F32_TN", 32: "SM80_16x8x8_F32TF32TF32F32_TN"}[bits]
    return make_tiled_copy_a(copy_atom(name), bits, make_tiled_mma(mma_atom(mma))).tv_s()


@pytest.mark.parametrize("dtype,major,name", [("f16", "K", "SM75_U32x4_LDSM_N"),
                                              ("f16", "MN", "SM75_U16x8_LDSM_T"),
                                              ("tf32", "K", "SM75_U32x4_LDSM_N")])
def test_wavefronts_agree_with_gpu_bank_conflicts(dtype: str, major: str, name: str) -> None:
    """On a tile one ldmatrix covers, every candidate's wavefronts equal gpu.bank_conflicts' on the
    same layout written with the element-offset swizzle."""
    bits = 32 if dtype == "tf32" else 16
    tv = _ldsm_tv(bits, name)
    d = design_smem(tv.tile, dtype, reads=[name], major=major)  # type: ignore[attr-defined]
    for ans in d.layouts + d.rejected:
        c = ans.candidate
        proof = ans.proofs[0]
        if c.base == "padded" or proof.failure:
            continue
        b, m, s = c._element_swizzle()
        smem = ComposedLayout(Swizzle(b, m, s), 0, c.inner)
        report = bank_conflicts(smem, bits, tv)  # type: ignore[arg-type]
        assert report.wavefronts == proof.wavefronts_per_instruction, c.name
        assert report.max_way == (1 if proof.conflict is None else proof.conflict.wavefronts), c.name


def test_triton_spellings_equal_by_value() -> None:
    d = design_smem((64, 32), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
    c = d.best.candidate
    nvmma = "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>"
    swizzled = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    assert c.triton() == (nvmma, swizzled)
    padded = Candidate("K", "padded", 0, 64, 16, (64, 32), 16)
    assert padded.triton() == ("#ttg.padded_shared<[32:+8] {order = [1, 0], shape = [64, 32]}>",)
    assert padded.element_offsets()[1, 0] == 40


def test_padding_only_where_no_swizzle_works() -> None:
    """A warp reading one f32 column of 32 rows: a 16-byte-granular swizzle keeps every word at its
    place in its chunk, so at most 8 banks serve 32 rows; rows 36 bytes apart serve all 32."""
    column = TVLayout.parse("(32,1):(1,0)", (32, 8))
    d = design_smem((32, 8), "f32", reads=[column])
    assert {a.candidate.base for a in d.layouts} == {"padded"}
    assert d.best.candidate.name == "plain rows padded by 4 B"
    assert d.best.candidate.triton() == ("#ttg.padded_shared<[8:+1] {order = [1, 0], shape = [32, 8]}>",)
    assert all(a.proofs[0].conflict.wavefronts >= 4 for a in d.rejected if a.candidate.base != "padded")


def test_json_and_text() -> None:
    d = design_smem((128, 32), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
    blob = json.loads(json.dumps(d.to_dict()))
    best = blob["layouts"][0]
    assert best["atom"] == "GMMA::Layout_K_SW64_Atom<half_t>" and best["swizzle_bytes"] == "Sw<2,4,3>"
    assert [p["wavefronts_per_instruction"] for p in best["proofs"]] == [4, 4]
    assert blob["rejected"][0]["why_not"].startswith("SM75_U32x4_LDSM_N: threads 0 and 2")
    text = str(d)
    assert "chosen: GMMA::Layout_K_SW64_Atom<half_t>" in text and "refused" in text


def test_cli(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    svg = f"{tmp_path}/d.svg"
    args = ["design", "smem", "--tile", "128x32", "--dtype", "f16", "--write", "cp.async 16B",
            "--read", "SM75_U32x4_LDSM_N"]
    assert main([*args, "--json", "--svg", svg]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["layouts"][0]["cute"].startswith("Sw<2,4,3> o smem_ptr[16b](unset) o ")
    with open(svg) as f:
        assert f.read().count('class="panel"') == 2


@pytest.mark.parametrize("argv", [
    ["design", "smem", "--tile", "128by32", "--dtype", "f16", "--read", "SM75_U32x4_LDSM_N"],
    ["design", "smem", "--tile", "128x32", "--dtype", "f16"],
    ["design", "smem", "--tile", "128x32", "--dtype", "f16", "--read", "ldmatrix.x5"],
    ["design", "smem", "--tile", "128x30", "--dtype", "f16", "--read", "SM75_U32x4_LDSM_N"],
    ["design", "smem", "--tile", "128x32", "--dtype", "f16", "--write", "GMMA"],
])
def test_cli_bad_input_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tensorlayout: ")


def test_picture_marks_a_conflicting_phase() -> None:
    d = design_smem((16, 64), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
    plain = next(a for a in d.rejected if a.candidate.name == "plain rows")
    pic = design_svg(plain)
    assert 'stroke="#d00000"' in pic and pic.count('class="panel"') == 2
    assert 'stroke="#d00000"' not in design_svg(d)


@pytest.mark.parametrize("call,match", [
    (lambda: design_smem((128, 32), "f17", reads=["GMMA"]), "unknown element type"),
    (lambda: design_smem((128, 32), "f16", reads=["ldmatrix"]), "unknown access"),
    (lambda: design_smem((128, 30), "f16", reads=["SM75_U32x4_LDSM_N"]), "multiple of 16 bytes"),
    (lambda: design_smem((128, 32), "f16"), "at least one write or read"),
    (lambda: design_smem((0, 32), "f16", reads=["GMMA"]), "two positive ints"),
    (lambda: design_smem((128, 32), "f16", reads=["GMMA"], threads=0), "threads must be"),
    (lambda: design_smem((128, 32), "f16", writes=["GMMA"]), "cannot be a write"),
    (lambda: design_smem((128, 32), "f16", reads=["GMMA"], major="M"), "major 'K' or 'MN'"),
    (lambda: design_smem((128, 32), "f16", reads=[3.5]), "a name, a TiledCopy or a TVLayout"),
    (lambda: parse_access("cp.async 16B", "copy", (8, 8), 16, "K"), "role is 'write' or 'read'"),
    (lambda: design_svg(42), "draws a SmemDesign"),  # type: ignore[arg-type]
])
def test_typed_errors(call: object, match: str) -> None:
    with pytest.raises(LayoutError, match=match):
        call()  # type: ignore[operator]


def test_best_of_nothing_says_why() -> None:
    d = design_smem((16, 64), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
    empty = SmemDesign(d.tile, d.dtype, d.major, d.accesses, (), d.rejected)
    with pytest.raises(LayoutError, match="no layout of the 16x64 f16 tile serves"):
        _ = empty.best
    assert "no candidate is conflict-free" in str(empty)


def test_physical_offsets_are_a_bijection() -> None:
    for c in design_smem((64, 128), "f8e4m3", writes=["TMA"], reads=["GMMA"]).rejected:
        if c.candidate.base != "padded":
            offs = np.sort(c.candidate.element_offsets().ravel())
            assert (offs == np.arange(64 * 128)).all(), c.candidate.name


BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
DOT_A = ("#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
         "warpsPerCTA = [4, 1], instrShape = [16, 8]}>, kWidth = 2}>")


def test_triton_accesses_against_triton_bank_model() -> None:
    """Triton distributed layouts as accesses: on every candidate Triton can spell as
    #ttg.swizzled_shared, warp 0's verdict equals triton.hardware_bank_conflicts'."""
    d = design_smem((128, 32), "f16", writes=[BLOCKED], reads=[DOT_A])
    assert d.best.candidate.name == "GMMA::Layout_K_SW64_Atom<half_t>"
    assert [p.vector_bytes for p in d.best.proofs] == [16, 4]
    reg = {BLOCKED: parse_triton(BLOCKED, [128, 32]), DOT_A: parse_triton(DOT_A, [128, 32])}
    compared = 0
    for ans in d.layouts + d.rejected:
        for text, enc in ans.candidate._triton_options():
            if not text.startswith("#ttg.swizzled_shared") or text not in ans.candidate.triton():
                continue
            for proof in ans.proofs:
                triton = hardware_bank_conflicts(reg[proof.access], enc.to_linear_layout([128, 32]), 16)
                warp0 = proof.conflict is None or proof.conflict.instruction >= proof.instructions // 4
                assert (triton.excess == 0) == warp0, (ans.candidate.name, proof.access)
                compared += 1
    assert compared >= 4


def test_picture_through_to_svg_and_window() -> None:
    d = design_smem((16, 64), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
    assert to_svg(d) == design_svg(d)
    assert design_svg(d, window=[range(0, 4), range(0, 8)]).count('class="cell"') == 2 * 32
    with pytest.raises(LayoutError, match="not a non-empty range inside"):
        design_svg(d, window=[range(0, 40), range(0, 8)])


def test_umma_reads_name_the_umma_alias() -> None:
    best = design_smem((128, 64), "bf16", writes=["TMA"], reads=["UMMA"]).to_dict()["layouts"][0]
    assert best["umma_atom"] == "UMMA::Layout_K_SW128_Atom<bfloat16_t>"
    assert str(smem_layout_atom(best["umma_atom"])) == str(smem_layout_atom(best["atom"]))


def test_tiled_copy_object_equals_its_spelling() -> None:
    """A TiledCopy passed as an object is the access 'cp.async 16B' names (CUTLASS's (32,4) threads)."""
    tc = make_tiled_copy(copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>"), 16, Layout((32, 4), (4, 1)),
                         Layout((1, 8), (0, 1)))
    by_object = design_smem((128, 32), "f16", writes=[tc], reads=["SM75_U32x4_LDSM_N"])
    by_name = design_smem((128, 32), "f16", writes=["cp.async 16B"], reads=["SM75_U32x4_LDSM_N"])
    assert [a.candidate for a in by_object.layouts] == [a.candidate for a in by_name.layouts]
    assert by_object.best.proofs[0].banks == by_name.best.proofs[0].banks


def test_tma_wants_its_widest_box_rows() -> None:
    d = design_smem((64, 64), "f16", writes=["TMA"], reads=["GMMA"])
    why = {a.candidate.name: a.first_failure() for a in d.rejected}
    assert why["GMMA::Layout_K_SW64_Atom<half_t>"] == ("TMA: the box rows are 64 B, narrower than the widest "
                                                       "128 B the tile allows")
    assert "matrix descriptor" in str(why["plain rows"])
