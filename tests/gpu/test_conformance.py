"""CuTe's own printed TV layouts (``cute_tv_cases.json``, from the C++ headers) replayed exactly,
static ints (``_8``) included."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from tensorlayout.cute import Layout
from tensorlayout.gpu import copy_atom, make_tiled_mma, mma_atom
from tests.conftest import DATA

DOC = json.loads((DATA / "cute_tv_cases.json").read_text())
CASES = DOC["cases"]


def _plain(text: str) -> str:
    """CuTe's text without the static-int marker (``_8`` -> ``8``; a lone ``_`` stays): for
    reading a printed layout back as the argument of a call."""
    return re.sub(r"_(?=-?\d)", "", text)


def _of(kind: str) -> list[dict[str, Any]]:
    return [c for c in CASES if c["kind"] == kind]


def _split_top(text: str) -> list[str]:
    """The top-level comma-separated items of ``(a,b,c)``."""
    inner, depth, cur, out = text[1:-1], 0, "", []
    for ch in inner:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


def _perm(item: str) -> Any:
    if item == "_":
        return None
    return Layout.parse(item) if ":" in item else int(item)


def _tiled_args(case: dict[str, Any]) -> tuple[Any, Layout, tuple[Any, ...]]:
    """Atom, M/N/K thread layout and permutation, read back from the printed TiledMMA."""
    lines = case["text"].splitlines()
    vmnk = Layout.parse(_plain(lines[1].split(":", 1)[1].strip()))
    perm = tuple(_perm(x) for x in _split_top(_plain(lines[2].split(":", 1)[1].strip())))
    nthr = vmnk[0].size()
    thr = Layout(tuple(m.shape for m in vmnk.modes()[1:]),
                 tuple(m.stride // nthr for m in vmnk.modes()[1:]))  # type: ignore[operator]
    return mma_atom(case["atom"]), thr, perm


@pytest.mark.parametrize("case", _of("mma_atom"), ids=lambda c: c["id"])
def test_mma_atom_layouts(case: dict[str, Any]) -> None:
    atom = mma_atom(case["name"])
    assert atom.name == case["name"]
    assert _plain(case["Shape_MNK"]) == "(" + ",".join(map(str, atom.shape_mnk)) + ")"
    assert case["ThrID"] == str(atom.thr_id)
    for part in "ABC":
        assert case[f"{part}Layout"] == str(getattr(atom, f"layout_{part.lower()}"))
        if f"{part}_tv" in case:
            tv = getattr(atom, f"tv_{part.lower()}")()
            np.testing.assert_array_equal(tv.table(), np.array(case[f"{part}_tv"]))
    assert case["atom"] == str(atom)


@pytest.mark.parametrize("case", _of("copy_atom"), ids=lambda c: c["id"])
def test_copy_atom_layouts(case: dict[str, Any]) -> None:
    atom = copy_atom(case["name"])
    assert (str(atom.thr_id), str(atom.src), str(atom.dst), str(atom.ref)) == tuple(
        case[k] for k in ("ThrID", "SrcLayout", "DstLayout", "RefLayout"))
    assert str(atom.val_layout_src(16)) == case["ValLayoutSrc_half"]
    assert str(atom.val_layout_dst(16)) == case["ValLayoutDst_half"]
    for key, lay in (("Src_tv_bits", atom.src), ("Dst_tv_bits", atom.dst)):
        want = np.array(case[key])
        got = lay.offsets().reshape(want.shape[1], want.shape[0]).T
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", _of("tiled_mma"), ids=lambda c: c["id"])
def test_tiled_mma(case: dict[str, Any]) -> None:
    atom, thr, perm = _tiled_args(case)
    tm = make_tiled_mma(atom, thr, perm)
    assert case["text"] == str(tm)
    assert _plain(case["tile_size_mnk"]) == "(" + ",".join(map(str, tm.tile_size())) + ")"
    assert case["layoutA_TV"] == str(tm.layout_a_tv())
    assert case["layoutB_TV"] == str(tm.layout_b_tv())
    assert case["layoutC_TV"] == str(tm.layout_c_tv())
    np.testing.assert_array_equal(tm.tv_c().table(), np.array(case["C_tv"]))


@pytest.mark.parametrize("case", DOC["dsl_crosscheck"], ids=lambda c: c["what"])
def test_dsl_agrees(case: dict[str, Any]) -> None:
    shape = tuple(int(x) for x in re.findall(r"\d+", case["dsl"]["shape_mnk"]))
    atom = mma_atom(f"SM80_{shape[0]}x{shape[1]}x{shape[2]}_F32F16F16F32_TN")
    # the DSL prints static ints without the ``_``
    assert tuple(_plain(str(x)) for x in (atom.layout_a, atom.layout_b, atom.layout_c)) == (
        case["dsl"]["A"], case["dsl"]["B"], case["dsl"]["C"])
