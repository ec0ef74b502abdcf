"""Differential test against CuTe's C++ (host-only g++, the nvidia-cutlass wheel's headers): a
seeded random sample of atoms beyond the gpu2 records (mma.sync, GMMA of every input type, N
and major, UMMA of every kind, TMEM/matrix/cp.async copies), ``tile_to_shape`` of the smem atoms
and the GMMA/UMMA descriptor fields; and the library accepts a name exactly where C++ compiles
it. One program, compiled once per sample and cached like ``tests/cute/cpp_oracle.py``."""

from __future__ import annotations

import random

import pytest

from tensorlayout.cute import Layout
from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu import copy_atom, mma_atom
from tensorlayout.gpu.copy_ops import COPY_OP_NAMES
from tensorlayout.gpu.mma_async import gmma_names
from tensorlayout.gpu.mma_sync import MMA_SYNC_NAMES
from tensorlayout.gpu.smem_atoms import matrix_descriptor, smem_layout_atom, tile_to_shape
from tensorlayout.gpu.tmem import TMEM_COPY_NAMES, accumulator_cell
from tests.cute.cpp_oracle import available, cached_answers, compile_and_run

pytestmark = pytest.mark.skipif(not available(), reason="CuTe headers or g++ missing")

HEADERS = ["cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/copy_atom.hpp",
           "cute/atom/mma_traits_sm100.hpp", "cute/atom/copy_traits_sm100.hpp",
           "cute/atom/mma_traits_sm90_gmma.hpp", "cute/arch/mma_sm90_gmma_ext.hpp",
           "cute/atom/mma_traits_sm90_gmma_ext.hpp", "cute/atom/mma_traits_sm120.hpp",
           "cute/atom/copy_traits_sm90.hpp"]
RNG = random.Random(26)
UMMA_ACC = "SM100_MMA_{op}<half_t,half_t,{c},{m},{n},UMMA::Major::K,UMMA::Major::K>"
TYPES16 = ("half_t", "bfloat16_t")


def _umma_name(rng: random.Random) -> str:
    kind = rng.choice(["F16BF16", "TF32", "S8", "F16BF16"])
    two = rng.random() < 0.4
    src = rng.choice(["SS", "TS"])
    sparse = "_SPARSE" if src == "SS" and rng.random() < 0.2 else ""
    ab = {"F16BF16": rng.choice(TYPES16), "TF32": "tfloat32_t", "S8": "int8_t"}[kind]
    c = {"S8": "int32_t"}.get(kind, rng.choice(["float", "half_t"]) if kind == "F16BF16" else "float")
    m = rng.choice([128, 256] if two else [64, 128])
    n = rng.choice([8, 16, 24, 32, 48, 64, 96, 128, 200, 256])
    ma, mb = rng.choice(["K", "MN"]), rng.choice(["K", "MN"])
    op = f"SM100_MMA_{kind}{'_2x1SM' if two else ''}_{src}{sparse}"
    return f"{op}<{ab},{ab},{c},{m},{n},UMMA::Major::{ma},UMMA::Major::{mb}>"


def _f8_name(rng: random.Random) -> str:
    a = rng.choice(["float_e4m3_t", "float_e5m2_t", "float_e2m1_t"])
    b = rng.choice(["float_e4m3_t", "float_e2m3_t"])
    m, n, mb = rng.choice([64, 128]), rng.choice([8, 16, 40, 128]), rng.choice(["K", "MN"])
    ic = "cute::integral_constant"
    return (f"MMA_Traits<SM100_MMA_F8F6F4_SS, {a},{b},float,_{m},_{n},{ic}<UMMA::Major,UMMA::Major::K>,"
            f"{ic}<UMMA::Major,UMMA::Major::{mb}>,{ic}<UMMA::ScaleIn,UMMA::ScaleIn::One>,"
            f"{ic}<UMMA::ScaleIn,UMMA::ScaleIn::One>>")


def _gmma_name(rng: random.Random) -> str:
    name = rng.choice(gmma_names(rng.choice(range(8, 257, 8))))
    if "_TN" not in name and rng.random() < 0.5:
        name += f"<GMMA::Major::{rng.choice(['K', 'MN'])},GMMA::Major::{rng.choice(['K', 'MN'])}>"
    return name


MMA_NAMES = sorted({*RNG.sample(MMA_SYNC_NAMES, 12), "SM70_8x8x4_F32F16F16F32_NT", "SM61_DP2A",
                    *(_gmma_name(RNG) for _ in range(16)), *(_umma_name(RNG) for _ in range(24)),
                    *(_f8_name(RNG) for _ in range(4)),
                    "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,16>"})
