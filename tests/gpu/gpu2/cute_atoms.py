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
from tensorlayout.gpu import copy_atom, mma_atom
from tensorlayout.gpu.cxx_names import parse_type, sizeof_bits, tuple_of_type
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


HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    ("cute_umma_atom", "umma_atom"): check_mma_atom,
    ("cute_mma_atom_other", "mma_atom"): check_mma_atom,
    ("cute_matrix_copy_atom", "matrix_copy_atom"): check_copy_atom,
    ("cute_cp_async_copy_atom", "cp_async_copy_atom"): check_copy_atom,
    ("cute_tmem_copy_atom", "tmem_copy_atom"): check_tmem_copy_atom,
    ("cute_smem_layout_atom", "smem_layout_atom"): check_smem_layout_atom,
    ("cute_smem_layout_tiled", "smem_layout_tiled"): check_smem_layout_tiled,
}
