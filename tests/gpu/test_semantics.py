"""Brute-force checks of the TV layouts from their definitions (no reference output needed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorlayout.cute import Layout
from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.gpu import (
    MMA_ATOMS,
    TVLayout,
    copy_atom,
    format_owners,
    make_tiled_copy_a,
    make_tiled_copy_b,
    make_tiled_mma,
    mma_atom,
)


@pytest.mark.parametrize("name", sorted(MMA_ATOMS))
def test_every_c_element_owned_once(name: str) -> None:
    atom = MMA_ATOMS[name]
    c = atom.tv_c()
    assert c.is_bijective()
    assert c.num_threads == atom.thr_id.size()
    m, n, k = atom.shape_mnk
    assert c.tile == (m, n) and atom.tv_a().tile == (m, k) and atom.tv_b().tile == (n, k)


@pytest.mark.parametrize("name", sorted(MMA_ATOMS))
def test_operands_cover_their_panels(name: str) -> None:
    """Register operands hold each element once; smem (SS) operands are seen whole by every thread."""
    atom = MMA_ATOMS[name]
    for tv in (atom.tv_a(), atom.tv_b()):
        counts = tv.counts()
        assert counts.min() == counts.max()
        assert int(counts[0, 0]) in (1, tv.num_threads)


def test_sm80_16x8x16_fragment_formulas() -> None:
    """The PTX fragment figures: A ``m = t/4 + 8·v1, k = 2·(t%4) + v0 + 8·v2``; C likewise."""
    atom = mma_atom("SM80_16x8x16_F16F16F16F16_TN")
    a, c = atom.tv_a(), atom.tv_c()
    for t in range(32):
        for v in range(8):
            v0, v1, v2 = v % 2, (v // 2) % 2, v // 4
            assert a.coord(t, v) == (t // 4 + 8 * v1, 2 * (t % 4) + v0 + 8 * v2)
        for v in range(4):
            assert c.coord(t, v) == (t // 4 + 8 * ((v // 2) % 2), 2 * (t % 4) + v % 2)


@pytest.mark.parametrize("thr", [(1, 1, 1), (2, 2, 1), (4, 1, 1), (1, 4, 1), (2, 1, 2)])
@pytest.mark.parametrize("name", ["SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN",
                                  "SM90_64x64x16_F32F16F16_RS"])
def test_tiled_mma_partitions(name: str, thr: tuple[int, int, int]) -> None:
    tm = make_tiled_mma(mma_atom(name), thr)
    c = tm.tv_c()
    nthr = tm.thr_layout_vmnk.size()
    assert c.num_threads == nthr
    # every element of the M x N tile is held the same number of times (thrK-fold for K threads)
    counts = c.counts()
    assert counts.min() == counts.max() == thr[2]
    # the A panel: each element held by the threads along N (and once per K-slice thread group)
    a = tm.tv_a()
    assert a.tile == (tm.tile_size()[0], tm.tile_size()[2])
    assert a.counts().min() >= 1


def test_ownership_and_inverse_round_trip() -> None:
    c = mma_atom("SM80_16x8x16_F32F16F16F32_TN").tv_c()
    thr, val = c.ownership()
    inv = c.inverse()
    for m in range(16):
        for n in range(8):
            t, v = int(thr[m, n]), int(val[m, n])
            assert c.coord(t, v) == (m, n)
            assert inv(m, n) == t + 32 * v
            assert (c.thread_of(m, n), c.value_of(m, n)) == (t, v)


def test_broadcast_owner_is_thread_zero() -> None:
    a = mma_atom("SM90_64x64x16_F32F16F16_SS").tv_a()
    assert len(a.owners(3, 5)) == 128 and a.thread_of(3, 5) == 0
    with pytest.raises(LayoutError, match="exactly once"):
        a.inverse()


def test_table_matches_calls() -> None:
    tv = mma_atom("SM80_16x8x16_S32S8S8S32_TN").tv_a()
    tab = tv.table()
    assert tab.shape == (32, 8)
    assert all(tab[t, v] == tv.index(t, v) for t in range(32) for v in range(8))
    np.testing.assert_array_equal(np.sort(tab.ravel()), np.arange(16 * 16))


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"TV layout \(32,2\):\(2,1\)|"
            r"\(8, 0\) is outside the 8x8|"
            r"\(thread 32, value 0\) is|"
            r"a TV layout is a rank-2|"
            r"a TV layout's tile must be|"
            r"a TiledMMA thread layout|"
            r"a permutation entry is None|"
            r"no \(thread, value\) of|"
            r"unknown MMA atom")


@pytest.mark.parametrize("bad", [
    lambda: TVLayout(Layout(32, 1), (32, 1)),
    lambda: TVLayout.parse("(32,2):(2,1)", (8, 4)),
    lambda: TVLayout.parse("(32,2):(2,1)", (8, 0)),
    lambda: TVLayout.parse("(32,2):(2,1)", (8, 8)).coord(32, 0),
    lambda: TVLayout.parse("(32,2):(2,1)", (8, 8)).owners(8, 0),
    lambda: TVLayout.parse("(32,2):(4,1)", (16, 8)).thread_of(2, 0),
    lambda: mma_atom("SM80_16x8x16_NOPE"),
    lambda: make_tiled_mma(mma_atom("SM80_16x8x8_F16F16F16F16_TN"), (1, 1, 1, 1)),
    lambda: make_tiled_mma(mma_atom("SM80_16x8x8_F16F16F16F16_TN"), (1, 1, 1), (0, None, None)),
])
def test_bad_input_is_a_typed_error(bad: object) -> None:
    with pytest.raises(TensorLayoutError, match=MESSAGES):
        bad()  # type: ignore[operator]


def test_tiled_copy_needs_whole_atoms() -> None:
    """CuTe's static_assert "TiledCopy uses too few vals for selected CopyAtom", as a typed error."""
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1))
    with pytest.raises(LayoutError, match="too few vals"):
        make_tiled_copy_b(copy_atom("SM75_U16x8_LDSM_T"), 16, tm)


