"""Thread partitions (``ThrMMA``/``ThrCopy``): brute force from the TV layouts, and CuTe's C++
(``get_slice(t).partition_*``, ``retile_*`` compiled host-only) on identity tensors."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import pytest

from tensorlayout.cute import CountingTensor, Int, Layout, make_identity_tensor, make_layout, parse_layout
from tensorlayout.cute.basis import as_arithmetic_tuple, format_value
from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.gpu import coalescing as co
from tensorlayout.gpu import (
    copy_atom,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_copy_c,
    make_tiled_mma,
    mma_atom,
    tma,
    universal_copy,
)
from tensorlayout.gpu import partition as pa
from tensorlayout.gpu.partition import ThrCopy, ThrMMA, copy_fits, get_slice, partition_shape_c
from tests.cute import cpp_oracle
from tests.gpu import cute_cpp

SM80 = ("SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_16x8x16_S32S8S8S32_TN",
        "SM80_16x8x8_F16F16F16F16_TN")
THREADS = ((1, 1, 1), (2, 2, 1), (2, 1, 1), (1, 4, 1))
#: operand -> (tensor extents among M, N, K; the TVLayout of the TiledMMA)
OPERANDS = {"a": ((0, 2), "tv_a"), "b": ((1, 2), "tv_b"), "c": ((0, 1), "tv_c")}


def _coord(c: Any) -> tuple[int, int]:
    t = as_arithmetic_tuple(c)
    return int(t[0]), int(t[1])


@pytest.mark.parametrize(("atom", "thr"), list(itertools.product(SM80, THREADS)))
def test_partitions_are_the_tv_layout_repeated_over_the_tensor(atom: str, thr: tuple[int, ...]) -> None:
    """Thread t's element (v, r0, r1) of an identity tensor two tiles by three is the TiledMMA's
    TV coordinate of (t, v) moved by (r0, r1) tiles; a Layout's partition gives the same offsets."""
    tm = make_tiled_mma(mma_atom(atom), thr)
    tile = tm.tile_size()
    for op, (dims, tv_name) in OPERANDS.items():
        tv = getattr(tm, tv_name)()
        shape = (2 * tile[dims[0]], 3 * tile[dims[1]])
        gmem = Layout(shape, (shape[1], 1))  # row-major
        for t in range(0, tv.num_threads, 5):  # every fifth thread: all warps, all lane classes
            part = getattr(get_slice(tm, t), f"partition_{op}")(make_identity_tensor(shape))
            lay, offset = getattr(get_slice(tm, t), f"partition_{op}")(gmem)
            assert isinstance(part, CountingTensor) and part.layout.shape == lay.shape
            frg = int(make_layout(part.layout.shape[0]).size())
            assert frg == tv.num_values
            for i, c in enumerate(part.coords()):
                v, r = i % frg, i // frg
                m, n = tv.coord(t, v)
                want = (m + (r % 2) * tile[dims[0]], n + (r // 2) * tile[dims[1]])
                assert _coord(c) == want, (op, t, i, str(part))
                assert offset + lay(i) == gmem(*want)


def test_partition_shapes_and_fragments() -> None:
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    assert partition_shape_c(tm, (128, 64)) == ((2, 2), 4, 4)
    thr = get_slice(tm, 5)
    assert isinstance(thr, ThrMMA) and thr.thr_vmnk() == (5, 0, 0, 0)
    assert str(thr.partition_fragment_c(Layout((128, 64), (64, 1)))) == "((_2,_2),4,4):((1,2),4,16)"
    frag_a = thr.partition_fragment_a(Layout((128, 32), (32, 1)))
    assert frag_a.shape == ((2, 2, 2), 4, 2) and sorted(frag_a.offsets().tolist()) == list(range(64))
    with pytest.raises(LayoutError, match=r"thread index .* in \[0, 128\)"):
        get_slice(tm, 128)
    with pytest.raises(LayoutError, match="TiledMMA or a TiledCopy"):
        get_slice("tm", 0)  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match="a partition takes a Layout or a CountingTensor"):
        thr.partition_c((128, 64))  # type: ignore[arg-type]


def test_copy_partitions_cover_the_tile_once() -> None:
    tc = make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)), make_layout((1, 8)))
    seen: list[tuple[int, int]] = []
    for t in range(128):
        thr = get_slice(tc, t)
        assert isinstance(thr, ThrCopy)
        s = thr.partition_s(make_identity_tensor((16, 64)))
        d = thr.partition_d(make_identity_tensor((16, 64)))
        assert isinstance(s, CountingTensor) and isinstance(d, CountingTensor)
        assert [str(c) for c in s.coords()] == [str(c) for c in d.coords()]
        cs = [_coord(c) for c in s.coords()]
        assert cs == [(t // 8, 8 * (t % 8) + j) for j in range(8)]  # 8 consecutive halfs of one row
        seen += cs
    assert sorted(seen) == [(m, n) for m in range(16) for n in range(64)]


# ---------------------------------------------------------------- CuTe's C++


def _shape_cpp(shape: tuple[int, ...]) -> str:
    return "make_shape(" + ",".join(f"Int<{int(s)}>{{}}" if type(s) is Int else str(s) for s in shape) + ")"


def _mma_cases() -> list[tuple[str, Any]]:
    cases = []
    for atom, thr in itertools.product(SM80[:3], THREADS[:3]):
        tm = make_tiled_mma(mma_atom(atom), thr)
        tile = tm.tile_size()
        cpp_tm = f"make_tiled_mma({atom}{{}}, Layout<Shape<Int<{thr[0]}>,Int<{thr[1]}>,Int<{thr[2]}>>>{{}})"
        for (op, (dims, _tv)), static in itertools.product(OPERANDS.items(), (True, False)):
            shape = (2 * tile[dims[0]], tile[dims[1]])
            shape = tuple(Int(s) for s in shape) if static else shape
            for t in (0, 3, 37, int(tm.thr_layout_vmnk.size()) - 1):
                if t >= int(tm.thr_layout_vmnk.size()):
                    continue
                cpp = (f"print({cpp_tm}.get_slice({t}).partition_{op.upper()}"
                       f"(make_identity_tensor({_shape_cpp(shape)}))); printf(\"\\n\");")
                cases.append((cpp, lambda tm=tm, t=t, op=op, s=shape:
                              getattr(get_slice(tm, t), f"partition_{op}")(make_identity_tensor(s))))
    return cases


def _copy_cases() -> list[tuple[str, Any]]:
    tc = make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)), make_layout((1, 8)))
    cpp_tc = ("make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{}, "
              "Layout<Shape<_16,_8>,Stride<_8,_1>>{}, Layout<Shape<_1,_8>>{})")
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1))
    cpp_tm = "make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_2,_1>>{})"
    ldsm = make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, tm)
    cpp_ldsm = f"make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{{}}, {cpp_tm})"
    stc = make_tiled_copy_c(universal_copy(32), 16, tm)
    cpp_stc = f"make_tiled_copy_C(Copy_Atom<UniversalCopy<uint32_t>, half_t>{{}}, {cpp_tm})"
    cases = []
    for t in (0, 3, 77):
        for side in ("s", "d"):
            cases.append((f"print({cpp_tc}.get_slice({t}).partition_{side.upper()}(make_identity_tensor("
                          f"make_shape(_32{{}},_128{{}})))); printf(\"\\n\");",
                          lambda t=t, side=side: getattr(get_slice(tc, t), f"partition_{side}")(
                              make_identity_tensor((Int(32), Int(128))))))
            cases.append((f"print({cpp_ldsm}.get_slice({t}).partition_{side.upper()}(make_identity_tensor("
                          f"make_shape(_64{{}},_32{{}})))); printf(\"\\n\");",
                          lambda t=t, side=side: getattr(get_slice(ldsm, t), f"partition_{side}")(
                              make_identity_tensor((Int(64), Int(32))))))
        frag = (f"{cpp_tm}.get_slice({t}).partition_fragment_C("
                "make_identity_tensor(make_shape(_64{},_64{})))")
        cases.append((f"print({cpp_stc}.get_slice({t}).retile_S({frag}).layout()); printf(\"\\n\");",
                      lambda t=t: get_slice(stc, t).retile_s(  # type: ignore[union-attr]
                          get_slice(tm, t).partition_fragment_c(Layout((64, 64), (1, 64))))))
    return cases