COPY_NAMES = sorted({*RNG.sample(TMEM_COPY_NAMES, 16), *COPY_OP_NAMES, "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
                     "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>"})
ATOMS = [f"GMMA::Layout_{m}_{s}_Atom<{t}>" for m in ("K", "MN") for s in ("INTER", "SW32", "SW64", "SW128")
         for t in ("half_t", "float", "uint8_t")]
ATOMS += [f"UMMA::Layout_MN_SW128_32B_Atom<{t}>" for t in ("half_t", "float")]
TILES = [(a, (s0 * mult0, s1 * mult1)) for a, s0, s1, mult0, mult1 in
         ((a, *smem_layout_atom(a).inner.shape, RNG.choice([1, 2, 4]), RNG.choice([1, 2, 3]))  # type: ignore[misc]
          for a in RNG.sample(ATOMS, 14))]


def _desc_case(atom: str) -> tuple[str, str, str, int]:
    major = "K" if "_K_" in atom else "MN"
    kind = "UMMA" if atom.startswith("UMMA") else RNG.choice(["GMMA", "UMMA"])
    bits = {"half_t": 16, "float": 32, "uint8_t": 8}[atom.split("<")[1][:-1]]
    return atom, major, kind, 256 // bits


DESCS = [_desc_case(a) for a in ATOMS]
ACCS = [UMMA_ACC.format(op=op, c=c, m=m, n=n) for op, c, m, n in (
    ("F16BF16_SS", "float", 64, 64), ("F16BF16_SS", "half_t", 128, 32),
    ("F16BF16_2x1SM_SS", "float", 128, 64), ("F16BF16_2x1SM_SS", "float", 256, 32),
    ("F16BF16_TS", "half_t", 64, 16))]


def _shape_expr(shape: tuple[int, ...]) -> str:
    return "Shape<" + ",".join(f"_{s}" for s in shape) + ">{}"


def _desc_tile(atom: str, major: str, k: int) -> tuple[int, int]:
    """The smem tile a descriptor case slices its first ``k`` columns from."""
    return (128, k) if major == "MN" else (64, max(k, int(smem_layout_atom(atom).inner.shape[1])))  # type: ignore[index]


def _desc_stmt(atom: str, major: str, kind: str, k: int) -> str:
    cpp_atom = atom.replace("GMMA::", f"{kind}::") if kind == "UMMA" else atom
    t = atom.split("<")[1][:-1]
    lay = f"tile_to_shape({cpp_atom}{{}}, {_shape_expr(_desc_tile(atom, major, k))})"
    ten = f"make_tensor(make_smem_ptr(({t}*)nullptr), {lay}).compose(make_tile(_, Layout<_{k}>{{}}))"
    if kind == "GMMA":
        return (f"auto d = GMMA::make_gmma_desc<GMMA::Major::{major}>({ten}); std::printf(\"%d %d %d\", "
                "int(d.bitfield.layout_type_), int(d.bitfield.leading_byte_offset_), "
                "int(d.bitfield.stride_byte_offset_));")
    return (f"auto d = UMMA::make_umma_desc<UMMA::Major::{major}>({ten}); std::printf(\"%d %d %d\", "
            "int(d.layout_type_), int(d.leading_byte_offset_), int(d.stride_byte_offset_));")


def _cxx(name: str) -> str:
    """The C++ spelling of a GMMA name given bare (a template: the 16-bit ones take the majors,
    the floating ``_TN`` ones only defaulted scales; the integer ones are plain structs)."""
    if not name.startswith("SM90_") or "<" in name or "_S32" in name:  # integer ones are no templates
        return name
    return name + ("<>" if "_TN" in name else "<GMMA::Major::K,GMMA::Major::K>")


def _statements() -> list[str]:
    out = [f"print(MMA_Atom<{_cxx(n)}>{{}});" for n in MMA_NAMES]
    for n in COPY_NAMES:
        fields = ["ThrID", "SrcLayout", "DstLayout", "RefLayout"]
        fields += ["ValID"] if n.startswith("SM100_TMEM") else []
        sep = " std::printf(\" | \"); "
        out.append(sep.join(f"print(typename Copy_Traits<{n}>::{f}{{}});" for f in fields))
    out += [f"print(tile_to_shape({a}{{}}, {_shape_expr(s)}));" for a, s in TILES]
    out += [_desc_stmt(*d) for d in DESCS]
    out += [f"auto tm = make_tiled_mma({a}{{}}); print(layout<0>(tm.make_fragment_C(partition_shape_C(tm, "
            f"{_shape_expr(mma_atom(a).shape_mnk[:2])}))));" for a in ACCS]
    return out