def test_ldmatrix_copy_of_a_covers_the_a_panel() -> None:
    tm = make_tiled_mma(mma_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1))
    tc = make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, tm)
    assert tc.tiler == (32, 16)
    # the destination (registers) is A's TV layout again; the source is each lane's 8-half row
    np.testing.assert_array_equal(np.sort(tc.tv_d().table().ravel()), np.sort(tm.tv_a().table().ravel()))
    src = tc.tv_s()
    for t in range(src.num_threads):
        rows = {src.coord(t, v)[0] for v in range(src.num_values)}
        assert len(rows) == 1


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(["SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN",
                             "SM80_16x8x16_S32S8S8S32_TN", "SM90_64x16x16_F32F16F16_RS"]),
       tm_=st.integers(1, 4), tn_=st.integers(1, 4), rm=st.integers(1, 2), rn=st.integers(1, 3))
def test_random_tiled_mma_partitions_c(name: str, tm_: int, tn_: int, rm: int, rn: int) -> None:
    """Any M/N thread layout and value repeats: C is held exactly once, A and B panels are covered
    (each element by the threads along the other dim), threads are numbered 0..T-1."""
    atom = mma_atom(name)
    m, n, _k = atom.shape_mnk
    tiled = make_tiled_mma(atom, (tm_, tn_, 1), (m * tm_ * rm, n * tn_ * rn, None))
    c = tiled.tv_c()
    assert c.tile == (m * tm_ * rm, n * tn_ * rn) and c.is_bijective()
    assert c.num_threads == atom.thr_id.size() * tm_ * tn_
    for tv, others in ((tiled.tv_a(), tn_), (tiled.tv_b(), tm_)):
        counts = tv.counts()
        assert counts.min() == counts.max()
        assert int(counts[0, 0]) in (others, others * atom.thr_id.size())


def test_format_owners_is_the_ptx_c_fragment() -> None:
    """Row g of the m16n8 C fragment: lane 4g+q holds columns 2q, 2q+1 (values 0, 1); row g+8 values 2, 3."""
    text = format_owners(mma_atom("SM80_16x8x16_F32F16F16F32_TN").tv_c()).splitlines()
    assert len(text) == 17
    for g in range(8):
        assert text[1 + g].split()[1:] == [f"T{4 * g + c // 2}V{c % 2}" for c in range(8)]
        assert text[9 + g].split()[1:] == [f"T{4 * g + c // 2}V{2 + c % 2}" for c in range(8)]