@pytest.mark.skipif(not cpp_oracle.available(), reason="needs g++ and the nvidia-cutlass headers")
def test_partitions_print_as_cpp() -> None:
    cases = _mma_cases() + _copy_cases()
    answers = cute_cpp.run([c[0] for c in cases])
    assert len(answers) == len(cases)
    exact = 0
    for (cpp, ours), want in zip(cases, answers):
        got = ours()
        text = str(got).replace("_", "") if isinstance(got, Layout) else str(got)
        if "make_shape(Int<" in cpp or "make_shape(_" in cpp or isinstance(got, Layout):
            assert text == (want.replace("_", "") if isinstance(got, Layout) else want), cpp
            exact += 1
            continue
        # dynamic extents: C++ keeps a symbolic stride on a rest mode of extent 1 where ours is _0
        theirs = parse_layout(want)
        assert isinstance(got, CountingTensor) and isinstance(theirs, CountingTensor), cpp
        assert str(got.origin) == str(theirs.origin) and got.layout.shape == theirs.layout.shape, cpp
        assert [format_value(c) for c in got.coords()] == [format_value(c) for c in theirs.coords()], cpp
    assert exact > len(cases) // 2


def test_a_copy_fits_a_swizzle_that_keeps_its_vectors() -> None:
    """128-bit copies of halfs (8 elements per thread) fit a row-major tile under ``Sw<B,M,S>``
    exactly when the swizzle keeps the low 3 bits (M >= 3); else the first break is named."""
    tc = make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)), make_layout((1, 8)))
    for b, m, s in itertools.product((1, 2, 3), (0, 1, 2, 3, 4), (3, 4)):
        fit = copy_fits(tc, parse_layout(f"Sw<{b},{m},{s}> o _0 o (_32,_64):(_64,_1)"))
        assert fit.fits == (m >= 3), (b, m, s, str(fit))
        if not fit.fits:
            assert fit.thread is not None and fit.coord is not None and "expected" in str(fit)
    assert copy_fits(tc, parse_layout("(32,64):(64,1)"), side="D").fits
    with pytest.raises(LayoutError, match="tiled by the copy's 16x64 tile"):
        copy_fits(tc, parse_layout("(24,64):(64,1)"))


