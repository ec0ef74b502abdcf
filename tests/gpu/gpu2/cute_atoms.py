"""gpu2 conformance checks (see ``tests/gpu/gpu2/__init__.py``): CuTe's MMA and copy atoms, tiled
copies and shared-memory layout atoms, every field of a record against the public API."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorlayout.cute import Layout
from tensorlayout.cute.int_tuple import Int, format_int_tuple
from tensorlayout.cute.swizzle import SmemPtrFlag, Swizzle
from tensorlayout.gpu import (
    copy_atom,
    make_tiled_copy,
    make_tiled_copy_a,
    make_tiled_copy_b,
    make_tiled_copy_c,
    make_tiled_mma,
    mma_atom,
)
from tensorlayout.gpu.cxx_names import layout_of_type, parse_type, sizeof_bits, tuple_of_type
from tensorlayout.gpu.smem_atoms import smem_layout_atom, tile_to_shape

Record = dict[str, Any]


def _table(record: Record, key: str, layout: Layout) -> None:
    """``record[key][t][v]`` (or, where omitted, its size from ``key_omitted``) equals
    ``layout(t, v)``: the omitted tables are rebuilt from the printed layout, which the caller
    compared as text."""
    got = layout.offsets().reshape(int(layout[1].size()), int(layout[0].size())).T
    if key in record:
        np.testing.assert_array_equal(got, np.array(record[key]), err_msg=key)
        return
    rows, cols = (int(x) for x in re.match(r"(\d+)x(\d+)", record[f"{key}_omitted"]).groups())  # type: ignore[union-attr]
    assert got.shape == (rows, cols), (key, got.shape)
    assert Layout.parse(str(layout)) == layout


def _val_bits(text: str, value: int) -> None:
    assert text == format_int_tuple(value), (text, value)


def check_mma_atom(record: Record) -> None:
    """UMMA and the other MMA atoms: looked up by the record's C++ type."""
    atom = mma_atom(record["type"])
    assert atom.op == record["name"]
    assert atom.name == str(parse_type(record["type"]))  # the C++ type, spelled canonically
    assert format_int_tuple(tuple(Int(x) for x in atom.shape_mnk)) == record["Shape_MNK"]
    assert str(atom.thr_id) == record["ThrID"]
    assert atom.val_bits is not None
    for i, part in enumerate("ABC"):
        lay = getattr(atom, f"layout_{part.lower()}")
        assert str(lay) == record[f"{part}Layout"]
        _val_bits(record[f"ValType{part}"], atom.val_bits[i])
        _table(record, f"{part}_tv", lay)
    assert str(atom) == record["atom"]


def check_copy_atom(record: Record) -> None:
    """``ldmatrix``/``stmatrix``/``cp.async``/universal copies as ``Copy_Atom<op, value_type>``."""
    atom = copy_atom(record["name"])
    bits = sizeof_bits(record["value_type"])
    assert (str(atom.thr_id), str(atom.src), str(atom.dst), str(atom.ref)) == tuple(
        record[k] for k in ("ThrID", "SrcLayout", "DstLayout", "RefLayout"))
    assert str(atom.val_layout_src(bits)) == record["ValLayoutSrc"]
    assert str(atom.val_layout_dst(bits)) == record["ValLayoutDst"]
    assert str(atom.val_layout_ref(bits)) == record["ValLayoutRef"]
    assert atom.describe(bits) == record["atom"]
    _table(record, "Src_tv_bits", atom.src)
    _table(record, "Dst_tv_bits", atom.dst)


def check_tmem_copy_atom(record: Record) -> None:
    atom = copy_atom(record["name"])
    assert atom.val_id is not None
    assert (str(atom.thr_id), str(atom.src), str(atom.dst), str(atom.ref), str(atom.val_id)) == tuple(
        record[k] for k in ("ThrID", "SrcLayout", "DstLayout", "RefLayout", "ValID"))
    _table(record, "Src_tv_bits", atom.src)
    _table(record, "Dst_tv_bits", atom.dst)