def _source(stmts: list[str | None]) -> tuple[str, dict[int, int]]:
    head = ["#include <cstdio>", *(f"#include <{h}>" for h in HEADERS), "using namespace cute;"]
    line_of, body = {}, []
    for k, s in enumerate(stmts):
        if s is not None:
            head.append(f"void f{k}() {{ std::printf(\"@@{k}\\n\"); {s} std::printf(\"\\n\"); }}")
            line_of[len(head)] = k
            body.append(f"  f{k}();")
    return "\n".join([*head, "int main() {", *body, "  return 0;", "}", ""]), line_of


def _run(stmts: list[str]) -> list[str | None]:
    """C++'s printed answer of each statement, None where it does not compile."""
    cases: list[str | None] = list(stmts)

    def answer() -> list[str | None]:
        out = compile_and_run(cases, _source, "atom oracle", rounds=12)
        answers: list[str | None] = [None] * len(cases)
        for chunk in out.split("@@")[1:]:
            k, text = chunk.split("\n", 1)
            lines = text.rstrip("\n").split("\n")
            answers[int(k)] = "\n".join(ln for ln in lines if not ln.startswith("ERROR:"))
        return answers
    return cached_answers("atoms-", cases, answer)


@pytest.fixture(scope="module")
def answers() -> list[str | None]:
    return _run(_statements())


def _ours(fn: object) -> str | None:
    try:
        return fn()  # type: ignore[operator, no-any-return]
    except TensorLayoutError:
        return None


def test_mma_atoms_match_cxx(answers: list[str | None]) -> None:
    for i, name in enumerate(MMA_NAMES):
        assert _ours(lambda n=name: str(mma_atom(n))) == answers[i], name  # type: ignore[misc]


def test_copy_atoms_match_cxx(answers: list[str | None]) -> None:
    base = len(MMA_NAMES)
    for i, name in enumerate(COPY_NAMES):
        atom = copy_atom(name)
        fields = [atom.thr_id, atom.src, atom.dst, atom.ref] + ([atom.val_id] if atom.val_id else [])
        assert " | ".join(map(str, fields)) == answers[base + i], name


def test_tile_to_shape_matches_cxx(answers: list[str | None]) -> None:
    base = len(MMA_NAMES) + len(COPY_NAMES)
    for i, (atom, shape) in enumerate(TILES):
        assert str(tile_to_shape(smem_layout_atom(atom), shape)) == answers[base + i], (atom, shape)


def test_descriptors_match_cxx(answers: list[str | None]) -> None:
    base = len(MMA_NAMES) + len(COPY_NAMES) + len(TILES)
    for i, (atom, major, kind, k) in enumerate(DESCS):

        def ours(a: str = atom, m: str = major, kd: str = kind, kk: int = k) -> str:
            tile = tile_to_shape(smem_layout_atom(a), _desc_tile(a, m, kk))
            d = matrix_descriptor(tile, m, kd, k=kk)  # type: ignore[arg-type]
            return f"{d.layout_type_code} {d.leading_byte_offset} {d.stride_byte_offset}"

        assert _ours(ours) == answers[base + i], (atom, major, kind)


def test_accumulator_cells_match_cxx(answers: list[str | None]) -> None:
    """``make_fragment_C`` of a one-atom TiledMMA: (m, n) -> TMEM address in value units, of one
    CTA's rows (a two-CTA atom's second CTA holds rows M/2.. the same way in its own TMEM)."""
    base = len(MMA_NAMES) + len(COPY_NAMES) + len(TILES) + len(DESCS)
    for i, name in enumerate(ACCS):
        text = answers[base + i]
        assert text is not None, name
        atom = mma_atom(name)
        frag, (m, n, _k), vbits = Layout.parse(text), atom.shape_mnk, atom.val_bits[2]  # type: ignore[index]
        rows = m // int(atom.thr_id.size())
        for mm in range(m):
            for nn in range(n):
                addr = int(frag((mm % rows, nn))) * vbits
                cell = accumulator_cell(atom, mm, nn)
                assert cell == (mm // rows, addr >> 21, (addr % (1 << 21)) // 32, 0), (name, mm, nn)