def test_junk_arguments_raise_only_library_errors() -> None:
    """Every public entry of partition, tma and coalescing, called with junk (and with a thread
    slice whose methods get junk), raises TensorLayoutError or answers."""
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"))
    tc = make_tiled_copy(universal_copy(128), 16, Layout((16, 8), (8, 1)), make_layout((1, 8)))
    junk = [None, -1, 3, 1.5, "x", (), (1,), Layout(4, 1), Layout((16, 64), (64, 1)), Layout((0, 4), (1, 0)),
            parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"),
            make_identity_tensor((3, 5)), tm, tc, True, "half_t"]
    fns = ((pa.get_slice, 2), (pa.copy_fits, 3), (pa.partition_shape_c, 2), (tma.make_tma_copy, 3),
           (co.coalescing, 3), (co.offsets_table, 2))
    methods = ("partition_a", "partition_b", "partition_c", "partition_s", "partition_d", "retile_s",
               "partition_fragment_a", "partition_fragment_c")
    for fn, n in fns:
        for args in itertools.product(junk, repeat=n):
            try:
                out = fn(*args)
            except TensorLayoutError:
                continue
            for m, a in itertools.product((m for m in methods if hasattr(out, m)), junk):
                with contextlib.suppress(TensorLayoutError):
                    getattr(out, m)(a)