def check_smem_layout_atom(record: Record) -> None:
    atom = smem_layout_atom(record["expr"].removesuffix("{}"))
    assert str(atom) == record["text"]
    assert isinstance(atom.offset, SmemPtrFlag) and atom.offset.bits == record["value_bits"]
    assert isinstance(atom.outer, Swizzle)
    assert (atom.outer.bits, atom.outer.base, atom.outer.shift) == _SWIZZLE[record["swizzle"]]
    assert atom.inner.stride[1 if record["major"] == "K" else 0] == 1  # type: ignore[index]
    np.testing.assert_array_equal(atom.offsets()[: len(record["offsets"])], record["offsets"])
    assert int(atom.inner.cosize()) == len(record["offsets"])  # type: ignore[union-attr]


_SWIZZLE = {"INTER": (0, 4, 3), "SW32": (1, 4, 3), "SW64": (2, 4, 3), "SW128": (3, 4, 3),
            "SW128_32B": (2, 5, 2)}
_TILE_EXPR = re.compile(r"tile_to_shape\((.*)\{\},\s*(Shape<.*>)\{\}\)")


def check_smem_layout_tiled(record: Record) -> None:
    m = _TILE_EXPR.fullmatch(record["expr"])
    assert m is not None, record["expr"]
    shape = tuple_of_type(parse_type(m.group(2)))
    tiled = tile_to_shape(smem_layout_atom(m.group(1)), shape)  # type: ignore[arg-type]
    assert str(tiled) == record["text"]
    np.testing.assert_array_equal(tiled.offsets()[: len(record["offsets"])], record["offsets"])


def _call(text: str) -> tuple[str, list[str]]:
    """``f(a, b<c, d>{}, g(h))`` as ``("f", ["a", "b<c, d>{}", "g(h)"])``: top-level arguments."""
    name, rest = text.split("(", 1)
    args, depth, cur = [], 0, ""
    for ch in rest[:-1]:
        depth += ch in "<("
        depth -= ch in ">)"
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return name.strip(), [*args, cur.strip()]


def _tiled_mma(text: str) -> Any:
    name, args = _call(text)
    assert name == "make_tiled_mma", text
    atom = mma_atom(args[0].removesuffix("{}"))
    thr = layout_of_type(parse_type(args[1]))
    perm = tuple_of_type(parse_type(args[2])) if len(args) > 2 else (None, None, None)
    return make_tiled_mma(atom, thr, perm)  # type: ignore[arg-type]


_MAKE_COPY = {"make_tiled_copy_A": make_tiled_copy_a, "make_tiled_copy_B": make_tiled_copy_b,
              "make_tiled_copy_C": make_tiled_copy_c}


def check_tiled_copy(record: Record) -> None:
    """``make_tiled_copy`` / ``make_tiled_copy_A/C`` read from the record's C++ expression."""
    name, args = _call(record["expr"])
    cpy = parse_type(args[0])
    assert cpy.name == "Copy_Atom" and len(cpy.args) == 2
    atom, bits = copy_atom(str(cpy.args[0])), sizeof_bits(str(cpy.args[1]))
    if name == "make_tiled_copy":
        thr, val = (layout_of_type(parse_type(a)) for a in args[1:3])
        tc = make_tiled_copy(atom, bits, thr, val)
    else:
        tc = _MAKE_COPY[name](atom, bits, _tiled_mma(args[1]))
    assert str(tc) == record["text"]
    assert str(tc.layout_tv) == record["layout_src_tv_tiled"]
    assert format_int_tuple(tuple(Int(t) for t in tc.tiler)) == record["tiler_mn"]
    assert str(tc.layout_s_tv()) == record["layoutS_TV"]
    assert str(tc.layout_d_tv()) == record["layoutD_TV"]
    _table(record, "S_tv", tc.layout_s_tv())
    _table(record, "D_tv", tc.layout_d_tv())


HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    ("cute_umma_atom", "umma_atom"): check_mma_atom,
    ("cute_mma_atom_other", "mma_atom"): check_mma_atom,
    ("cute_matrix_copy_atom", "matrix_copy_atom"): check_copy_atom,
    ("cute_cp_async_copy_atom", "cp_async_copy_atom"): check_copy_atom,
    ("cute_tmem_copy_atom", "tmem_copy_atom"): check_tmem_copy_atom,
    ("cute_smem_layout_atom", "smem_layout_atom"): check_smem_layout_atom,
    ("cute_smem_layout_tiled", "smem_layout_tiled"): check_smem_layout_tiled,
    ("cute_tiled_copy", "tiled_copy"): check_tiled_copy,
}
